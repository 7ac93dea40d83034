package dev.tumbler.cli;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockService;
import dev.tumbler.peer.algorithm.Algorithms;
import dev.tumbler.peer.node.NodeStats;
import dev.tumbler.peer.provider.LoopbackCluster;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tumbler demo}: a native cluster of three peers over TCP on loopback, in this process; contending
 * workers on each peer for a while, then a table of what happened. Each algorithm runs on a fresh cluster
 * with fresh ports and a fresh random secret.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = {"Runs contending workers on a native cluster over TCP on loopback, then prints a table.",
        "The table shows grants per node, acquire latency (mean, p99), protocol messages per lock entry",
        "beside what the algorithm should cost (3(N-1) for Lamport, 2(N-1) for Ricart-Agrawala), whether",
        "fencing tokens strictly increased, and whether one holder held a lock at a time. Each algorithm runs",
        "on a fresh cluster with a random secret."})
final class DemoCommand implements Callable<Integer> {
  private static final Duration ACQUIRE_TIMEOUT = Duration.ofSeconds(30);

  @Spec
  CommandSpec spec;

  @Option(names = "--algorithm", defaultValue = "all", paramLabel = "NAME",
      description = "One native algorithm (${COMPLETION-CANDIDATES}), or all of them one after the other. "
          + "Default: ${DEFAULT-VALUE}.", completionCandidates = AlgorithmNames.class)
  String algorithm;

  @Option(names = "--duration", defaultValue = "5s", converter = DurationConverter.class, paramLabel = "DURATION",
      description = "How long the workers contend, per algorithm. Default: ${DEFAULT-VALUE}.")
  Duration duration;

  @Option(names = "--workers", defaultValue = "4", paramLabel = "N",
      description = "Contending workers (virtual threads) per node. Default: ${DEFAULT-VALUE}.")
  int workers;

  @Option(names = "--nodes", defaultValue = "3", paramLabel = "N",
      description = "Peers in the cluster, 2 to 9. Default: ${DEFAULT-VALUE}.")
  int nodes;

  @Option(names = "--locks", defaultValue = "1", paramLabel = "N",
      description = "Distinct lock names the workers contend for. Default: ${DEFAULT-VALUE}.")
  int locks;

  @Override
  public Integer call() throws Exception {
    List<String> algorithms = algorithm.equals("all") ? Algorithms.names()
        : List.of(Algorithms.byName(algorithm).orElseThrow(() -> new IllegalArgumentException("--algorithm: '"
            + algorithm + "' is not one of " + Algorithms.names() + " or all")).name());
    if (nodes < 2 || nodes > 9) {
      throw new IllegalArgumentException("--nodes: " + nodes + " is not within 2..9");
    }
    if (workers < 1 || workers > 1000) {
      throw new IllegalArgumentException("--workers: " + workers + " is not within 1..1000");
    }
    if (locks < 1 || locks > 100) {
      throw new IllegalArgumentException("--locks: " + locks + " is not within 1..100");
    }
    if (duration.isZero() || duration.isNegative()) {
      throw new IllegalArgumentException("--duration: must be positive");
    }
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    List<DemoReport> reports = new ArrayList<>();
    for (String a : algorithms) {
      reports.add(runOne(a, err));
    }
    out.println();
    out.printf("tumbler demo: %d nodes over TCP on loopback, %d workers per node, %d lock name%s, %d ms per algorithm%n%n",
        nodes, workers, locks, locks == 1 ? "" : "s", duration.toMillis());
    out.print(DemoReport.table(reports));
    out.flush();
    return reports.stream().allMatch(DemoReport::passed) ? ExitCodes.OK : ExitCodes.CHECK_FAILED;
  }

