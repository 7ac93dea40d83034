package dev.tumbler.peer.bakery;

import static dev.tumbler.peer.bakery.BakeryCluster.MS;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.core.Claim;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Each test-only mutation of §3.8 changes behaviour in a scripted run, and the cluster's checks catch the ones
 * a short script can break (the simulator hunts the rest with seeds).
 */
class BakeryMutationTest {

  private static BakeryCluster cluster(Consumer<BakeryCore> mutation) {
    BakeryCluster c = new BakeryCluster(3, 31);
    c.startAll();
    c.awaitView();
    for (String id : c.ids) {
      mutation.accept(c.bakery(id));
    }
    return c;
  }

  /** Sequential entries of one name from one client. */
  private static void sequentialEntries(BakeryCluster c) {
    for (int i = 0; i < 3; i++) {
      long id = c.acquire("n1", Claim.exclusive("x"));
      assertNotNull(c.req(id).granted);
      c.advance(MS);
      c.release(id);
    }
  }

  @Test
  void numbersFromLiveTicketsRepeatTokens() {
    sequentialEntries(cluster(b -> { }));
    BakeryCluster m = cluster(b -> b.mutations.numberFromLiveTickets = true);
    AssertionError e = assertThrows(AssertionError.class, () -> sequentialEntries(m));
    assertTrue(e.getMessage().contains("F1") || e.getMessage().contains("F2"), e.getMessage());
  }

  /** n1 is cut off from the other leaders; n1 and n2 both ask for a name each owns. */
  private static void isolatedOwnerAndMajority(BakeryCluster c) {
    c.cut("n1", "n2");
    c.cut("n1", "n3");
    String name = "q";
    long a = c.acquire("n1", Claim.exclusive(name));
    long b = c.acquire("n2", Claim.exclusive(name));
    assertNotNull(c.req(b).granted, "the majority side grants");
    assertNull(c.req(a).granted, "the isolated leader cannot");
  }

  @Test
  void aQuorumOffByOneLetsAnIsolatedOwnerGrant() {
    isolatedOwnerAndMajority(cluster(b -> { }));
    BakeryCluster m = cluster(b -> b.mutations.quorumOffByOne = true);
    AssertionError e = assertThrows(AssertionError.class, () -> isolatedOwnerAndMajority(m));
    assertTrue(e.getMessage().contains("exclusion") || e.getMessage().contains("isolated"), e.getMessage());
  }

  /** n1 and n2 cannot talk; n2 holds a name through n3; n1 then asks for it through its own table. */
  private static void partialTables(BakeryCluster c) {
    c.cut("n1", "n2");
    String name = c.nameOwnedBy(Map.of("n1", "n1", "n2", "n2"));
    long h = c.acquire("n2", Claim.exclusive(name));
    assertNotNull(c.req(h).granted, "granted by n2 and n3");
    long w = c.acquire("n1", Claim.exclusive(name));
    c.advance(5 * MS);
    assertNull(c.req(w).granted, "n3 refuses the activation: it knows the holder");
  }

  @Test
  void activatingOnTheOwnersTableAloneBreaksExclusion() {
    partialTables(cluster(b -> { }));
    BakeryCluster m = cluster(b -> b.mutations.activateOnOwnTable = true);
    AssertionError e = assertThrows(AssertionError.class, () -> partialTables(m));
    assertTrue(e.getMessage().contains("exclusion"), e.getMessage());
  }

  /** Two clients race for one name; returns the ticket states the owners published, in order. */
  private static List<String> race(BakeryCluster c) {
    String name = c.nameOwnedBy(Map.of("n1", "n1", "n2", "n2"));
    c.trace.clear();
    long a = c.acquireNoDrain("n1", Claim.exclusive(name));
    long b = c.acquireNoDrain("n2", Claim.exclusive(name));
    c.drain();
    List<String> states = new ArrayList<>(c.trace);
    c.advance(MS);
    long first = c.req(a).granted != null ? a : b;
    c.release(first);
    c.release(first == a ? b : a);
    return states;
  }

  @Test
  void skippingTheEnteringWaitMakesATicketReadyEarlier() {
    List<String> normal = race(cluster(b -> { }));
    List<String> mutated = race(cluster(b -> b.mutations.skipEnteringWait = true));
    assertNotEquals(normal, mutated, "the mutation must change the run:\n" + normal + "\n" + mutated);
    // without the mutation, the ticket that saw the other request entering is READY only after that one added
    // its own ticket and exited
    int firstReady = -1;
    int addedCount = 0;
    for (int i = 0; i < normal.size(); i++) {
      if (normal.get(i).endsWith("ADDED")) {
        addedCount++;
      }
      if (normal.get(i).endsWith("READY") && firstReady < 0) {
        firstReady = i;
        assertTrue(addedCount == 2, "the first ticket waited for the other to be added: " + normal);
      }
    }
  }
}
