package dev.tumbler.lock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ReadWriteLock;
import dev.tumbler.lock.Semaphore;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.LeaseRenewer;
import dev.tumbler.lock.tck.LoopbackPorts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.UnifiedJedis;
import redis.embedded.RedisServer;

/** The provider against a real Redis server started here. */
class RedisProviderTest {
  static EmbeddedRedis redis;

  @BeforeAll
  static void start() {
    redis = EmbeddedRedis.start();
  }

  @AfterAll
  static void stop() {
    redis.close();
  }

  static String url(String params) {
    return "lock:redis://" + redis.address() + "?leaseTime=1500ms&timeout=500ms" + (params.isEmpty() ? "" : "&" + params);
  }

  static LockService open() {
    return LockProviders.connect(url(""));
  }

  @Test
  void refusedCredentialsAreCredentialsRefusedNamingTheParameterNotTheValue() throws Exception {
    int port;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    RedisServer guarded = RedisServer.builder().port(port).bind("127.0.0.1")
        .setting("save \"\"").setting("appendonly no").setting("requirepass right-one-42").build();
    guarded.start();
    try {
      for (String url : List.of("lock:redis://:wrong-one-42@127.0.0.1:" + port, "lock:redis://127.0.0.1:" + port,
          "lock:redis://:wrong-one-42@" + redis.address())) {
        dev.tumbler.lock.CredentialsRefusedException e = assertThrows(dev.tumbler.lock.CredentialsRefusedException.class,
            () -> LockProviders.connect(url).close(), url);
        assertTrue(e.getMessage().contains("'password'"), e.getMessage());
        assertFalse(e.getMessage().contains("wrong-one-42") || e.getMessage().contains("right-one-42"), e.getMessage());
      }
      try (LockService s = LockProviders.connect("lock:redis://:right-one-42@127.0.0.1:" + port)) {
        s.lock("guarded").tryAcquire(Duration.ZERO).orElseThrow().release();
      }
    } finally {
      guarded.stop();
    }
  }

  @Test
  void embeddedServerAnswers() {
    try (Jedis j = redis.client()) {
      assertEquals("PONG", j.ping());
    }
  }

  @Test
  void acquireReleaseAndTryAcquireWhileHeld() throws Exception {
    try (LockService a = open(); LockService b = open()) {
      Lease l = a.lock("basic").acquire();
      assertTrue(l.isValid());
      assertTrue(b.lock("basic").tryAcquire(Duration.ZERO).isEmpty());
      l.release();
      assertFalse(l.isValid());
      Optional<Lease> l2 = b.lock("basic").tryAcquire(Duration.ZERO);
      assertTrue(l2.isPresent());
      assertTrue(l2.get().fencingToken() > l.fencingToken());
      l2.get().release();
    }
  }

  @Test
  void waiterIsWokenByTheRelease() throws Exception {
    // a long term and a long recheck: without the push, the waiter would sleep at least 5 s
    String slow = "lock:redis://" + redis.address() + "?leaseTime=10s&recheck=5s";
    try (LockService a = LockProviders.connect(slow); LockService b = LockProviders.connect(slow)) {
      Lease l = a.lock("handoff").acquire();
      CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(() -> {
        try {
          return b.lock("handoff").tryAcquire(Duration.ofSeconds(20)).orElseThrow();
        } catch (InterruptedException e) {
          throw new RuntimeException(e);
        }
      });
      Thread.sleep(300);
      assertFalse(waiting.isDone());
      l.release();
      Lease got = waiting.get(2, TimeUnit.SECONDS);
      assertTrue(got.fencingToken() > l.fencingToken());
      got.release();
    }
  }

  @Test
  void fencingTokensIncreaseAcrossAServerRestartWithoutPersistence() throws Exception {
    try (LockService a = open()) {
      long before = 0;
      for (int i = 0; i < 5; i++) {
        try (Lease l = a.lock("fence-restart").acquire()) {
          assertTrue(l.fencingToken() > before);
          before = l.fencingToken();
        }
      }
      redis.restart();
      try (Jedis j = redis.client()) {
        assertEquals(0, j.dbSize(), "the restarted server is empty: the counter is gone");
      }
      Lease after = a.lock("fence-restart").tryAcquire(Duration.ofSeconds(10)).orElseThrow();
      assertTrue(after.fencingToken() > before, after.fencingToken() + " > " + before);
      after.release();
    }
  }

