package dev.tumbler.bench;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.cp.lock.FencedLock;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.peer.provider.LoopbackCluster;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Function;
import org.apache.curator.test.TestingCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.params.SetParams;
import redis.embedded.RedisServer;

/**
 * Grants per second when many threads ask for many names, and when they all want one: every provider and every
 * native algorithm side by side in one JVM, with Hazelcast's {@code FencedLock} on 3 CP members and a raw Redis
 * floor ({@code SET NX PX} and a scripted compare-and-delete) as anchors. Not a test:
 * {@code lock-bench/run ThroughputBench [--seconds S] [--warmup S] [--targets a,b,…] [--workloads A16,B16,…]}
 * (defaults 10 and 2 seconds, every target and workload: about 15 minutes on two cores).
 *
 * <h2>What runs</h2>
 * Each target is started once and gets three clients: three {@link LockService}s (for a native cluster, its three
 * members; for the servers, three connections), three Hazelcast members, three Jedis pools. Then each workload in
 * turn: its threads, spread over the three clients round robin, each loop {@code tryAcquire(1 s)} on a name and
 * release. A warm-up (not counted), then the measured window.
 * <ul>
 *   <li><b>A4, A16, A64</b>: a random name out of 1,000, at 4, 16 and 64 threads (workload C of issue 43 is
 *       the three side by side: does the service scale with threads?);
 *   <li><b>A16x100k</b>: a random name out of 100,000 at 16 threads (does it scale with names?);
 *   <li><b>B16</b>: one hot name at 16 threads (the hand-over rate of one lock).
 * </ul>
 *
 * <h2>What it checks while it runs</h2>
 * Every grant marks its name held and checks that nobody held it (exclusion), and that its fencing token is
 * above every token granted on that name before (token order; the floor has no token). A violation is counted,
 * printed and makes the exit status 1: a throughput bought by breaking exclusion is not a result.
 *
 * <h2>How to read it</h2>
 * Per target and workload: grants per second in the window, the p50 and p99 time of one {@code tryAcquire} that
 * was granted, time-outs (a {@code tryAcquire} that waited its whole second), errors (anything thrown; the first
 * is printed), the grants per second of each of the three clients (a client far below the others is starved), and
 * the ratio to Redis (Tumbler's provider on one server) and to Hazelcast. On a shared two-core machine every
 * target shares the cores with its own servers and with the load generator, so absolute numbers are low and noisy:
 * read the ratios, and run it three times. The summary repeats the table of issue 43. A picture of the same
 * numbers goes to {@code lock-bench/target/throughput/report.html}.
 */
public final class ThroughputBench {

  private ThroughputBench() {}

  /** One workload: threads, names (0 for the one hot name). */
  record Workload(String label, int threads, int names) {
    String describe() {
      return names == 0 ? threads + " threads, one hot name" : threads + " threads, random names out of "
          + String.format(Locale.ROOT, "%,d", names);
    }
  }

  static final List<Workload> WORKLOADS = List.of(new Workload("A4", 4, 1_000), new Workload("A16", 16, 1_000),
      new Workload("A64", 64, 1_000), new Workload("A16x100k", 16, 100_000), new Workload("B16", 16, 0));

  /** A held lock: its fencing token (-1 when it has none) and its release. */
  interface Held {
    long token();

    void release() throws Exception;
  }

  /** One client of a target: a try-acquire with a bound, empty on time-out. */
  @FunctionalInterface
  interface Client {
    Optional<Held> tryAcquire(String name, Duration maxWait) throws Exception;
  }

  /** A started target: its three clients and what to close. */
  record Target(String name, List<Client> clients, List<AutoCloseable> resources) implements AutoCloseable {
    @Override
    public void close() {
      for (int i = resources.size() - 1; i >= 0; i--) {
        try {
          resources.get(i).close();
        } catch (Exception e) {
          System.err.println("closing " + name + ": " + e);
        }
      }
    }
  }

  /** What one workload on one target gave. */
  record Result(String target, Workload workload, double opsPerSecond, long p50Micros, long p99Micros, long timeouts,
      long errors, String firstError, double[] perClient, long exclusionViolations, long tokenViolations) {}

  static final Duration MAX_WAIT = Duration.ofSeconds(1);
  static final int CLIENTS = 3;

