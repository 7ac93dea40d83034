package dev.tumbler.peer.buckets;

import static dev.tumbler.peer.ScriptedCluster.MS;
import static dev.tumbler.peer.ScriptedCluster.PEER_TIMEOUT;
import static dev.tumbler.peer.ScriptedCluster.T;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.ScriptedCluster;
import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.election.ElectionParameters;
import java.util.HashMap;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code buckets} scripted (NATIVE-ALGORITHMS §6.9) on a small deterministic cluster with {@code algorithm=buckets}:
 * the seed's timeline, refusals by resource count, release from the top, grants that span buckets, FIFO without
 * barging, the races the design names, failover with reclaim, and session expiry.
 */
class BucketsCoreTest {

  private static ScriptedCluster cluster(int n, long seed, int bucketSize) {
    ScriptedCluster c = new ScriptedCluster(n, seed, BucketsAlgorithm.BUCKETS,
        new BucketsSettings(ElectionParameters.simulation(), bucketSize), null);
    c.startAll();
    return c;
  }

  private static BucketsCore core(ScriptedCluster c, String id) {
    return (BucketsCore) c.cores.get(id).core(Channel.LOCK);
  }

  /** The node that serves, once one serves and its grace is over. */
  private static String server(ScriptedCluster c) {
    c.until(() -> c.cores.keySet().stream().anyMatch(id -> core(c, id).serving()), 2_000 * MS, "a server");
    c.advance(T + 50 * MS); // its grace
    return c.cores.keySet().stream().filter(id -> core(c, id).serving()).findFirst().orElseThrow();
  }

  private static String client(ScriptedCluster c, String server) {
    return c.ids.stream().filter(id -> !id.equals(server)).findFirst().orElseThrow();
  }

  private static boolean held(ScriptedCluster c, long id) {
    return c.req(id).held(c.now);
  }

  private static List<Integer> counts(ScriptedCluster c, String server, String name) {
    Buckets b = core(c, server).buckets(name);
    return b == null ? List.of() : b.counts();
  }

  @Test
  void aSemaphoreWaitRidesOutAFailoverThatLastsLongerThanThePeerTimeout() {
    // issue 40 item 11, as for lease: a leader timeout, an election delay and the new server's grace
    long delay = 3 * PEER_TIMEOUT;
    ScriptedCluster c = new ScriptedCluster(3, 21, BucketsAlgorithm.BUCKETS, new BucketsSettings(
        new ElectionParameters(ElectionParameters.simulation().priority(), delay,
            ElectionParameters.simulation().leaderLeaseNanos()), 0), null);
    c.startAll();
    String s = server(c);
    List<String> clients = c.ids.stream().filter(id -> !id.equals(s)).toList();
    long holder = c.acquire(clients.get(0), Claim.permits("k", 1, 1));
    long waiter = c.acquire(clients.get(1), Claim.permits("k", 1, 1));
    assertFalse(held(c, waiter));
    c.crash(s);
    long crashedAt = c.now;
    c.advance(delay);
    assertNull(c.req(waiter).failed, "the wait ended during the failover");
    c.release(holder);
    c.until(() -> held(c, waiter), delay + 2 * T + 2_000 * MS, "the waiter is granted by the new server");
    assertTrue(c.req(waiter).grantedAt >= crashedAt + delay, "after the election delay");
  }

  @Test
  void aWaitEndsOnceItsNodeHasHadNoMajorityForThePeerTimeoutEvenOnTheServer() {
    ScriptedCluster c = cluster(3, 22, 0);
    String s = server(c);
    for (String id : c.ids) {
      if (!id.equals(s)) {
        c.cut(s, id);
      }
    }
    long cutAt = c.now;
    long r = c.acquire(s, Claim.permits("k", 1, 2));
    c.until(() -> c.req(r).failed != null, 3 * PEER_TIMEOUT, "the wait fails");
    assertEquals(Output.Failure.UNAVAILABLE, c.req(r).failed.failure());
    assertTrue(c.now - cutAt >= PEER_TIMEOUT, "not before the node has been alone for peerTimeout");
    assertTrue(c.req(r).failed.detail().contains("only 1 of 3 members connected"), c.req(r).failed.detail());
  }

