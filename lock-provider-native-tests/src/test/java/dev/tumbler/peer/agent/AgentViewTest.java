package dev.tumbler.peer.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.TransactionOptions.Quorum;
import dev.tumbler.peer.agent.LockTable.Mode;
import dev.tumbler.peer.agent.WaitFor.LockRef;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** An agent's view of its queues: the version rule, the surrender acknowledgement, and quorums. */
class AgentViewTest {
  /** The agent whose view it is, and who surrenders: younger than T2, as a deadlock's victim is, so that it goes behind. */
  private static final AgentId T1 = new AgentId(2, 0, 0);
  private static final AgentId T2 = new AgentId(1, 0, 0);
  private static final LockRef X = new LockRef(List.of("x"), "n1");

  @Test
  void aQueueNoNewerThanTheOneHeldIsDropped() {
    // T1 holds x, then surrenders; a stale queue from before the surrender must not make T1 the holder again
    LockTable server = new LockTable();
    server.lock(T1, List.of("x"), Mode.WRITE, 0);
    long v1 = server.version();
    List<LockTable.Entry> heldByT1 = server.queue(List.of("x"));
    server.lock(T2, List.of("x"), Mode.WRITE, 0);
    server.surrender(T1, List.of("x"), 0);
    AgentView view = new AgentView(T1);
    assertTrue(view.offer(X, server.version(), server.queue(List.of("x")), null));
    assertFalse(view.holds(X, Mode.WRITE));
    assertFalse(view.offer(X, v1, heldByT1, null), "older");
    assertFalse(view.offer(X, server.version(), heldByT1, null), "as old");
    assertFalse(view.holds(X, Mode.WRITE), "the stale queue did not put T1 back at the head");
  }

  @Test
  void aNewerQueueOfAPathReplacesTheOlderQueuesOfThePathsBelowIt() {
    // seed 198060: T1 waits for x; T3 held x/a and T2 read x; T1 was told x/a's queue then. T3 and T2 left, the
    // server told x's queue (T1 holds it) but never x/a's again (nobody asks for it): the old x/a queue still showed
    // T2 reading x ahead of T1, an edge of a cycle no other agent saw
    AgentId t3 = new AgentId(3, 1, 0);
    LockTable server = new LockTable();
    server.lock(t3, List.of("x", "a"), Mode.WRITE, 0);
    server.lock(T2, List.of("x"), Mode.READ, 0);
    server.lock(T1, List.of("x"), Mode.WRITE, 0);
    AgentView view = new AgentView(T1);
    LockRef xa = new LockRef(List.of("x", "a"), "n1");
    LockRef xb = new LockRef(List.of("x", "b"), "n2");
    assertTrue(view.offer(xa, server.version(), server.queue(List.of("x", "a")), null));
    LockTable other = new LockTable();
    other.lock(T2, List.of("x", "b"), Mode.READ, 0);
    assertTrue(view.offer(xb, 1, other.queue(List.of("x", "b")), null), "another server's: left alone");
    server.end(t3, 0);
    server.end(T2, 0);
    assertTrue(view.offer(X, server.version(), server.queue(List.of("x")), null));
    assertTrue(view.holds(X, Mode.WRITE));
    assertEquals(server.version(), view.version(xa), "x/a's queue is x's as of the newer version");
    assertFalse(view.known().containsKey(xa), "nobody asks for x/a: nothing kept but its version");
    assertTrue(view.known().get(xb).stream().anyMatch(e -> e.agent().equals(T2)), "of another server");
  }

  @Test
  void afterASurrenderOnlyTheServersAcknowledgementIsTaken() {
    LockTable server = new LockTable();
    server.lock(T1, List.of("x"), Mode.WRITE, 0);
    AgentView view = new AgentView(T1);
    view.offer(X, server.version(), server.queue(List.of("x")), null);
    assertTrue(view.holds(X, Mode.WRITE));
    server.lock(T2, List.of("x"), Mode.WRITE, 0);
    List<LockTable.Entry> beforeTheMove = server.queue(List.of("x"));
    long sentBeforeTheMove = server.version();
    view.surrendering(X, Set.of(X.path()));
    assertFalse(view.holds(X, Mode.WRITE), "forgotten at once");
    // the queue the server sent when T2 asked, before it took T1's surrender, still shows T1 holding
    assertFalse(view.offer(X, sentBeforeTheMove, beforeTheMove, null), "not the acknowledgement");
    assertTrue(view.awaitingAck(X));
    server.surrender(T1, List.of("x"), 0);
    assertFalse(view.offer(X, server.version(), server.queue(List.of("x")), T2), "another agent's surrender note");
    assertTrue(view.offer(X, server.version(), server.queue(List.of("x")), T1));
    assertFalse(view.awaitingAck(X));
    assertFalse(view.holds(X, Mode.WRITE));
  }

