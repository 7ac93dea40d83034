package dev.tumbler.cli;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockService;
import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.Algorithms;
import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.node.NodeStats;
import dev.tumbler.peer.provider.LoopbackCluster;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tumbler demo}: a native cluster of three peers over TCP on loopback, in this process; contending
 * workers on each peer for a while, then a table of what happened. A fault-tolerant algorithm loses its
 * last peer for the middle third of the run, and must keep granting. Each algorithm runs on a fresh cluster
 * with fresh ports and a fresh random secret.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = {"Runs contending workers on a native cluster over TCP on loopback, then prints a table.",
        "The table shows grants per node, acquire latency (mean, p99), protocol messages per lock entry",
        "beside what the algorithm should cost (3(N-1) for Lamport, 2(N-1) for Ricart-Agrawala), whether",
        "fencing tokens strictly increased, and whether one holder held a lock at a time. For a fault-tolerant",
        "algorithm the last peer is killed a third of the way in and started again at two thirds, and the table",
        "shows the grants the others received meanwhile and their longest pause (leased algorithms run with",
        "leaseTime=400ms and elected ones with leaderLease=200ms and electionDelay=100ms, so that the killed peer's",
        "grants are free again, its clients have moved to another leader, and a new server has ended its grace",
        "within the outage). Each algorithm runs on a fresh cluster with a random secret."})
final class DemoCommand implements Callable<Integer> {
  private static final Duration ACQUIRE_TIMEOUT = Duration.ofSeconds(30);
  /** The lease term of a leased algorithm in the demo: a dead holder's lock is free again this long after. */
  private static final Duration DEMO_LEASE = Duration.ofMillis(400);
  /**
   * The leader lease of an elected algorithm in the demo. A client whose owner leader is gone waits 1.5 times
   * it for that leader before it asks another: with the default of 2 s, that is longer than the outage.
   */
  private static final Duration DEMO_LEADER_LEASE = Duration.ofMillis(200);
  /**
   * The election delay of an elected algorithm in the demo: a re-election with a member missing waits it (10 s by
   * default), and a single-server algorithm (lease, buckets) whose server is the killed peer grants nothing meanwhile.
   */
  private static final Duration DEMO_ELECTION_DELAY = Duration.ofMillis(100);
  /**
   * The shortest run of a fault-tolerant algorithm: its outage (a third) must outlast the take-over, which for a
   * single-server algorithm whose server is killed is the leader timeout, the election delay and the new server's
   * grace (leaseTime + leader timeout): about 1.2 s.
   */
  private static final Duration MIN_OUTAGE_DURATION = Duration.ofSeconds(5);
  /** How often the outage's watcher looks at the others' grants, to find their longest pause. */
  private static final long OUTAGE_SAMPLE_MILLIS = 5;

  @Spec
  CommandSpec spec;

  @Option(names = "--algorithm", defaultValue = "all", paramLabel = "NAME[,NAME...]",
      description = "Native algorithms (${COMPLETION-CANDIDATES}), comma-separated, or all of them one after the "
          + "other. Default: ${DEFAULT-VALUE}.", completionCandidates = AlgorithmNames.class)
  String algorithm;

  @Option(names = "--scenario", defaultValue = "locks", paramLabel = "NAME",
      description = {"locks: contending workers on plain locks (the default); deadlock: transactions that wait for "
          + "each other in a ring, one per node, broken by surrender and then by abort (algorithms that serve "
          + "transactions: agent); cache: one lock taken by two nodes in phases, to show the lease algorithm's client "
          + "cache (messages per entry fall to 0 on the node that just released it, and rise when another node asks)."})
  String scenario;

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

  @Option(names = "--clients",
      description = "Thin clients that come and go: 3 members that take clients (lease, or the leased --algorithm "
          + "given), workers that each open a client, take a lock, add one to a counter and close it, again and "
          + "again; the member serving the most clients killed for the middle third. --duration at least 6s "
          + "(default here 9s).")
  boolean clients;

