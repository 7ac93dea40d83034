package dev.tumbler.bench;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.peer.provider.LoopbackCluster;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import javax.management.ObjectName;
import org.apache.curator.test.TestingCluster;
import redis.embedded.RedisServer;

/**
 * Client heap per held lease: for every provider and every native algorithm, a client holds 100,000 leases at once
 * (distinct names) and the bench reports what the client's heap grew by, divided by the leases, and which classes the
 * bytes are in. Not a test: {@code lock-bench/run MemoryBench [--leases N] [--targets a,b,…]} (about 10 minutes on
 * two cores with every target).
 *
 * <h2>How it measures</h2>
 * The servers (Redis, ZooKeeper, PostgreSQL, the members of a native cluster) run in this JVM; the client runs in a
 * JVM of its own ({@code -XX:+UseSerialGC}), so that only the client's heap is counted. The client connects, warms
 * up (100 leases taken and given back), then its live objects are counted by a class histogram after a full
 * collection (the heap's "used" figure also counts what a collection left behind, and swung by hundreds of bytes a
 * lease); it takes the leases with 8 threads, keeps every one, and is counted again. Bytes per lease is the growth of
 * the live bytes over the leases held; the histogram's difference by class says what the bytes are (every class that grew by 8 bytes a lease or more,
 * with its instances a lease in brackets). A lease that is no longer valid when the
 * second measurement is taken is counted (a client that cannot keep 100,000 leases renewed shows here).
 *
 * <h2>The targets</h2>
 * {@code native local <algorithm>} is the embedded default ({@code lock:native:local}): the node's core lives in the
 * client, so its bytes count. {@code native client <algorithm>} is a thin client of three members over TCP; a member
 * keeps at most 10,000 requests for one client session (a bound on what one client can make a member hold), so that
 * client opens one service (one session) per {@value #SESSION_LEASES} leases and spreads its leases over them. Like
 * every target's one service, they are opened before the first count: a session's own cost is not in the figure.
 * Every lease that has a term has {@code leaseTime=120s}, so that renewals of 100,000 leases stay within what every
 * target serves (renewed every 40 s: 2,500 a second); PostgreSQL's advisory locks and native {@code lamport} and
 * {@code ricart-agrawala} grants hold until released.
 */
public final class MemoryBench {

  static final String LEASE_TIME = "120s";
  static final int THREADS = 8;
  static final String SECRET_ENV = "TUMBLER_BENCH_CLIENT_SECRET";
  /** The leases a native thin client takes through one service: below the 10,000 a member keeps for one session. */
  static final int SESSION_LEASES = 8_000;

  private MemoryBench() {}

  /** A started server side and the URL a client reaches it by. */
  record Server(String url, Properties props, List<AutoCloseable> resources) {}

  @FunctionalInterface
  interface ServerFactory {
    Server start() throws Exception;
  }

  static Map<String, ServerFactory> targets() {
    Map<String, ServerFactory> t = new LinkedHashMap<>();
    t.put("redis", () -> {
      int port = JdbcBench.freePort();
      RedisServer server = RedisBench.startServer(port);
      return new Server("lock:redis://127.0.0.1:" + port + "?leaseTime=" + LEASE_TIME, new Properties(),
          List.of(server::stop));
    });
    t.put("zookeeper", () -> {
      TestingCluster cluster = new TestingCluster(3);
      cluster.start();
      return new Server("lock:zookeeper://" + cluster.getConnectString() + "?leaseTime=" + LEASE_TIME,
          new Properties(), List.of(cluster));
    });
    t.put("postgresql lease", () -> postgres("lease"));
    t.put("postgresql advisory", () -> postgres("advisory"));
    for (String a : List.of("lamport", "ricart-agrawala", "bakery", "agent", "lease", "buckets")) {
      boolean leased = !a.equals("lamport") && !a.equals("ricart-agrawala");
      t.put("native local " + a, () -> new Server("lock:native:local?algorithm=" + a
          + (leased ? "&leaseTime=" + LEASE_TIME : ""), new Properties(), List.of()));
    }
    for (String a : List.of("bakery", "agent", "lease", "buckets")) {
      t.put("native client " + a, () -> {
        LoopbackCluster cluster = LoopbackCluster.open(a, 3, "&leaseTime=" + LEASE_TIME, true);
        return new Server(cluster.clientUrl(0), cluster.clientProperties(), List.of(cluster));
      });
    }
    return t;
  }

  static Server postgres(String mode) throws Exception {
    int port = JdbcBench.freePort();
    EmbeddedPostgres pg = JdbcBench.startPostgres(port, Map.of("max_locks_per_transaction", "2048"));
    return new Server("lock:jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres&createSchema=true"
        + (mode.equals("lease") ? "&leaseTime=" + LEASE_TIME : "&mode=" + mode), new Properties(), List.of(pg));
  }