  @Test
  void theSeedsTimelineFillsTheBucketsInOrder() {
    // K-V1, seed 002:149-158: handles of 12 (three resources) and 24 (six), buckets of 4
    ScriptedCluster c = cluster(3, 1, 4);
    String s = server(c);
    String n = client(c, s);
    int[] limits = {12, 12, 24, 12, 24};
    List<List<Integer>> expected = List.of(List.of(1), List.of(2), List.of(3), List.of(4), List.of(4, 1));
    for (int i = 0; i < limits.length; i++) {
      long r = c.acquire(n, Claim.permits("k", 1, limits[i]));
      assertTrue(held(c, r), "permit " + i);
      assertEquals(expected.get(i), counts(c, s, "k"));
    }
    assertEquals(2, core(c, s).buckets("k").highest());
  }

  @Test
  void aHandleWithFewerResourcesIsRefusedWhereALargerOneFits() {
    // K-V2: [4,4,4,1] is 13 out; a handle of 3 buckets has no room, one of 6 takes bucket 4
    ScriptedCluster c = cluster(3, 2, 4);
    String s = server(c);
    String n = client(c, s);
    assertTrue(held(c, c.acquire(n, Claim.permits("k", 13, 24))));
    assertEquals(List.of(4, 4, 4, 1), counts(c, s, "k"));
    long small = c.acquire(n, Claim.permits("k", 1, 12), true);
    assertEquals(Output.Failure.CONTENDED, c.req(small).failed.failure(), "no room in 3 buckets");
    assertTrue(held(c, c.acquire(n, Claim.permits("k", 1, 24), true)));
    assertEquals(List.of(4, 4, 4, 2), counts(c, s, "k"));
  }

  @Test
  void releasesEmptyTheHighestBucketFirstAndGrantsSpanBuckets() {
    // K-V3 and K-V5
    ScriptedCluster c = cluster(3, 3, 4);
    String s = server(c);
    String n = client(c, s);
    long a = c.acquire(n, Claim.permits("k", 4, 12));
    long b = c.acquire(n, Claim.permits("k", 1, 12));
    assertEquals(List.of(4, 1), counts(c, s, "k"));
    c.release(b);
    assertEquals(List.of(4, 0), counts(c, s, "k"));
    long d = c.acquire(n, Claim.permits("k", 3, 12));
    assertEquals(List.of(4, 3), counts(c, s, "k"));
    long e = c.acquire(n, Claim.permits("k", 2, 12));
    assertTrue(held(c, e), "two permits over two buckets, all or nothing");
    assertEquals(List.of(4, 4, 1), counts(c, s, "k"));
    c.release(a);
    assertEquals(List.of(4, 1, 0), counts(c, s, "k"), "from the top down");
    assertTrue(held(c, d));
  }

  @Test
  void waitersAreServedInOrderAndASmallerOneDoesNotPassALargerOne() {
    // K-V7
    ScriptedCluster c = cluster(3, 4, 0);
    String s = server(c);
    String n = client(c, s);
    long a = c.acquire(n, Claim.permits("k", 2, 3));
    long big = c.acquire(s, Claim.permits("k", 2, 3));
    long small = c.acquire(n, Claim.permits("k", 1, 3));
    assertTrue(held(c, a));
    assertFalse(held(c, big));
    assertFalse(held(c, small), "one permit is free, but the request for two came first");
    c.release(a);
    assertTrue(held(c, big) && held(c, small));
    assertTrue(c.req(small).granted.fencingToken() > c.req(big).granted.fencingToken(), "in order");
  }

  @Test
  void handlesOfOneNameMustAgreeWithNoBucketSize() {
    ScriptedCluster c = cluster(3, 5, 0);
    String s = server(c);
    String n = client(c, s);
    long a = c.acquire(n, Claim.permits("k", 1, 3));
    long b = c.acquire(n, Claim.permits("k", 1, 5));
    assertTrue(held(c, a));
    assertEquals(Output.Failure.REFUSED, c.req(b).failed.failure());
    assertTrue(c.req(b).failed.detail().contains("differs from the 3"), c.req(b).failed.detail());
    c.release(a);
    assertTrue(held(c, c.acquire(n, Claim.permits("k", 1, 5))), "free again: the next handle sets the size");
    ScriptedCluster four = cluster(3, 6, 4);
    String s4 = server(four);
    long odd = four.acquire(client(four, s4), Claim.permits("k", 1, 10));
    assertEquals(Output.Failure.REFUSED, four.req(odd).failed.failure(), "10 is not a multiple of 4");
  }