  @Test
  void twoSurrendersAtOneServerAreAcknowledgedEachByItsOwnChange() {
    // T1 holds [a,b] and [a,c] and surrenders both in one step. The server's change for [a,b] also tells T1 the
    // queue of [a,c] (their queues share [a]), with T1's surrender note, while T1 still holds [a,c] there: that is
    // not the acknowledgement of [a,c]'s surrender (seed 690: taken as one, T1 was told [a,c] again, token and all)
    LockRef ab = new LockRef(List.of("a", "b"), "n1");
    LockRef ac = new LockRef(List.of("a", "c"), "n1");
    LockTable server = new LockTable();
    server.lock(T1, ab.path(), Mode.READ, 0);
    server.lock(T1, ac.path(), Mode.READ, 0);
    server.lock(T2, List.of("a"), Mode.WRITE, 0); // waits for both
    Set<List<String>> asked = Set.of(ab.path(), ac.path());
    AgentView view = new AgentView(T1);
    view.offer(ab, server.version(), server.queue(ab.path()), null);
    view.offer(ac, server.version(), server.queue(ac.path()), null);
    assertTrue(view.holds(ac, Mode.READ));
    view.surrendering(ab, asked);
    view.surrendering(ac, asked);
    server.surrender(T1, ab.path(), 0);
    List<LockTable.Entry> acAfterTheFirst = server.queue(ac.path());
    assertTrue(acAfterTheFirst.stream().anyMatch(e -> e.path().equals(ac.path()) && e.held()), "still held there");
    assertFalse(view.offer(ac, server.version(), acAfterTheFirst, T1), "the first change's queue of [a,c]");
    assertTrue(view.offer(ab, server.version(), server.queue(ab.path()), T1), "the first's own acknowledgement");
    assertTrue(view.awaitingAck(ac));
    server.surrender(T1, ac.path(), 0);
    assertTrue(view.offer(ac, server.version(), server.queue(ac.path()), T1), "the second's acknowledgement");
    assertFalse(view.holds(ac, Mode.READ), "T2 has [a] now");
    // a lost link forgets what was awaited there, and a restatement sends the awaited surrenders again
    view.surrendering(ab, asked);
    view.linkLost("n1");
    assertFalse(view.awaitingAck(ab));
    view.surrendering(ab, asked);
    view.surrendering(ac, asked);
    assertEquals(List.of(ab, ac), view.resendSurrenders("n1"));
    server.surrender(T1, ab.path(), 0);
    assertFalse(view.offer(ac, server.version(), server.queue(ac.path()), T1), "the first resent change's");
    assertTrue(view.offer(ab, server.version(), server.queue(ab.path()), T1));
  }

  @Test
  void anotherAgentsSurrenderForgetsTheQueueButKeepsItsVersion() {
    LockTable server = new LockTable();
    server.lock(T1, List.of("x"), Mode.WRITE, 0);
    AgentView view = new AgentView(T1);
    List<LockTable.Entry> q = server.queue(List.of("x"));
    view.offer(X, server.version(), q, null);
    view.surrenderedByOther(X, server.version() - 1);
    assertFalse(view.known().isEmpty(), "a note older than the stored queue changes nothing");
    view.surrenderedByOther(X, server.version());
    assertTrue(view.known().isEmpty());
    assertFalse(view.offer(X, server.version(), q, null), "the same queue again is still not newer");
  }

  @Test
  void aForwardedQueueExpiresAndTheSameQueueForwardedAgainIsTakenAgain() {
    // T2 learns x only by forward: once its time is up it is forgotten, and the forwarder's next send (same
    // version, nothing changed) must be taken again, or T2 would never again see the cycle through x
    LockTable server = new LockTable();
    server.lock(T1, List.of("x"), Mode.WRITE, 0);
    AgentView v = new AgentView(T2);
    assertTrue(v.offerForwarded(X, server.version(), server.queue(List.of("x")), 100));
    assertFalse(v.expire(99), "not yet");
    assertTrue(v.known().containsKey(X));
    assertTrue(v.expire(100));
    assertFalse(v.known().containsKey(X), "forgotten at its time");
    assertTrue(v.offerForwarded(X, server.version(), server.queue(List.of("x")), 200), "taken again");
    assertFalse(v.offerForwarded(X, server.version() - 1, server.queue(List.of("x")), 300), "an older one is not");
  }