  /** What one client measured. */
  record Result(String target, int leases, int held, int valid, double bytesPerLease, double seconds,
      List<String> classes, String problem) {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("--client")) {
      client(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]));
      return;
    }
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    System.setProperty("org.slf4j.simpleLogger.log.io.zonky", "error");
    System.setProperty("org.slf4j.simpleLogger.log.org.apache.zookeeper", "error");
    System.setProperty("org.slf4j.simpleLogger.log.org.apache.curator", "error");
    int leases = 100_000;
    List<String> chosen = new ArrayList<>(targets().keySet());
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (i + 1 >= args.length) {
        throw usage(a + " wants a value");
      }
      String v = args[++i];
      switch (a) {
        case "--leases" -> {
          try {
            leases = Integer.parseInt(v);
          } catch (NumberFormatException e) {
            throw usage("--leases wants a whole number, not " + v);
          }
          if (leases < 1_000) {
            throw usage("--leases: at least 1000 (fewer measure noise), not " + v);
          }
        }
        case "--targets" -> {
          chosen = new ArrayList<>();
          for (String name : v.split(",")) {
            if (!targets().containsKey(name.trim())) {
              throw usage("unknown target '" + name.trim() + "'; the targets: " + String.join(", ", targets().keySet()));
            }
            chosen.add(name.trim());
          }
        }
        default -> throw usage("unknown option " + a);
      }
    }
    System.out.printf(Locale.ROOT, "Memory bench: %d target(s), %,d leases held at once by one client, leaseTime=%s%n",
        chosen.size(), leases, LEASE_TIME);
    List<Result> results = new ArrayList<>();
    for (String name : chosen) {
      System.out.printf(Locale.ROOT, "%n%s: starting ...%n", name);
      Server server;
      try {
        server = targets().get(name).start();
      } catch (Exception e) {
        System.out.printf(Locale.ROOT, "%s: could not start (%s); its row is missing%n", name, e);
        continue;
      }
      try {
        results.add(runClient(name, server, leases));
      } finally {
        for (int i = server.resources().size() - 1; i >= 0; i--) {
          try {
            server.resources().get(i).close();
          } catch (Exception e) {
            System.err.println("closing " + name + ": " + e);
          }
        }
      }
    }
    System.out.printf(Locale.ROOT, "%n%-26s %10s %9s %9s %8s  %s%n", "target", "bytes/lease", "held", "valid",
        "take s", "where the bytes are (bytes per lease, by class)");
    for (Result r : results) {
      System.out.printf(Locale.ROOT, "%-26s %10s %9d %9d %8.1f  %s%n", r.target(),
          r.problem() != null ? "-" : String.format(Locale.ROOT, "%.0f", r.bytesPerLease()), r.held(), r.valid(),
          r.seconds(), r.problem() != null ? r.problem() : String.join(", ", r.classes()));
    }
    long over = results.stream().filter(r -> r.problem() == null && r.bytesPerLease() > 1024).count();
    System.out.printf(Locale.ROOT, "%n%d of %d target(s) above 1 KiB per lease%n", over, results.size());
    System.exit(0);
  }

  private static IllegalArgumentException usage(String problem) {
    return new IllegalArgumentException(problem + "\nusage: lock-bench/run MemoryBench [--leases N] [--targets a,b,…]");
  }

  /** Runs the client JVM against {@code server} and reads what it measured. */
  static Result runClient(String name, Server server, int leases) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    int sessions = name.startsWith("native client ") ? Math.ceilDiv(leases, SESSION_LEASES) : 1;
    ProcessBuilder pb = new ProcessBuilder(java, "-XX:+UseSerialGC", "-Xmx3g", "-Xss512k",
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"),
        MemoryBench.class.getName(), "--client", server.url(), Integer.toString(leases), Integer.toString(sessions));
    pb.redirectErrorStream(true);
    // a thin client's credential goes by the environment, never the command line (ps shows that to everyone)
    pb.environment().put(SECRET_ENV, server.props().getProperty("clientSecret", ""));
    Process p = pb.start();
    Map<String, String> result = new HashMap<>();
    List<String> classes = new ArrayList<>();
    try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.startsWith("RESULT ")) {
          for (String kv : line.substring(7).split(" ")) {
            String[] parts = kv.split("=", 2);
            result.put(parts[0], parts[1]);
          }
        } else if (line.startsWith("CLASS ")) {
          classes.add(line.substring(6));
        } else {
          System.out.println("  " + line);
        }
      }
    }
    int exit = p.waitFor();
    if (!result.containsKey("bytesPerLease")) {
      return new Result(name, leases, 0, 0, 0, 0, List.of(), "the client ended with status " + exit + " before measuring");
    }
    return new Result(name, leases, Integer.parseInt(result.get("held")), Integer.parseInt(result.get("valid")),
        Double.parseDouble(result.get("bytesPerLease")), Double.parseDouble(result.get("seconds")), classes,
        Integer.parseInt(result.get("held")) < leases ? "only " + result.get("held") + " of " + leases + " taken" : null);
  }

  // ---- the client JVM

  /** Takes {@code leases} leases through {@code sessions} services of {@code url}, lease i through service i mod sessions. */
  static void client(String url, int leases, int sessions) throws Exception {
    Properties props = new Properties();
    String secret = System.getenv(SECRET_ENV);
    if (secret != null && !secret.isEmpty()) {
      props.setProperty("clientSecret", secret);
    }
    LockService[] services = new LockService[sessions];
    for (int s = 0; s < sessions; s++) {
      services[s] = LockProviders.connect(url, props);
    }
    if (sessions > 1) {
      System.out.printf(Locale.ROOT, "%d sessions of at most %,d leases each%n", sessions, SESSION_LEASES);
    }
    // a cluster that is still forming (a member that takes clients joins a lease term after it starts) answers
    // ServiceUnavailable at first: the warm-up waits for it, up to three minutes, and says so
    long formingUntil = System.nanoTime() + Duration.ofMinutes(3).toNanos();
    for (int i = 0; i < Math.max(100, sessions); ) {
      try {
        services[i % sessions].lock("mem-warm-" + i).acquire().release();
        i++;
      } catch (ServiceUnavailableException e) {
        if (System.nanoTime() > formingUntil) {
          throw e;
        }
        System.out.println("warm-up: " + e.getMessage() + "; trying again in a second");
        Thread.sleep(1_000);
      }
    }
    Thread.sleep(1_000); // what the warm-up set going settles
    Map<String, long[]> before = histogram();
    Lease[] held = new Lease[leases];
    AtomicInteger next = new AtomicInteger();
    AtomicInteger failures = new AtomicInteger();
    AtomicInteger taken = new AtomicInteger();
    long start = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    for (int t = 0; t < THREADS; t++) {
      pool.execute(() -> {
        for (int i; (i = next.getAndIncrement()) < leases; ) {
          try {
            Optional<Lease> l = services[i % sessions].lock("mem-" + i).tryAcquire(Duration.ofSeconds(30));
            if (l.isPresent()) {
              held[i] = l.get();
              int n = taken.incrementAndGet();
              if (n % (leases / 10) == 0) {
                System.out.printf(Locale.ROOT, "%,d leases held after %.0f s%n", n, (System.nanoTime() - start) / 1e9);
              }
            } else {
              failures.incrementAndGet();
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          } catch (RuntimeException e) {
            if (failures.incrementAndGet() <= 3) {
              System.out.println("acquire failed: " + e);
            }
          }
        }
      });
    }
    pool.shutdown();
    while (!pool.awaitTermination(1, java.util.concurrent.TimeUnit.MINUTES)) {
      System.out.printf(Locale.ROOT, "still taking: %,d held%n", taken.get());
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    Map<String, long[]> after = histogram();
    int count = taken.get();
    int valid = 0;
    for (Lease l : held) {
      if (l != null && l.isValid()) {
        valid++;
      }
    }
    double perLease = count == 0 ? 0 : (double) (total(after) - total(before)) / count;
    System.out.printf(Locale.ROOT, "RESULT bytesPerLease=%.1f held=%d valid=%d seconds=%.1f%n", perLease, count, valid,
        seconds);
    // every class that grew by 8 bytes a lease or more, largest first, with its instances a lease: what the bytes are
    List<Map.Entry<String, long[]>> grew = new ArrayList<>();
    for (Map.Entry<String, long[]> e : after.entrySet()) {
      long[] was = before.getOrDefault(e.getKey(), new long[2]);
      grew.add(Map.entry(e.getKey(), new long[] {e.getValue()[0] - was[0], e.getValue()[1] - was[1]}));
    }
    grew.sort((a, b) -> Long.compare(b.getValue()[1], a.getValue()[1]));
    for (Map.Entry<String, long[]> g : grew) {
      if (count == 0 || g.getValue()[1] / count < 8) {
        break;
      }
      System.out.printf(Locale.ROOT, "CLASS %s %d (%.1f)%n", shortName(g.getKey()), g.getValue()[1] / count,
          (double) g.getValue()[0] / count);
    }
    for (LockService service : services) {
      service.close(); // gives every lease back at once (one by one took PostgreSQL's advisory locks 15 minutes)
    }
    System.exit(0);
  }

  private static String shortName(String className) {
    String s = className.replaceAll(" \\(.*\\)$", "");
    int dot = s.lastIndexOf('.', s.lastIndexOf('.') - 1);
    return dot < 0 ? s : s.substring(dot + 1);
  }

  /** The bytes of every live object in {@code histogram}. */
  private static long total(Map<String, long[]> histogram) {
    return histogram.values().stream().mapToLong(v -> v[1]).sum();
  }

  /** The heap's classes after a full collection: instances and bytes, by class name. */
  private static Map<String, long[]> histogram() throws Exception {
    String text = (String) ManagementFactory.getPlatformMBeanServer().invoke(
        new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
        new Object[] {new String[0]}, new String[] {String[].class.getName()});
    Map<String, long[]> h = new HashMap<>();
    for (String line : text.split("\n")) {
      String[] f = line.trim().split("\\s+", 4);
      if (f.length == 4 && f[0].endsWith(":")) {
        h.put(f[3], new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
      }
    }
    return h;
  }
}