  /** The targets in the order they run, by name; each starts its servers when asked. */
  static Map<String, TargetFactory> targets() {
    Map<String, TargetFactory> t = new LinkedHashMap<>();
    t.put("redis", ThroughputBench::redis);
    t.put("redis floor", ThroughputBench::redisFloor);
    t.put("hazelcast", ThroughputBench::hazelcast);
    t.put("zookeeper", ThroughputBench::zooKeeper);
    t.put("postgresql lease", () -> postgres("lease"));
    t.put("postgresql advisory", () -> postgres("advisory"));
    for (String a : List.of("lamport", "ricart-agrawala", "bakery", "agent", "lease", "buckets")) {
      t.put("native " + a, () -> nativeCluster(a));
    }
    return t;
  }

  @FunctionalInterface
  interface TargetFactory {
    Target start() throws Exception;
  }

  public static void main(String[] args) throws Exception {
    System.setProperty("hazelcast.logging.type", "none");
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    System.setProperty("org.slf4j.simpleLogger.log.io.zonky", "error");
    System.setProperty("org.slf4j.simpleLogger.log.com.zaxxer.hikari", "error");
    System.setProperty("org.slf4j.simpleLogger.log.org.apache.zookeeper", "error");
    System.setProperty("org.slf4j.simpleLogger.log.org.apache.curator", "error");
    Options o = Options.parse(args);
    Map<String, TargetFactory> all = targets();
    System.out.printf(Locale.ROOT, "Throughput bench: %d target(s) × %d workload(s), %d s warm-up + %d s each, %d clients "
        + "per target, tryAcquire(%d s) then release; %d cores%n", o.targets.size(), o.workloads.size(), o.warmupSeconds,
        o.seconds, CLIENTS, MAX_WAIT.toSeconds(), Runtime.getRuntime().availableProcessors());
    List<Result> results = new ArrayList<>();
    long started = System.nanoTime();
    int done = 0;
    for (String name : o.targets) {
      System.out.printf(Locale.ROOT, "%n%s: starting ...%n", name);
      try (Target target = all.get(name).start()) {
        for (Workload w : o.workloads) {
          Result r = run(target, w, o);
          results.add(r);
          done++;
          System.out.println("  " + line(r, null, null) + progress(started, done, o));
        }
      } catch (Exception e) {
        System.out.printf(Locale.ROOT, "%s: could not start or run (%s); its rows are missing%n", name, e);
      }
    }
    printTable(results);
    printSummary(results);
    Path report = Path.of("lock-bench", "target", "throughput", "report.html").toAbsolutePath();
    Files.createDirectories(report.getParent());
    Files.writeString(report, ThroughputReport.html(results, o.describe()), StandardCharsets.UTF_8);
    System.out.println();
    System.out.println("report: " + report);
    long violations = results.stream().mapToLong(r -> r.exclusionViolations() + r.tokenViolations()).sum();
    if (violations > 0) {
      System.out.printf(Locale.ROOT, "%d exclusion or token-order violation(s): see the rows above%n", violations);
      System.exit(1);
    }
    System.exit(0); // the servers' non-daemon threads (Hazelcast, ZooKeeper) are closed, but do not wait for stragglers
  }

  private static String progress(long started, int done, Options o) {
    int total = o.targets.size() * o.workloads.size();
    double elapsed = (System.nanoTime() - started) / 1e9;
    double left = elapsed / done * (total - done);
    return String.format(Locale.ROOT, "   [%d/%d, about %.0f min left]", done, total, left / 60);
  }

  // ---- the load

