package dev.tumbler.bench;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.params.SetParams;
import redis.clients.jedis.resps.Slowlog;
import redis.embedded.RedisServer;

/**
 * Tumbler's Redis provider against the raw floor (Jedis {@code SET NX PX} plus a scripted
 * compare-and-delete: two round trips) and against Redisson's {@code RLock}, on one embedded Redis
 * server, in one run. Not a test: {@code lock-bench/run RedisBench [rounds] [opsPerRound] [handoffs]}
 * (defaults 21, 500, 400: about 80 s on two cores, plus the build), or {@code lock-bench/run RedisBench
 * profile [seconds]} for a profiler (see below). Absolute times on a shared machine are noise; the
 * ratios and the round-trip counts are the result.
 *
 * <h2>Network settings</h2>
 * The first two measurements below run at three settings, one after the other; the last two at
 * loopback only:
 *
 * <ul>
 *   <li><b>loopback</b>: the clients connect to the server directly;
 *   <li><b>+100 µs</b> and <b>+500 µs</b>: every client connects through a {@link DelayProxy}, which
 *       delays each direction by the same one-way delay, set at the start of the setting: half of the
 *       target minus the proxy's own hop (proxied PING minus direct PING with no delay), then corrected
 *       once by what a PING with that delay still missed or exceeded. So a PING through the proxy takes
 *       about the target more than a direct one; both are printed, and the summary shows each setting's
 *       PING over the loopback one, so the delay is seen, not assumed.
 * </ul>
 *
 * All clients of a setting (two Tumbler services, two Redisson clients, one Jedis pool, and the floor's
 * subscriber connections) go through the same path; each setting has fresh clients.
 *
 * <h2>Measurements</h2>
 * <ul>
 *   <li><b>uncontended</b>: one thread, acquire then release, on a lock nobody else wants, by Tumbler,
 *       by Redisson, and by the raw floor; plus a Jedis PING. Rounds alternate the four, in an order that
 *       rotates from round to round, so that drift of a shared machine hits all alike. Printed: the median
 *       over rounds of the mean time per pair (and per PING), the pair in round trips (that time over
 *       the mean PING), and the ratios tumbler/floor and tumbler/redisson as medians of the per-round
 *       ratios, with their quartiles. At loopback also the CPU time and the bytes allocated per pair by
 *       the calling thread (background threads not counted: {@code profile} prints the whole JVM's CPU,
 *       which in this run would include the other libraries' idle clients).
 *   <li><b>hand-off after release</b>: two threads on two clients (two Tumbler services, two Redisson
 *       clients, or two floor clients) take turns on one lock. The waiter calls acquire; the holder keeps
 *       the lock until the waiter has surely reached its blocked wait (8 PING round trips plus 1 ms after
 *       the waiter's call, and then until the waiter is parked, for at most 20 ms more), then releases.
 *       The sample is from the moment the holder's release <em>returned</em> to the moment the waiter's
 *       acquire returned, divided by the setting's RTT: the median of the single PINGs of the
 *       uncontended rounds, same path, same run. Printed: p50 and p99 in RTT and in µs, and the share of
 *       hand-offs where the waiter was parked just before the release (its thread WAITING or
 *       TIMED_WAITING; for the floor, subscribed). Rounds alternate the three. The floor's lock is
 *       {@code SET NX PX} and a compare-and-delete that also publishes the release; its waiter subscribes
 *       on its own connection and retries in the thread that reads the message: one wake-up and one round
 *       trip after the release. The goal for Tumbler is p50 ≤ 1.2 RTT: its release publishes the wake-up
 *       in the same script, so the message travels back while the release's reply does, and the waiter
 *       then needs its own acquire.
 *   <li><b>contended throughput</b> (loopback only): two clients with two threads each take turns on
 *       one lock for 1.5 s per round; grants per second, and the median hand-off from the <em>start</em>
 *       of a release to another thread having the lock (a thread that barges back in does not count).
 *   <li><b>server time per call</b> (loopback only): with {@code slowlog-log-slower-than 0}, SLOWLOG
 *       records each command's execution time in the server (Redis 7 logs the commands a script calls
 *       too, each before its script); printed per command (scripts by SHA prefix, in the order first
 *       seen: for a lock, acquire then release) as median and mean µs over 300 pairs per library.
 * </ul>
 *
 * Every library keeps its default lease handling (Tumbler: 30 s term, renewed in the background;
 * Redisson: watchdog), as an application would run it. Each side is warmed up (JIT, pools, script
 * caches) before the first setting, and again briefly at each setting.
 *
 * <h2>Profiling</h2>
 * {@code profile [seconds]} runs only Tumbler's uncontended acquire and release at loopback, for 30 s by
 * default, after a warm-up, and prints its time, the CPU time of the calling thread and of the whole JVM,
 * and the allocation, per pair: for a profiler attached through {@code BENCH_JAVA_OPTS}, e.g.
 * {@code -XX:StartFlightRecording=filename=redis.jfr,settings=profile,jdk.CPUTimeSample#enabled=true}.
 */
