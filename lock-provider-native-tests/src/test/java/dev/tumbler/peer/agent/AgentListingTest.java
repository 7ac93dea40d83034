package dev.tumbler.peer.agent;

import static dev.tumbler.peer.ScriptedCluster.MS;
import static dev.tumbler.peer.ScriptedCluster.PEER_TIMEOUT;
import static dev.tumbler.peer.ScriptedCluster.T;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.TransactionOptions.Quorum;
import dev.tumbler.peer.ScriptedCluster;
import dev.tumbler.peer.algorithm.AlgorithmSettings;
import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.TxOptions;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Listings of what is held ({@code Input.ListQuery}) on 3 {@code agent} nodes: a node asks every member that is up; a
 * member that answers lists its own claims exactly (name, mode, holder and tag, its token, time left), and a claim of
 * a member that does not is listed from its parts at the members that did, with no token; with fewer than a majority
 * of ready lock servers answering, the node cannot say; a released claim is not listed.
 */
class AgentListingTest {

  private static ScriptedCluster cluster() {
    ScriptedCluster c = new ScriptedCluster(3, 7, AgentAlgorithm.AGENT, AlgorithmSettings.NONE, null);
    c.startAll();
    return c;
  }

  /** Lets {@code nanos} pass while the clients of {@code held} renew them, as a client does every third of a term. */
  private static void advanceRenewing(ScriptedCluster c, long nanos, long... held) {
    long end = c.now + nanos;
    while (c.now < end) {
      c.advance(Math.min(30 * MS, end - c.now));
      for (long r : held) {
        c.renew(r);
      }
    }
  }

  @Test
  void aNodeListsAnothersClaimsWithTheirHoldersTokensAndNothingOnceReleased() {
    ScriptedCluster c = cluster();
    long job = c.acquire("n1", Claim.exclusive("1:a/job").withTag("candidate 1"));
    long doc = c.acquire("n3", Claim.read("1:a/doc"));
    long outside = c.acquire("n1", Claim.exclusive("1:b/job"));
    assertTrue(c.req(job).held(c.now) && c.req(doc).held(c.now) && c.req(outside).held(c.now), "not granted");

    List<Output.Listed> seen = c.listing("n2", "1:a/");
    assertNotNull(seen, "three members up, and the listing cannot say");
    // each holder's node answered: its own claims exactly, and none of its parts at the others
    assertEquals(List.of(
        new Output.Listed("1:a/job", Claim.Mode.EXCLUSIVE, 1, "n1 candidate 1", c.req(job).granted.fencingToken(),
            true, c.req(job).validUntil - c.now),
        new Output.Listed("1:a/doc", Claim.Mode.READ, 1, "n3", c.req(doc).granted.fencingToken(), true,
            c.req(doc).validUntil - c.now)), seen);
    assertEquals(seen, c.listing("n1", "1:a/"), "the holder's own node lists the same");

    c.release(job);
    assertEquals(List.of("1:a/doc"), c.listing("n2", "1:a/").stream().map(Output.Listed::name).toList(),
        "a released claim is still listed");
    c.release(doc);
    assertTrue(c.listing("n3", "1:a/").isEmpty(), "a released read claim is still listed");
  }

  @Test
  void aClaimOfAMemberThatDoesNotAnswerIsListedFromItsPartsWithNoToken() {
    ScriptedCluster c = cluster();
    long job = c.acquire("n1", Claim.exclusive("1:a/job").withTag("t"));
    assertTrue(c.req(job).held(c.now), "not granted");
    c.cut("n1", "n2");
    List<Output.Listed> seen = c.listing("n2", "1:a/");
    assertNotNull(seen, "n2 and n3 are a majority, and the listing cannot say");
    assertEquals(1, seen.size(), "one claim, its parts at n2 and n3 listed once: " + seen);
    Output.Listed l = seen.getFirst();
    assertEquals(new Output.Listed("1:a/job", Claim.Mode.EXCLUSIVE, 1, "n1 t", 0, false, l.remainingNanos()), l,
        "a claim of a node that did not answer, by its parts");
    assertTrue(l.remainingNanos() > 0 && l.remainingNanos() <= T, "time left of " + l);

    c.crash("n1");
    assertEquals(List.of("1:a/job"), c.listing("n2", "1:a/").stream().map(Output.Listed::name).toList(),
        "a dead node's claim may still be trusted by its client: its parts are listed until they expire");
    c.advance(T + MS);
    assertTrue(c.listing("n2", "1:a/").isEmpty(), "a dead node's parts are listed a term on");
  }

