package dev.tumbler.lock.redis;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An acquire's request that reaches Redis after its client gave up on the answer (the proxy holds it back past the
 * 1 s read bound) runs all the same, after whatever the client did meanwhile: its undo, its next attempt, the end of
 * its wait. Whatever it does then must not outlive the client's undoing: no grant held for a term by nobody, no place
 * in line nobody keeps, and never a grant taken from the lease a later attempt of the same wait holds. Each test
 * failed before the provider undid such attempts again (an owner of its own) or numbered them (a fair wait's).
 */
class RedisLateRequestTest {
  private static final String OPTS = "?timeout=1s&leaseTime=20s";
  private static EmbeddedRedis redis;

  @BeforeAll
  static void start() {
    redis = EmbeddedRedis.start();
  }

  @AfterAll
  static void stop() {
    redis.close();
  }

  private static LockService direct() {
    return LockProviders.connect("lock:redis://" + redis.address() + OPTS);
  }

  private static LockService via(TcpProxy proxy) {
    return LockProviders.connect("lock:redis://" + proxy.address() + OPTS);
  }

  /** Loads the fair acquire script on the server, so that a late request is the script's, not its source's. */
  private static void warm(LockService a, LockService b) throws InterruptedException {
    a.lock("warm").acquire().release();
    Lease held = b.lock("warm").acquire();
    a.lock("warm").tryAcquire(Duration.ofMillis(50)).ifPresent(Lease::release);
    held.release();
  }

  /**
   * A try of {@code name} by {@code service} whose request {@code proxy} holds back 3 s: it ends empty or unanswered
   * (its answer did not come within the read bound); returns once the held request has run.
   */
  private static void tryHeldBack(TcpProxy proxy, LockService service, String name, Duration wait)
      throws InterruptedException {
    try {
      service.lock(name).tryAcquire(wait).ifPresent(Lease::release);
    } catch (LockException e) {
      // unanswered
    }
    assertTrue(proxy.heldRequests() >= 1, "no request was held back");
    Thread.sleep(3_500);
  }

  private static void grantedWithin5s(LockService service, String name, String otherwise)
      throws InterruptedException {
    Optional<Lease> l = service.lock(name).tryAcquire(Duration.ofSeconds(5));
    assertTrue(l.isPresent(), otherwise);
    l.get().release();
  }

  /** A try of a free lock (plain commands, SET NX) reaches the server after the try ended: a grant for nobody. */
  @Test
  void aLateGrantOfAFreeLockIsUndone() throws Exception {
    try (TcpProxy proxy = TcpProxy.start("127.0.0.1", redis.port()); LockService a = via(proxy);
        LockService b = direct()) {
      warm(a, b);
      proxy.holdRequests("\r\nNX\r\n", 3_000);
      tryHeldBack(proxy, a, "free", Duration.ZERO);
      grantedWithin5s(b, "free", "a lock nobody holds was not granted within 5 s: a late grant kept it");
    }
  }

  /** A waiter's attempt reaches the server after its wait ended: a place in line nobody keeps. */
  @Test
  void aLatePlaceInLineIsRefused() throws Exception {
    try (TcpProxy proxy = TcpProxy.start("127.0.0.1", redis.port()); LockService a = via(proxy);
        LockService b = direct(); LockService c = direct()) {
      warm(a, b);
      Lease held = b.lock("line").acquire();
      proxy.holdRequests(Scripts.FAIR_MUTEX_ACQUIRE.sha(), 3_000);
      tryHeldBack(proxy, a, "line", Duration.ofMillis(200));
      held.release(); // (a place nobody keeps would be handed the lock here)
      grantedWithin5s(c, "line", "a released lock was not granted within 5 s: a late place in line took it");
    }
  }

  /**
   * A waiter's first attempt is held back, its next one is not and takes the lock, freed meanwhile; then the first
   * arrives. It must not give back, as "a grant whose answer was lost", the lease the later attempt got: a third
   * client was granted the lock while that lease was still valid.
   */
  @Test
  void aLateAttemptLeavesTheLeaseOfALaterAttemptOfTheSameWaitAlone() throws Exception {
    try (TcpProxy proxy = TcpProxy.start("127.0.0.1", redis.port()); LockService a = via(proxy);
        LockService b = direct(); LockService c = direct()) {
      warm(a, b);
      Lease held = b.lock("same").acquire();
      proxy.holdFirstRequest(Scripts.FAIR_MUTEX_ACQUIRE.sha(), 3_000);
      long start = System.nanoTime();
      CompletableFuture<Optional<Lease>> waiting = CompletableFuture.supplyAsync(() -> {
        try {
          return a.lock("same").tryAcquire(Duration.ofSeconds(10));
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
      });
      Thread.sleep(500);
      held.release(); // (while the first attempt is held back: the next one finds the lock free and takes it)
      Lease lease = waiting.get(15, TimeUnit.SECONDS).orElseThrow(() -> new AssertionError("the waiter got nothing"));
      assertTrue(proxy.heldRequests() >= 1, "no request was held back");
      // another client waits in line from before the first attempt arrives (about 3 s in) until after it
      long until = start + TimeUnit.MILLISECONDS.toNanos(4_000);
      Optional<Lease> other = c.lock("same").tryAcquire(Duration.ofNanos(until - System.nanoTime()));
      other.ifPresent(Lease::release);
      assertFalse(other.isPresent() && lease.isValid(), "another client was granted the lock while the waiter's lease"
          + " was valid: the late attempt gave that lease back");
      assertTrue(lease.isValid(), "the waiter's lease was lost");
      lease.release();
    }
  }

  /** Redlock: the attempt reaches every master after the try gave up on it: a grant for nobody on a majority. */
  @Test
  void aLateRedlockGrantIsUndoneOnEveryMaster() throws Exception {
    List<EmbeddedRedis> masters = new ArrayList<>();
    List<TcpProxy> proxies = new ArrayList<>();
    try {
      StringBuilder viaProxies = new StringBuilder();
      StringBuilder directly = new StringBuilder();
      for (int i = 0; i < 3; i++) {
        EmbeddedRedis m = EmbeddedRedis.start();
        masters.add(m);
        TcpProxy p = TcpProxy.start("127.0.0.1", m.port());
        proxies.add(p);
        viaProxies.append(i > 0 ? "," : "").append(p.address());
        directly.append(i > 0 ? "," : "").append(m.address());
      }
      String opts = "?mode=redlock&timeout=1s&leaseTime=20s";
      try (LockService a = LockProviders.connect("lock:redis://" + viaProxies + opts);
          LockService b = LockProviders.connect("lock:redis://" + directly + opts)) {
        a.lock("warm").acquire().release();
        for (TcpProxy p : proxies) {
          p.holdRequests(Scripts.MUTEX_ACQUIRE.sha(), 1_500);
        }
        try {
          a.lock("red").tryAcquire(Duration.ZERO).ifPresent(Lease::release);
        } catch (LockException e) {
          // no master answered within the read bound
        }
        for (TcpProxy p : proxies) {
          assertTrue(p.heldRequests() >= 1, "no request was held back by " + p.address());
        }
        Thread.sleep(2_000);
        grantedWithin5s(b, "red", "a lock nobody holds was not granted within 5 s: late grants on the masters kept it");
      }
    } finally {
      proxies.forEach(TcpProxy::close);
      masters.forEach(EmbeddedRedis::close);
    }
  }
}