  /**
   * Runs {@code w} on {@code target}: warm-up, then the measured window. A grant counts when its release
   * returned inside the window; its latency is that of its {@code tryAcquire}.
   */
  static Result run(Target target, Workload w, Options o) throws InterruptedException {
    int slots = Math.max(1, w.names());
    String[] names = new String[slots];
    String prefix = "tp-" + w.label().toLowerCase(Locale.ROOT) + "-" + UUID.randomUUID().toString().substring(0, 8) + "-";
    for (int i = 0; i < slots; i++) {
      names[i] = prefix + i;
    }
    AtomicIntegerArray held = new AtomicIntegerArray(slots);
    AtomicLongArray lastToken = new AtomicLongArray(slots);
    for (int i = 0; i < slots; i++) {
      lastToken.set(i, Long.MIN_VALUE);
    }
    long warmupEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(o.warmupSeconds);
    long end = warmupEnd + TimeUnit.SECONDS.toNanos(o.seconds);
    Worker[] workers = new Worker[w.threads()];
    CountDownLatch finished = new CountDownLatch(w.threads());
    for (int t = 0; t < w.threads(); t++) {
      Worker worker = new Worker(target.clients().get(t % CLIENTS), t % CLIENTS, names, held, lastToken, warmupEnd,
          end, finished);
      workers[t] = worker;
      Thread thread = new Thread(worker, "tp-" + target.name() + "-" + t);
      thread.setDaemon(true);
      thread.start();
    }
    // a tryAcquire waits at most MAX_WAIT, a release is one call: past that, a worker is stuck in its client
    long grace = TimeUnit.SECONDS.toNanos(MAX_WAIT.toSeconds() + 30);
    if (!finished.await(end - System.nanoTime() + grace, TimeUnit.NANOSECONDS)) {
      System.out.printf(Locale.ROOT, "  %s %s: %d worker(s) still in a call 30 s after the window; counted as they "
          + "are%n", target.name(), w.label(), finished.getCount());
    }
    long ops = 0;
    long timeouts = 0;
    long errors = 0;
    long exclusion = 0;
    long tokens = 0;
    String firstError = null;
    double[] perClient = new double[CLIENTS];
    long[] all = new long[0];
    int size = 0;
    for (Worker k : workers) {
      ops += k.ops;
      timeouts += k.timeouts;
      errors += k.errors;
      exclusion += k.exclusion;
      tokens += k.tokenOrder;
      if (firstError == null) {
        firstError = k.firstError;
      }
      perClient[k.clientIndex] += k.ops / (double) o.seconds;
      if (size + k.latencyCount > all.length) {
        all = Arrays.copyOf(all, Math.max(size + k.latencyCount, all.length * 2));
      }
      System.arraycopy(k.latencies, 0, all, size, k.latencyCount);
      size += k.latencyCount;
    }
    long[] sorted = Arrays.copyOf(all, size);
    Arrays.sort(sorted);
    return new Result(target.name(), w, ops / (double) o.seconds, percentile(sorted, 50), percentile(sorted, 99),
        timeouts, errors, firstError, perClient, exclusion, tokens);
  }

  /** One load thread: its client, its counts, the latencies (µs) of its grants in the window. */
  static final class Worker implements Runnable {
    final Client client;
    final int clientIndex;
    final String[] names;
    final AtomicIntegerArray held;
    final AtomicLongArray lastToken;
    final long windowStart;
    final long windowEnd;
    final CountDownLatch finished;
    long ops;
    long timeouts;
    long errors;
    long exclusion;
    long tokenOrder;
    String firstError;
    long[] latencies = new long[4096];
    int latencyCount;

    Worker(Client client, int clientIndex, String[] names, AtomicIntegerArray held, AtomicLongArray lastToken,
        long windowStart, long windowEnd, CountDownLatch finished) {
      this.client = client;
      this.clientIndex = clientIndex;
      this.names = names;
      this.held = held;
      this.lastToken = lastToken;
      this.windowStart = windowStart;
      this.windowEnd = windowEnd;
      this.finished = finished;
    }

