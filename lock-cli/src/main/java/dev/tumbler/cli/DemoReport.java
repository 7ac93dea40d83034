package dev.tumbler.cli;

import dev.tumbler.peer.algorithm.Algorithms;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * The result of one demo run of one algorithm, and the table that shows several side by side. Pure: no
 * clock, no I/O, so that the arithmetic is tested on its own.
 *
 * @param algorithm the algorithm's URL name
 * @param grantsPerNode grants each node's workers received, in node order
 * @param messagesSent protocol messages sent by all nodes during the run, or -1 when unknown
 * @param latenciesNanos acquire latency of every grant
 * @param tokensIncreasing whether, for every lock name, fencing tokens strictly increased in grant order
 * @param exclusionHeld whether no two workers ever held the same lock at once
 * @param timeouts acquire attempts that gave up
 * @param outage the member stopped midway, for a fault-tolerant algorithm; null when none was
 */
record DemoReport(String algorithm, List<Long> grantsPerNode, long messagesSent, long[] latenciesNanos,
    boolean tokensIncreasing, boolean exclusionHeld, long timeouts, Outage outage) {

  /**
   * A member killed while the workers ran, and started again later.
   *
   * @param node the member, counted from 1
   * @param atMillis when it was killed, from the start of the run
   * @param forMillis how long it stayed down
   * @param grantsMeanwhile grants the other members' workers received while it was down
   * @param longestPauseMillis the longest time without a grant to the others while it was down (the failover
   *     shows here: the kill to their first grant, when the killed member led the lock)
   */
  record Outage(int node, long atMillis, long forMillis, long grantsMeanwhile, long longestPauseMillis) {}

  DemoReport(String algorithm, List<Long> grantsPerNode, long messagesSent, long[] latenciesNanos,
      boolean tokensIncreasing, boolean exclusionHeld, long timeouts) {
    this(algorithm, grantsPerNode, messagesSent, latenciesNanos, tokensIncreasing, exclusionHeld, timeouts, null);
  }

  DemoReport {
    Objects.requireNonNull(algorithm, "algorithm");
    grantsPerNode = List.copyOf(grantsPerNode);
    latenciesNanos = latenciesNanos.clone();
    Arrays.sort(latenciesNanos);
  }

  int nodes() {
    return grantsPerNode.size();
  }

  long totalGrants() {
    return grantsPerNode.stream().mapToLong(Long::longValue).sum();
  }

  /** Mean acquire latency in milliseconds; NaN with no grant. */
  double meanMillis() {
    return latenciesNanos.length == 0 ? Double.NaN
        : Arrays.stream(latenciesNanos).average().orElse(Double.NaN) / 1e6;
  }

  /** 99th percentile of acquire latency in milliseconds (nearest rank); NaN with no grant. */
  double p99Millis() {
    return percentileMillis(99);
  }

  double percentileMillis(int p) {
    if (latenciesNanos.length == 0) {
      return Double.NaN;
    }
    int rank = (int) Math.ceil(p / 100.0 * latenciesNanos.length);
    return latenciesNanos[Math.max(0, rank - 1)] / 1e6;
  }

  /** Protocol messages per lock entry; NaN when unknown or with no grant. */
  double messagesPerEntry() {
    long grants = totalGrants();
    return messagesSent < 0 || grants == 0 ? Double.NaN : (double) messagesSent / grants;
  }

  /** What the algorithm should cost per entry, as its descriptor says; empty when it is not a constant. */
  OptionalInt expectedMessagesPerEntry() {
    return Algorithms.byName(algorithm).map(a -> a.messagesPerEntry(nodes())).orElse(OptionalInt.empty());
  }

  /** Fencing and exclusion held, and the others kept being granted while a member was down. */
  boolean passed() {
    return tokensIncreasing && exclusionHeld && (outage == null || outage.grantsMeanwhile() > 0);
  }

  /** Whether {@code tokens}, in grant order, strictly increase. */
  static boolean strictlyIncreasing(List<Long> tokens) {
    for (int i = 1; i < tokens.size(); i++) {
      if (tokens.get(i) <= tokens.get(i - 1)) {
        return false;
      }
    }
    return true;
  }

  /** One column per report, one row per measure. */
  static String table(List<DemoReport> reports) {
    List<String[]> rows = new ArrayList<>();
    int nodes = reports.stream().mapToInt(DemoReport::nodes).max().orElse(0);
    rows.add(row(reports, "", r -> r.algorithm));
    for (int i = 0; i < nodes; i++) {
      int n = i;
      rows.add(row(reports, "grants, node " + (i + 1), r -> n < r.nodes() ? Long.toString(r.grantsPerNode.get(n)) : ""));
    }
    rows.add(row(reports, "grants, total", r -> Long.toString(r.totalGrants())));
    rows.add(row(reports, "acquire latency, mean", r -> millis(r.meanMillis())));
    rows.add(row(reports, "acquire latency, p99", r -> millis(r.p99Millis())));
    rows.add(row(reports, "messages per entry", r -> {
      double m = r.messagesPerEntry();
      String s = Double.isNaN(m) ? "n/a" : String.format(Locale.ROOT, "%.2f", m);
      OptionalInt e = r.expectedMessagesPerEntry();
      if (e.isPresent()) {
        String formula = Algorithms.byName(r.algorithm).map(a -> a.messagesPerEntryFormula()).orElse("");
        s += " (" + (formula.isEmpty() ? "expected" : formula + " =") + " " + e.getAsInt() + ")";
      }
      return s;
    }));
    rows.add(row(reports, "fencing tokens strictly increasing", r -> r.tokensIncreasing ? "yes" : "NO"));
    rows.add(row(reports, "one holder at a time", r -> r.exclusionHeld ? "yes" : "NO"));
    if (reports.stream().anyMatch(r -> r.outage != null)) {
      rows.add(row(reports, "node killed midway", r -> r.outage == null ? "" : String.format(Locale.ROOT,
          "node %d at %.1f s, for %.1f s", r.outage.node(), r.outage.atMillis() / 1e3, r.outage.forMillis() / 1e3)));
      rows.add(row(reports, "grants by the others meanwhile", r -> r.outage == null ? ""
          : r.outage.grantsMeanwhile() + (r.outage.grantsMeanwhile() > 0 ? "" : " (NONE)")));
      rows.add(row(reports, "longest pause of the others", r -> r.outage == null ? ""
          : String.format(Locale.ROOT, "%.2f s", r.outage.longestPauseMillis() / 1e3)));
    }
    if (reports.stream().anyMatch(r -> r.timeouts > 0)) {
      rows.add(row(reports, "acquire attempts timed out", r -> Long.toString(r.timeouts)));
    }
    return TextTable.render(rows, "   ", true);
  }

  private interface Cell {
    String of(DemoReport r);
  }

  private static String[] row(List<DemoReport> reports, String label, Cell cell) {
    String[] row = new String[reports.size() + 1];
    row[0] = label;
    for (int i = 0; i < reports.size(); i++) {
      row[i + 1] = cell.of(reports.get(i));
    }
    return row;
  }

  private static String millis(double ms) {
    return Double.isNaN(ms) ? "n/a" : String.format(Locale.ROOT, "%.2f ms", ms);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof DemoReport r && algorithm.equals(r.algorithm) && grantsPerNode.equals(r.grantsPerNode)
        && messagesSent == r.messagesSent && Arrays.equals(latenciesNanos, r.latenciesNanos)
        && tokensIncreasing == r.tokensIncreasing && exclusionHeld == r.exclusionHeld && timeouts == r.timeouts
        && Objects.equals(outage, r.outage);
  }

  @Override
  public int hashCode() {
    return Objects.hash(algorithm, grantsPerNode, messagesSent, Arrays.hashCode(latenciesNanos));
  }

  @Override
  public String toString() {
    return "DemoReport[" + algorithm + ", grants=" + grantsPerNode + ", messages=" + messagesSent + "]";
  }
}
