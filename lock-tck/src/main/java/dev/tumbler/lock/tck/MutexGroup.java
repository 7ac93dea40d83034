package dev.tumbler.lock.tck;

import static dev.tumbler.lock.tck.LockTck.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.LockTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The TCK group "mutex contract" ({@link LockTck.Mutex}; needs: MUTEX). It checks: acquire/release;
 * tryAcquire(ZERO) while held elsewhere (and through the same service: not reentrant); a timed wait never returns
 * early and returns within 2 s of its end; handoff to a waiter; release idempotent, fires no listener, and a stale
 * release never frees the next holder; acquireAsync success and LockTimeoutException; cancelling acquireAsync
 * leaks nothing; an interrupted acquire() throws InterruptedException and holds nothing; asJavaLock() is thread-
 * owned, reentrant, same adapter per handle.
 */
abstract class MutexGroup extends TckGroup {

  MutexGroup(LockTck tck) {
    super(tck);
  }

  @Test
  @DisplayName("acquire gives a valid lease; release frees the lock for others")
  void acquireRelease() throws InterruptedException {
    LockService a = open();
    LockService b = open();
    String n = name("mutex");
    Lock lock = a.lock(n);
    assertEquals(n, lock.name());
    Lease l = lock.acquire();
    assertEquals(n, l.name(), "lease.name()");
    assertEquals(1, l.permits(), "a lock lease holds 1 permit");
    assertTrue(l.isValid(), "a new lease is not valid");
    assertTrue(l.remaining().compareTo(Duration.ZERO) > 0, "a new lease has no time left");
    if (!declares(Capability.LEASE_EXPIRY)) {
      assertEquals(UNBOUNDED, l.remaining(), "a valid lease of a provider without LEASE_EXPIRY has bounded remaining()");
    }
    assertTrue(probe(b.lock(n)).isEmpty(), "a held lock was granted to another service");
    l.release();
    assertFalse(l.isValid(), "a released lease is still valid");
    assertEquals(Duration.ZERO, l.remaining(), "a released lease has time left");
    held(b.lock(n).tryAcquire(releaseBound()), "a released lock was not granted to another service").release();
  }

  @Test
  @DisplayName("tryAcquire(ZERO) while held elsewhere returns empty at once")
  void tryZeroWhileHeld() throws InterruptedException {
    LockService a = open();
    LockService b = open();
    String n = name("zero");
    try (Lease l = a.lock(n).acquire()) {
      long t0 = System.nanoTime();
      assertTrue(probe(b.lock(n)).isEmpty(), "tryAcquire(ZERO) got a held lock");
      assertTrue(millisSince(t0) < SLACK.toMillis(), "tryAcquire(ZERO) waited " + millisSince(t0) + " ms");
      assertTrue(probe(a.lock(n)).isEmpty(),
          "a second lease of a held lock was granted through the same service (locks are not reentrant)");
      assertTrue(l.isValid());
    }
  }

  @Test
  @DisplayName("tryAcquire(wait) never returns early and returns within the slack")
  void waitHonoured() throws InterruptedException {
    LockService a = open();
    LockService b = open();
    String n = name("wait");
    try (Lease l = a.lock(n).acquire()) {
      for (Duration w : List.of(SHORT_WAIT, Duration.ofMillis(700))) {
        long t0 = System.nanoTime();
        assertTrue(b.lock(n).tryAcquire(w).isEmpty(), "tryAcquire got a held lock");
        assertWaited(t0, w, "tryAcquire(" + w.toMillis() + "ms)");
      }
      assertTrue(l.isValid());
    }
  }

  @Test
  @DisplayName("a waiter is granted the lock when the holder releases it")
  void waiterGrantedOnRelease() throws Exception {
    LockService a = open();
    LockService b = open();
    String n = name("handoff");
    Lease la = a.lock(n).acquire();
    Job<Optional<Lease>> waiter = start("waiter", () -> b.lock(n).tryAcquire(GRANT_WAIT));
    Thread.sleep(200);
    assertFalse(waiter.result().isDone(), "the waiter returned while the lock was held: " + waiter.result());
    la.release();
    Lease lb = held(waiter.get(GRANT_WAIT), "the waiter was not granted the released lock");
    assertTrue(lb.isValid());
    if (declares(Capability.FENCING)) {
      assertTrue(lb.fencingToken() > la.fencingToken(), "fencing token did not increase: " + la.fencingToken()
          + " then " + lb.fencingToken());
    }
    lb.release();
  }

