package dev.tumbler.peer.bakery;

import static dev.tumbler.peer.bakery.BakeryCluster.MS;
import static dev.tumbler.peer.bakery.BakeryCluster.T;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.ScriptedCluster;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Output;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Listings of what is held ({@code Input.ListQuery}) on 4 bakery nodes, 3 of them leaders: a node that leads nothing
 * lists every node's grants by a majority of the leaders' tables (holders, modes, the holders' own tokens, time left
 * within a term), readers side by side, names outside the prefixes left out, a release gone; with one leader out of
 * reach the other two still know every grant; with two out of reach the node cannot say.
 */
class BakeryListingTest {

  private static BakeryCluster cluster() {
    BakeryCluster c = new BakeryCluster(4, 4711);
    c.startAll();
    c.awaitView();
    return c;
  }

  private static String notLeading(BakeryCluster c) {
    return c.ids.stream().filter(id -> !c.isLeader(id)).findFirst().orElseThrow();
  }

  @Test
  void aNodeListsEveryGrantByAMajorityOfTheLeaders() {
    BakeryCluster c = cluster();
    String lister = notLeading(c);
    List<String> leaders = c.leaders();
    String holder = leaders.get(0);
    String reader = leaders.get(1);
    long job = c.acquire(holder, Claim.exclusive("1:a/job"));
    long read1 = c.acquire(holder, Claim.read("1:a/doc"));
    long read2 = c.acquire(reader, Claim.read("1:a/doc"));
    long outside = c.acquire(reader, Claim.exclusive("1:b/job"));
    for (long id : List.of(job, read1, read2, outside)) {
      assertTrue(c.req(id).held(c.now), "request " + id + " not granted");
    }

    List<Output.Listed> seen = c.listing(lister, "1:a/");
    assertNotNull(seen, "a bakery node that reaches every leader cannot say");
    assertEquals(3, seen.size(), "listed: " + seen);
    Output.Listed j = ScriptedCluster.named(seen, "1:a/job").getFirst();
    assertEquals(Claim.Mode.EXCLUSIVE, j.mode());
    assertTrue(j.holder().startsWith(holder), j + " names its node " + holder);
    assertTrue(j.tokenIsHolders(), "a bakery ticket's key is the holder's token: " + j);
    assertEquals(c.req(job).granted.fencingToken(), j.token(), "token of " + j);
    assertTrue(j.remainingNanos() > 0 && j.remainingNanos() <= T, "time left of " + j);
    List<Output.Listed> doc = ScriptedCluster.named(seen, "1:a/doc");
    assertEquals(2, doc.size(), "two readers of 1:a/doc: " + seen);
    assertTrue(doc.stream().allMatch(d -> d.mode() == Claim.Mode.READ), "readers listed as " + doc);
    assertEquals(List.of(holder, reader).stream().sorted().toList(),
        doc.stream().map(d -> d.holder().split(" ")[0]).sorted().toList(), "holders of 1:a/doc");

    Output.Listed own = ScriptedCluster.named(c.listing(holder, "1:a/"), "1:a/job").getFirst();
    assertEquals(j.token(), own.token(), "the holder's own listing: " + own);

    c.release(job);
    assertTrue(ScriptedCluster.named(c.listing(holder, "1:a/"), "1:a/job").isEmpty(), "the holder still lists its release");
    c.advance(50 * MS);
    assertTrue(ScriptedCluster.named(c.listing(lister, "1:a/"), "1:a/job").isEmpty(), "a released lock still listed");
    assertEquals(2, c.listing(lister, "1:a/").size(), "the readers are still listed");
  }

  @Test
  void oneLeaderOutOfReachLeavesAMajorityThatKnowsTwoLeaveNone() {
    BakeryCluster c = cluster();
    String lister = notLeading(c);
    List<String> leaders = c.leaders();
    long job = c.acquire(leaders.get(0), Claim.exclusive("1:a/job"));
    assertTrue(c.req(job).held(c.now), "not granted");

    // the holder's node is the one out of reach: the other two leaders' tables still have its ticket
    c.cut(lister, leaders.get(0));
    List<Output.Listed> seen = c.listing(lister, "1:a/");
    assertNotNull(seen, "two leaders of three answered, and the node cannot say");
    assertEquals(c.req(job).granted.fencingToken(), ScriptedCluster.named(seen, "1:a/job").getFirst().token(), "listed: " + seen);

    c.cut(lister, leaders.get(1));
    assertNull(c.listing(lister, "1:a/"), "one leader of three answered, and the node listed what it cannot know");
  }
}