  @Test
  void aWaiterGetsTheLockWhenTheServerRestartsUnderIt() throws Exception {
    // the server loses the holder's key without any release message: the waiter must not hang
    try (LockService a = open(); LockService b = open()) {
      Lease l = a.lock("restart-wait").acquire();
      CompletableFuture<Lease> waiting = CompletableFuture.supplyAsync(() -> {
        try {
          return b.lock("restart-wait").tryAcquire(Duration.ofSeconds(20)).orElseThrow();
        } catch (InterruptedException e) {
          throw new RuntimeException(e);
        }
      });
      Thread.sleep(300);
      redis.restart();
      Lease got = waiting.get(10, TimeUnit.SECONDS);
      assertTrue(got.fencingToken() > l.fencingToken());
      // the old holder learns at its next renewal that the key is gone
      long t0 = System.nanoTime();
      while (l.isValid() && System.nanoTime() - t0 < 5_000_000_000L) {
        Thread.sleep(20);
      }
      assertFalse(l.isValid());
      // and pushes work again on the reconnected subscriber: a release wakes a new waiter at once
      CompletableFuture<Lease> next = CompletableFuture.supplyAsync(() -> {
        try {
          return a.lock("restart-wait").tryAcquire(Duration.ofSeconds(20)).orElseThrow();
        } catch (InterruptedException e) {
          throw new RuntimeException(e);
        }
      });
      Thread.sleep(300);
      got.release();
      next.get(5, TimeUnit.SECONDS).release();
    }
  }

  @Test
  void renewalKeepsTheLockAcrossManyTerms() throws Exception {
    try (LockService a = open(); LockService b = open()) {
      Lease l = a.lock("renewed").acquire();
      Thread.sleep(4000);
      assertTrue(l.isValid());
      assertTrue(b.lock("renewed").tryAcquire(Duration.ZERO).isEmpty());
      l.release();
    }
  }

  @Test
  void pausedHolderIsToldItLostTheLockBeforeAnotherGetsIt() throws Exception {
    try (LockService a = open(); LockService b = open()) {
      Lease l = a.lock("paused").acquire();
      AtomicReference<Long> lostAt = new AtomicReference<>();
      CountDownLatch lost = new CountDownLatch(1);
      l.onLost(e -> {
        assertEquals(LeaseLostEvent.Reason.EXPIRED, e.reason());
        lostAt.set(System.nanoTime());
        lost.countDown();
      });
      a.unwrap(LeaseRenewer.class).pause();
      Lease other = b.lock("paused").tryAcquire(Duration.ofSeconds(10)).orElseThrow();
      long grantedAt = System.nanoTime();
      assertTrue(lost.await(0, TimeUnit.SECONDS), "lost before the other grant");
      assertTrue(lostAt.get() < grantedAt);
      assertFalse(l.isValid());
      assertTrue(other.fencingToken() > l.fencingToken());
      l.release(); // must not delete the other holder's grant
      assertTrue(a.lock("paused").tryAcquire(Duration.ZERO).isEmpty());
      other.release();
    }
  }

  @Test
  void lookAlikeNamesAndHashTagCharactersStayDistinct() throws Exception {
    List<String> names = List.of("a:b", "a/b", "a.b", "a%3Ab", "A:b", "a{b}", "{a}b", "a}{b", "a b", "é", "e\u0301",
        "tumbler:m:{x}", "x}", "{x");
    try (LockService a = open(); LockService b = open()) {
      List<Lease> held = new ArrayList<>();
      for (String n : names) {
        held.add(a.lock(n).tryAcquire(Duration.ZERO).orElseThrow(() -> new AssertionError("not granted: " + n)));
      }
      for (String n : names) {
        assertTrue(b.lock(n).tryAcquire(Duration.ZERO).isEmpty(), n);
      }
      held.forEach(Lease::release);
    }
    Set<String> tags = new HashSet<>();
    RedisKeys keys = new RedisKeys("");
    for (String n : names) {
      String k = keys.mutex(RedisKeys.Kind.MUTEX, n).getFirst();
      String tag = k.substring(k.indexOf('{') + 1, k.indexOf('}', k.indexOf('{')));
      assertTrue(tags.add(tag), "distinct hash tag for " + n);
      assertEquals(k.indexOf('{'), k.lastIndexOf('{'));
    }
  }

  @Test
  void lockSemaphoreAndReadWriteLockOfOneNameDoNotCollide() throws Exception {
    try (LockService a = open()) {
      Lease m = a.lock("same").acquire();
      Lease s = a.semaphore("same", 2).acquire(1);
      Lease r = a.readWriteLock("same").readLock().acquire();
      Lease e = null;
      assertTrue(m.isValid() && s.isValid() && r.isValid());
      m.release();
      s.release();
      r.release();
    }
  }

  @Test
  void foreignDataUnderAKeyIsALockExceptionNotARawRedisError() throws Exception {
    try (LockService a = open(); Jedis j = redis.client()) {
      String key = new RedisKeys("").mutex(RedisKeys.Kind.MUTEX, "foreign").getLast();
      j.lpush(key, "not a counter");
      LockException e = assertThrows(LockException.class, () -> a.lock("foreign").acquire());
      assertTrue(e.getMessage().contains("lock 'foreign'"), e.getMessage());
      assertFalse(e.getClass().getName().contains("jedis"));
      j.del(key);
    }
  }