  @Override
  public Integer call() throws Exception {
    if (clients) {
      return clients();
    }
    if (scenario.equals("deadlock")) {
      return deadlock();
    }
    if (scenario.equals("cache")) {
      if (!algorithm.equals("all") && !algorithm.equals("lease")) {
        throw new IllegalArgumentException("--scenario cache: runs on lease, the algorithm with a client cache (got '"
            + algorithm + "')");
      }
      return CacheDemo.run(spec.commandLine().getOut(), spec.commandLine().getErr());
    }
    if (!scenario.equals("locks")) {
      throw new IllegalArgumentException("--scenario: '" + scenario + "' is not one of locks, deadlock, cache");
    }
    List<String> algorithms = new ArrayList<>();
    if (algorithm.equals("all")) {
      algorithms.addAll(Algorithms.names());
    } else {
      for (String a : algorithm.split(",", -1)) {
        algorithms.add(Algorithms.byName(a.trim()).orElseThrow(() -> new IllegalArgumentException("--algorithm: '"
            + a.trim() + "' is not one of " + Algorithms.names() + " or all")).name());
      }
    }
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
    for (String a : algorithms) {
      if (Algorithms.byName(a).orElseThrow().capabilities().contains(Capability.FAULT_TOLERANT)
          && duration.compareTo(MIN_OUTAGE_DURATION) < 0) {
        throw new IllegalArgumentException("--duration: " + a + " needs at least " + MIN_OUTAGE_DURATION.toSeconds()
            + "s: its demo kills a node for the middle third of the run, and when that node is the server of a "
            + "single-server algorithm the others take about 1.2 s to elect another and end its grace");
      }
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

  /** {@code --clients}: thin clients coming and going on members of one leased algorithm ({@link ClientsDemo}). */
  private int clients() throws Exception {
    String a = algorithm.equals("all") ? "lease" : algorithm;
    Algorithm<?> alg = Algorithms.byName(a).orElseThrow(() -> new IllegalArgumentException("--algorithm: '" + a
        + "' is not one of " + Algorithms.names()));
    if (!alg.leased() || !alg.capabilities().contains(Capability.FAULT_TOLERANT)) {
      throw new IllegalArgumentException("--clients: members of " + a + " take no thin clients that survive a member's"
          + " crash; use lease, bakery, agent or buckets");
    }
    boolean given = spec.commandLine().getParseResult().hasMatchedOption("--duration");
    Duration d = given ? duration : Duration.ofSeconds(9);
    if (d.compareTo(Duration.ofSeconds(6)) < 0) {
      throw new IllegalArgumentException("--duration: --clients needs at least 6s (a member killed for a third of it "
          + "must be replaced, and it joins a lease term after it comes back)");
    }
    if (workers < 1 || workers > 100) {
      throw new IllegalArgumentException("--workers: " + workers + " is not within 1..100");
    }
    return ClientsDemo.run(alg.name(), d, workers, spec.commandLine().getOut(), spec.commandLine().getErr());
  }

  /** {@code --scenario deadlock}: on every chosen algorithm that serves transactions ({@link DeadlockDemo}). */
  private int deadlock() throws Exception {
    List<String> algorithms = new ArrayList<>();
    for (Algorithm<?> a : Algorithms.all()) {
      boolean chosen = algorithm.equals("all") || List.of(algorithm.split(",", -1)).stream().map(String::trim)
          .anyMatch(a.name()::equals);
      if (chosen && a.capabilities().contains(Capability.TRANSACTIONS)) {
        algorithms.add(a.name());
      } else if (chosen && !algorithm.equals("all")) {
        throw new IllegalArgumentException("--scenario deadlock: " + a.name() + " serves no transactions");
      }
    }
    for (String a : algorithm.equals("all") ? List.<String>of() : List.of(algorithm.split(",", -1))) {
      if (Algorithms.byName(a.trim()).isEmpty()) {
        throw new IllegalArgumentException("--algorithm: '" + a.trim() + "' is not one of " + Algorithms.names()
            + " or all");
      }
    }
    if (nodes < 2 || nodes > 9) {
      throw new IllegalArgumentException("--nodes: " + nodes + " is not within 2..9");
    }
    int code = ExitCodes.OK;
    for (String a : algorithms) {
      code = Math.max(code, DeadlockDemo.run(a, nodes, spec.commandLine().getOut(), spec.commandLine().getErr()));
    }
    return code;
  }

  private DemoReport runOne(String algo, PrintWriter err) throws Exception {
    Algorithm<?> algorithm = Algorithms.byName(algo).orElseThrow();
    // a fault-tolerant algorithm shows it: the last member is killed a third of the way in, and started again
    // at two thirds; the others must keep granting meanwhile
    boolean kill = algorithm.capabilities().contains(Capability.FAULT_TOLERANT);
    // a short term, so that the killed member's grants and waiting tickets are freed well within the outage
    String parameters = (algorithm.leased() ? "&leaseTime=" + DEMO_LEASE.toMillis() + "ms" : "")
        + (algorithm.elected() ? "&leaderLease=" + DEMO_LEADER_LEASE.toMillis() + "ms&electionDelay="
        + DEMO_ELECTION_DELAY.toMillis() + "ms" : "");
    try (LoopbackCluster cluster = LoopbackCluster.open(algo, nodes, parameters)) {
      List<LockService> services = cluster.services();
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
      // each node's service while it is up; null while it is down
      AtomicReferenceArray<LockService> live = new AtomicReferenceArray<>(services.toArray(new LockService[0]));
      long start = System.nanoTime();
      long deadline = start + duration.toNanos();

      List<Thread> threads = new ArrayList<>();
      for (int n = 0; n < nodes; n++) {
        for (int w = 0; w < workers; w++) {
          int node = n;
          int lockIndex = (n * workers + w) % locks;
          threads.add(Thread.ofVirtual().name("demo-worker-" + n + "-" + w).start(() -> {
            while (System.nanoTime() < deadline && !Thread.currentThread().isInterrupted()) {
              LockService service = live.get(node);
              if (service == null) {
                if (!pause(10)) {
                  return;
                }
                continue;
              }
              long t0 = System.nanoTime();
              Optional<Lease> lease;
              try {
                lease = service.lock(lockName(lockIndex)).tryAcquire(ACQUIRE_TIMEOUT);
              } catch (InterruptedException e) {
                return;
              } catch (RuntimeException e) {
                if (live.get(node) == service) {
                  timeouts.incrementAndGet(); // not its own node's death: a failure to count
                }
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
              } catch (RuntimeException e) {
                // the lease was lost with its node: nothing to give back
              }
            }
          }));
        }
      }
      Progress progress = new Progress(err, algo, start, deadline, grants);
      Thread ticker = Thread.ofVirtual().name("demo-progress").start(progress::run);
      DemoReport.Outage outage = null;
      if (kill) {
        outage = outage(cluster, live, grants, start);
      }
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
      if (kill) {
        stats.set(nodes - 1, null); // the restarted node's counters started again from zero
      }
      long messages = messagesBefore < 0 || kill ? -1 : messagesSent(stats) - messagesBefore;

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
      return new DemoReport(algo, perNode, messages, lat, increasing, exclusion.get(), timeouts.get(), outage);
    }
  }

  /**
   * Kills the last member a third of the way into the run and starts it again at two thirds, counting the
   * grants the others received meanwhile and finding their longest pause (from the kill to their first grant,
   * between two grants, or from their last grant to the restart).
   */
  private DemoReport.Outage outage(LoopbackCluster cluster, AtomicReferenceArray<LockService> live,
      AtomicLongArray grants, long start) throws InterruptedException {
    int victim = nodes - 1;
    long third = duration.toNanos() / 3;
    sleepUntil(start + third);
    long before = othersGrants(grants, victim);
    long downAt = System.nanoTime();
    live.set(victim, null);
    cluster.crash(victim);
    long upAt = start + 2 * third;
    long last = before;
    long lastChange = downAt;
    long longestPause = 0;
    while (System.nanoTime() < upAt) {
      sleepUntil(Math.min(upAt, System.nanoTime() + OUTAGE_SAMPLE_MILLIS * 1_000_000));
      long now = System.nanoTime();
      long g = othersGrants(grants, victim);
      if (g != last) {
        last = g;
        lastChange = now;
      }
      longestPause = Math.max(longestPause, now - lastChange);
    }
    long meanwhile = othersGrants(grants, victim) - before;
    upAt = System.nanoTime();
    live.set(victim, cluster.restart(victim));
    return new DemoReport.Outage(victim + 1, (downAt - start) / 1_000_000, (upAt - downAt) / 1_000_000, meanwhile,
        longestPause / 1_000_000);
  }

  private static long othersGrants(AtomicLongArray grants, int except) {
    long sum = 0;
    for (int n = 0; n < grants.length(); n++) {
      sum += n == except ? 0 : grants.get(n);
    }
    return sum;
  }

  private static void sleepUntil(long nanoTime) throws InterruptedException {
    long left = nanoTime - System.nanoTime();
    if (left > 0) {
      Thread.sleep(left / 1_000_000, (int) (left % 1_000_000));
    }
  }

  private static boolean pause(long millis) {
    try {
      Thread.sleep(millis);
      return true;
    } catch (InterruptedException e) {
      return false;
    }
  }

  private static String lockName(int i) {
    return "demo-" + i;
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

  /**
   * Lock messages sent by all nodes, or -1 if some node has no statistics. The election's messages are
   * left out: they keep the leaders' leases whether locks are taken or not, so they are not a cost per entry.
   */
  private static long messagesSent(List<NodeStats> stats) {
    long sum = 0;
    String election = Channel.ELECTION.label() + "/";
    for (NodeStats s : stats) {
      if (s == null) {
        return -1;
      }
      for (Map.Entry<String, Long> e : s.messagesSentByType().entrySet()) {
        sum += e.getKey().startsWith(election) ? 0 : e.getValue();
      }
    }
    return sum;
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
