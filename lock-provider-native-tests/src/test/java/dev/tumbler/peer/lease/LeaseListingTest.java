package dev.tumbler.peer.lease;

import static dev.tumbler.peer.ScriptedCluster.MS;
import static dev.tumbler.peer.ScriptedCluster.T;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.ScriptedCluster;
import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.composite.Semaphores;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.election.ElectionParameters;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Listings of what is held ({@code Input.ListQuery}) on 3 nodes serving {@code lease} locks and semaphores beside them:
 * the composite asks both cores and answers once; each asks its server; a node lists another's grants by the server's
 * word (a lease with the highest token its node's cached grants can reach, permits with their own token), its own as it
 * knows them (a released lease, cached, at once gone); names outside the prefixes are left out; and a node that
 * reaches no server cannot say. (That an algorithm with no server cannot say: {@code NativeListingTest}.)
 */
class LeaseListingTest {

  private static ScriptedCluster cluster() {
    ScriptedCluster c = new ScriptedCluster(3, 5, LeaseAlgorithm.LEASE, LeaseAlgorithmSettings.simulation(),
        new Semaphores(0, T, ElectionParameters.simulation()));
    c.startAll();
    return c;
  }

  private static String server(ScriptedCluster c) {
    c.until(() -> c.cores.keySet().stream().anyMatch(id -> lease(c, id).serving()), 2_000 * MS, "a server");
    c.advance(T + 50 * MS); // its grace
    return c.cores.keySet().stream().filter(id -> lease(c, id).serving()).findFirst().orElseThrow();
  }

  private static LeaseCore lease(ScriptedCluster c, String id) {
    return (LeaseCore) c.cores.get(id).core(Channel.LOCK);
  }

  @Test
  void aNodeListsAnothersGrantsByTheServersWordAndItsOwnAsItKnowsThem() {
    ScriptedCluster c = cluster();
    String server = server(c);
    List<String> others = c.ids.stream().filter(id -> !id.equals(server)).toList();
    String holder = others.get(0);
    String lister = others.get(1);
    long lock = c.acquire(holder, Claim.exclusive("1:a/job"));
    long permits = c.acquire(holder, Claim.permits("1:a/pool", 2, 3));
    long outside = c.acquire(holder, Claim.exclusive("1:b/job"));
    assertTrue(c.req(lock).held(c.now) && c.req(permits).held(c.now) && c.req(outside).held(c.now), "not granted");

    List<Output.Listed> seen = c.listing(lister, "1:a/");
    assertNotNull(seen, "a lease cluster cannot say");
    assertEquals(2, seen.size(), "listed: " + seen);
    Output.Listed job = ScriptedCluster.named(seen, "1:a/job").getFirst();
    assertEquals(Claim.Mode.EXCLUSIVE, job.mode());
    assertTrue(job.holder().startsWith(holder), job + " names its node " + holder);
    assertFalse(job.tokenIsHolders(), "another node's lease is listed with the highest token its cache reaches");
    long granted = c.req(lock).granted.fencingToken();
    assertTrue(job.token() >= granted && job.token() < granted + LeaseCore.MAX_LOCAL, job + " against " + granted);
    assertTrue(job.remainingNanos() > 0 && job.remainingNanos() <= T, "time left of " + job);
    Output.Listed pool = ScriptedCluster.named(seen, "1:a/pool").getFirst();
    assertEquals(Claim.Mode.PERMITS, pool.mode());
    assertEquals(2, pool.permits());
    assertTrue(pool.tokenIsHolders());
    assertEquals(c.req(permits).granted.fencingToken(), pool.token(), "token of " + pool);

    List<Output.Listed> own = c.listing(holder, "1:a/");
    Output.Listed ownJob = ScriptedCluster.named(own, "1:a/job").getFirst();
    assertTrue(ownJob.tokenIsHolders(), "the holder's node knows its own token: " + ownJob);
    assertEquals(granted, ownJob.token());

    c.release(lock);
    c.release(permits);
    assertTrue(ScriptedCluster.named(c.listing(holder, "1:a/"), "1:a/job").isEmpty(), "the holder's node lists its cached lease");
    assertTrue(ScriptedCluster.named(c.listing(lister, "1:a/"), "1:a/pool").isEmpty(), "released permits still listed");
    // the server hears of the cached lease at the node's inactive renewal, half a term on
    c.advance(T);
    assertTrue(c.listing(lister, "1:a/").isEmpty(), "a released lease listed a term on");
  }

  @Test
  void withNoServerReachableTheListingSaysItCannotTell() {
    ScriptedCluster c = cluster();
    String server = server(c);
    String alone = c.ids.stream().filter(id -> !id.equals(server)).findFirst().orElseThrow();
    for (String other : c.ids) {
      if (!other.equals(alone)) {
        c.cut(alone, other);
      }
    }
    c.advance(T);
    assertNull(c.listing(alone, "1:a/"), "a node cut off from every server listed what it cannot know");
  }
}