  @Test
  void semaphoreCountsPermitsAndACrashedHoldersPermitsComeBack() throws Exception {
    try (LockService a = open(); LockService b = open()) {
      Semaphore sa = a.semaphore("sem", 3);
      Semaphore sb = b.semaphore("sem", 3);
      Lease two = sa.acquire(2);
      assertEquals(1, sb.availablePermits());
      assertTrue(sb.tryAcquire(2, Duration.ZERO).isEmpty());
      Lease one = sb.tryAcquire(1, Duration.ZERO).orElseThrow();
      assertEquals(0, sa.availablePermits());
      a.unwrap(LeaseRenewer.class).pause(); // a's holder "crashes": no more renewals
      Lease back = sb.tryAcquire(2, Duration.ofSeconds(10)).orElseThrow();
      assertFalse(two.isValid());
      assertEquals(0, sb.availablePermits());
      back.release();
      one.release();
      assertEquals(3, sb.availablePermits());
    }
  }

  @Test
  void readersShareAndAWriterExcludes() throws Exception {
    try (LockService a = open(); LockService b = open()) {
      ReadWriteLock ra = a.readWriteLock("rw");
      ReadWriteLock rb = b.readWriteLock("rw");
      Lease r1 = ra.readLock().acquire();
      Lease r2 = rb.readLock().tryAcquire(Duration.ZERO).orElseThrow();
      assertTrue(rb.writeLock().tryAcquire(Duration.ZERO).isEmpty());
      r1.release();
      assertTrue(rb.writeLock().tryAcquire(Duration.ZERO).isEmpty());
      r2.release();
      Lease w = rb.writeLock().tryAcquire(Duration.ZERO).orElseThrow();
      assertTrue(w.fencingToken() > r2.fencingToken());
      assertTrue(ra.readLock().tryAcquire(Duration.ZERO).isEmpty());
      assertTrue(ra.writeLock().tryAcquire(Duration.ZERO).isEmpty());
      CompletableFuture<Optional<Lease>> reader = CompletableFuture.supplyAsync(() -> {
        try {
          return ra.readLock().tryAcquire(Duration.ofSeconds(10));
        } catch (InterruptedException e) {
          throw new RuntimeException(e);
        }
      });
      Thread.sleep(200);
      w.release();
      reader.get(5, TimeUnit.SECONDS).orElseThrow().release();
    }
  }

  @Test
  void unwrapsToJedis() {
    try (LockService a = open()) {
      UnifiedJedis j = a.unwrap(UnifiedJedis.class);
      assertEquals("PONG", j.ping());
      assertSame(j, a.unwrap(UnifiedJedis.class));
      assertThrows(LockException.class, () -> a.unwrap(String.class));
    }
  }

  @Test
  void capabilitiesOfASingleServer() {
    try (LockService a = open()) {
      assertTrue(a.supports(Capability.SEMAPHORE));
      assertTrue(a.supports(Capability.FENCING));
      assertFalse(a.supports(Capability.FAULT_TOLERANT));
      assertFalse(a.supports(Capability.TRANSACTIONS));
    }
  }

  @Test
  void badUrlsAreNamedErrors() {
    String h = redis.address();
    assertTrue(assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect("lock:redis://" + h + "?leasetime=1s"))
        .getMessage().contains("leasetime"));
    assertTrue(assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect("lock:redis://" + h + ",127.0.0.1:1"))
        .getMessage().contains("mode=redlock"));
    assertTrue(assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect("lock:redis://" + h + "/x"))
        .getMessage().contains("database"));
    assertTrue(assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect("lock:redis://h1,h2?mode=redlock"))
        .getMessage().contains("at least 3"));
    assertTrue(assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect("lock:redis://" + h + "?mode=paxos"))
        .getMessage().contains("mode"));
    assertTrue(assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect("lock:redis://" + h + "?timeout=0ms"))
        .getMessage().contains("timeout"));
    assertTrue(assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect("lock:redis:local"))
        .getMessage().contains("hosts"));
  }

  @Test
  void thePasswordNeverShows() {
    // the embedded server has no password: AUTH fails, and neither the error nor anything else shows it
    String url = "lock:redis://bob:hunter2secret@" + redis.address() + "?timeout=500ms";
    LockException e = assertThrows(LockException.class, () -> LockProviders.connect(url));
    assertFalse(String.valueOf(e.getMessage()).contains("hunter2secret"), e.getMessage());
    for (Throwable t = e; t != null; t = t.getCause()) {
      assertFalse(String.valueOf(t.getMessage()).contains("hunter2secret"));
    }
  }

  @Test
  void unreachableServerIsServiceUnavailable() {
    int port = LoopbackPorts.freePort();
    ServiceUnavailableException e = assertThrows(ServiceUnavailableException.class,
        () -> LockProviders.connect("lock:redis://127.0.0.1:" + port + "?timeout=300ms"));
    assertTrue(e.getMessage().contains(Integer.toString(port)), e.getMessage());
  }

  @Test
  void serviceInfoIsRedactedAndNamesTheProvider() {
    try (LockService a = open()) {
      assertEquals("redis", a.info().provider());
      assertNotEquals("", a.info().url());
    }
  }
}
