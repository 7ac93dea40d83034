package dev.tumbler.lock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.torture.backend.Processes;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * The fencing counter on one server when its key is lost (its expiry a day after the last grant, a restart
 * without persistence) and when a client stops between a counter increment and its seed: tokens of a name
 * never go back, and a name in use keeps its counter.
 */
class RedisFencingTest {
  static EmbeddedRedis redis;
  static final Duration LONG = Duration.ofSeconds(20);
  /** The counter's expiry after a grant, one day, less what a slow machine may take between grant and look. */
  static final long DAY_MS = 86_400_000L;
  static final long ALMOST_A_DAY_MS = DAY_MS - 60_000L;

  @BeforeAll
  static void start() {
    redis = EmbeddedRedis.start();
  }

  @AfterAll
  static void stop() {
    redis.close();
  }

  static LockService open() {
    return LockProviders.connect("lock:redis://" + redis.address() + "?leaseTime=2s&timeout=1s");
  }

  static String fence(RedisKeys.Kind kind, String name) {
    return new RedisKeys("").base(kind, name) + ":fence";
  }

  /** One kind of grant: how to take it, and where its counter is. */
  record Kind(String what, RedisKeys.Kind keys, Grant grant) {}

  interface Grant {
    Optional<Lease> take(LockService s, String name) throws InterruptedException;
  }

  /** The mutex's first attempt is the pipelined one; the others draw their token in a script. */
  static final List<Kind> KINDS = List.of(
      new Kind("lock", RedisKeys.Kind.MUTEX, (s, n) -> s.lock(n).tryAcquire(LONG)),
      new Kind("write lock", RedisKeys.Kind.READ_WRITE, (s, n) -> s.readWriteLock(n).writeLock().tryAcquire(LONG)),
      new Kind("read lock", RedisKeys.Kind.READ_WRITE, (s, n) -> s.readWriteLock(n).readLock().tryAcquire(LONG)),
      new Kind("semaphore", RedisKeys.Kind.SEMAPHORE, (s, n) -> s.semaphore(n, 2).tryAcquire(1, LONG)));

  static long grantAndRelease(LockService s, Kind k, String name) throws InterruptedException {
    Lease l = k.grant().take(s, name).orElseThrow(() -> new AssertionError(k.what() + " '" + name + "' not granted"));
    l.release();
    return l.fencingToken();
  }

  /**
   * The counter vanishes (a day without grants), and a client stops right after its INCR on the new key (an
   * interrupted pipelined first attempt): the counter is 1, without expiry. The next grant still gets a
   * token above every earlier one.
   */
  @Test
  void aCounterLeftAtOneByAStoppedIncrementDoesNotMakeTokensGoBack() throws Exception {
    try (LockService s = open(); Jedis j = redis.client()) {
      for (Kind k : KINDS) {
        String name = "left-at-one-" + k.keys().segment + "-" + k.what().replace(' ', '-');
        long first = grantAndRelease(s, k, name);
        String fence = fence(k.keys(), name);
        j.del(fence);
        assertEquals(1, j.incr(fence));
        long next = grantAndRelease(s, k, name);
        assertTrue(next > first, k.what() + ": token " + next + " after " + first);
        assertTrue(grantAndRelease(s, k, name) > next, k.what());
      }
    }
  }

