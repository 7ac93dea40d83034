package dev.tumbler.torture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.torture.Violation.Kind;
import dev.tumbler.torture.backend.JavaCommand;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * The checker proven on a real run: eight worker processes against a {@link MemLockServer} whose names are broken on
 * purpose, one defect a name, with clients killed, paused and cut off meanwhile. Each defect must show as its
 * violation class, and the name without a defect, which took the same faults, as none at all.
 */
class KnownAnswerTortureTest {
  static final Map<String, String> DEFECTS = Map.of("n1", "grant-twice", "n2", "token-restart", "n3", "lost-late",
      "n4", "wait-long", "n5", "stuck");

  @Test
  void eachDefectShowsAsItsClassAndTheCleanNameAsNone() throws Exception {
    Path dir = Path.of("target", "torture", "known-answer");
    Files.createDirectories(dir);
    long seed = Long.getLong("torture.seed", ThreadLocalRandom.current().nextLong());
    String defects = String.join(",", new TreeMap<>(DEFECTS).entrySet().stream().map(e -> e.getKey() + ":"
        + e.getValue()).toList());
    TortureRun.Result r;
    try (MemTarget target = new MemTarget(new MemLockServer(), Duration.ofSeconds(1), defects)) {
      r = TortureRun.run(target, new TortureRun.Settings(8, 6, Duration.ofSeconds(25),
          EnumSet.of(Fault.KILL, Fault.PAUSE, Fault.PARTITION), seed, dir, JavaCommand.current(null),
          line -> System.out.println(line), Duration.ofSeconds(5), Duration.ofMillis(250)));
    }
    System.out.println(r.summary());
    Checker.Analysis a = r.analysis();
    String context = "seed " + seed + "; see " + dir.toAbsolutePath() + "/summary.txt\n" + r.summary();
    assertEquals(List.of(), a.violations().stream().filter(v -> v.name().equals("n0")).toList(),
        "the name without a defect took the same faults and must show nothing; " + context);
    // n1's two holders show as lease exclusion and token order on every run; interleaved writes (safety) need both to
    // write during the overlap, which with few grants on a loaded machine may not happen (seen: 14 overlaps, none
    // interleaved): the run below makes it certain
    expect(a, "n1", Set.of(Kind.LEASE_EXCLUSION, Kind.TOKEN_ORDER), context);
    expect(a, "n2", Set.of(Kind.TOKEN_ORDER), context);
    // n3's lost notification needs a second client to take n3 and write in the few hundred milliseconds before the
    // first hears its loss: with 8 clients over 6 names that is likely, not certain; the run below makes it certain
    expect(a, "n3", Set.of(Kind.LEASE_EXCLUSION), context);
    expect(a, "n4", Set.of(Kind.WAIT_BOUND), context);
    expect(a, "n5", Set.of(Kind.RECOVERY), context);
    assertTrue(a.staleWrites() > 0, "token-restart's new holders write with lower tokens: the register must have "
        + "rejected some; " + context);
    assertTrue(a.promisedSafetyViolations() > 0, context);
  }

  /**
   * {@code lost-late} and {@code grant-twice}, each on one name that four clients contend for, with no other fault.
   * n0 is freed a tenth of a term after each grant, a waiter takes it at once, and a holder that still works hears its
   * loss only at its next renewal, after the new holder wrote: each grant that outlives its first renewal is such a
   * case. n1 is granted to every third waiter that asks while it is held, so two holders work and write side by side
   * many times a second.
   */
  @Test
  void aLockFreedUnderItsWorkingHolderShowsAsALostNotificationAndTwoHoldersAsInterleavedWrites() throws Exception {
    Path dir = Path.of("target", "torture", "known-answer-lost-late");
    Files.createDirectories(dir);
    long seed = Long.getLong("torture.seed", ThreadLocalRandom.current().nextLong());
    TortureRun.Result r;
    try (MemTarget target = new MemTarget(new MemLockServer(), Duration.ofSeconds(1), "n0:lost-late,n1:grant-twice")) {
      r = TortureRun.run(target, new TortureRun.Settings(8, 2, Duration.ofSeconds(10), EnumSet.noneOf(Fault.class),
          seed, dir, JavaCommand.current(null), line -> System.out.println(line), Duration.ofSeconds(5),
          Duration.ofMillis(250)));
    }
    System.out.println(r.summary());
    String context = "seed " + seed + "; see " + dir.toAbsolutePath() + "/summary.txt\n" + r.summary();
    for (Kind k : Set.of(Kind.LEASE_EXCLUSION, Kind.LOST_NOTIFICATION)) {
      assertTrue(r.analysis().violations().stream().anyMatch(v -> v.name().equals("n0") && v.kind() == k
          && v.promised()), "lost-late on n0 must show as " + k.label() + "; " + context);
    }
    assertTrue(r.analysis().violations().stream().anyMatch(v -> v.name().equals("n1") && v.kind() == Kind.SAFETY
        && v.promised()), "grant-twice on n1 must show as " + Kind.SAFETY.label() + "; " + context);
  }

  private static void expect(Checker.Analysis a, String name, Set<Kind> kinds, String context) {
    for (Kind k : kinds) {
      assertTrue(a.violations().stream().anyMatch(v -> v.name().equals(name) && v.kind() == k && v.promised()),
          DEFECTS.get(name) + " on " + name + " must show as " + k.label() + "; " + context);
    }
  }
}