  @Test
  @DisplayName("release is idempotent, fires no listener (not even one added after it), and a stale release frees nothing")
  void releaseIdempotent() throws InterruptedException {
    LockService a = open();
    LockService b = open();
    LockService c = open();
    String n = name("release");
    Lease l1 = a.lock(n).acquire();
    AtomicBoolean fired = new AtomicBoolean();
    l1.onLost(e -> fired.set(true));
    l1.release();
    l1.release();
    l1.close();
    assertSame(l1, l1.onLost(e -> fired.set(true)), "onLost after the release");
    assertFalse(fired.get(), "release fired a lost listener");
    Lease l2 = held(b.lock(n).tryAcquire(releaseBound()), "the released lock was not granted");
    l1.release();
    l1.close();
    assertTrue(probe(c.lock(n)).isEmpty(),
        "releasing an old lease again freed the lock of its next holder");
    assertTrue(l2.isValid(), "the next holder's lease was ended by a stale release");
    l2.release();
  }

  @Test
  @DisplayName("releasing an old lease again, after the same service was granted the lock anew, leaves the new lease alone")
  void releaseAgainAfterRegrant() throws InterruptedException {
    LockService a = open();
    LockService c = open();
    String n = name("release-again");
    Lock lock = a.lock(n);
    Lease first = lock.acquire();
    first.release();
    Lease second = held(lock.tryAcquire(releaseBound()), "the released lock was not granted again to the same service");
    first.release();
    first.close();
    assertTrue(probe(c.lock(n)).isEmpty(),
        "a second release of an old lease freed the newer lease the same service holds on that lock");
    assertTrue(second.isValid(), "the newer lease was ended by a second release of the old one");
    second.release();
  }