  @Test
  void aQueueTheServerTellsInAPathAboveIsNeverForgottenForItsAgeWhereTheAgentHasAnEntry() {
    // seed 263874: T2 learnt x/b by forward, then asked for x/b itself; the server's queue of x (above) showed T2
    // holding x/b, and replaced the forwarded queue but kept its time. Forgotten then, T2 never learnt again that it
    // held x/b: nothing changed at the server, so it told nothing more
    LockRef xb = new LockRef(List.of("x", "b"), "n1");
    LockTable server = new LockTable();
    server.lock(T1, List.of("x", "b"), Mode.WRITE, 0);
    AgentView v = new AgentView(T2);
    assertTrue(v.offerForwarded(xb, server.version(), server.queue(List.of("x", "b")), 100));
    server.end(T1, 0);
    server.lock(T2, List.of("x", "b"), Mode.READ, 0);
    assertTrue(v.offer(X, server.version(), server.queue(List.of("x")), null));
    assertTrue(v.holds(xb, Mode.READ), "x's queue says T2 holds x/b");
    assertFalse(v.expire(100), "the server's own queue: no time to run out");
    assertTrue(v.holds(xb, Mode.READ), "still known to hold");
  }

  @Test
  void theServerTellingTheQueueAForwarderToldFirstKeepsItForGood() {
    LockTable server = new LockTable();
    server.lock(T2, List.of("x"), Mode.WRITE, 0);
    AgentView v = new AgentView(T2);
    assertTrue(v.offerForwarded(X, server.version(), server.queue(List.of("x")), 100));
    assertFalse(v.offer(X, server.version(), server.queue(List.of("x")), null), "nothing new");
    assertFalse(v.expire(100), "but now the server's: it does not run out");
    assertTrue(v.holds(X, Mode.WRITE));
  }

  @Test
  void theQueueOfAPathNobodyAsksForAnyMoreIsForgotten() {
    // T2 on [a,b] knows the queue of [a], where T1 held; T1 ends, and the server's last word on [a] has no entry
    // on [a]: T2 must not keep T1 as [a]'s holder (a phantom that once made two agents each wait for the other
    // to give way)
    LockTable server = new LockTable();
    server.lock(T1, List.of("a"), Mode.WRITE, 0);
    server.lock(T2, List.of("a", "b"), Mode.READ, 0);
    AgentView v = new AgentView(T2);
    LockRef a = new LockRef(List.of("a"), "n1");
    assertTrue(v.offer(a, server.version(), server.queue(List.of("a")), null));
    server.end(T1, 0);
    assertTrue(v.offer(a, server.version(), server.queue(List.of("a")), null));
    assertFalse(v.known().containsKey(a), "forgotten");
    assertFalse(v.offer(a, server.version() - 1, List.of(), null), "its version still counts");
  }

  @Test
  void aSurrenderAlsoWaitsForTheAcknowledgementOfRelatedLocksOfTheServer() {
    // T1 holds [a,b]; the grant of [a] is on its way when T1 surrenders [a,b]: the server drops both
    LockTable server = new LockTable();
    server.lock(T1, List.of("a", "b"), Mode.WRITE, 0);
    LockRef ab = new LockRef(List.of("a", "b"), "n1");
    LockRef a = new LockRef(List.of("a"), "n1");
    AgentView view = new AgentView(T1);
    view.offer(ab, server.version(), server.queue(List.of("a", "b")), null);
    server.lock(T1, List.of("a"), Mode.WRITE, 0);
    long grantOfA = server.version();
    List<LockTable.Entry> aHeld = server.queue(List.of("a"));
    view.offer(a, grantOfA - 1, server.queue(List.of("a")), null);
    view.surrendering(ab, Set.of(ab.path(), a.path()));
    assertFalse(view.offer(a, grantOfA, aHeld, null), "the grant of [a] sent before the surrender");
    assertFalse(view.holds(a, Mode.WRITE));
    server.surrender(T1, List.of("a", "b"), 0);
    assertTrue(view.offer(a, server.version(), server.queue(List.of("a")), T1));
    assertTrue(view.offer(ab, server.version(), server.queue(List.of("a", "b")), T1));
    assertFalse(view.awaitingAck(a) || view.awaitingAck(ab));
  }

