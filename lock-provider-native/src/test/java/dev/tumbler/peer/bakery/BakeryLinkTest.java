package dev.tumbler.peer.bakery;

import static dev.tumbler.peer.bakery.BakeryCluster.MS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.core.Claim;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Links that break and come back (§2.5): restatement repairs what was lost, and only what the sender owns. */
class BakeryLinkTest {

  @Test
  void aDropTicketLostInABreakIsRepairedByTheRestatement() {
    BakeryCluster c = new BakeryCluster(3, 99);
    c.startAll();
    c.awaitView();
    String name = c.nameOwnedBy(Map.of("n2", "n2", "n3", "n3"));
    long h = c.acquire("n2", Claim.exclusive(name));
    assertNotNull(c.req(h).granted);
    c.cut("n2", "n3");
    c.release(h); // the DropTicket reaches n1 only: n3 still sees the ticket active
    assertEquals(1, c.bakery("n3").tickets(name).size(), "n3 missed the release");
    long w = c.acquire("n3", Claim.exclusive(name));
    c.advance(5 * MS);
    assertNull(c.req(w).granted, "n3's own table refuses while it believes the ticket active");
    c.heal("n2", "n3");
    assertNotNull(c.req(w).granted, "n2's restatement does not list the ticket: n3 forgets it at once");
    assertTrue(c.now < c.req(h).validUntil, "well before the stale ticket would have expired");
  }

  @Test
  void aClientThatRestartedLosesItsRecordsAtTheOwner() {
    BakeryCluster c = new BakeryCluster(5, 5);
    c.startAll();
    c.awaitView();
    List<String> leaders = c.leaders();
    String client = c.ids.stream().filter(i -> !leaders.contains(i)).findFirst().orElseThrow();
    long h = c.acquire(client, Claim.exclusive("x"));
    assertNotNull(c.req(h).granted);
    c.crash(client);
    c.start(client); // a new incarnation restates nothing: its old grant is dropped everywhere
    String other = leaders.get(0);
    long w = c.acquire(other, Claim.exclusive("x"), true);
    assertNotNull(c.req(w).granted, "the dead client's grant is gone at once");
  }
}