public final class RedisBench {

  private static final String CAD = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
  private static final String CAD_PUBLISH = "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1])"
      + " redis.call('PUBLISH', ARGV[2], ARGV[1]) return 1 end return 0";
  private static final long CONTENDED_MILLIS = 1500;
  private static final int SLOWLOG_PAIRS = 300;
  private static final long PARK_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

  private RedisBench() {}

  /** {@code [rounds] [opsPerRound] [handoffs]}, or {@code profile [seconds]}. */
  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("profile")) {
      profile(args.length > 1 ? Integer.parseInt(args[1]) : 30);
      return;
    }
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 21;
    int ops = args.length > 1 ? Integer.parseInt(args[1]) : 500;
    int handoffs = args.length > 2 ? Integer.parseInt(args[2]) : 400;
    if (rounds < 1 || ops < 1 || handoffs < 10) {
      throw new IllegalArgumentException("rounds and opsPerRound must be at least 1, handoffs at least 10: "
          + Arrays.toString(args));
    }
    int port = freePort();
    RedisServer server = startServer(port);
    long started = System.nanoTime();
    System.out.printf(Locale.ROOT, "Redis bench: embedded Redis 7.0 on 127.0.0.1:%d, %d rounds, %d ops per uncontended"
        + " round at loopback (fewer through the proxy, same time per round), %d hand-offs per library and setting%n",
        port, rounds, ops, handoffs);
    List<Summary> summaries = new ArrayList<>();
    try {
      double loopbackPing;
      try (Clients c = Clients.open("127.0.0.1:" + port)) {
        System.out.println();
        System.out.println("warm-up ...");
        for (int i = 0; i < 5; i++) {
          uncontendedTumbler(c.tumbler, ops);
          uncontendedRedisson(c.redisson, ops);
          uncontendedRaw(c.jedis, c.cadSha, ops);
          ping(c.jedis, ops);
        }
        handoffs(c, 40, 2_000_000);
        Setting s = new Setting("loopback", 0, null, 0);
        Summary sum = measure(s, c, rounds, ops, handoffs, true);
        summaries.add(sum);
        loopbackPing = sum.pingMicros();
        contendedThroughput(c, Math.max(3, rounds / 4));
        serverTimes(c, port);
      }
      for (int target : new int[] {100, 500}) {
        try (DelayProxy proxy = DelayProxy.start("127.0.0.1", port, 0)) {
          Setting s = calibrate(proxy, port, target);
          int opsHere = (int) Math.max(50, Math.round(ops * loopbackPing / (loopbackPing + target)));
          try (Clients c = Clients.open(proxy.address())) {
            for (int i = 0; i < 2; i++) {
              uncontendedTumbler(c.tumbler, opsHere / 2);
              uncontendedRedisson(c.redisson, opsHere / 2);
              uncontendedRaw(c.jedis, c.cadSha, opsHere / 2);
            }
            summaries.add(measure(s, c, rounds, opsHere, handoffs, false));
          }
        }
      }
      System.out.println();
      System.out.println("summary (uncontended ratios: median of per-round ratios; hand-off: after the release returned)");
      System.out.println("  setting    PING p50 (over loopback)   tumbler/floor  tumbler/redisson   hand-off p50 / p99 in RTT:"
          + " tumbler       redisson        floor");
      for (Summary m : summaries) {
        double rtt = m.pingMicros();
        System.out.printf(Locale.ROOT, "  %-10s %7.1f us (%+6.1f us)      %8.2f        %8.2f            %5.2f / %-6.2f %5.2f / %-6.2f"
            + " %5.2f / %-6.2f%n", m.name(), rtt, rtt - summaries.getFirst().pingMicros(), m.tumblerToFloor(),
            m.tumblerToRedisson(), m.tumblerHandoff().p50() / rtt, m.tumblerHandoff().p99() / rtt,
            m.redissonHandoff().p50() / rtt, m.redissonHandoff().p99() / rtt, m.floorHandoff().p50() / rtt,
            m.floorHandoff().p99() / rtt);
      }
      System.out.println("  goals: tumbler/floor <= 1.10 at every setting; tumbler/redisson <= 0.90; tumbler hand-off p50 <= 1.2 RTT");
      System.out.printf(Locale.ROOT, "%nbench took %.0f s%n", (System.nanoTime() - started) / 1e9);
    } finally {
      server.stop();
    }
  }

  static RedisServer startServer(int port) throws IOException {
    RedisServer server = RedisServer.builder().port(port).bind("127.0.0.1").setting("save \"\"")
        .setting("appendonly no").build();
    server.start();
    return server;
  }

  // ---- settings

  /** A network setting: the proxy (null at loopback) and the PING round trip measured when it was set up. */
  record Setting(String name, int targetMicros, DelayProxy proxy, double directPingMicros) {}

  /** What the summary table prints of one setting. */
  record Summary(String name, double pingMicros, double tumblerToFloor, double tumblerToRedisson,
      Percentiles tumblerHandoff, Percentiles redissonHandoff, Percentiles floorHandoff) {}

  /**
   * Sets the proxy's one-way delay so that a PING through it takes about {@code targetMicros} more than a
   * direct one: the proxy's own hop (median of three alternations of direct and proxied PINGs with no
   * delay) is subtracted from the target, the rest is split between the two directions, and that delay is
   * corrected once by a measurement with it. Prints the PING through the proxy with the final delay. (A
   * feedback loop of several corrections was tried and amplified the noise of a loaded machine instead.)
   */
  static Setting calibrate(DelayProxy proxy, int port, int targetMicros) {
    try (JedisPooled direct = new JedisPooled("127.0.0.1", port);
        JedisPooled via = new JedisPooled("127.0.0.1", proxy.port())) {
      ping(direct, 2000);
      ping(via, 2000);
      double[] hop = new double[3];
      double[] directPings = new double[3];
      for (int i = 0; i < 3; i++) {
        directPings[i] = percentile(pingSamples(direct, 1000), 50) / 1000.0;
        ping(via, 200);
        hop[i] = percentile(pingSamples(via, 1000), 50) / 1000.0 - directPings[i];
      }
      double hopMicros = Math.max(0, median(hop));
      long first = Math.max(0, Math.round((targetMicros - hopMicros) * 1000 / 2));
      proxy.oneWayDelayNanos(first);
      // a delayed hop costs more than an immediate one on a busy machine (the proxy must be running at the
      // due time): one correction by what is still missing or extra, never below half the first delay
      double directNow = percentile(pingSamples(direct, 1000), 50) / 1000.0;
      ping(via, 200);
      double viaNow = percentile(pingSamples(via, 1000), 50) / 1000.0;
      double extra = viaNow - directNow - targetMicros;
      proxy.oneWayDelayNanos(Math.max(first / 2, first - Math.round(extra * 1000 / 2)));
      double directPing = percentile(pingSamples(direct, 1000), 50) / 1000.0;
      ping(via, 100);
      double viaPing = percentile(pingSamples(via, Math.max(200, 1000 * 50 / (50 + targetMicros))), 50) / 1000.0;
      System.out.println();
      System.out.printf(Locale.ROOT, "=== +%d us: through a delaying proxy, %.1f us each way + the proxy's own hop (%.1f us per round"
          + " trip undelayed; %.1f us each way left it %+.1f us off); PING p50 direct %.1f us, through the proxy %.1f us"
          + " (+%.1f us)%n", targetMicros, proxy.oneWayDelayNanos() / 1000.0, hopMicros, first / 1000.0, extra, directPing,
          viaPing, viaPing - directPing);
      return new Setting("+" + targetMicros + " us", targetMicros, proxy, directPing);
    }
  }

  /** The clients of one setting, all connected to one address. */
  static final class Clients implements AutoCloseable {
    final LockService tumbler;
    final LockService tumbler2;
    final RedissonClient redisson;
    final RedissonClient redisson2;
    final JedisPooled jedis;
    final String cadSha;
    final String cadPublishSha;
    final String host;
    final int port;

    private Clients(String address) {
      Config rc = new Config();
      rc.useSingleServer().setAddress("redis://" + address);
      redisson = Redisson.create(rc);
      redisson2 = Redisson.create(rc);
      tumbler = LockProviders.connect("lock:redis://" + address);
      tumbler2 = LockProviders.connect("lock:redis://" + address);
      String[] hostPort = address.split(":");
      host = hostPort[0];
      port = Integer.parseInt(hostPort[1]);
      jedis = new JedisPooled(host, port);
      cadSha = jedis.scriptLoad(CAD);
      cadPublishSha = jedis.scriptLoad(CAD_PUBLISH);
    }

    static Clients open(String address) {
      return new Clients(address);
    }

    @Override
    public void close() {
      tumbler.close();
      tumbler2.close();
      redisson.shutdown();
      redisson2.shutdown();
      jedis.close();
    }
  }

  // ---- one setting: uncontended rounds, then hand-offs

  static Summary measure(Setting s, Clients c, int rounds, int ops, int handoffs, boolean cpu) throws InterruptedException {
    double[] t = new double[rounds];
    double[] r = new double[rounds];
    double[] f = new double[rounds];
    double[] p = new double[rounds];
    List<long[]> pings = new ArrayList<>();
    Cost tc = new Cost();
    Cost fc = new Cost();
    Cost rcost = new Cost();
    for (int i = 0; i < rounds; i++) {
      for (int k = 0; k < 4; k++) {
        switch ((i + k) % 4) {
          case 0 -> t[i] = tc.measure(ops, () -> uncontendedTumbler(c.tumbler, ops));
          case 1 -> f[i] = fc.measure(ops, () -> uncontendedRaw(c.jedis, c.cadSha, ops));
          case 2 -> r[i] = rcost.measure(ops, () -> uncontendedRedisson(c.redisson, ops));
          default -> {
            long[] ps = pingSamples(c.jedis, ops);
            pings.add(ps);
            p[i] = Arrays.stream(ps).average().orElse(Double.NaN) / 1000.0;
          }
        }
      }
    }
    double pingP50 = percentile(pings.stream().flatMapToLong(Arrays::stream).toArray(), 50) / 1000.0;
    double[] tf = new double[rounds];
    double[] tr = new double[rounds];
    for (int i = 0; i < rounds; i++) {
      tf[i] = t[i] / f[i];
      tr[i] = t[i] / r[i];
    }
    double tm = median(t);
    double fm = median(f);
    double rm = median(r);
    double pm = median(p);
    System.out.println();
    if (s.proxy() == null) {
      System.out.printf(Locale.ROOT, "=== loopback: direct connections; PING p50 %.1f us%n", pingP50);
    }
    System.out.printf(Locale.ROOT, "uncontended acquire + release [%s] (%d rounds x %d pairs; median of per-round means)%n",
        s.name(), rounds, ops);
    System.out.printf(Locale.ROOT, "  tumbler  %8.1f us/pair  = %.2f RTT%n", tm, tm / pm);
    System.out.printf(Locale.ROOT, "  floor    %8.1f us/pair  = %.2f RTT   (Jedis SET NX PX + EVALSHA compare-and-delete)%n", fm, fm / pm);
    System.out.printf(Locale.ROOT, "  redisson %8.1f us/pair  = %.2f RTT%n", rm, rm / pm);
    System.out.printf(Locale.ROOT, "  ping     %8.1f us       (mean per round; p50 of single PINGs %.1f us)%n", pm, pingP50);
    System.out.printf(Locale.ROOT, "  ratio tumbler/floor    = %.2f  [q1 %.2f, q3 %.2f]   (goal <= 1.10)%n", median(tf),
        quantile(tf, 0.25), quantile(tf, 0.75));
    System.out.printf(Locale.ROOT, "  ratio tumbler/redisson = %.2f  [q1 %.2f, q3 %.2f]   (goal <= 0.90)%n", median(tr),
        quantile(tr, 0.25), quantile(tr, 0.75));
    if (cpu) {
      System.out.println("  client cost per pair: CPU / bytes allocated, of the calling thread");
      for (var e : Map.of("tumbler ", tc, "floor   ", fc, "redisson", rcost).entrySet().stream()
          .sorted(Map.Entry.comparingByKey()).toList()) {
        Cost k = e.getValue();
        System.out.printf(Locale.ROOT, "    %s %6.1f us / %7.0f B%n", e.getKey(), k.threadCpuMicros(), k.allocatedBytes());
      }
    }

    Handoffs h = handoffs(c, handoffs, Math.round(8 * pingP50 * 1000) + 1_000_000);
    System.out.printf(Locale.ROOT, "hand-off after release [%s] (%d per library; from the release's return to the waiter's"
        + " acquire returning; RTT = PING p50 %.1f us)%n", s.name(), handoffs, pingP50);
    System.out.printf(Locale.ROOT, "  tumbler  p50 %5.2f RTT (%7.1f us)   p99 %5.2f RTT (%7.1f us)   waiter parked %3.0f%%   (goal p50 <= 1.2 RTT)%n",
        h.tumbler().p50() / pingP50, h.tumbler().p50(), h.tumbler().p99() / pingP50, h.tumbler().p99(), 100 * h.tumbler().parked());
    System.out.printf(Locale.ROOT, "  redisson p50 %5.2f RTT (%7.1f us)   p99 %5.2f RTT (%7.1f us)   waiter parked %3.0f%%%n",
        h.redisson().p50() / pingP50, h.redisson().p50(), h.redisson().p99() / pingP50, h.redisson().p99(), 100 * h.redisson().parked());
    System.out.printf(Locale.ROOT, "  floor    p50 %5.2f RTT (%7.1f us)   p99 %5.2f RTT (%7.1f us)   waiter parked %3.0f%%   (SET NX PX"
        + " retried by the thread that reads the published release)%n",
        h.raw().p50() / pingP50, h.raw().p50(), h.raw().p99() / pingP50, h.raw().p99(), 100 * h.raw().parked());
    return new Summary(s.name(), pingP50, median(tf), median(tr), h.tumbler(), h.redisson(), h.raw());
  }

  // ---- uncontended

  static double uncontendedTumbler(LockService s, int ops) throws InterruptedException {
    Lock lock = s.lock("bench-u-" + UUID.randomUUID());
    long t0 = System.nanoTime();
    for (int i = 0; i < ops; i++) {
      Lease l = lock.acquire();
      l.release();
    }
    return (System.nanoTime() - t0) / 1000.0 / ops;
  }

  static double uncontendedRedisson(RedissonClient r, int ops) {
    RLock lock = r.getLock("bench-u-" + UUID.randomUUID());
    long t0 = System.nanoTime();
    for (int i = 0; i < ops; i++) {
      lock.lock();
      lock.unlock();
    }
    return (System.nanoTime() - t0) / 1000.0 / ops;
  }

  static double uncontendedRaw(JedisPooled j, String cadSha, int ops) {
    String key = "bench-u-" + UUID.randomUUID();
    List<String> keys = List.of(key);
    SetParams nxpx = SetParams.setParams().nx().px(30_000);
    long t0 = System.nanoTime();
    for (int i = 0; i < ops; i++) {
      String token = Long.toString(i);
      if (j.set(key, token, nxpx) == null) {
        throw new IllegalStateException("raw lock not free");
      }
      j.evalsha(cadSha, keys, List.of(token));
    }
    return (System.nanoTime() - t0) / 1000.0 / ops;
  }

  static double ping(JedisPooled j, int ops) {
    long t0 = System.nanoTime();
    for (int i = 0; i < ops; i++) {
      j.ping();
    }
    return (System.nanoTime() - t0) / 1000.0 / ops;
  }

  /** The time of each of {@code ops} PINGs, in ns. */
  static long[] pingSamples(JedisPooled j, int ops) {
    long[] s = new long[ops];
    for (int i = 0; i < ops; i++) {
      long t0 = System.nanoTime();
      j.ping();
      s[i] = System.nanoTime() - t0;
    }
    return s;
  }

  interface Timed {
    double run() throws InterruptedException;
  }

  /**
   * Sums what the rounds of one side cost on the client: CPU time and allocation of the calling thread,
   * and CPU time of the whole JVM.
   */
  static final class Cost {
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final com.sun.management.OperatingSystemMXBean OS =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    long pairs;
    long threadCpu;
    long processCpu;
    long allocated;

    double measure(int ops, Timed body) throws InterruptedException {
      long id = Thread.currentThread().threadId();
      long c0 = THREADS.getCurrentThreadCpuTime();
      long p0 = OS.getProcessCpuTime();
      long a0 = THREADS.getThreadAllocatedBytes(id);
      double result = body.run();
      allocated += THREADS.getThreadAllocatedBytes(id) - a0;
      processCpu += OS.getProcessCpuTime() - p0;
      threadCpu += THREADS.getCurrentThreadCpuTime() - c0;
      pairs += ops;
      return result;
    }

    double threadCpuMicros() {
      return threadCpu / 1000.0 / pairs;
    }

    double processCpuMicros() {
      return processCpu / 1000.0 / pairs;
    }

    double allocatedBytes() {
      return (double) allocated / pairs;
    }
  }

  // ---- hand-off after release: one waiter, blocked, woken by the release

  /** Percentiles of hand-off samples in µs, and the share of them whose waiter was parked at the release. */
  record Percentiles(double p50, double p99, double parked) {}

  record Handoffs(Percentiles tumbler, Percentiles redisson, Percentiles raw) {}

  /** One side's lock, held by the thread that acquired it. */
  interface TurnLock extends AutoCloseable {
    /** @return {@link System#nanoTime()} when the grant was known */
    long acquire() throws InterruptedException;

    void release();

    /** Whether {@code t}, which called {@link #acquire()}, now waits for a release. */
    default boolean blocked(Thread t) {
      Thread.State st = t.getState();
      return st == Thread.State.WAITING || st == Thread.State.TIMED_WAITING;
    }

    @Override
    default void close() {}
  }

  /**
   * {@code count} hand-offs per library, in rounds of at most 50 that alternate Tumbler, Redisson and the floor,
   * the holder waiting {@code holdNanos} after the waiter's call before it releases.
   */
  static Handoffs handoffs(Clients c, int count, long holdNanos) throws InterruptedException {
    List<Long> ts = new ArrayList<>();
    List<Long> rs = new ArrayList<>();
    List<Long> fs = new ArrayList<>();
    long[] parked = new long[3];
    int left = count;
    while (left > 0) {
      int n = Math.min(50, left);
      left -= n;
      parked[0] += turns(tumblerTurn(c.tumbler, c.tumbler2), n, holdNanos, ts);
      parked[1] += turns(redissonTurn(c.redisson, c.redisson2), n, holdNanos, rs);
      parked[2] += turns(rawTurn(c), n, holdNanos, fs);
    }
    return new Handoffs(percentiles(ts, parked[0]), percentiles(rs, parked[1]), percentiles(fs, parked[2]));
  }

  static Percentiles percentiles(List<Long> samples, long parked) {
    long[] a = samples.stream().mapToLong(Long::longValue).toArray();
    return new Percentiles(percentile(a, 50) / 1000.0, percentile(a, 99) / 1000.0, (double) parked / a.length);
  }

  static TurnLock[] tumblerTurn(LockService a, LockService b) {
    String name = "bench-h-" + UUID.randomUUID();
    TurnLock[] locks = new TurnLock[2];
    int i = 0;
    for (LockService s : List.of(a, b)) {
      Lock lock = s.lock(name);
      locks[i++] = new TurnLock() {
        private Lease lease;

        @Override
        public long acquire() throws InterruptedException {
          lease = lock.acquire();
          return System.nanoTime();
        }

        @Override
        public void release() {
          lease.release();
        }
      };
    }
    return locks;
  }

  static TurnLock[] redissonTurn(RedissonClient a, RedissonClient b) {
    String name = "bench-h-" + UUID.randomUUID();
    TurnLock[] locks = new TurnLock[2];
    int i = 0;
    for (RedissonClient r : List.of(a, b)) {
      RLock lock = r.getLock(name);
      locks[i++] = new TurnLock() {
        @Override
        public long acquire() {
          lock.lock();
          return System.nanoTime();
        }

        @Override
        public void release() {
          lock.unlock();
        }
      };
    }
    return locks;
  }

  /**
   * The floor of a hand-off: {@code SET NX PX}, and a compare-and-delete that publishes the release; a
   * waiter subscribes on its own connection and, in the thread that reads the message, tries again:
   * one wake-up and one round trip after the release, nothing handed between threads.
   */
  static TurnLock[] rawTurn(Clients c) {
    String key = "bench-h-" + UUID.randomUUID();
    String channel = key + ":released";
    SetParams nxpx = SetParams.setParams().nx().px(30_000);
    TurnLock[] locks = new TurnLock[2];
    for (int i = 0; i < 2; i++) {
      String token = "owner-" + i;
      Jedis sub = new Jedis(c.host, c.port);
      locks[i] = new TurnLock() {
        private volatile boolean subscribed;

        @Override
        public long acquire() {
          if (c.jedis.set(key, token, nxpx) != null) {
            return System.nanoTime();
          }
          long[] at = new long[1];
          sub.subscribe(new JedisPubSub() {
            private void tryTake() {
              if (c.jedis.set(key, token, nxpx) != null) {
                at[0] = System.nanoTime();
                subscribed = false;
                unsubscribe();
              } else {
                subscribed = true;
              }
            }

            @Override
            public void onSubscribe(String ch, int count) {
              tryTake();
            }

            @Override
            public void onMessage(String ch, String message) {
              tryTake();
            }
          }, channel);
          return at[0];
        }

        @Override
        public void release() {
          c.jedis.evalsha(c.cadPublishSha, List.of(key), List.of(token, channel));
        }

        @Override
        public boolean blocked(Thread t) {
          return subscribed;
        }

        @Override
        public void close() {
          sub.close();
        }
      };
    }
    return locks;
  }

  /**
   * Two threads take turns on one lock, {@code n} hand-offs: thread 0 takes it first; in hand-off k the
   * holder waits until the waiter has called acquire, then {@code holdNanos}, then releases. Adds the
   * samples (ns, from the release's return to the acquire's return) to {@code out}.
   *
   * @return how many waiters were parked just before their release
   */
  static long turns(TurnLock[] locks, int n, long holdNanos, List<Long> out) throws InterruptedException {
    long[] called = new long[n];
    long[] released = new long[n];
    long[] acquired = new long[n];
    boolean[] waiting = new boolean[n];
    // mayCall[x]: the other thread has the lock, so x may call acquire (without it, x could barge in
    // again right after its own release, ahead of the waiter); waiterCalled[x]: the waiter has called acquire, holder x may start its hold
    Semaphore[] mayCall = {new Semaphore(0), new Semaphore(0)};
    Semaphore[] waiterCalled = {new Semaphore(0), new Semaphore(0)};
    Thread[] threads = new Thread[2];
    AtomicBoolean failed = new AtomicBoolean();
    CountDownLatch started = new CountDownLatch(1);
    for (int me = 0; me < 2; me++) {
      int self = me;
      int other = 1 - me;
      threads[me] = Thread.ofPlatform().unstarted(() -> {
        TurnLock lock = locks[self];
        try {
          started.await();
          if (self == 0) {
            lock.acquire();
            mayCall[other].release();
          }
          for (int k = 0; k < n; k++) {
            if (k % 2 == self) {
              // the holder: let the waiter reach its blocked wait, then release
              take(waiterCalled[self], failed);
              long until = called[k] + holdNanos;
              for (long d; (d = until - System.nanoTime()) > 0; ) {
                LockSupport.parkNanos(d);
              }
              // and, for at most 20 ms more, until the waiter's thread is parked (not in a call)
              long latest = System.nanoTime() + PARK_GRACE_NANOS;
              while (!(waiting[k] = locks[other].blocked(threads[other])) && System.nanoTime() - latest < 0) {
                LockSupport.parkNanos(50_000);
              }
              lock.release();
              released[k] = System.nanoTime();
            } else {
              take(mayCall[self], failed);
              called[k] = System.nanoTime();
              waiterCalled[other].release();
              acquired[k] = lock.acquire();
              mayCall[other].release();
            }
          }
          if ((n - 1) % 2 != self) {
            lock.release();
          }
        } catch (Exception e) {
          failed.set(true);
          e.printStackTrace();
        }
      });
      threads[me].start();
    }
    started.countDown();
    for (Thread t : threads) {
      t.join();
    }
    for (TurnLock l : locks) {
      l.close();
    }
    if (failed.get()) {
      throw new IllegalStateException("a hand-off thread failed; see the stack trace above");
    }
    long parked = 0;
    for (int k = 0; k < n; k++) {
      out.add(acquired[k] - released[k]);
      parked += waiting[k] ? 1 : 0;
    }
    return parked;
  }

  /** Takes a permit, giving up when the other thread failed. */
  private static void take(Semaphore s, AtomicBoolean failed) throws InterruptedException {
    while (!s.tryAcquire(100, TimeUnit.MILLISECONDS)) {
      if (failed.get()) {
        throw new IllegalStateException("the other hand-off thread failed");
      }
    }
  }

  // ---- contended throughput, loopback

  static void contendedThroughput(Clients c, int rounds) throws InterruptedException {
    contendedTumbler(c.tumbler, c.tumbler2, 300);
    contendedRedisson(c.redisson, c.redisson2, 300);
    double[] th = new double[rounds];
    double[] rh = new double[rounds];
    double[] tt = new double[rounds];
    double[] rt = new double[rounds];
    for (int i = 0; i < rounds; i++) {
      Handoff a = contendedTumbler(c.tumbler, c.tumbler2, CONTENDED_MILLIS);
      Handoff b = contendedRedisson(c.redisson, c.redisson2, CONTENDED_MILLIS);
      th[i] = a.medianMicros();
      tt[i] = a.perSecond();
      rh[i] = b.medianMicros();
      rt[i] = b.perSecond();
    }
    System.out.println();
    System.out.printf(Locale.ROOT, "contended throughput [loopback]: 2 clients x 2 threads on one lock, %d rounds of %.1f s"
        + " (median of rounds; hand-off from the start of the release to another thread holding)%n", rounds,
        CONTENDED_MILLIS / 1000.0);
    System.out.printf(Locale.ROOT, "  tumbler  hand-off %7.1f us   %7.0f grants/s%n", median(th), median(tt));
    System.out.printf(Locale.ROOT, "  redisson hand-off %7.1f us   %7.0f grants/s%n", median(rh), median(rt));
    System.out.printf(Locale.ROOT, "  ratio tumbler/redisson hand-off = %.2f, grants/s = %.2f%n", median(th) / median(rh),
        median(tt) / median(rt));
  }

  record Handoff(double medianMicros, double perSecond) {}

  interface Body {
    void run(Release last, List<Long> fromStart) throws Exception;
  }

  /** Runs 2 threads per client on one lock for {@code millis}; collects hand-off samples. */
  static Handoff contended(List<Body> bodies, long millis) throws InterruptedException {
    AtomicBoolean stop = new AtomicBoolean();
    Release last = new Release();
    List<List<Long>> samples = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    CountDownLatch go = new CountDownLatch(1);
    AtomicLong grants = new AtomicLong();
    for (Body b : bodies) {
      List<Long> s = new ArrayList<>();
      samples.add(s);
      threads.add(Thread.ofPlatform().start(() -> {
        try {
          go.await();
          while (!stop.get()) {
            b.run(last, s);
            grants.incrementAndGet();
          }
        } catch (Exception e) {
          if (!stop.get()) {
            e.printStackTrace();
          }
        }
      }));
    }
    long t0 = System.nanoTime();
    go.countDown();
    Thread.sleep(millis);
    stop.set(true);
    for (Thread t : threads) {
      t.join(10_000);
    }
    double secs = (System.nanoTime() - t0) / 1e9;
    long[] all = samples.stream().flatMap(List::stream).mapToLong(Long::longValue).toArray();
    return new Handoff(percentile(all, 50) / 1000.0, grants.get() / secs);
  }

  /** The last release: who released and when it started. */
  static final class Release {
    volatile long thread = -1;
    volatile long start;
  }

  /**
   * Holds briefly (so the others are really waiting), then releases. Records, for a grant to a thread
   * other than the last releaser (a real hand-off, not the releaser barging back in), the time from the
   * start of the release.
   */
  static void hold(Release last, List<Long> fromStart) {
    long now = System.nanoTime();
    if (last.thread != -1 && last.thread != Thread.currentThread().threadId()) {
      fromStart.add(now - last.start);
    }
    LockSupport.parkNanos(20_000);
  }

  static void beforeRelease(Release last) {
    last.start = System.nanoTime();
    last.thread = Thread.currentThread().threadId();
  }

  static Handoff contendedTumbler(LockService a, LockService b, long millis) throws InterruptedException {
    String name = "bench-c-" + UUID.randomUUID();
    List<Body> bodies = new ArrayList<>();
    for (LockService s : List.of(a, a, b, b)) {
      Lock lock = s.lock(name);
      bodies.add((last, fromStart) -> {
        Lease l = lock.acquire();
        hold(last, fromStart);
        beforeRelease(last);
        l.release();
      });
    }
    return contended(bodies, millis);
  }

  static Handoff contendedRedisson(RedissonClient a, RedissonClient b, long millis) throws InterruptedException {
    String name = "bench-c-" + UUID.randomUUID();
    List<Body> bodies = new ArrayList<>();
    for (RedissonClient c : List.of(a, a, b, b)) {
      RLock lock = c.getLock(name);
      bodies.add((last, fromStart) -> {
        lock.lock();
        hold(last, fromStart);
        beforeRelease(last);
        lock.unlock();
      });
    }
    return contended(bodies, millis);
  }

  // ---- server time per call, loopback

  /**
   * Logs every command in the server's SLOWLOG while each side runs {@value #SLOWLOG_PAIRS} uncontended
   * pairs, and prints the execution time per command (scripts by SHA prefix) in the order first seen.
   */
  static void serverTimes(Clients c, int port) throws InterruptedException {
    System.out.println();
    System.out.printf(Locale.ROOT, "server time per call [loopback] (SLOWLOG with slowlog-log-slower-than 0, %d pairs per"
        + " library; median / mean us; commands seen fewer than %d times left out)%n", SLOWLOG_PAIRS, SLOWLOG_PAIRS / 2);
    try (Jedis admin = new Jedis("127.0.0.1", port)) {
      admin.configSet("slowlog-max-len", Integer.toString(SLOWLOG_PAIRS * 8));
      admin.configSet("slowlog-log-slower-than", "0");
      try {
        Map<String, Timed> sides = new LinkedHashMap<>();
        sides.put("tumbler ", () -> uncontendedTumbler(c.tumbler, SLOWLOG_PAIRS));
        sides.put("floor   ", () -> uncontendedRaw(c.jedis, c.cadSha, SLOWLOG_PAIRS));
        sides.put("redisson", () -> uncontendedRedisson(c.redisson, SLOWLOG_PAIRS));
        for (var side : sides.entrySet()) {
          side.getValue().run();
          admin.slowlogReset();
          side.getValue().run();
          List<Slowlog> log = admin.slowlogGet(SLOWLOG_PAIRS * 8);
          Map<String, List<Long>> byCommand = new LinkedHashMap<>();
          // the log is newest first
          for (Slowlog e : log.reversed()) {
            List<String> a = e.getArgs();
            String cmd = a.getFirst().toUpperCase(Locale.ROOT);
            if (cmd.equals("SLOWLOG")) {
              continue;
            }
            if ((cmd.equals("EVALSHA") || cmd.equals("EVAL")) && a.size() > 1) {
              cmd += " " + (cmd.equals("EVALSHA") ? a.get(1).substring(0, Math.min(8, a.get(1).length()))
                  : "#" + Integer.toHexString(a.get(1).hashCode()));
            }
            byCommand.computeIfAbsent(cmd, k -> new ArrayList<>()).add(e.getExecutionTime());
          }
          StringBuilder line = new StringBuilder("  " + side.getKey());
          for (var e : byCommand.entrySet()) {
            if (e.getValue().size() < SLOWLOG_PAIRS / 2) {
              continue;
            }
            long[] us = e.getValue().stream().mapToLong(Long::longValue).toArray();
            line.append(String.format(Locale.ROOT, "   %s %.1f / %.2f", e.getKey(), percentile(us, 50),
                Arrays.stream(us).average().orElse(Double.NaN)));
          }
          System.out.println(line);
        }
      } finally {
        admin.configSet("slowlog-log-slower-than", "10000");
        admin.slowlogReset();
      }
    }
  }

  // ---- profiling

  static void profile(int seconds) throws Exception {
    int port = freePort();
    RedisServer server = startServer(port);
    try (LockService tumbler = LockProviders.connect("lock:redis://127.0.0.1:" + port)) {
      for (int i = 0; i < 20; i++) {
        uncontendedTumbler(tumbler, 1000);
      }
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
      Cost cost = new Cost();
      long t0 = System.nanoTime();
      while (System.nanoTime() - until < 0) {
        cost.measure(1000, () -> uncontendedTumbler(tumbler, 1000));
      }
      System.out.printf(Locale.ROOT, "tumbler uncontended at loopback: %d pairs, %.1f us/pair; per pair: CPU of the calling"
          + " thread %.1f us, of this JVM %.1f us, %.0f bytes allocated by the calling thread%n", cost.pairs,
          (System.nanoTime() - t0) / 1000.0 / cost.pairs, cost.threadCpuMicros(), cost.processCpuMicros(),
          cost.allocatedBytes());
    } finally {
      server.stop();
    }
  }

  // ---- statistics

  static double median(double[] xs) {
    return quantile(xs, 0.5);
  }

  static double quantile(double[] xs, double q) {
    double[] c = xs.clone();
    Arrays.sort(c);
    return c[(int) Math.min(c.length - 1, Math.floor(q * c.length))];
  }

  /** The {@code p}-th percentile (nearest rank) of {@code xs}; NaN when empty. */
  static double percentile(long[] xs, double p) {
    if (xs.length == 0) {
      return Double.NaN;
    }
    long[] c = xs.clone();
    Arrays.sort(c);
    int rank = (int) Math.ceil(p / 100.0 * c.length);
    return c[Math.max(0, Math.min(c.length - 1, rank - 1))];
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
