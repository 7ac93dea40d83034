package dev.tumbler.lock.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

class AsyncAcquireTest {
  private final TestBackend backend = new TestBackend();
  private final TestBackend.TestService service = backend.open(LeaseSettings.defaults(), Ticker.system());

  @AfterEach
  void close() {
    service.close();
  }

  @Test
  void completesWithTheLease() throws Exception {
    Lease l = service.lock("a").acquireAsync(Duration.ofSeconds(5)).get(5, TimeUnit.SECONDS);
    assertTrue(l.isValid());
    l.release();
  }

  @Test
  void timesOutWithAMessageNamingLockProviderAndWait() throws Exception {
    Lease held = service.lock("a").acquire();
    CompletableFuture<Lease> f = service.lock("a").acquireAsync(Duration.ofMillis(200));
    ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof LockTimeoutException, String.valueOf(e.getCause()));
    String m = e.getCause().getMessage();
    assertTrue(m.contains("'a'") && m.contains("test") && m.contains("ms"), m);
    held.release();
  }

  @Test
  void cancellationStopsTheWaitAndLeavesNothingHeld() throws Exception {
    Lease held = service.lock("a").acquire();
    CompletableFuture<Lease> f = service.lock("a").acquireAsync(Duration.ofSeconds(30));
    Thread.sleep(50);
    assertTrue(f.cancel(true));
    held.release();
    Thread.sleep(100);
    Lease again = service.lock("a").tryAcquire(Duration.ofSeconds(2)).orElseThrow();
    again.release();
    assertEquals(0, service.openLeases());
  }

  /** Deterministic: the wait is granted only after the future was cancelled; the lease must be released. */
  @Test
  void leaseGrantedAfterCancellationIsReleased() throws Exception {
    CountDownLatch grant = new CountDownLatch(1);
    TestBackend.TestLease lease = backend.new TestLease("a", 1, LeaseSettings.defaults(), Ticker.system(),
        System.nanoTime(), backend.sem("a"));
    dev.tumbler.lock.Lock slow = new dev.tumbler.lock.Lock() {
      @Override
      public String name() {
        return "a";
      }

      @Override
      public Lease acquire() {
        throw new UnsupportedOperationException();
      }

      @Override
      public java.util.Optional<Lease> tryAcquire(Duration maxWait) {
        // ignores interrupts, as a backend call that cannot be interrupted would
        awaitUninterruptibly(grant);
        backend.sem("a").acquireUninterruptibly();
        return java.util.Optional.of(lease);
      }

      @Override
      public CompletableFuture<Lease> acquireAsync(Duration maxWait) {
        return AsyncAcquire.start(this, maxWait, "test");
      }

      @Override
      public java.util.concurrent.locks.Lock asJavaLock() {
        throw new UnsupportedOperationException();
      }
    };
    CompletableFuture<Lease> f = slow.acquireAsync(Duration.ofSeconds(30));
    assertTrue(f.cancel(true));
    grant.countDown();
    for (int i = 0; i < 100 && backend.releaseCalls.get() == 0; i++) {
      Thread.sleep(10);
    }
    assertEquals(1, backend.releaseCalls.get(), "the late lease was released");
  }

  /** A grant that lands just as the future is cancelled is released, never leaked. */
  @RepeatedTest(30)
  void grantRacingCancellationIsReleased() throws Exception {
    Lease held = service.lock("a").acquire();
    CompletableFuture<Lease> f = service.lock("a").acquireAsync(Duration.ofSeconds(30));
    Thread releaser = Thread.ofPlatform().start(held::release);
    if (!f.cancel(true)) {
      f.get().release(); // the grant won the race: the lease is the caller's
    }
    releaser.join();
    Lease again = service.lock("a").tryAcquire(Duration.ofSeconds(2)).orElseThrow(
        () -> new AssertionError("lock leaked by a cancelled acquire"));
    again.release();
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    boolean interrupted = false;
    while (true) {
      try {
        latch.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