  @Test
  void aMemberThatIsUpButSilentIsWaitedForAPeerTimeout() {
    ScriptedCluster c = cluster();
    long job = c.acquire("n1", Claim.exclusive("1:a/job"));
    c.slow("n3", "n2");
    long q = c.askListing("n2", "1:a/");
    c.drain();
    assertNull(c.listingAnswer(q), "answered before n3 answered or its time ran out");
    advanceRenewing(c, PEER_TIMEOUT - MS, job);
    assertNull(c.listingAnswer(q), "answered before n3's time ran out");
    advanceRenewing(c, MS, job);
    Output.Listing<Envelope> l = c.listingAnswer(q);
    assertNotNull(l, "no answer a peerTimeout on: the timer did not wake the core");
    assertTrue(l.known(), "n1 and n2 are a majority: " + l);
    assertEquals(List.of(c.req(job).granted.fencingToken()), l.held().stream().map(Output.Listed::token).toList(),
        "n1 answered: its claim with its token");
    c.fast("n3", "n2"); // the late answer is dropped: the cluster fails on a second answer
  }

  @Test
  void withFewerThanAMajorityOfReadyServersAnsweringTheListingCannotSay() {
    ScriptedCluster c = cluster();
    c.acquire("n1", Claim.exclusive("1:a/job"));
    // alone: nobody to ask
    c.cut("n2", "n1");
    c.cut("n2", "n3");
    assertNull(c.listing("n2", "1:a/"), "a node cut off from every other listed what it cannot know");
    c.heal("n2", "n1");
    c.heal("n2", "n3");
    assertNotNull(c.listing("n2", "1:a/"), "healed, and the listing still cannot say");

    // both others up but silent until the wait ends
    c.slow("n1", "n2");
    c.slow("n3", "n2");
    long q = c.askListing("n2", "1:a/");
    c.advance(PEER_TIMEOUT);
    assertFalse(c.listingAnswer(q).known(), "no other member answered, and the listing says what is held");
    c.fast("n1", "n2");
    c.fast("n3", "n2");

    // a restarted lock server that is not ready yet (it waits for n1's restatement) has an empty table
    c.crash("n3");
    c.cut("n1", "n3");
    c.start("n3");
    assertNull(c.listing("n3", "1:a/"), "n2's table and n3's, not ready, are taken for a majority");
    c.advance(Math.max(PEER_TIMEOUT, T) + MS);
    assertNotNull(c.listing("n3", "1:a/"), "n3 serves, and its listing still cannot say");
  }

  @Test
  void aTransactionsClaimsAreListedByPathAndFromItsPartsWithTheirModes() {
    AgentCluster c = new AgentCluster(3, 11);
    c.startAll();
    long tx = c.begin("n1", new TxOptions(false, Quorum.ALL, List.of(), 0));
    long w = c.lock(tx, Claim.Mode.WRITE, "1:a", "x");
    long r = c.lock(tx, Claim.Mode.READ, "1:a", "y");
    assertTrue(c.req(w).held && c.req(r).held, "not granted");
    Output.Listing<Envelope> own = c.listing("n2", "1:a");
    assertTrue(own.known(), "three members up: " + own);
    assertEquals(List.of("1:a/x WRITE " + c.req(w).token(), "1:a/y READ " + c.req(r).token()),
        own.held().stream().map(l -> l.name() + " " + l.mode() + " " + l.token()).toList());

    c.cut("n1", "n2");
    Output.Listing<Envelope> parts = c.listing("n2", "1:a");
    assertTrue(parts.known(), "n2 and n3 are a majority: " + parts);
    assertEquals(List.of("1:a/x WRITE n1 0", "1:a/y READ n1 0"), parts.held().stream()
        .map(l -> l.name() + " " + l.mode() + " " + l.holder() + " " + l.token()).sorted().toList());
    c.end(tx);
  }
}
