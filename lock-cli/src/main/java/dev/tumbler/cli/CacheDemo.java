package dev.tumbler.cli;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockService;
import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.node.NodeStats;
import dev.tumbler.peer.provider.LoopbackCluster;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * {@code tumbler demo --scenario cache}: the {@code lease} algorithm's client cache (NATIVE-ALGORITHMS §5) over a
 * 3-node cluster on loopback TCP. A node that released a lock keeps it, and takes it again without a message; when
 * another node asks, the server recalls it, and every entry costs messages again. Phase by phase, a table shows
 * the lock messages per entry (the election's are left out), by type, beside what the design says they cost, and
 * the mean acquire latency. Two nodes that are not the server take turns, so that each entry's cost is a client's.
 */
final class CacheDemo {

  /** Entries per repeated phase. */
  private static final int ENTRIES = 20;
  /** How long one acquire may take. */
  private static final Duration AWAIT = Duration.ofSeconds(30);
  /**
   * The lease term: long beside the demo's few hundred milliseconds, so that no renewal of a cached lock (every
   * T/2) falls inside a phase and is counted as an entry's cost.
   */
  private static final String PARAMETERS = "&leaseTime=10s";
  /** Releases and recall replies leave asynchronously: the wait before a phase's messages are counted. */
  private static final long SETTLE_MILLIS = 250;
  private static final String LOCK = "cached";

  private record Phase(String what, String nodes, int entries, long messages, Map<String, Long> byType,
      String expected, double meanMillis, boolean cached) {

    double perEntry() {
      return (double) messages / entries;
    }
  }

  private CacheDemo() {}

  /** Runs the phases on a fresh 3-node {@code lease} cluster; prints the table; returns the exit code. */
  static int run(PrintWriter out, PrintWriter err) throws Exception {
    err.println("cache demo (lease): 3 nodes over TCP on loopback; two clients take one lock in phases ...");
    err.flush();
    List<Phase> phases = new ArrayList<>();
    String server = "?";
    try (LoopbackCluster cluster = LoopbackCluster.open("lease", 3, PARAMETERS)) {
      List<LockService> services = cluster.services();
      List<NodeStats> stats = new ArrayList<>();
      for (LockService s : services) {
        stats.add(s.unwrap(NodeStats.class));
      }
      // connections up, a server elected and known everywhere, on a name of its own
      for (LockService s : services) {
        entry(s, "cache-warm-up");
      }
      String serverId = serverOf(stats);
      List<Integer> clients = new ArrayList<>();
      for (int i = 0; i < stats.size(); i++) {
        if (stats.get(i).nodeId().equals(serverId)) {
          server = "node " + (i + 1) + ", " + serverId;
        } else {
          clients.add(i);
        }
      }
      int a = clients.get(0);
      int b = clients.get(1);
      String na = "node " + (a + 1);
      String nb = "node " + (b + 1);
      Thread.sleep(SETTLE_MILLIS);
      phases.add(phase("first acquire, from the server", na, List.of(a), 1, "2 (Acquire, Grant)", false,
          services, stats));
      phases.add(phase("again on the same node: from its cache", na, List.of(a), ENTRIES, "0", true,
          services, stats));
      phases.add(phase("another node asks: recalled", nb, List.of(b), 1,
          "4 (Acquire, Recall, RecallReply, Grant)", false, services, stats));
      phases.add(phase("the two nodes in turn: recalled each time", na + ", " + nb, List.of(a, b), ENTRIES, "4",
          false, services, stats));
      phases.add(phase("one node again: from its cache", nb, List.of(b), ENTRIES, "0", true, services, stats));
    }
    out.println();
    out.printf("tumbler demo --scenario cache: one lock taken and released by two nodes that are not the server%n"
        + "(%s) of a 3-node lease cluster over TCP on loopback; lock messages only%n%n", server);
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"phase", "node", "entries", "messages", "per entry", "design", "mean acquire", "by type"});
    for (Phase p : phases) {
      StringBuilder types = new StringBuilder();
      p.byType().forEach((t, n) -> types.append(types.length() == 0 ? "" : ", ").append(t).append(' ').append(n));
      rows.add(new String[] {p.what(), p.nodes(), String.valueOf(p.entries()), String.valueOf(p.messages()),
          String.format(Locale.ROOT, "%.2f", p.perEntry()), p.expected(),
          String.format(Locale.ROOT, "%.3f ms", p.meanMillis()), types.length() == 0 ? "-" : types.toString()});
    }
    out.print(TextTable.render(rows, "  ", true));
    out.println();
    List<String> failures = new ArrayList<>();
    for (Phase p : phases) {
      if (p.cached() ? p.perEntry() >= 0.5 : p.perEntry() < 2) {
        failures.add(p.what() + ": " + String.format(Locale.ROOT, "%.2f", p.perEntry()) + " messages per entry");
      }
    }
    if (failures.isEmpty()) {
      out.println("checks: an entry from the cache sent no message; an entry the server granted or recalled sent them");
      out.flush();
      return ExitCodes.OK;
    }
    for (String f : failures) {
      out.println("FAILED: " + f);
    }
    out.flush();
    return ExitCodes.CHECK_FAILED;
  }

  /** {@code entries} entries taken in turn by {@code nodes}; its messages counted once they have settled. */
  private static Phase phase(String what, String label, List<Integer> nodes, int entries, String expected,
      boolean cached, List<LockService> services, List<NodeStats> stats) throws InterruptedException {
    Map<String, Long> before = sent(stats);
    long nanos = 0;
    for (int i = 0; i < entries; i++) {
      nanos += entry(services.get(nodes.get(i % nodes.size())), LOCK);
    }
    Thread.sleep(SETTLE_MILLIS);
    Map<String, Long> byType = new TreeMap<>();
    sent(stats).forEach((t, n) -> {
      long d = n - before.getOrDefault(t, 0L);
      if (d != 0) {
        byType.put(t.substring(t.indexOf('/') + 1), d);
      }
    });
    long messages = byType.values().stream().mapToLong(Long::longValue).sum();
    return new Phase(what, label, entries, messages, byType, expected, nanos / 1e6 / entries, cached);
  }

  /** One acquire and release; the acquire's latency in nanoseconds. */
  private static long entry(LockService s, String name) throws InterruptedException {
    long start = System.nanoTime();
    Optional<Lease> lease = s.lock(name).tryAcquire(AWAIT);
    long took = System.nanoTime() - start;
    if (lease.isEmpty()) {
      throw new IllegalStateException("the cluster did not grant " + name + " within " + AWAIT.toSeconds()
          + " s; are the peers connected?");
    }
    lease.get().release();
    return took;
  }

  /** The lock messages every node has sent, by type (the election's left out: they run whether locks are taken). */
  private static Map<String, Long> sent(List<NodeStats> stats) {
    Map<String, Long> sum = new TreeMap<>();
    String election = Channel.ELECTION.label() + "/";
    for (NodeStats s : stats) {
      s.messagesSentByType().forEach((t, n) -> {
        if (!t.startsWith(election)) {
          sum.merge(t, n, Long::sum);
        }
      });
    }
    return sum;
  }

  /** The node that serves: the first leader of the view every node holds, once they all agree. */
  private static String serverOf(List<NodeStats> stats) throws InterruptedException {
    long deadline = System.nanoTime() + AWAIT.toNanos();
    while (System.nanoTime() < deadline) {
      List<String> firsts = new ArrayList<>();
      for (NodeStats s : stats) {
        s.view().map(Observation.View::leaders).filter(l -> !l.isEmpty()).ifPresent(l -> firsts.add(l.get(0).nodeId()));
      }
      if (firsts.size() == stats.size() && firsts.stream().distinct().count() == 1) {
        return firsts.get(0);
      }
      Thread.sleep(20);
    }
    throw new IllegalStateException("the nodes did not agree on a server within " + AWAIT.toSeconds() + " s");
  }
}