  @Test
  void anEntryCostsThreeMessagesFromAnotherNodeAndNoneOnTheServer() {
    ScriptedCluster c = cluster(3, 7, 0);
    String s = server(c);
    String n = client(c, s);
    var before = new HashMap<>(c.sentByType);
    long a = c.acquire(n, Claim.permits("k", 1, 2));
    c.release(a);
    assertEquals(3, c.perEntryMessages(before), "messages: " + c.sentByType);
    before = new HashMap<>(c.sentByType);
    long b = c.acquire(s, Claim.permits("k", 1, 2));
    c.release(b);
    assertEquals(0, c.perEntryMessages(before));
  }

  @Test
  void theFreePermitsAreTheServersWord() {
    ScriptedCluster c = cluster(3, 8, 0);
    String s = server(c);
    String n = client(c, s);
    String other = c.ids.stream().filter(id -> !id.equals(s) && !id.equals(n)).findFirst().orElseThrow();
    assertEquals(3, c.permits(other, "k", 3));
    long a = c.acquire(n, Claim.permits("k", 2, 3));
    assertTrue(held(c, a));
    assertEquals(1, c.permits(other, "k", 3), "a node that never asked for it hears the server");
    c.release(a);
    assertEquals(3, c.permits(other, "k", 3));
  }

  @Test
  void aPermitsQueryTheServerLeavesUnansweredEndsAfterThePeerTimeoutWithTheNodesLastWord() {
    // the server's answer held back on a link that stays up: the query ends by what the node knows, not never
    // (a node that kept every unanswered query grew without bound while a caller polled a quiet server)
    ScriptedCluster c = cluster(3, 8, 0);
    String s = server(c);
    String n = client(c, s);
    String other = c.ids.stream().filter(id -> !id.equals(s) && !id.equals(n)).findFirst().orElseThrow();
    assertTrue(held(c, c.acquire(n, Claim.permits("k", 2, 3))));
    assertEquals(1, c.permits(other, "k", 3), "the server's word");
    c.slow(s, other);
    long q = c.askPermits(other, "k", 3);
    c.advance(PEER_TIMEOUT - MS);
    assertNull(c.permitsAnswer(q), "the server may still answer");
    c.advance(2 * MS);
    assertEquals(1, c.permitsAnswer(q), "after peerTimeout: the server's last word, by the node");
    c.fast(s, other); // the late answer ends nothing more (a second answer would fail the cluster's check)
    assertEquals(1, c.permitsAnswer(q));
  }

  @Test
  void aHolderCutOffIsToldFirstAndItsPermitsComeBackATermAfterItsLastRenewal() {
    // K-V6
    ScriptedCluster c = cluster(3, 9, 0);
    String s = server(c);
    String n = client(c, s);
    String other = c.ids.stream().filter(id -> !id.equals(s) && !id.equals(n)).findFirst().orElseThrow();
    long a = c.acquire(n, Claim.permits("k", 2, 2));
    assertTrue(held(c, a));
    long b = c.acquire(other, Claim.permits("k", 1, 2));
    c.cut(n, s);
    c.until(() -> c.req(a).lost != null || held(c, b), 2 * T, "the holder loses or the waiter gets them");
    assertNotNull(c.req(a).lost, "the cut-off holder is told first");
    assertEquals(Output.LostReason.EXPIRED, c.req(a).lost.reason());
    assertFalse(held(c, b), "not before the server's term ends");
    c.until(() -> held(c, b), T, "the waiter gets the permits");
    assertTrue(c.req(b).grantedAt >= c.req(a).lostAt);
  }

  @Test
  void aHolderWhoseRenewalsStopIsToldFirstAndItsPermitsWaitAQuarterTermForItsListeners() {
    // DESIGN's lease rule: the lost listeners run before the backend can grant the permits to another; the node is not
    // cut off, and keeps the grant at the server a quarter term after the loss, as the server's term would
    long gap = lossToNextGrant(false);
    assertTrue(gap >= T / 4, "the waiter was granted " + gap / MS + " ms after the holder was told it lost them");
  }

