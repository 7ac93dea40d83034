package dev.tumbler.bench;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.params.SetParams;
import redis.embedded.RedisServer;

/**
 * Tumbler's Redis provider against Redisson's {@code RLock} and against the raw floor (Jedis
 * {@code SET NX PX} plus a scripted compare-and-delete: two round trips), on one embedded Redis server,
 * in one run, rounds alternating so that machine noise hits all three alike. Prints per-operation medians
 * and the ratios. Not a test: run it with {@code lock-bench/run RedisBench [rounds] [opsPerRound]}.
 *
 * <ul>
 *   <li><b>uncontended</b>: one thread, acquire then release, on a lock nobody else wants;
 *   <li><b>contended hand-off</b>: two clients with two threads each take turns on one lock; the
 *       hand-off time is from the moment the holder starts its release to the moment the next holder has
 *       the lock, compared with the server's round-trip time (PING).
 * </ul>
 *
 * Every library keeps its default lease handling (Tumbler: 30 s term, renewed in the background;
 * Redisson: watchdog), as an application would run it.
 */
public final class RedisBench {

  private static final String CAD = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

  private RedisBench() {}

  /** {@code [rounds] [opsPerRound]}: 21 rounds of 1000 acquire/release pairs by default. */
  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 21;
    int ops = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
    int port = freePort();
    RedisServer server = RedisServer.builder().port(port).bind("127.0.0.1").setting("save \"\"")
        .setting("appendonly no").build();
    server.start();
    String address = "127.0.0.1:" + port;
    System.out.printf(Locale.ROOT, "Redis bench: embedded Redis 7.0 on %s, %d rounds, %d ops per uncontended round%n",
        address, rounds, ops);
    Config rc = new Config();
    rc.useSingleServer().setAddress("redis://" + address);
    RedissonClient redisson = Redisson.create(rc);
    RedissonClient redisson2 = Redisson.create(rc);
    LockService tumbler = LockProviders.connect("lock:redis://" + address);
    LockService tumbler2 = LockProviders.connect("lock:redis://" + address);
    JedisPooled jedis = new JedisPooled("127.0.0.1", port);
    String cadSha = jedis.scriptLoad(CAD);
    try {
      // warm-up: JIT, pools, script caches
      for (int i = 0; i < 3; i++) {
        uncontendedTumbler(tumbler, ops);
        uncontendedRedisson(redisson, ops);
        uncontendedRaw(jedis, cadSha, ops);
        ping(jedis, ops);
      }
      double[] t = new double[rounds];
      double[] r = new double[rounds];
      double[] f = new double[rounds];
      double[] rtt = new double[rounds];
      for (int i = 0; i < rounds; i++) {
        t[i] = uncontendedTumbler(tumbler, ops);
        r[i] = uncontendedRedisson(redisson, ops);
        f[i] = uncontendedRaw(jedis, cadSha, ops);
        rtt[i] = ping(jedis, ops);
      }
      double tm = median(t);
      double rm = median(r);
      double fm = median(f);
      double pm = median(rtt);
      // ratios within each round: the three ran back to back, so slow phases of a shared machine cancel
      double[] tr = new double[rounds];
      double[] tf = new double[rounds];
      for (int i = 0; i < rounds; i++) {
        tr[i] = t[i] / r[i];
        tf[i] = t[i] / f[i];
      }
      System.out.println();
      System.out.println("uncontended acquire + release (median of rounds, microseconds per pair)");
      System.out.printf(Locale.ROOT, "  tumbler  %8.1f%n  redisson %8.1f%n  raw      %8.1f   (SET NX PX + EVALSHA compare-and-delete)%n"
          + "  ping     %8.1f   (one round trip)%n", tm, rm, fm, pm);
      System.out.printf(Locale.ROOT, "  ratio tumbler/redisson = %.2f   (median of per-round ratios; target <= 0.90)%n", median(tr));
      System.out.printf(Locale.ROOT, "  ratio tumbler/raw      = %.2f   (median of per-round ratios; target <= 1.10)%n", median(tf));

      int contendedRounds = Math.max(3, rounds / 2);
      long millis = 1500;
      // warm-up of the hand-off paths
      contendedTumbler(tumbler, tumbler2, 300);
      contendedRedisson(redisson, redisson2, 300);
      double[] th = new double[contendedRounds];
      double[] rh = new double[contendedRounds];
      double[] the = new double[contendedRounds];
      double[] rhe = new double[contendedRounds];
      double[] tt = new double[contendedRounds];
      double[] rt = new double[contendedRounds];
      double[] pr = new double[contendedRounds];
      for (int i = 0; i < contendedRounds; i++) {
        Handoff a = contendedTumbler(tumbler, tumbler2, millis);
        Handoff b = contendedRedisson(redisson, redisson2, millis);
        th[i] = a.medianMicros();
        the[i] = a.medianFromReturnMicros();
        rhe[i] = b.medianFromReturnMicros();
        tt[i] = a.perSecond();
        rh[i] = b.medianMicros();
        rt[i] = b.perSecond();
        pr[i] = ping(jedis, ops);
      }
      double ping2 = median(pr);
      System.out.println();
      System.out.println("contended hand-off to another thread: 2 clients x 2 threads on one lock (median of rounds)");
      System.out.println("  (from the start of the release call / from its return, to the next holder having the lock)");
      System.out.printf(Locale.ROOT, "  tumbler  %8.1f us / %8.1f us   %8.0f grants/s%n", median(th), median(the), median(tt));
      System.out.printf(Locale.ROOT, "  redisson %8.1f us / %8.1f us   %8.0f grants/s%n", median(rh), median(rhe), median(rt));
      System.out.printf(Locale.ROOT, "  ping     %8.1f us%n", ping2);
      System.out.printf(Locale.ROOT, "  ratio tumbler/redisson hand-off = %.2f%n", median(th) / median(rh));
      System.out.printf(Locale.ROOT, "  tumbler hand-off after the release returned = %.2f round trips   (target: about 1, "
          + "the waiter's own acquire; the wake-up push travels while the release reply does)%n", median(the) / ping2);
    } finally {
      tumbler.close();
      tumbler2.close();
      redisson.shutdown();
      redisson2.shutdown();
      jedis.close();
      server.stop();
    }
  }

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

  record Handoff(double medianMicros, double medianFromReturnMicros, double perSecond) {}

  interface Body {
    void run(Release last, List<Long> fromStart, List<Long> fromEnd) throws Exception;
  }

  /** Runs 2 threads per client on one lock for {@code millis}; collects hand-off samples. */
  static Handoff contended(List<Body> bodies, long millis) throws InterruptedException {
    AtomicBoolean stop = new AtomicBoolean();
    Release last = new Release();
    List<List<Long>> samples = new ArrayList<>();
    List<List<Long>> samplesEnd = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    CountDownLatch go = new CountDownLatch(1);
    AtomicLong grants = new AtomicLong();
    for (Body b : bodies) {
      List<Long> s = new ArrayList<>();
      List<Long> se = new ArrayList<>();
      samples.add(s);
      samplesEnd.add(se);
      threads.add(Thread.ofPlatform().start(() -> {
        try {
          go.await();
          while (!stop.get()) {
            b.run(last, s, se);
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
    return new Handoff(medianMicros(samples), medianMicros(samplesEnd), grants.get() / secs);
  }

  static double medianMicros(List<List<Long>> samples) {
    long[] all = samples.stream().flatMap(List::stream).mapToLong(Long::longValue).toArray();
    Arrays.sort(all);
    return all.length == 0 ? Double.NaN : all[all.length / 2] / 1000.0;
  }

  /** The last release: who released, when it started and when it returned (0 until it returned). */
  static final class Release {
    volatile long thread = -1;
    volatile long start;
    volatile long end;
  }

  /**
   * Holds briefly (so the others are really waiting), then releases. Records, for a grant to a thread
   * other than the last releaser (a real hand-off, not the releaser barging back in), the time from the
   * start of the release and from its return.
   */
  static void hold(Release last, List<Long> fromStart, List<Long> fromEnd) {
    long now = System.nanoTime();
    if (last.thread != -1 && last.thread != Thread.currentThread().threadId()) {
      fromStart.add(now - last.start);
      long end = last.end;
      fromEnd.add(end == 0 ? 0 : Math.max(0, now - end));
    }
    LockSupport.parkNanos(20_000);
  }

  static void beforeRelease(Release last) {
    last.end = 0;
    last.start = System.nanoTime();
    last.thread = Thread.currentThread().threadId();
  }

  static void afterRelease(Release last) {
    last.end = System.nanoTime();
  }

  static Handoff contendedTumbler(LockService a, LockService b, long millis) throws InterruptedException {
    String name = "bench-c-" + UUID.randomUUID();
    List<Body> bodies = new ArrayList<>();
    for (LockService s : List.of(a, a, b, b)) {
      Lock lock = s.lock(name);
      bodies.add((last, fromStart, fromEnd) -> {
        Lease l = lock.acquire();
        hold(last, fromStart, fromEnd);
        beforeRelease(last);
        l.release();
        afterRelease(last);
      });
    }
    return contended(bodies, millis);
  }

  static Handoff contendedRedisson(RedissonClient a, RedissonClient b, long millis) throws InterruptedException {
    String name = "bench-c-" + UUID.randomUUID();
    List<Body> bodies = new ArrayList<>();
    for (RedissonClient c : List.of(a, a, b, b)) {
      RLock lock = c.getLock(name);
      bodies.add((last, fromStart, fromEnd) -> {
        lock.lock();
        hold(last, fromStart, fromEnd);
        beforeRelease(last);
        lock.unlock();
        afterRelease(last);
      });
    }
    return contended(bodies, millis);
  }

  static double median(double[] xs) {
    double[] c = xs.clone();
    Arrays.sort(c);
    return c[c.length / 2];
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