    @Override
    public void run() {
      try {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        while (true) {
          long before = System.nanoTime();
          if (before >= windowEnd) {
            return;
          }
          int slot = names.length == 1 ? 0 : random.nextInt(names.length);
          boolean counted = before >= windowStart;
          try {
            Optional<Held> grant = client.tryAcquire(names[slot], MAX_WAIT);
            long granted = System.nanoTime();
            if (grant.isEmpty()) {
              if (counted) {
                timeouts++;
              }
              continue;
            }
            Held h = grant.get();
            check(slot, h.token());
            held.decrementAndGet(slot);
            h.release();
            if (counted && System.nanoTime() <= windowEnd) {
              ops++;
              if (latencyCount == latencies.length) {
                latencies = Arrays.copyOf(latencies, latencyCount * 2);
              }
              latencies[latencyCount++] = (granted - before) / 1_000;
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          } catch (Exception e) {
            if (counted) {
              errors++;
              if (firstError == null) {
                firstError = e.toString();
              }
            }
          }
        }
      } finally {
        finished.countDown();
      }
    }

    private void check(int slot, long token) {
      if (held.incrementAndGet(slot) != 1) {
        exclusion++;
        System.out.printf(Locale.ROOT, "  EXCLUSION: %s granted while another holder had it%n", names[slot]);
      }
      if (token < 0) {
        return; // the floor: no token
      }
      while (true) {
        long last = lastToken.get(slot);
        if (token <= last) {
          tokenOrder++;
          System.out.printf(Locale.ROOT, "  TOKEN ORDER: %s granted with token %d after token %d%n", names[slot],
              token, last);
          return;
        }
        if (lastToken.compareAndSet(slot, last, token)) {
          return;
        }
      }
    }
  }

