package dev.tumbler.peer.election;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class ElectionSettingsTest {

  private static final long MS = 1_000_000;

  @Test
  void defaultsFollowAppendixA() {
    ElectionSettings d = ElectionSettings.defaults(3, 0);
    assertEquals(new ElectionSettings(3, 14, 10_000 * MS, 2_000 * MS, 500 * MS, 3_000 * MS, 0), d);
    assertEquals(d.withPriority(1), new ElectionSettings(3, 1, 10_000 * MS, 2_000 * MS, 500 * MS, 3_000 * MS, 0));
    ElectionSettings sim = ElectionSettings.of(1, 8, Duration.ofMillis(20), Duration.ofMillis(30), 7);
    assertEquals(new ElectionSettings(1, 8, 20 * MS, 30 * MS, 7_500_000, 45 * MS, 7), sim);
  }

  @Test
  void leaseConstraintOfE7IsEnforcedExactly() {
    long lease = 30 * MS;
    long beat = 8 * MS;
    long least = ElectionSettings.minLeaderTimeout(lease, beat);
    assertEquals(Math.ceilDiv(lease * 105, 95) + beat, least);
    new ElectionSettings(1, 1, 0, lease, beat, least, 0);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new ElectionSettings(1, 1, 0, lease, beat, least - 1, 0));
    for (String named : new String[] {"leaderTimeout", "leaderLease", "heartbeat", "ρ = 5%"}) {
      assertTrue(e.getMessage().contains(named), e.getMessage());
    }
  }

  @Test
  void everyBadValueIsRefusedNamingItsParameter() {
    long s = 1_000 * MS;
    rejects("leaderCount", () -> new ElectionSettings(0, 1, 0, s, s / 4, 2 * s, 0));
    rejects("leaderCount", () -> new ElectionSettings(17, 1, 0, s, s / 4, 2 * s, 0));
    rejects("priority", () -> new ElectionSettings(3, 0, 0, s, s / 4, 2 * s, 0));
    rejects("priority", () -> new ElectionSettings(3, 16, 0, s, s / 4, 2 * s, 0));
    rejects("electionDelay", () -> new ElectionSettings(3, 1, -1, s, s / 4, 2 * s, 0));
    rejects("electionDelay", () -> ElectionSettings.of(3, 1, Duration.ofDays(2), Duration.ofSeconds(1), 0));
    rejects("leaderLease", () -> new ElectionSettings(3, 1, 0, 0, 1, 2 * s, 0));
    rejects("leaderLease", () -> ElectionSettings.of(3, 1, Duration.ZERO, Duration.ofSeconds(-1), 0));
    rejects("heartbeat", () -> new ElectionSettings(3, 1, 0, s, 0, 2 * s, 0));
    rejects("heartbeat", () -> new ElectionSettings(3, 1, 0, s, s, 3 * s, 0));
    rejects("leaderTimeout", () -> new ElectionSettings(3, 1, 0, s, s / 4, 0, 0));
    rejects("initialTerm", () -> new ElectionSettings(3, 1, 0, s, s / 4, 2 * s, -1));
  }

  private static void rejects(String parameter, Executable make) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, make);
    assertTrue(e.getMessage().startsWith(parameter), e.getMessage());
  }
}