  @Test
  void givingTheGrantBackWithTheLossIsCaught() {
    long gap = lossToNextGrant(true);
    assertTrue(gap < T / 4, "the mutation gave the waiter the permits " + gap / MS + " ms after the loss: the test"
        + " above would not see it");
  }

  private static long lossToNextGrant(boolean mutation) {
    ScriptedCluster c = cluster(3, 16, 0);
    String s = server(c);
    String n = client(c, s);
    String other = c.ids.stream().filter(id -> !id.equals(s) && !id.equals(n)).findFirst().orElseThrow();
    core(c, n).mutationGiveBackOnLoss = mutation;
    return c.lossToNextGrant(n, Claim.permits("k", 2, 2), other, Claim.permits("k", 1, 2), 2 * T);
  }

  @Test
  void aClientThatDiesBeforeItHearsOfItsGrantGivesItsPermitsBackByItsSession() {
    // the DESIGN race: the server granted, the grant never arrived
    ScriptedCluster c = cluster(3, 10, 0);
    String s = server(c);
    String n = client(c, s);
    String other = c.ids.stream().filter(id -> !id.equals(s) && !id.equals(n)).findFirst().orElseThrow();
    c.slow(s, n);
    long a = c.acquire(n, Claim.permits("k", 2, 2));
    assertEquals(List.of(2), counts(c, s, "k"), "granted on the server");
    assertNull(c.req(a).granted, "and on its way");
    c.crash(n);
    long b = c.acquire(other, Claim.permits("k", 2, 2));
    assertFalse(held(c, b));
    c.until(() -> held(c, b), 2 * T, "the dead client's permits come back");
  }

  @Test
  void withoutSessionExpiryTheDeadClientsPermitsNeverComeBack() {
    // design §6.8's mutationNoSessionExpiry, caught here: the simulator restarts every node at its end, and a
    // restarted node's restatement frees its earlier sessions, so only a node that stays down needs the expiry
    ScriptedCluster c = cluster(3, 10, 0);
    String s = server(c);
    String n = client(c, s);
    String other = c.ids.stream().filter(id -> !id.equals(s) && !id.equals(n)).findFirst().orElseThrow();
    core(c, s).mutationNoSessionExpiry = true;
    long a = c.acquire(n, Claim.permits("k", 2, 2));
    assertTrue(held(c, a));
    c.crash(n);
    long b = c.acquire(other, Claim.permits("k", 2, 2));
    c.advance(4 * T);
    assertFalse(held(c, b), "the mutation gives the permits back all the same");
    core(c, s).mutationNoSessionExpiry = false;
    c.until(() -> held(c, b), 2 * T, "with the expiry on again, they come back");
  }

  @Test
  void aNewServerTakesBackWhatTheHoldersRestateAndGrantsNothingNewInItsGrace() {
    // L-V7 for buckets: the server crashes; holders keep their permits through the failover
    ScriptedCluster c = cluster(3, 11, 0);
    String s = server(c);
    List<String> clients = c.ids.stream().filter(id -> !id.equals(s)).toList();
    long a = c.acquire(clients.get(0), Claim.permits("k", 2, 3));
    long tok = c.req(a).granted.fencingToken();
    assertTrue(held(c, a));
    c.crash(s);
    c.until(() -> clients.stream().anyMatch(id -> core(c, id).serving()), 2_000 * MS, "a new server");
    long b = c.acquire(clients.get(1), Claim.permits("k", 2, 3));
    for (int i = 0; i < 20; i++) {
      c.advance(T / 6);
      c.renew(a);
    }
    assertTrue(held(c, a) && c.req(a).lost == null, "the holder kept its permits: " + c.req(a).lost);
    assertFalse(held(c, b), "2 of 3 are still out");
    c.release(a);
    c.until(() -> held(c, b), T, "the waiter gets them once they come back");
    assertTrue(c.req(b).granted.fencingToken() > tok, "a new term's tokens are above the old ones");
  }

