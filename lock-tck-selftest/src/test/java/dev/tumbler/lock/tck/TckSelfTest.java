package dev.tumbler.lock.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.tck.memory.Defect;
import dev.tumbler.lock.tck.memory.MemoryTarget;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The TCK proves its teeth: it runs against the reference provider with one deliberate defect at a time
 * and must fail each one. Which tests caught which defect is written to
 * {@code target/tck-selftest.txt}.
 *
 * <p>By default each defect runs the groups (or tests) where it must be caught, to keep the build short,
 * and the same selection runs against the correct provider as a control, which must pass. With
 * {@code -Dtck.selftest.full=true} every defect runs the whole TCK (about 4 minutes); the correct
 * provider's whole run is {@link InMemoryTckTest}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TckSelfTest {

  private static final boolean FULL = Boolean.getBoolean("tck.selftest.full");

  /**
   * Where each defect must be caught, by default: groups ({@code Mutex}) or single tests
   * ({@code Leases.lockFreedAfterHolderCutOff}), chosen so the self-test stays short. With
   * {@code tck.selftest.full} the whole TCK runs for every defect.
   */
  private static final Map<Defect, Set<String>> WHERE = new EnumMap<>(Map.ofEntries(
      Map.entry(Defect.NO_EXCLUSION, Set.of("Mutex.acquireRelease", "Contention.exclusion")),
      Map.entry(Defect.REPEATED_TOKEN, Set.of("Fencing.tokensIncrease", "Contention.exclusion")),
      Map.entry(Defect.LEASE_NEVER_EXPIRES, Set.of("Leases.lockFreedAfterHolderCutOff")),
      Map.entry(Defect.LOST_LISTENER_NEVER_CALLED, Set.of("Leases.lostBeforeOthersGrantedWhenPaused", "Closed.closeReleases")),
      Map.entry(Defect.PERMIT_LEAKED_ON_CLOSE, Set.of("Semaphores.permitsComeBackOnClose")),
      Map.entry(Defect.READER_BESIDE_WRITER, Set.of("ReadWrite.writerExcludes")),
      Map.entry(Defect.WAIT_RETURNS_EARLY, Set.of("Mutex.waitHonoured")),
      Map.entry(Defect.CANCEL_LEAKS_LEASE, Set.of("Mutex.asyncCancel")),
      Map.entry(Defect.UNFAIR, Set.of("Fairness")),
      Map.entry(Defect.PERMIT_OVERCOUNT, Set.of("Semaphores.permitsNeverExceeded")),
      Map.entry(Defect.NAME_COLLISION, Set.of("Names.distinctNames")),
      Map.entry(Defect.STALE_RELEASE_FREES_OTHERS, Set.of("Mutex.releaseIdempotent", "Leases.lostBeforeOthersGrantedWhenPaused")),
      Map.entry(Defect.RENEW_DOES_NOTHING, Set.of("Leases.manualRenewal")),
      Map.entry(Defect.HIERARCHY_IGNORED, Set.of("Transactions.hierarchy")),
      Map.entry(Defect.DEADLOCK_UNDETECTED, Set.of("Transactions.deadlockAbort")),
      Map.entry(Defect.NAMESPACE_JOINED, Set.of("Names.namespacesInjective")),
      Map.entry(Defect.MANUAL_RENEW_IGNORED, Set.of("Leases.manualRenewal")),
      Map.entry(Defect.THREAD_OWNED_RELEASE, Set.of("Mutex.leaseNotThreadOwned")),
      Map.entry(Defect.LISTENERS_REVERSED, Set.of("Closed.closeRunsListeners")),
      Map.entry(Defect.THROWING_LISTENER_STOPS_OTHERS, Set.of("Closed.closeRunsListeners")),
      Map.entry(Defect.LOST_LISTENER_TWICE, Set.of("Closed.closeRunsListeners")),
      Map.entry(Defect.LISTENERS_ON_OTHER_THREAD, Set.of("Closed.closeRunsListeners")),
      Map.entry(Defect.IS_VALID_ASKS_BACKEND, Set.of("Leases.cutOffClientAnswersLocally")),
      Map.entry(Defect.RENEW_HIDES_FAILURE, Set.of("Leases.cutOffClientAnswersLocally")),
      Map.entry(Defect.RENEW_FAILURE_EXPIRES, Set.of("Leases.cutOffClientAnswersLocally")),
      Map.entry(Defect.JAVA_LOCK_INTERRUPTIBLE, Set.of("Mutex.javaLockUninterruptible")),
      Map.entry(Defect.REMAINING_FROZEN, Set.of("Leases.manualRenewal")),
      Map.entry(Defect.ELECTION_LOSS_HEARD_LATE, Set.of("Elections.leaderClosedHearsFirst")),
      Map.entry(Defect.STALE_LEADER, Set.of("Elections.nobodyBelievesDepartedLeader")),
      Map.entry(Defect.AVAILABLE_PERMITS_WRONG, Set.of("Semaphores.availablePermitsCounted")),
      Map.entry(Defect.PERMITS_NEVER_EXPIRE, Set.of("Semaphores.permitsComeBackOnExpiry")),
      Map.entry(Defect.READ_WRITE_NAMES_SHARED, Set.of("ReadWrite.writerExcludes")),
      Map.entry(Defect.UPGRADE_IGNORED, Set.of("Transactions.upgrade")),
      Map.entry(Defect.GRANT_AT_DEADLINE_FREED, Set.of("Contention.waitsEndingAsGrantsArrive")),
      Map.entry(Defect.MINORITY_FAULT_DROPS_GRANTS, Set.of("FaultTolerance.minorityCrashAndRestart")),
      Map.entry(Defect.TOKEN_COUNTER_RESTARTS, Set.of("Chaos")),
      Map.entry(Defect.RELEASE_BY_CLIENT, Set.of("Mutex.releaseAgainAfterRegrant")),
      Map.entry(Defect.INFO_URL_SHOWS_PROPERTIES_SECRET, Set.of("Registry.propertiesSecretNotShown"))));

  private final Map<Defect, List<String>> caught = new EnumMap<>(Defect.class);
  /** The control: the correct provider over every defect's selection at once, run on first use. */
  private TckResults control;

  @BeforeAll
  void start() {
    // RELEASE_FREES_LATE has a test of its own, aSlowReleaseFailsEveryTestAtOnce
    assertEquals(Set.of(Defect.values()).size() - 2, WHERE.size(), "every defect needs its groups");
  }

  @ParameterizedTest(name = "the TCK fails a provider with defect {0}")
  @EnumSource(value = Defect.class, names = {"NONE", "RELEASE_FREES_LATE"}, mode = EnumSource.Mode.EXCLUDE)
  void brokenProviderFails(Defect defect) {
    Set<String> where = FULL ? Set.of() : WHERE.get(defect);
    TckResults r = TckRunner.execute(new MemoryTarget(defect), where, null);
    List<String> failed = r.failures().stream().map(o -> o.key() + ": " + o.detail()).toList();
    caught.put(defect, failed);
    assertFalse(failed.isEmpty(), "the TCK passed a provider with defect " + defect + ":\n" + table(r));
    if (!FULL) {
      // the control: the same tests pass against the correct provider, so the defect is what failed them
      TckResults c = control();
      assertEquals(0, c.count(TckResults.Status.FAILED), "the correct provider fails:\n" + table(c));
      Set<String> passed = c.outcomes().stream().filter(o -> o.status() == TckResults.Status.PASSED)
          .map(TckResults.Outcome::key).collect(Collectors.toSet());
      for (TckResults.Outcome o : r.failures()) {
        assertTrue(passed.contains(o.key()), o.key() + " failed with defect " + defect
            + " but did not pass against the correct provider:\n" + table(c));
      }
    }
  }

  private synchronized TckResults control() {
    if (control == null) {
      Set<String> all = new java.util.TreeSet<>();
      WHERE.values().forEach(all::addAll);
      control = TckRunner.execute(new MemoryTarget(Defect.NONE), all, null);
    }
    return control;
  }

  /**
   * A provider whose release returns before the backend frees the lock (2 s later) fails the whole TCK at once, every
   * test with what was seen, instead of each waiting out its own time-outs (about eight minutes in all, when each test
   * found it for itself).
   */
  @Test
  void aSlowReleaseFailsEveryTestAtOnce() {
    TckResults r = TckRunner.execute(new MemoryTarget(Defect.RELEASE_FREES_LATE), Set.of(), null);
    caught.put(Defect.RELEASE_FREES_LATE, r.failures().stream().map(o -> o.key() + ": " + o.detail()).toList());
    assertTrue(r.count(TckResults.Status.FAILED) > 0, "the TCK passed a provider whose release frees the lock late:\n"
        + table(r));
    assertEquals(0, r.count(TckResults.Status.PASSED), "tests passed against a provider whose release frees the lock"
        + " late; each should fail at once with what the first check saw:\n" + table(r));
    for (TckResults.Outcome o : r.failures()) {
      assertTrue(o.detail().contains("release() returns before the backend frees the lock")
          && o.detail().matches("(?s).*granted after \\d+ ms.*"), o.key() + " did not say what was seen: " + o.detail());
    }
  }

  @Test
  void runnerTableForCorrectProviderGroups() {
    TckResults r = TckRunner.execute(new MemoryTarget(Defect.NONE), Set.of("Names", "Transactions"), null);
    assertEquals(0, r.count(TckResults.Status.FAILED), table(r));
    assertTrue(r.count(TckResults.Status.PASSED) >= 2, table(r));
    String t = table(r);
    assertTrue(t.contains("transactions"), t);
    assertFalse(t.contains("mutex contract"), "an unselected group ran:\n" + t);
  }

  private static String table(TckResults r) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    r.printTable(new PrintStream(b, true, StandardCharsets.UTF_8));
    return b.toString(StandardCharsets.UTF_8);
  }

  @AfterAll
  void report() throws IOException {
    List<String> lines = new ArrayList<>();
    lines.add("TCK self-test (" + (FULL ? "whole TCK per defect" : "targeted groups per defect") + "): tests that caught each defect");
    caught.forEach((d, tests) -> {
      lines.add(d + " -> " + (tests.isEmpty() ? "NOT CAUGHT" : tests.size() + " failed"));
      tests.forEach(t -> lines.add("    " + t));
    });
    Path out = Path.of("target", "tck-selftest.txt");
    Files.createDirectories(out.getParent());
    Files.write(out, lines, StandardCharsets.UTF_8);
    System.out.println(lines.stream().collect(Collectors.joining("\n")));
  }
}
