package dev.tumbler.bench;

import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * Tumbler's ZooKeeper provider against raw Curator {@link InterProcessMutex}, on one in-process ZooKeeper
 * server, printed as ratios (Tumbler time / Curator time; 1.00 means equal, above 1 means Tumbler is slower).
 *
 * <ul>
 *   <li><b>uncontended</b>: one client acquires and releases a free lock, again and again;
 *   <li><b>hand-off</b>: two clients (two sessions) each loop acquire → release on one lock, so the lock
 *       passes from one to the other through ZooKeeper's watch notification.
 * </ul>
 *
 * Each scenario is measured in several runs (5 by default), one after the other in this JVM, on the same
 * sessions and locks, after one warm-up per scenario that no run counts. A run is many short rounds that
 * alternate which side goes first; each round gives one ratio, and the run's result is the median of those
 * ratios (printed with quartiles, and with the ratio of the run's totals), so drift of a shared machine
 * hits both sides alike. After its runs, each scenario prints the spread of the run results: min, median
 * and max, of the median round ratios and of the ratios of totals. One run says little on a shared
 * machine: its result moves by several percent from one run to the next, which is why the spread is
 * printed. Absolute times are noise; the ratio is the result. Not a test: run it with
 * {@code lock-bench/run ZooKeeperBench [rounds] [iterations] [runs]} (defaults 400, 10 and 5).
 */
public final class ZooKeeperBench {

  /** One acquire and release on the current thread. */
  @FunctionalInterface
  private interface Side {
    void cycle() throws Exception;
  }

  private ZooKeeperBench() {}

  public static void main(String[] args) throws Exception {
    // the in-process server logs every session at INFO; only the results matter here
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    System.setProperty("org.slf4j.simpleLogger.log.org.apache.zookeeper", "error");
    System.setProperty("org.slf4j.simpleLogger.log.org.apache.curator", "error");
    // many short rounds, alternating which side goes first: load from other processes hits both sides alike
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 400;
    int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 10;
    int runs = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    if (rounds < 1 || iterations < 1 || runs < 1) {
      throw new IllegalArgumentException("rounds, iterations and runs must be at least 1: " + Arrays.toString(args));
    }
    InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, -1, -1, null, "127.0.0.1");
    try (TestingServer server = new TestingServer(spec, true)) {
      String connect = server.getConnectString();
      String url = "lock:zookeeper://" + connect + "/bench?sessionTimeout=20s";
      System.out.printf(Locale.ROOT, "ZooKeeper %s; each scenario: %d warm-up rounds, then %d runs (one JVM, the same "
          + "sessions) of %d rounds of %d iterations per side%n", connect, warmUp(rounds), runs, rounds, iterations);

      // ---- uncontended
      try (LockService tumbler = LockProviders.connect(url); CuratorFramework curator = curator(connect)) {
        Side t = tumblerSide(tumbler.lock("uncontended"));
        Side c = curatorSide(new InterProcessMutex(curator, "/bench-curator/uncontended"));
        measure("uncontended acquire+release", runs, rounds, iterations, () -> timeLoop(t, iterations),
            () -> timeLoop(c, iterations));
      }

      // ---- contended hand-off between two sessions
      try (LockService t1 = LockProviders.connect(url); LockService t2 = LockProviders.connect(url);
          CuratorFramework c1 = curator(connect); CuratorFramework c2 = curator(connect)) {
        Side[] tumbler = {tumblerSide(t1.lock("handoff")), tumblerSide(t2.lock("handoff"))};
        Side[] raw = {curatorSide(new InterProcessMutex(c1, "/bench-curator/handoff")),
            curatorSide(new InterProcessMutex(c2, "/bench-curator/handoff"))};
        measure("contended hand-off (2 clients)", runs, rounds, 2 * iterations, () -> timePair(tumbler, iterations),
            () -> timePair(raw, iterations));
      }
    }
  }

  /** One scenario: the warm-up, then {@code runs} runs of {@code rounds} rounds, each reported, then their spread. */
  private static void measure(String what, int runs, int rounds, int opsPerRound, Timed tumbler, Timed curator)
      throws Exception {
    System.out.println(what);
    compare(warmUp(rounds), tumbler, curator);
    double[] medians = new double[runs];
    double[] totals = new double[runs];
    for (int run = 0; run < runs; run++) {
      Run r = Run.of(compare(rounds, tumbler, curator), opsPerRound);
      medians[run] = r.medianRatio();
      totals[run] = r.totalRatio();
      System.out.printf(Locale.ROOT, "  run %d  tumbler %7.1f us/op  curator %7.1f us/op  ratio of totals %.3f  "
          + "median round ratio %.3f  (quartiles %.3f-%.3f)%n", run + 1, r.tumblerMicros(), r.curatorMicros(),
          r.totalRatio(), r.medianRatio(), r.lowerQuartile(), r.upperQuartile());
    }
    Arrays.sort(medians);
    Arrays.sort(totals);
    System.out.printf(Locale.ROOT, "  over %d runs: median round ratio min %.3f  median %.3f  max %.3f;  "
        + "ratio of totals min %.3f  median %.3f  max %.3f%n", runs, medians[0], median(medians),
        medians[runs - 1], totals[0], median(totals), totals[runs - 1]);
  }

  private static Side tumblerSide(Lock lock) {
    return () -> lock.acquire().release();
  }

  private static Side curatorSide(InterProcessMutex m) {
    return () -> {
      m.acquire();
      m.release();
    };
  }

  private static CuratorFramework curator(String connect) throws InterruptedException {
    CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connect).sessionTimeoutMs(20_000)
        .connectionTimeoutMs(15_000).retryPolicy(new RetryOneTime(100)).build();
    c.start();
    if (!c.blockUntilConnected(15, TimeUnit.SECONDS)) {
      throw new IllegalStateException("Curator cannot connect to " + connect);
    }
    return c;
  }

  @FunctionalInterface
  private interface Timed {
    long nanos() throws Exception;
  }

  /** Per round: {tumblerNanos, curatorNanos}. */
  private static double[][] compare(int rounds, Timed tumbler, Timed curator) throws Exception {
    double[][] out = new double[rounds][];
    for (int round = 0; round < rounds; round++) {
      long t;
      long c;
      if (round % 2 == 0) {
        t = tumbler.nanos();
        c = curator.nanos();
      } else {
        c = curator.nanos();
        t = tumbler.nanos();
      }
      out[round] = new double[] {t, c};
    }
    return out;
  }

  private static int warmUp(int rounds) {
    return Math.max(2, rounds / 10);
  }

  private static long timeLoop(Side s, int iterations) throws Exception {
    long t0 = System.nanoTime();
    for (int i = 0; i < iterations; i++) {
      s.cycle();
    }
    return System.nanoTime() - t0;
  }

  /** Two threads, one per client, each looping acquire → release; the lock changes hands through ZooKeeper. */
  private static long timePair(Side[] sides, int iterations) throws Exception {
    CountDownLatch start = new CountDownLatch(1);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>();
    for (Side s : sides) {
      threads.add(Thread.ofPlatform().start(() -> {
        try {
          start.await();
          for (int i = 0; i < iterations; i++) {
            s.cycle();
          }
        } catch (Throwable e) {
          failure.compareAndSet(null, e);
        }
      }));
    }
    long t0 = System.nanoTime();
    start.countDown();
    for (Thread th : threads) {
      th.join();
    }
    long elapsed = System.nanoTime() - t0;
    if (failure.get() != null) {
      throw new IllegalStateException("benchmark thread failed", failure.get());
    }
    return elapsed;
  }

  /** The median of values already sorted. */
  private static double median(double[] sorted) {
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  /** One run's result: mean times per operation, the ratio of the totals and the spread of the round ratios. */
  private record Run(double tumblerMicros, double curatorMicros, double totalRatio, double medianRatio,
      double lowerQuartile, double upperQuartile) {

    static Run of(double[][] rounds, int opsPerRound) {
      double[] ratio = new double[rounds.length];
      double sumT = 0;
      double sumC = 0;
      for (int i = 0; i < rounds.length; i++) {
        sumT += rounds[i][0];
        sumC += rounds[i][1];
        ratio[i] = rounds[i][0] / rounds[i][1];
      }
      Arrays.sort(ratio);
      return new Run(sumT / rounds.length / opsPerRound / 1000.0, sumC / rounds.length / opsPerRound / 1000.0,
          sumT / sumC, median(ratio), ratio[ratio.length / 4], ratio[(3 * ratio.length) / 4]);
    }
  }
}