  private DemoReport runOne(String algo, PrintWriter err) throws Exception {
    List<LockService> services = startCluster(algo);
    try {
      List<NodeStats> stats = new ArrayList<>();
      for (LockService s : services) {
        stats.add(statsOf(s));
      }
      warmUp(services);
      long messagesBefore = messagesSent(stats);

      AtomicLongArray grants = new AtomicLongArray(nodes);
      ConcurrentLinkedQueue<Long> latencies = new ConcurrentLinkedQueue<>();
      List<List<Long>> tokens = new ArrayList<>();
      List<AtomicInteger> holders = new ArrayList<>();
      for (int l = 0; l < locks; l++) {
        tokens.add(new ArrayList<>());
        holders.add(new AtomicInteger());
      }
      AtomicBoolean exclusion = new AtomicBoolean(true);
      AtomicLong timeouts = new AtomicLong();
      long start = System.nanoTime();
      long deadline = start + duration.toNanos();

      List<Thread> threads = new ArrayList<>();
      for (int n = 0; n < nodes; n++) {
        for (int w = 0; w < workers; w++) {
          int node = n;
          int lockIndex = (n * workers + w) % locks;
          Lock lock = services.get(n).lock(lockName(lockIndex));
          threads.add(Thread.ofVirtual().name("demo-worker-" + n + "-" + w).start(() -> {
            while (System.nanoTime() < deadline && !Thread.currentThread().isInterrupted()) {
              long t0 = System.nanoTime();
              Optional<Lease> lease;
              try {
                lease = lock.tryAcquire(ACQUIRE_TIMEOUT);
              } catch (InterruptedException e) {
                return;
              } catch (RuntimeException e) {
                timeouts.incrementAndGet();
                continue;
              }
              if (lease.isEmpty()) {
                timeouts.incrementAndGet();
                continue;
              }
              latencies.add(System.nanoTime() - t0);
              try (Lease l = lease.get()) {
                AtomicInteger inside = holders.get(lockIndex);
                if (inside.incrementAndGet() != 1) {
                  exclusion.set(false);
                }
                // appended while holding the lock: the list is in grant order, if the lock excludes
                List<Long> t = tokens.get(lockIndex);
                synchronized (t) {
                  t.add(l.fencingToken());
                }
                grants.incrementAndGet(node);
                inside.decrementAndGet();
              }
            }
          }));
        }
      }
      Progress progress = new Progress(err, algo, start, deadline, grants);
      Thread ticker = Thread.ofVirtual().name("demo-progress").start(progress::run);
      for (Thread t : threads) {
        t.join(ACQUIRE_TIMEOUT.toMillis() + duration.toMillis() + 10_000);
        if (t.isAlive()) {
          t.interrupt();
        }
      }
      ticker.interrupt();
      ticker.join();
      progress.finish();
      // releases are sent asynchronously by some algorithms: let them leave before counting
      Thread.sleep(300);
      long messages = messagesBefore < 0 ? -1 : messagesSent(stats) - messagesBefore;

      List<Long> perNode = new ArrayList<>();
      for (int n = 0; n < nodes; n++) {
        perNode.add(grants.get(n));
      }
      boolean increasing = true;
      for (List<Long> t : tokens) {
        synchronized (t) {
          increasing &= DemoReport.strictlyIncreasing(t);
        }
      }
      long[] lat = latencies.stream().mapToLong(Long::longValue).toArray();
      return new DemoReport(algo, perNode, messages, lat, increasing, exclusion.get(), timeouts.get());
    } finally {
      closeAll(services);
    }
  }

  private static String lockName(int i) {
    return "demo-" + i;
  }

  /** The peers of one algorithm's run, on free loopback ports with a fresh random secret. */
  private List<LockService> startCluster(String algo) throws Exception {
    return LoopbackCluster.start(algo, nodes);
  }

  /** One grant per node before measuring, so that connection set-up is not counted. */
  private void warmUp(List<LockService> services) throws InterruptedException {
    for (LockService s : services) {
      for (int l = 0; l < locks; l++) {
        Optional<Lease> lease = s.lock(lockName(l)).tryAcquire(ACQUIRE_TIMEOUT);
        if (lease.isEmpty()) {
          throw new IllegalStateException("the cluster did not grant a first lock within " + ACQUIRE_TIMEOUT.toSeconds()
              + " s; are the peers connected?");
        }
        lease.get().release();
      }
    }
    Thread.sleep(200);
  }

  private static NodeStats statsOf(LockService s) {
    try {
      return s.unwrap(NodeStats.class);
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** Messages sent by all nodes, or -1 if some node has no statistics. */
  private static long messagesSent(List<NodeStats> stats) {
    long sum = 0;
    for (NodeStats s : stats) {
      if (s == null) {
        return -1;
      }
      sum += s.messagesSent();
    }
    return sum;
  }

  private static void closeAll(List<LockService> services) {
    LoopbackCluster.close(services);
  }

  /**
   * The live progress line on stderr: redrawn in place a few times a second when stderr is a terminal,
   * otherwise one line every two seconds (so that logs stay readable).
   */
  private static final class Progress {
    private final PrintWriter err;
    private final String algo;
    private final long start;
    private final long deadline;
    private final AtomicLongArray grants;
    private final boolean terminal = stderrIsTerminal();

    Progress(PrintWriter err, String algo, long start, long deadline, AtomicLongArray grants) {
      this.err = err;
      this.algo = algo;
      this.start = start;
      this.deadline = deadline;
      this.grants = grants;
    }

    void run() {
      long period = terminal ? 200 : 2000;
      try {
        while (true) {
          Thread.sleep(period);
          print(false);
        }
      } catch (InterruptedException e) {
        // finished
      }
    }

    void finish() {
      print(true);
    }

    private synchronized void print(boolean last) {
      long total = 0;
      StringBuilder per = new StringBuilder();
      for (int i = 0; i < grants.length(); i++) {
        total += grants.get(i);
        per.append(i == 0 ? "" : " / ").append(grants.get(i));
      }
      double elapsed = Math.min(System.nanoTime(), deadline) - start;
      double seconds = elapsed / 1e9;
      String line = String.format(java.util.Locale.ROOT, "%-16s %5.1f s / %.1f s   grants %7d  (%s)   %8.0f/s",
          algo, seconds, (deadline - start) / 1e9, total, per, seconds > 0 ? total / seconds : 0.0);
      if (terminal) {
        err.print("\r" + line + (last ? "\n" : ""));
      } else if (last || System.nanoTime() < deadline) {
        err.println(line);
      }
      err.flush();
    }

    /** Set by the launcher ({@code [ -t 2 ]}); otherwise a guess from the console. */
    private static boolean stderrIsTerminal() {
      String p = System.getProperty("tumbler.stderr.tty");
      if (p != null) {
        return Boolean.parseBoolean(p);
      }
      return System.console() != null && System.getenv("TERM") != null && !"dumb".equals(System.getenv("TERM"));
    }
  }
}