  static long percentile(long[] sorted, double p) {
    if (sorted.length == 0) {
      return -1;
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }

  // ---- the targets

  /** Tumbler's clients on three {@link LockService}s. */
  static List<Client> tumblerClients(List<LockService> services) {
    List<Client> clients = new ArrayList<>();
    for (LockService s : services) {
      clients.add((name, maxWait) -> s.lock(name).tryAcquire(maxWait).map(ThroughputBench::held));
    }
    return clients;
  }

  private static Held held(Lease lease) {
    return new Held() {
      @Override
      public long token() {
        return lease.fencingToken();
      }

      @Override
      public void release() {
        lease.release();
      }
    };
  }

  static Target redis() throws Exception {
    int port = JdbcBench.freePort();
    RedisServer server = RedisBench.startServer(port);
    List<AutoCloseable> resources = new ArrayList<>();
    resources.add(server::stop);
    List<LockService> services = new ArrayList<>();
    for (int i = 0; i < CLIENTS; i++) {
      LockService s = LockProviders.connect("lock:redis://127.0.0.1:" + port);
      services.add(s);
      resources.add(s);
    }
    return new Target("redis", tumblerClients(services), resources);
  }

  /**
   * The floor: {@code SET NX PX} to take, a scripted compare-and-delete to give back, and a wait that retries the
   * take every millisecond (no token, no notification: the least a Redis lock can do).
   */
  static Target redisFloor() throws Exception {
    int port = JdbcBench.freePort();
    RedisServer server = RedisBench.startServer(port);
    List<AutoCloseable> resources = new ArrayList<>();
    resources.add(server::stop);
    String release = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
    List<Client> clients = new ArrayList<>();
    for (int i = 0; i < CLIENTS; i++) {
      JedisPooled jedis = new JedisPooled("127.0.0.1", port);
      resources.add(jedis);
      clients.add((name, maxWait) -> {
        String me = UUID.randomUUID().toString();
        long deadline = System.nanoTime() + maxWait.toNanos();
        while (true) {
          if ("OK".equals(jedis.set(name, me, SetParams.setParams().nx().px(30_000)))) {
            return Optional.of(new Held() {
              @Override
              public long token() {
                return -1;
              }

              @Override
              public void release() {
                jedis.eval(release, List.of(name), List.of(me));
              }
            });
          }
          if (System.nanoTime() >= deadline) {
            return Optional.empty();
          }
          Thread.sleep(1);
        }
      });
    }
    return new Target("redis floor", clients, resources);
  }

  /** Hazelcast's CP {@code FencedLock}: 3 CP members in this JVM, each client locking through its own member. */
  static Target hazelcast() throws Exception {
    List<AutoCloseable> resources = new ArrayList<>();
    List<HazelcastInstance> members = HazelcastCp.start("tumbler-throughput-", resources);
    List<Client> clients = new ArrayList<>();
    for (HazelcastInstance member : members) {
      clients.add((name, maxWait) -> {
        FencedLock lock = member.getCPSubsystem().getLock(name);
        long fence = lock.tryLockAndGetFence(maxWait.toMillis(), TimeUnit.MILLISECONDS);
        if (fence == FencedLock.INVALID_FENCE) {
          return Optional.empty();
        }
        return Optional.of(new Held() {
          @Override
          public long token() {
            return fence;
          }

          @Override
          public void release() {
            lock.unlock();
          }
        });
      });
    }
    return new Target("hazelcast", clients, resources);
  }

  static Target zooKeeper() throws Exception {
    TestingCluster cluster = new TestingCluster(3);
    cluster.start();
    List<AutoCloseable> resources = new ArrayList<>();
    resources.add(cluster);
    List<LockService> services = new ArrayList<>();
    for (int i = 0; i < CLIENTS; i++) {
      LockService s = LockProviders.connect("lock:zookeeper://" + cluster.getConnectString());
      services.add(s);
      resources.add(s);
    }
    return new Target("zookeeper", tumblerClients(services), resources);
  }

  static Target postgres(String mode) throws Exception {
    int port = JdbcBench.freePort();
    EmbeddedPostgres pg = JdbcBench.startPostgres(port, Map.of("max_connections", "200"));
    List<AutoCloseable> resources = new ArrayList<>();
    resources.add(pg);
    List<LockService> services = new ArrayList<>();
    for (int i = 0; i < CLIENTS; i++) {
      LockService s = LockProviders.connect("lock:jdbc:postgresql://127.0.0.1:" + port
          + "/postgres?user=postgres&createSchema=true&maximumPoolSize=30" + (mode.equals("lease") ? "" : "&mode=" + mode));
      services.add(s);
      resources.add(s);
    }
    return new Target("postgresql " + mode, tumblerClients(services), resources);
  }

  /** A native cluster of three members over TCP on loopback; each client is one member's service. */
  static Target nativeCluster(String algorithm) throws Exception {
    LoopbackCluster cluster = LoopbackCluster.open(algorithm, CLIENTS, "");
    List<LockService> services = cluster.services();
    for (LockService s : services) {
      s.lock("tp-warm").acquire().release(); // every member has taken part in a grant before timing starts
    }
    return new Target("native " + algorithm, tumblerClients(services), List.of(cluster));
  }

  // ---- output

  static String line(Result r, Result redis, Result hazelcast) {
    StringBuilder perClient = new StringBuilder();
    for (double c : r.perClient()) {
      perClient.append(perClient.isEmpty() ? "" : "/").append(String.format(Locale.ROOT, "%.0f", c));
    }
    String s = String.format(Locale.ROOT, "%-20s %-9s %9.0f %8s %8s %8d %6d  %-20s", r.target(), r.workload().label(),
        r.opsPerSecond(), micros(r.p50Micros()), micros(r.p99Micros()), r.timeouts(), r.errors(), perClient);
    if (redis != null || hazelcast != null) {
      s += String.format(Locale.ROOT, " %7s %7s", ratio(r, redis), ratio(r, hazelcast));
    }
    if (r.exclusionViolations() + r.tokenViolations() > 0) {
      s += String.format(Locale.ROOT, "  VIOLATIONS: exclusion %d, token order %d", r.exclusionViolations(),
          r.tokenViolations());
    }
    if (r.firstError() != null) {
      s += "  first error: " + r.firstError();
    }
    return s;
  }

  static String micros(long us) {
    if (us < 0) {
      return "-";
    }
    return us < 10_000 ? us + "µs" : String.format(Locale.ROOT, "%.1fms", us / 1000.0);
  }

  static String ratio(Result r, Result anchor) {
    if (anchor == null || anchor.opsPerSecond() <= 0) {
      return "-";
    }
    return String.format(Locale.ROOT, "%.2f", r.opsPerSecond() / anchor.opsPerSecond());
  }

  static Result find(List<Result> results, String target, String workload) {
    for (Result r : results) {
      if (r.target().equals(target) && r.workload().label().equals(workload)) {
        return r;
      }
    }
    return null;
  }

  private static void printTable(List<Result> results) {
    System.out.println();
    System.out.printf(Locale.ROOT, "%-20s %-9s %9s %8s %8s %8s %6s  %-20s %7s %7s%n", "target", "workload", "ops/s",
        "p50", "p99", "timeouts", "errors", "ops/s per client", "×redis", "×hazel");
    for (Result r : results) {
      System.out.println(line(r, find(results, "redis", r.workload().label()),
          find(results, "hazelcast", r.workload().label())));
    }
  }

  /** Issue 43's table: A at 16 threads, B, B's p99, A at 4 → 16 → 64 threads, A over 100,000 names, ratios. */
  private static void printSummary(List<Result> results) {
    System.out.println();
    System.out.printf(Locale.ROOT, "%-20s %9s %9s %8s %-24s %9s %8s %8s %8s%n", "target", "A16 ops/s", "B16 ops/s",
        "B16 p99", "A: 4 → 16 → 64 threads", "A16x100k", "A ×redis", "A ×hazel", "B ×hazel");
    List<String> seen = new ArrayList<>();
    for (Result r : results) {
      if (seen.contains(r.target())) {
        continue;
      }
      seen.add(r.target());
      Function<String, Result> of = w -> find(results, r.target(), w);
      Result a16 = of.apply("A16");
      Result b16 = of.apply("B16");
      System.out.printf(Locale.ROOT, "%-20s %9s %9s %8s %-24s %9s %8s %8s %8s%n", r.target(), ops(a16), ops(b16),
          b16 == null ? "-" : micros(b16.p99Micros()),
          ops(of.apply("A4")) + " → " + ops(a16) + " → " + ops(of.apply("A64")), ops(of.apply("A16x100k")),
          a16 == null ? "-" : ratio(a16, find(results, "redis", "A16")),
          a16 == null ? "-" : ratio(a16, find(results, "hazelcast", "A16")),
          b16 == null ? "-" : ratio(b16, find(results, "hazelcast", "B16")));
    }
  }

  static String ops(Result r) {
    return r == null ? "-" : String.format(Locale.ROOT, "%,.0f", r.opsPerSecond());
  }

  // ---- options

  /** The command line: {@code --seconds}, {@code --warmup}, {@code --targets}, {@code --workloads}. */
  record Options(int seconds, int warmupSeconds, List<String> targets, List<Workload> workloads) {

    static Options parse(String[] args) {
      int seconds = 10;
      int warmup = 2;
      List<String> targets = new ArrayList<>(ThroughputBench.targets().keySet());
      List<Workload> workloads = WORKLOADS;
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        if (i + 1 >= args.length) {
          throw usage("'" + a + "' needs a value");
        }
        String v = args[++i];
        switch (a) {
          case "--seconds" -> seconds = positive(a, v);
          case "--warmup" -> warmup = positive(a, v);
          case "--targets" -> {
            targets = new ArrayList<>();
            for (String t : v.split(",")) {
              String name = t.trim().replace('-', ' ').replace("ricart agrawala", "ricart-agrawala");
              if (!ThroughputBench.targets().containsKey(name)) {
                throw usage("no target '" + t + "'; the targets: " + String.join(", ", ThroughputBench.targets().keySet()));
              }
              targets.add(name);
            }
          }
          case "--workloads" -> {
            List<Workload> chosen = new ArrayList<>();
            for (String l : v.split(",")) {
              chosen.add(WORKLOADS.stream().filter(w -> w.label().equalsIgnoreCase(l.trim())).findFirst()
                  .orElseThrow(() -> usage("no workload '" + l + "'; the workloads: "
                      + String.join(", ", WORKLOADS.stream().map(Workload::label).toList()))));
            }
            workloads = List.copyOf(chosen);
          }
          default -> throw usage("unknown option '" + a + "'");
        }
      }
      return new Options(seconds, warmup, List.copyOf(targets), workloads);
    }

    String describe() {
      return String.format(Locale.ROOT, "%d s warm-up + %d s per workload, %d clients per target, tryAcquire(%d s) "
          + "then release, %d cores", warmupSeconds, seconds, CLIENTS, MAX_WAIT.toSeconds(),
          Runtime.getRuntime().availableProcessors());
    }

    private static int positive(String option, String value) {
      try {
        int n = Integer.parseInt(value);
        if (n > 0) {
          return n;
        }
      } catch (NumberFormatException e) {
        // below
      }
      throw usage(option + " takes a whole number of seconds above 0 (got '" + value + "')");
    }

    private static IllegalArgumentException usage(String problem) {
      return new IllegalArgumentException(problem + "\nusage: lock-bench/run ThroughputBench [--seconds S] "
          + "[--warmup S] [--targets a,b,…] [--workloads A4,A16,A64,A16x100k,B16]");
    }
  }
}