  @Test
  void aSurrenderWaitsForTheAcknowledgementOfARelatedPathAskedForWhoseQueueWasNeverTold() {
    // seed 995839: T1 holds [a]; it asks for [a,b] and, before the queue of [a,b] reaches it, surrenders [a]. The
    // server granted [a,b] when the Lock came, and told it; then it took the surrender, which drops [a,b] too, and
    // granted [a,b] to T2. The grant told before the surrender must not make T1 the holder of [a,b]
    LockRef a = new LockRef(List.of("a"), "n1");
    LockRef ab = new LockRef(List.of("a", "b"), "n1");
    LockTable server = new LockTable();
    server.lock(T1, a.path(), Mode.WRITE, 0);
    AgentView view = new AgentView(T1);
    assertTrue(view.offer(a, server.version(), server.queue(a.path()), null));
    server.lock(T1, ab.path(), Mode.WRITE, 0);
    long grantOfAb = server.version();
    List<LockTable.Entry> abHeld = server.queue(ab.path());
    assertTrue(abHeld.stream().anyMatch(e -> e.agent().equals(T1) && e.path().equals(ab.path()) && e.held()));
    view.surrendering(a, Set.of(a.path(), ab.path()));
    assertTrue(view.awaitingAck(ab), "asked for before the surrender: its queue waits for the acknowledgement");
    assertFalse(view.offer(ab, grantOfAb, abHeld, null), "the grant of [a,b] sent before the surrender");
    assertFalse(view.holds(ab, Mode.WRITE));
    server.lock(T2, ab.path(), Mode.WRITE, 0);
    Set<List<String>> changed = server.surrender(T1, a.path(), 0);
    assertTrue(server.queue(ab.path()).stream().anyMatch(e -> e.agent().equals(T2) && e.held()), "T2 has it now");
    for (LockTable.Info i : server.notifications(changed, T1)) {
      if (i.to().equals(T1)) {
        assertTrue(view.offer(new LockRef(i.path(), "n1"), i.version(), i.queue(), T1), "the acknowledgement");
      }
    }
    assertFalse(view.awaitingAck(a) || view.awaitingAck(ab));
    assertFalse(view.holds(ab, Mode.WRITE));
    // a path asked for after the surrender waits for nothing: the server tells it no acknowledgement
    LockRef ac = new LockRef(List.of("a", "c"), "n1");
    view.surrendering(a, Set.of(a.path(), ab.path()));
    assertFalse(view.awaitingAck(ac));
  }

  @Test
  void quorums() {
    assertTrue(AgentView.met(Quorum.ALL, 3, 3));
    assertFalse(AgentView.met(Quorum.ALL, 2, 3));
    assertTrue(AgentView.met(Quorum.MAJORITY, 2, 3));
    assertFalse(AgentView.met(Quorum.MAJORITY, 1, 2));
    assertTrue(AgentView.met(Quorum.MAJORITY, 1, 1));
    assertTrue(AgentView.met(Quorum.ANY, 1, 3));
    assertFalse(AgentView.met(Quorum.ANY, 0, 3));
    assertThrows(IllegalArgumentException.class, () -> AgentView.met(Quorum.ANY, 4, 3));

    LockTable n1 = new LockTable();
    LockTable n2 = new LockTable();
    n1.lock(T1, List.of("x"), Mode.READ, 0);
    n2.lock(T2, List.of("x"), Mode.WRITE, 0);
    n2.lock(T1, List.of("x"), Mode.READ, 0);
    AgentView view = new AgentView(T1);
    view.offer(X, n1.version(), n1.queue(List.of("x")), null);
    view.offer(new LockRef(List.of("x"), "n2"), n2.version(), n2.queue(List.of("x")), null);
    assertTrue(view.claimHeld(List.of("x"), Mode.READ, List.of("n1", "n2"), Quorum.ANY));
    assertFalse(view.claimHeld(List.of("x"), Mode.READ, List.of("n1", "n2"), Quorum.MAJORITY));
    assertFalse(view.claimHeld(List.of("x"), Mode.WRITE, List.of("n1"), Quorum.ALL), "read does not cover write");
  }
}