  /** The same for a grant a release hands to the line's first: its token is drawn in the release's script. */
  @Test
  void aHandOffFromACounterLeftAtOneDoesNotMakeTokensGoBack() throws Exception {
    try (LockService a = open(); LockService b = open(); Jedis j = redis.client()) {
      String name = "handed-left-at-one";
      Lease held = a.lock(name).acquire();
      CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(() -> {
        try {
          return b.lock(name).tryAcquire(LONG).orElseThrow(() -> new AssertionError("the waiter was not granted"));
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
      });
      String line = new RedisKeys("").base(RedisKeys.Kind.MUTEX, name) + ":q";
      Processes.await(LONG, "the waiter to join the line", () -> j.zcard(line) == 1);
      String fence = fence(RedisKeys.Kind.MUTEX, name);
      j.del(fence);
      assertEquals(1, j.incr(fence));
      held.release();
      Lease next = waiting.get(LONG.toSeconds(), TimeUnit.SECONDS);
      next.release();
      assertTrue(next.fencingToken() > held.fencingToken(), next.fencingToken() + " after " + held.fencingToken());
    }
  }

  /**
   * A restart without persistence loses every counter; a client that stopped after the INCR of its first
   * attempt on the restarted server leaves the counter at 1. The next grant's token is still larger.
   */
  @Test
  void aCounterLeftAtOneAfterARestartWithoutPersistenceDoesNotMakeTokensGoBack() throws Exception {
    try (LockService s = open()) {
      long[] before = new long[KINDS.size()];
      for (int i = 0; i < KINDS.size(); i++) {
        before[i] = grantAndRelease(s, KINDS.get(i), "restarted-" + i);
      }
      redis.restart();
      try (Jedis j = redis.client()) {
        assertEquals(0, j.dbSize(), "the restarted server is empty: the counters are gone");
        for (int i = 0; i < KINDS.size(); i++) {
          assertEquals(1, j.incr(fence(KINDS.get(i).keys(), "restarted-" + i)));
        }
      }
      // the pool's connections died with the server: let a grant of another name find fresh ones, so that the
      // grants below take their usual path (the mutex: the pipelined first attempt)
      grantAndRelease(s, KINDS.getFirst(), "restarted-warm-up");
      for (int i = 0; i < KINDS.size(); i++) {
        long after = grantAndRelease(s, KINDS.get(i), "restarted-" + i);
        assertTrue(after > before[i], KINDS.get(i).what() + ": token " + after + " after " + before[i]);
      }
    }
  }

  /**
   * Acquires of a free lock, each interrupted a random few hundred microseconds in (on a virtual thread, an
   * interrupt closes the socket of the call in flight), on names whose counter was just lost: after each, the
   * next grant's token is larger than every earlier token of the name. Bounded by iterations and time.
   */
  @Test
  void interruptedAcquiresOnALostCounterNeverMakeTokensGoBack() throws Exception {
    long seed = System.nanoTime();
    SplittableRandom random = new SplittableRandom(seed);
    int iterations = 400;
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    int interrupted = 0;
    int counterTouched = 0;
    int done = 0;
    try (LockService s = open(); Jedis j = redis.client()) {
      for (int i = 0; i < iterations && System.nanoTime() - until < 0; i++, done++) {
        String name = "interrupted-" + seed + "-" + i;
        String fence = fence(RedisKeys.Kind.MUTEX, name);
        Lock lock = s.lock(name);
        long highest = grantAndRelease(s, KINDS.getFirst(), name);
        j.del(fence); // the counter is lost: a day without grants, or a restart
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread t = Thread.ofVirtual().start(() -> {
          try {
            outcome.set(lock.acquire());
          } catch (Throwable e) {
            outcome.set(e);
          }
        });
        long delay = random.nextLong(TimeUnit.MICROSECONDS.toNanos(500));
        long at = System.nanoTime() + delay;
        while (System.nanoTime() - at < 0) {
          Thread.onSpinWait();
        }
        t.interrupt();
        assertTrue(t.join(LONG), "the interrupted acquire did not end");
        String context = "iteration " + i + " (seed " + seed + ", interrupt after " + delay / 1000 + " us)";
        if (outcome.get() instanceof Lease l) {
          l.release();
          assertTrue(l.fencingToken() > highest, context + ": token " + l.fencingToken() + " after " + highest);
          highest = l.fencingToken();
        } else if (outcome.get() instanceof InterruptedException) {
          interrupted++;
          if (j.exists(fence)) {
            counterTouched++;
          }
        } else {
          throw new AssertionError(context + ": the acquire ended with " + outcome.get(), (Throwable) outcome.get());
        }
        long next = grantAndRelease(s, KINDS.getFirst(), name);
        assertTrue(next > highest, context + ": token " + next + " after " + highest + "; the counter held "
            + j.get(fence));
      }
    }
    // the test opened the window it is about at least once: an acquire that was interrupted after its
    // increment reached the server
    assertTrue(counterTouched > 0, "no interrupt landed after the counter's increment (" + done + " iterations, "
        + interrupted + " interrupted, seed " + seed + ")");
  }

  /** A grant keeps its name's counter alive for a day, whichever path drew its token. */
  @Test
  void everyGrantKeepsTheCounterForADay() throws Exception {
    try (LockService s = open(); Jedis j = redis.client()) {
      for (Kind k : KINDS) {
        String name = "kept-" + k.keys().segment + "-" + k.what().replace(' ', '-');
        grantAndRelease(s, k, name);
        String fence = fence(k.keys(), name);
        // the counter was seeded hours ago: a few seconds of its day are left
        j.pexpire(fence, 5_000);
        grantAndRelease(s, k, name);
        long ttl = j.pttl(fence);
        assertTrue(ttl > ALMOST_A_DAY_MS, k.what() + ": the counter expires in " + ttl + " ms");
      }
    }
  }

  /** A lease renewed for longer than a day keeps its name's counter: every renewal refreshes its expiry. */
  @Test
  void renewalsKeepTheCounterForADay() throws Exception {
    try (LockService s = open(); Jedis j = redis.client()) {
      for (Kind k : KINDS) {
        String name = "renewed-" + k.keys().segment + "-" + k.what().replace(' ', '-');
        Lease l = k.grant().take(s, name).orElseThrow();
        String fence = fence(k.keys(), name);
        // held for most of a day, renewed all along: a few seconds of the counter's day are left
        j.pexpire(fence, 5_000);
        l.renew();
        long ttl = j.pttl(fence);
        l.release();
        assertTrue(ttl > ALMOST_A_DAY_MS, k.what() + ": the counter expires in " + ttl + " ms");
      }
    }
  }

  /**
   * Cluster and sentinel modes draw every token through the clock-floored counter: a counter left at 1 gives
   * a token at least the server's clock, and the counter lives a day from the grant (run here on one server).
   */
  @Test
  void clockFlooredScriptsSeedALowCounterAndKeepItForADay() {
    String name = "floored";
    List<String> keys = new RedisKeys("").withLine(new RedisKeys("").mutex(RedisKeys.Kind.MUTEX, name),
        RedisKeys.Kind.MUTEX, name);
    Scripts.Script acquire = Scripts.clockFloored(Scripts.FAIR_MUTEX_ACQUIRE);
    try (Jedis j = redis.client()) {
      j.set(keys.getLast(), "1");
      List<String> time = j.time();
      long nowMicros = Long.parseLong(time.get(0)) * 1_000_000 + Long.parseLong(time.get(1));
      List<?> reply = (List<?>) j.eval(acquire.source(), keys, List.of("floored-owner", "2000", "0", "1", "0"));
      assertEquals(1L, reply.get(0));
      assertTrue((Long) reply.get(1) >= nowMicros, reply.get(1) + " < " + nowMicros);
      assertTrue(j.pttl(keys.getLast()) > ALMOST_A_DAY_MS);
    }
  }
}
