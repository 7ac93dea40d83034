package dev.tumbler.peer.bakery;

import static dev.tumbler.peer.bakery.BakeryCluster.MS;
import static dev.tumbler.peer.bakery.BakeryCluster.T;
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
  void aDropTicketLostInABreakHoldsTheNameUntilTheTicketExpiresNotForEver() {
    BakeryCluster c = new BakeryCluster(3, 99);
    c.startAll();
    c.awaitView();
    String name = c.nameOwnedBy(Map.of("n2", "n2", "n3", "n3"));
    long h = c.acquire("n2", Claim.exclusive(name));
    assertNotNull(c.req(h).granted);
    c.cut("n2", "n3");
    c.release(h); // the DropTicket reaches n1 only: n3 still sees the ticket active
    long released = c.now;
    assertEquals(1, c.bakery("n3").tickets(name).size(), "n3 missed the release");
    long w = c.acquire("n3", Claim.exclusive(name));
    c.advance(5 * MS);
    assertNull(c.req(w).granted, "n3's own table refuses while it believes the ticket active");
    c.heal("n2", "n3");
    // n2's restatement does not list the ticket, but a restatement removes no active ticket: one its sender
    // no longer lists may be held through another owner (a relock), and removing it let a writer in beside
    // its holder (sim seed 189354)
    assertNull(c.req(w).granted, "the restatement removed an active ticket");
    for (int i = 0; i < 40 && c.req(w).granted == null; i++) {
      c.advance(T / 10);
    }
    assertNotNull(c.req(w).granted, "the stale ticket expired, and n3 was granted");
    assertTrue(c.now - released <= T + T / 5, "granted " + (c.now - released) / MS + " ms after the release, T is "
        + T / MS + " ms");
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

  @Test
  void aLeaderThatRefusedAnActivationGrantsItUnaskedOnceItsTableAllows() {
    BakeryCluster c = new BakeryCluster(3, 99);
    c.startAll();
    c.awaitView();
    String name = c.nameOwnedBy(Map.of("n1", "n1", "n3", "n3"));
    long h = c.acquire("n1", Claim.exclusive(name));
    long g = c.req(h).grantedAt;
    long w = c.acquire("n3", Claim.exclusive(name));
    c.advance(40 * MS);
    c.slow("n1", "n3"); // n3 misses the renewal for now: its deadline for the holder stays the older one
    c.renew(h);
    assertEquals(1, c.req(h).renewed.size(), "renewed by n1 and n2");
    c.advanceTo(g + BakeryCluster.T);
    assertNull(c.req(w).granted, "n3 dropped the ticket and asked, but n1 and n2 still hold it: refused");
    assertNull(c.req(h).lost, "the renewed holder is still within its window");
    c.advanceTo(c.req(h).validUntil);
    assertNotNull(c.req(h).lost, "the holder, not renewed again, lost it by its own clock");
    assertNull(c.req(w).granted, "not before the leaders' own term: the lost holder's listeners get T/4");
    // n1 and n2 expire the ticket at their own deadline (n3's copy of n1's drop is held back): n2's table now
    // allows the activation it refused, and n2 says so unasked; n3's own table changes no more, so nothing
    // else would ask again
    c.until(() -> c.req(w).granted != null, BakeryCluster.T / 2, "granted on n2's unasked answer");
    assertTrue(c.req(w).grantedAt >= c.req(h).lostAt + BakeryCluster.T / 4, "granted "
        + (c.req(w).grantedAt - c.req(h).lostAt) / MS + " ms after the holder's loss");
    c.fast("n1", "n3");
  }
}