  @Test
  @DisplayName("acquireAsync completes with a lease, or LockTimeoutException no earlier than its wait")
  void acquireAsync() throws Exception {
    LockService a = open();
    LockService b = open();
    String n = name("async");
    Lease la = a.lock(n).acquireAsync(Duration.ZERO).get(GRANT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    assertTrue(la.isValid());
    long t0 = System.nanoTime();
    CompletableFuture<Lease> f = b.lock(n).acquireAsync(SHORT_WAIT);
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> f.get(SHORT_WAIT.plus(SLACK).toMillis(), TimeUnit.MILLISECONDS), "acquireAsync of a held lock completed");
    assertWaited(t0, SHORT_WAIT, "acquireAsync(" + SHORT_WAIT.toMillis() + "ms)");
    assertTrue(e.getCause() instanceof LockTimeoutException, "expected LockTimeoutException, got " + e.getCause());
    CompletableFuture<Lease> g = b.lock(n).acquireAsync(GRANT_WAIT);
    Thread.sleep(100);
    la.release();
    Lease lb = g.get(GRANT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    assertTrue(lb.isValid());
    lb.release();
  }

  @Test
  @DisplayName("cancelling acquireAsync leaks nothing")
  void asyncCancel() throws Exception {
    LockService a = open();
    LockService b = open();
    LockService c = open();
    String n = name("cancel");
    Lease la = a.lock(n).acquire();
    CompletableFuture<Lease> f = b.lock(n).acquireAsync(GRANT_WAIT);
    Thread.sleep(200);
    assertTrue(f.cancel(true), "a pending acquireAsync could not be cancelled");
    assertThrows(CancellationException.class, f::join);
    la.release();
    Lease lc = held(c.lock(n).tryAcquire(SLACK.plus(releaseBound())),
        "the lock stayed taken after the only waiter cancelled: the cancelled acquire leaked a lease");
    lc.release();
  }

  @Test
  @DisplayName("an interrupted acquire throws InterruptedException and holds nothing")
  void interrupt() throws Exception {
    LockService a = open();
    LockService b = open();
    LockService c = open();
    String n = name("interrupt");
    Lease la = a.lock(n).acquire();
    Job<Lease> waiter = start("interrupted", () -> b.lock(n).acquire());
    Thread.sleep(200);
    waiter.thread().interrupt();
    Throwable t = waiter.failure(SLACK);
    assertTrue(t instanceof InterruptedException, "an interrupted acquire() ended with " + t);
    la.release();
    Lease lc = held(c.lock(n).tryAcquire(releaseBound()), "the interrupted acquire left the lock taken");
    lc.release();
    held(b.lock(name("after-interrupt")).tryAcquire(GRANT_WAIT), "the service is unusable after an interrupt").release();
  }

  @Test
  @DisplayName("a lease belongs to its object, not a thread: other threads renew and release it")
  void leaseNotThreadOwned() throws Exception {
    LockService a = open();
    LockService b = open();
    String n = name("owner");
    Lock handle = a.lock(n);
    Lease first = handle.acquire();
    start("releaser", () -> {
      first.release();
      return null;
    }).get(SLACK.plus(releaseBound()));
    assertFalse(first.isValid(), "a lease released by another thread is still valid");
    // the handle holds nothing: the next acquire is a new lease, and the released one stays released
    Lease second = held(handle.tryAcquire(releaseBound()), "a lease released by another thread was not given back");
    assertNotSame(first, second, "a second acquire returned the first lease object");
    assertFalse(first.isValid(), "a released lease became valid again when its lock was granted anew");
    CompletableFuture<Void> v = new CompletableFuture<>();
    Thread.ofVirtual().start(() -> {
      try {
        second.renew();
        second.release();
        v.complete(null);
      } catch (Throwable e) {
        v.completeExceptionally(e);
      }
    });
    v.get(GRANT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    held(b.lock(n).tryAcquire(releaseBound()), "a lease renewed and released by a virtual thread was not given back")
        .release();
  }

  @Test
  @DisplayName("asJavaLock().lock() waits uninterruptibly and keeps the interrupt")
  void javaLockUninterruptible() throws Exception {
    LockService a = open();
    LockService b = open();
    String n = name("java-uninterruptible");
    java.util.concurrent.locks.Lock jl = b.lock(n).asJavaLock();
    Lease la = a.lock(n).acquire();
    Job<Boolean> waiter = start("uninterruptible", () -> {
      jl.lock();
      try {
        return Thread.currentThread().isInterrupted();
      } finally {
        jl.unlock();
      }
    });
    Thread.sleep(200);
    waiter.thread().interrupt();
    Thread.sleep(SHORT_WAIT.toMillis());
    assertFalse(waiter.result().isDone(), "lock() returned or failed when interrupted: " + waiter.result());
    la.release();
    assertTrue(waiter.get(GRANT_WAIT.plus(releaseBound())), "lock() was granted but cleared the thread's interrupt status");
  }

  @Test
  @DisplayName("asJavaLock is thread-owned and reentrant")
  void asJavaLock() throws Exception {
    LockService a = open();
    LockService b = open();
    String n = name("java");
    Lock handle = a.lock(n);
    java.util.concurrent.locks.Lock jl = handle.asJavaLock();
    assertSame(jl, handle.asJavaLock(), "asJavaLock() returned a different adapter for the same handle");
    assertThrows(IllegalMonitorStateException.class, jl::unlock, "unlock without lock");
    jl.lock();
    jl.lock();
    assertTrue(probe(b.lock(n)).isEmpty(), "asJavaLock().lock() did not take the lock");
    Throwable other = start("foreign-unlock", () -> {
      jl.unlock();
      return null;
    }).failure(SLACK);
    assertTrue(other instanceof IllegalMonitorStateException, "unlock from another thread gave " + other);
    jl.unlock();
    assertTrue(probe(b.lock(n)).isEmpty(), "one unlock of two nested locks freed the lock");
    jl.unlock();
    Lease lb = held(b.lock(n).tryAcquire(releaseBound()), "the last unlock did not free the lock");
    assertFalse(jl.tryLock(), "tryLock() got a lock held elsewhere");
    long t0 = System.nanoTime();
    assertFalse(jl.tryLock(SHORT_WAIT.toMillis(), TimeUnit.MILLISECONDS), "tryLock(wait) got a lock held elsewhere");
    assertWaited(t0, SHORT_WAIT, "tryLock(" + SHORT_WAIT.toMillis() + "ms)");
    lb.release();
    assertTrue(jl.tryLock(GRANT_WAIT.toMillis(), TimeUnit.MILLISECONDS), "tryLock(wait) missed a free lock");
    jl.unlock();
    assertThrows(UnsupportedOperationException.class, jl::newCondition);
  }
}
