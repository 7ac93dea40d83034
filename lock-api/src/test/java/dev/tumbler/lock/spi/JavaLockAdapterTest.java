package dev.tumbler.lock.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LeaseLostException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class JavaLockAdapterTest {
  private final TestBackend backend = new TestBackend();
  private final TestBackend.TestService service = backend.open(LeaseSettings.defaults(), Ticker.system());
  private final dev.tumbler.lock.Lock tumbler = service.lock("j");
  private final JavaLockAdapter lock = (JavaLockAdapter) tumbler.asJavaLock();

  @AfterEach
  void close() {
    service.close();
  }

  @Test
  void sameAdapterForTheSameHandle() {
    assertSame(lock, tumbler.asJavaLock());
  }

  @Test
  void reentrantWithHoldCountAndOneBackendLease() {
    lock.lock();
    lock.lock();
    assertTrue(lock.tryLock());
    assertEquals(3, lock.getHoldCount());
    assertEquals(1, backend.fencing.get(), "one grant for nested locks");
    lock.unlock();
    lock.unlock();
    assertEquals(0, backend.releaseCalls.get());
    lock.unlock();
    assertEquals(1, backend.releaseCalls.get());
    assertEquals(0, lock.getHoldCount());
    assertThrows(IllegalMonitorStateException.class, lock::unlock);
  }

  @Test
  void unlockByANonOwnerThreadIsIllegal() throws Exception {
    lock.lock();
    CompletableFuture<Throwable> other = new CompletableFuture<>();
    Thread.ofPlatform().start(() -> {
      try {
        lock.unlock();
        other.complete(null);
      } catch (Throwable t) {
        other.complete(t);
      }
    });
    assertTrue(other.get() instanceof IllegalMonitorStateException, String.valueOf(other.get()));
    assertTrue(lock.isHeldByCurrentThread());
    lock.unlock();
  }

  @Test
  void otherThreadsWaitAndTryLockWithTimeoutGivesUp() throws Exception {
    lock.lock();
    CompletableFuture<Boolean> tried = new CompletableFuture<>();
    Thread.ofPlatform().start(() -> {
      try {
        long start = System.nanoTime();
        boolean got = lock.tryLock(200, TimeUnit.MILLISECONDS);
        tried.complete(!got && System.nanoTime() - start >= 200_000_000L);
      } catch (InterruptedException e) {
        tried.complete(false);
      }
    });
    assertTrue(tried.get(5, TimeUnit.SECONDS), "gave up after the full wait");
    CountDownLatch got = new CountDownLatch(1);
    Thread t = Thread.ofPlatform().start(() -> {
      lock.lock();
      got.countDown();
      lock.unlock();
    });
    assertFalse(got.await(100, TimeUnit.MILLISECONDS));
    lock.unlock();
    assertTrue(got.await(5, TimeUnit.SECONDS));
    t.join();
  }

  @Test
  void lockIsUninterruptibleButKeepsTheInterrupt() throws Exception {
    Lock held = tumbler.asJavaLock();
    held.lock();
    AtomicBoolean interruptedAfter = new AtomicBoolean();
    CountDownLatch done = new CountDownLatch(1);
    Thread t = Thread.ofPlatform().start(() -> {
      lock.lock();
      interruptedAfter.set(Thread.currentThread().isInterrupted());
      lock.unlock();
      done.countDown();
    });
    Thread.sleep(100);
    t.interrupt();
    assertFalse(done.await(200, TimeUnit.MILLISECONDS), "lock() does not give up on interrupt");
    held.unlock();
    assertTrue(done.await(5, TimeUnit.SECONDS));
    assertTrue(interruptedAfter.get(), "interrupt status restored");
  }

  @Test
  void lockInterruptiblyThrowsAndHoldsNothing() throws Exception {
    lock.lock();
    CompletableFuture<Throwable> r = new CompletableFuture<>();
    Thread t = Thread.ofPlatform().start(() -> {
      try {
        lock.lockInterruptibly();
        r.complete(null);
      } catch (Throwable e) {
        r.complete(e);
      }
    });
    Thread.sleep(100);
    t.interrupt();
    assertTrue(r.get(5, TimeUnit.SECONDS) instanceof InterruptedException);
    lock.unlock();
    assertTrue(tumbler.tryAcquire(Duration.ZERO).isPresent(), "the interrupted waiter left nothing held");
  }

  @Test
  void newConditionIsUnsupportedWithAReason() {
    UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, lock::newCondition);
    assertTrue(e.getMessage().contains("not supported"), e.getMessage());
  }

  @Test
  void finalUnlockOfALostLeaseFreesTheAdapterAndReportsTheLoss() {
    lock.lock();
    ((AbstractLease) lock.lease().orElseThrow()).markLost(LeaseLostEvent.Reason.EXPIRED, "test", null);
    assertThrows(LeaseLostException.class, lock::unlock);
    assertEquals(0, lock.getHoldCount());
    assertTrue(lock.tryLock(), "usable again");
    lock.unlock();
  }
}
