package dev.tumbler.peer.bakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.peer.algorithm.Algorithms;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.election.ElectionSettings;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The {@code bakery} descriptor and its URL settings (§3.5, Appendix A). */
class BakeryAlgorithmTest {

  private static final BakeryAlgorithm B = BakeryAlgorithm.BAKERY;

  @Test
  void describesItselfAsSection35Says() {
    assertEquals("bakery", B.name());
    assertSame(B, Algorithms.byName("bakery").orElseThrow());
    assertEquals(List.of("lamport", "ricart-agrawala", "bakery"), Algorithms.names().subList(0, 3));
    assertEquals(EnumSet.of(Capability.MUTEX, Capability.READ_WRITE, Capability.FENCING, Capability.LEASE_EXPIRY,
        Capability.LOST_NOTIFICATION, Capability.FAIR, Capability.LEADER_ELECTION, Capability.FAULT_TOLERANT),
        EnumSet.copyOf(B.capabilities()));
    assertTrue(B.answersHolderQueries(), "elections name their leader to every candidate");
    assertFalse(Algorithms.byName("lamport").orElseThrow().answersHolderQueries());
    assertTrue(B.leased());
    assertTrue(B.elected());
    assertEquals(Set.of("priority", "electionDelay", "leaderLease", "writerMode", "quietPeriod"), B.parameters());
    assertFalse(B.summary().isEmpty());
    assertFalse(B.maxNodesReason().isEmpty());
    assertEquals(0, B.messagesPerEntry(1).getAsInt(), "one node: every client is on the owner");
    assertEquals(14, B.messagesPerEntry(2).getAsInt(), "L = 2: 11 + 3");
    assertEquals(25, B.messagesPerEntry(3).getAsInt());
    assertEquals(25, B.messagesPerEntry(9).getAsInt(), "constant in cluster size");
  }

  @Test
  void parsesItsParameters() {
    BakerySettings s = (BakerySettings) B.settings(LockUrl.parse("lock:native:local?algorithm=bakery&priority=3"
        + "&electionDelay=1s&leaderLease=500ms&writerMode=timed-soft&quietPeriod=2s"));
    assertEquals(new BakerySettings(3, Duration.ofSeconds(1).toNanos(), Duration.ofMillis(500).toNanos(),
        Claim.Writer.TIMED_SOFT, Duration.ofSeconds(2).toNanos()), s);
    BakerySettings d = (BakerySettings) B.settings(LockUrl.parse("lock:native:local?algorithm=bakery"));
    assertEquals(14, d.priority());
    assertEquals(Duration.ofSeconds(10).toNanos(), d.electionDelayNanos());
    assertEquals(Duration.ofSeconds(2).toNanos(), d.leaderLeaseNanos());
    assertEquals(Claim.Writer.HARD, d.writerMode());
    assertEquals(0, d.quietNanos());
    BakerySettings timed = (BakerySettings) B.settings(LockUrl.parse("lock:native:local?writerMode=timed-soft"));
    assertEquals(Duration.ofMinutes(10).toNanos(), timed.quietNanos(), "the default quiet period");
    assertEquals("priority=3&electionDelay=PT1S&leaderLease=PT0.5S&writerMode=timed-soft&quietPeriod=PT2S",
        s.describe());
  }

  @Test
  void wrongValuesAreErrorsNamingTheParameter() {
    for (String[] bad : new String[][] {{"priority=16", "priority"}, {"priority=0", "priority"},
        {"writerMode=gentle", "writerMode"}, {"quietPeriod=1s", "quietPeriod"},
        {"writerMode=soft&quietPeriod=1s", "quietPeriod"}, {"writerMode=timed-soft&quietPeriod=0s", "quietPeriod"},
        {"leaderLease=0s", "leaderLease"}, {"electionDelay=2d", "electionDelay"}, {"leaderLease=x", "leaderLease"}}) {
      InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
          () -> B.settings(LockUrl.parse("lock:native:local?algorithm=bakery&" + bad[0])), bad[0]);
      assertTrue(e.getMessage().contains(bad[1]), e.getMessage());
    }
  }

  @Test
  void simulationDefaultsAndTheElectionTheyMake() {
    BakerySettings s = (BakerySettings) B.defaults();
    assertEquals(new BakerySettings(14, Duration.ofMillis(20).toNanos(), Duration.ofMillis(30).toNanos(),
        Claim.Writer.HARD, 0), s);
    CoreContext ctx = new CoreContext("a", List.of("b", "c"), 1, 1, 0, new SplittableRandom(1), s.withPriority(2));
    ElectionSettings e = B.election(ctx);
    assertEquals(3, e.leaderCount());
    assertEquals(2, e.priority());
    assertEquals(Duration.ofMillis(30).toNanos(), e.leaderLeaseNanos());
    assertEquals(Duration.ofMillis(20).toNanos(), e.electionDelayNanos());
    assertEquals(45_000_000, e.leaderTimeoutNanos());
    assertEquals(45_000_000, s.leaderTimeoutNanos(), "the bakery's grace uses the election's timeout");
    assertEquals(0, e.initialTerm(), "the simulator passes no wall clock");
  }

  @Test
  void theInitialTermIsAppendixCsWallClockFloor() {
    long start2024 = Instant.parse("2024-01-01T00:00:00Z").getEpochSecond() * 1_000_000;
    assertEquals(0, BakeryAlgorithm.initialTerm(0));
    assertEquals(0, BakeryAlgorithm.initialTerm(start2024 + 15_999_999));
    assertEquals(1, BakeryAlgorithm.initialTerm(start2024 + 16_000_000));
    long now = Instant.parse("2026-11-23T00:00:00Z").getEpochSecond() * 1_000_000;
    long t = BakeryAlgorithm.initialTerm(now);
    assertEquals((now / 1_000_000 - 1_704_067_200L) / 16, t);
    assertTrue(t < BakeryMessage.MAX_TERM, "far below 2^29");
  }
}