  @Test
  void twoRequestsThatEachOpenANewBucketAtOnceShareOneBucket() {
    // the DESIGN race "two buckets created at once": bucket 1 is full and two nodes ask at the same moment; the
    // seed's ETS could make bucket 2 twice over; one server step per request makes it once
    ScriptedCluster c = cluster(3, 14, 4);
    String s = server(c);
    List<String> clients = c.ids.stream().filter(id -> !id.equals(s)).toList();
    assertTrue(held(c, c.acquire(s, Claim.permits("k", 4, 8))));
    assertEquals(List.of(4), counts(c, s, "k"));
    long a = c.acquireNoDrain(clients.get(0), Claim.permits("k", 1, 8));
    long b = c.acquireNoDrain(clients.get(1), Claim.permits("k", 1, 8));
    c.drain();
    assertTrue(held(c, a) && held(c, b));
    assertEquals(List.of(4, 2), counts(c, s, "k"), "one new bucket, holding both");
    assertEquals(2, core(c, s).buckets("k").highest());
  }

  @Test
  void resizingDownAndUpWhilePermitsAreOutKeepsEachHandlesRule() {
    // the DESIGN race "resizing down and up while permits are out" (§6.9 (3)): handles of 12, 24 and 12 interleave
    // while permits are out; a request with r resources is granted k permits iff total + k <= r·b, at every step
    ScriptedCluster c = cluster(3, 15, 4);
    String s = server(c);
    String n = client(c, s);
    long a = c.acquire(n, Claim.permits("k", 10, 12));
    assertEquals(List.of(4, 4, 2), counts(c, s, "k"));
    long b = c.acquire(s, Claim.permits("k", 4, 24));
    assertTrue(held(c, a) && held(c, b), "grown: 14 out, above the first handle's 12");
    assertEquals(List.of(4, 4, 4, 2), counts(c, s, "k"));
    long small = c.acquire(n, Claim.permits("k", 1, 12), true);
    assertEquals(Output.Failure.CONTENDED, c.req(small).failed.failure(), "shrunk: 14 + 1 > 12");
    c.release(a);
    assertEquals(List.of(4, 0, 0, 0), counts(c, s, "k"), "released from the top down, the highest stays");
    assertEquals(4, core(c, s).buckets("k").highest());
    long again = c.acquire(n, Claim.permits("k", 1, 12), true);
    assertTrue(held(c, again), "4 + 1 <= 12");
    assertEquals(List.of(4, 1, 0, 0), counts(c, s, "k"));
    long tooMany = c.acquire(s, Claim.permits("k", 20, 24), true);
    assertEquals(Output.Failure.CONTENDED, c.req(tooMany).failed.failure(), "5 + 20 > 24");
    long all = c.acquire(s, Claim.permits("k", 19, 24), true);
    assertTrue(held(c, all), "5 + 19 = 24: every one of six buckets full");
    assertEquals(List.of(4, 4, 4, 4, 4, 4), counts(c, s, "k"));
    long last = c.acquire(n, Claim.permits("k", 1, 12), true);
    assertEquals(Output.Failure.CONTENDED, c.req(last).failed.failure());
    assertTrue(held(c, b) && held(c, again) && held(c, all));
  }

  @Test
  void locksAreOnePermitSemaphoresOfTheirOwn() {
    ScriptedCluster c = cluster(3, 12, 0);
    String s = server(c);
    String n = client(c, s);
    long lock = c.acquire(n, Claim.exclusive("x"));
    long sem = c.acquire(n, Claim.permits("x", 1, 1));
    assertTrue(held(c, lock) && held(c, sem), "a lock and a semaphore of one name are apart");
    long again = c.acquire(s, Claim.exclusive("x"), true);
    assertEquals(Output.Failure.CONTENDED, c.req(again).failed.failure());
  }

  @Test
  void aRequestWithNoServerFailsAfterThePeerTimeout() {
    ScriptedCluster c = cluster(3, 13, 0);
    String s = server(c);
    String n = client(c, s);
    for (String id : c.ids) {
      if (!id.equals(n)) {
        c.cut(n, id);
      }
    }
    long start = c.now;
    long a = c.acquire(n, Claim.permits("k", 1, 1));
    c.until(() -> c.req(a).failed != null, 3 * PEER_TIMEOUT, "the wait fails");
    assertEquals(Output.Failure.UNAVAILABLE, c.req(a).failed.failure());
    assertTrue(c.now - start >= PEER_TIMEOUT, "not before peerTimeout");
  }
}
