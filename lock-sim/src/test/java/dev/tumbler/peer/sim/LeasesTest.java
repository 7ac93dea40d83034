package dev.tumbler.peer.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The lease rules (I-4) on hand-made windows: each accepts what it should and names what it refuses. */
class LeasesTest {
  private static final long T = 120;
  private final Leases leases = new Leases(T);

  private static void refused(String rule, Runnable r) {
    IllegalStateException e = assertThrows(IllegalStateException.class, r::run);
    assertTrue(e.getMessage().startsWith(rule + ":"), e.getMessage());
  }

  @Test
  void theTrustIsThreeQuartersOfTheTerm() {
    assertEquals(90, Leases.trust(120));
    assertEquals(3 * 1_000_000_000L / 4, Leases.trust(1_000_000_000L));
    assertEquals(Long.MAX_VALUE / 4 * 3 + 2, Leases.trust(Long.MAX_VALUE)); // no overflow
  }

  @Test
  void aGrantIsTrustedFromItsEchoForThreeQuartersOfTheTerm() {
    leases.granted(1, 1_005, 1_000, 1_090);
    assertEquals(new Leases.Window(1_000, 1_090), leases.window(1));
    assertTrue(leases.window(1).validAt(1_089));
    assertFalse(leases.window(1).validAt(1_090));
    refused("lease", () -> leases.granted(2, 1_005, 1_000, 1_120)); // the server's T, not the client's 3T/4
    refused("lease", () -> leases.granted(3, 1_005, 1_010, 1_100)); // trusted from a moment still ahead
    refused("lease", () -> leases.granted(4, 1_095, 1_000, 1_090)); // over before it was reported
    refused("lease", () -> leases.granted(5, 1_005, Long.MIN_VALUE, Long.MAX_VALUE)); // no window in a leased run
  }

  @Test
  void renewalsComeWhileValidNeverGoBackAndKeepTheRule() {
    leases.granted(1, 1_005, 1_000, 1_090);
    leases.renewed(1, 1_040, 1_030, 1_120);
    leases.renewed(1, 1_041, 1_030, 1_120); // the same echo again: allowed
    refused("renewal", () -> leases.renewed(1, 1_050, 1_020, 1_110)); // sentAt went back
    refused("renewal", () -> leases.renewed(1, 1_050, 1_040, 1_200)); // not sentAt + 3T/4
    refused("renewal", () -> leases.renewed(1, 1_120, 1_100, 1_190)); // its window had closed: no revival
    refused("renewal", () -> leases.renewed(2, 1_050, 1_040, 1_130)); // never granted
    leases.ended(1);
    refused("renewal", () -> leases.renewed(1, 1_050, 1_040, 1_130)); // ended
    assertEquals(Leases.Window.UNBOUNDED, leases.window(1));
  }

  @Test
  void aRunWithoutTermsHasUnboundedGrantsOnly() {
    Leases none = new Leases(0);
    none.granted(1, 5, Long.MIN_VALUE, Long.MAX_VALUE);
    none.renewed(1, 6, Long.MIN_VALUE, Long.MAX_VALUE);
    assertTrue(none.window(1).validAt(Long.MAX_VALUE - 1));
    refused("lease", () -> none.granted(2, 5, 0, 90));
    refused("renewal", () -> none.renewed(1, 7, 0, 90));
  }
}
