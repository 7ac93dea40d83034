package dev.tumbler.lock.tck;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Collects the outcome of every TCK test of a launcher run, by group (the {@code @Nested} class of
 * {@link LockTck}), and prints them as a table. A test in a group that was skipped as a whole, or whose
 * class failed to start, is counted in that group too, so that every test appears once. Thread safe.
 */
final class TckResults implements TestExecutionListener {

  /** What happened to one test. */
  enum Status { PASSED, FAILED, SKIPPED }

  /**
   * One test's outcome.
   *
   * @param group the group's display name
   * @param key {@code Group.method}, as {@link LockTck#excludedTests()} names it
   * @param test the test's display name
   * @param status what happened
   * @param detail the failure's message or the reason it was skipped; empty when it passed
   */
  record Outcome(String group, String key, String test, Status status, String detail) {}

  private volatile TestPlan plan;
  private final Map<String, Outcome> outcomes = new ConcurrentHashMap<>();
  private final List<String> order = java.util.Collections.synchronizedList(new ArrayList<>());

  @Override
  public void testPlanExecutionStarted(TestPlan testPlan) {
    plan = testPlan;
  }

  @Override
  public void executionSkipped(TestIdentifier id, String reason) {
    if (id.isTest()) {
      record(id, Status.SKIPPED, reason);
    } else {
      for (TestIdentifier t : plan.getDescendants(id)) {
        if (t.isTest()) {
          record(t, Status.SKIPPED, reason);
        }
      }
    }
  }

  @Override
  public void executionFinished(TestIdentifier id, TestExecutionResult result) {
    String detail = result.getThrowable().map(TckResults::describe).orElse("");
    if (id.isTest()) {
      Status s = switch (result.getStatus()) {
        case SUCCESSFUL -> Status.PASSED;
        case ABORTED -> Status.SKIPPED;
        case FAILED -> Status.FAILED;
      };
      record(id, s, detail);
      return;
    }
    if (result.getStatus() != TestExecutionResult.Status.SUCCESSFUL) {
      // a group (or the whole class) failed or was aborted before or after its tests ran
      Status s = result.getStatus() == TestExecutionResult.Status.ABORTED ? Status.SKIPPED : Status.FAILED;
      for (TestIdentifier t : plan.getDescendants(id)) {
        if (t.isTest() && !outcomes.containsKey(t.getUniqueId())) {
          record(t, s, (s == Status.FAILED ? "setup failed: " : "") + detail);
        } else if (t.isTest() && s == Status.FAILED && outcomes.get(t.getUniqueId()).status() == Status.PASSED) {
          // a failure after the tests (cleanup, target close) must not go unseen: count it on the group
          record(t, Status.FAILED, "group teardown failed: " + detail);
        }
      }
    }
  }

  private static String describe(Throwable t) {
    String m = t.getMessage();
    String s = m == null || m.isBlank() ? t.getClass().getName() : m;
    if (!(t instanceof AssertionError) && !(t instanceof org.opentest4j.TestAbortedException)) {
      s = t.getClass().getSimpleName() + ": " + s;
    }
    return s.replaceAll("\\s+", " ").trim();
  }

  private void record(TestIdentifier t, Status s, String detail) {
    if (outcomes.put(t.getUniqueId(), new Outcome(group(t), key(t), t.getDisplayName(), s, detail)) == null) {
      order.add(t.getUniqueId());
    }
  }

  private String group(TestIdentifier t) {
    Optional<TestIdentifier> parent = plan.getParent(t);
    return parent.map(TestIdentifier::getDisplayName).orElse("(none)");
  }

  private static String key(TestIdentifier t) {
    if (t.getSource().orElse(null) instanceof MethodSource m) {
      String cls = m.getClassName();
      return cls.substring(Math.max(cls.lastIndexOf('$'), cls.lastIndexOf('.')) + 1) + "." + m.getMethodName();
    }
    return t.getDisplayName();
  }

  /** Every outcome, in the order the tests ended. */
  List<Outcome> outcomes() {
    List<Outcome> out = new ArrayList<>();
    synchronized (order) {
      for (String id : order) {
        out.add(outcomes.get(id));
      }
    }
    return out;
  }

  long count(Status s) {
    return outcomes.values().stream().filter(o -> o.status() == s).count();
  }

  /** The failed tests. */
  List<Outcome> failures() {
    return outcomes().stream().filter(o -> o.status() == Status.FAILED).toList();
  }

  /** Prints one row per group (passed / failed / skipped, with the reasons), then each failure. */
  void printTable(PrintStream out) {
    Map<String, int[]> counts = new LinkedHashMap<>();
    Map<String, List<String>> reasons = new LinkedHashMap<>();
    List<Outcome> all = outcomes();
    for (Class<?> g : LockTck.GROUPS) {
      org.junit.jupiter.api.DisplayName dn = g.getAnnotation(org.junit.jupiter.api.DisplayName.class);
      String group = dn == null ? g.getSimpleName() : dn.value();
      if (all.stream().anyMatch(o -> o.group().equals(group))) {
        counts.put(group, new int[3]);
      }
    }
    for (Outcome o : all) {
      int[] c = counts.computeIfAbsent(o.group(), g -> new int[3]);
      c[o.status().ordinal()]++;
      if (o.status() == Status.SKIPPED) {
        List<String> r = reasons.computeIfAbsent(o.group(), g -> new ArrayList<>());
        if (!r.contains(o.detail())) {
          r.add(o.detail());
        }
      }
    }
    int width = Math.max(5, counts.keySet().stream().mapToInt(String::length).max().orElse(5));
    String fmt = "%-" + width + "s  %6s  %6s  %7s  %s%n";
    out.printf(fmt, "group", "passed", "failed", "skipped", "skipped because");
    out.println("-".repeat(width + 40));
    int[] total = new int[3];
    for (Map.Entry<String, int[]> e : counts.entrySet()) {
      int[] c = e.getValue();
      for (int i = 0; i < 3; i++) {
        total[i] += c[i];
      }
      out.printf(fmt, e.getKey(), c[0], c[1], c[2], String.join("; ", reasons.getOrDefault(e.getKey(), List.of())));
    }
    out.println("-".repeat(width + 40));
    out.printf(fmt, "total", total[0], total[1], total[2], "");
    List<Outcome> failed = failures();
    if (!failed.isEmpty()) {
      out.println();
      out.println("Failures:");
      for (Outcome o : failed) {
        out.println("  [" + o.group() + "] " + o.test() + " (" + o.key() + ")");
        out.println("      " + o.detail());
      }
    }
  }
}
