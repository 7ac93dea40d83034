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

  @Test
  void aNewOwnerProceedsAfterTheOwnersLeaseExpiredAndTheOldOwnerIsTold() throws Exception {
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch taken = new CountDownLatch(1);
    CompletableFuture<String> oldOwner = new CompletableFuture<>();
    Thread t1 = Thread.ofPlatform().name("first-owner").start(() -> {
      try {
        lock.lock();
        lock.lock(); // nested: two holds
        held.countDown();
        taken.await();
        StringBuilder seen = new StringBuilder();
        try {
          lock.lock();
          seen.append("lock:ok ");
        } catch (LeaseLostException e) {
          seen.append("lock:lost ");
        }
        try {
          lock.unlock();
          seen.append("unlock:ok ");
        } catch (LeaseLostException e) {
          seen.append("unlock:lost ");
        }
        try {
          lock.unlock();
          seen.append("unlock:ok ");
        } catch (RuntimeException e) {
          seen.append("unlock:" + e.getClass().getSimpleName());
        }
        try {
          lock.unlock();
          seen.append("unlock:ok");
        } catch (IllegalMonitorStateException e) {
          seen.append("unlock:not-owner");
        }
        oldOwner.complete(seen.toString().trim());
      } catch (Throwable t) {
        oldOwner.completeExceptionally(t);
      }
    });
    assertTrue(held.await(10, TimeUnit.SECONDS));
    TestBackend.TestLease first = (TestBackend.TestLease) lock.lease().orElseThrow();
    first.expireOnBackend();
    lock.lock(); // the backend grants it again: this thread becomes the owner
    assertTrue(lock.isHeldByCurrentThread());
    assertEquals(1, lock.getHoldCount());
    taken.countDown();
    // the old owner's next call (a nested lock) throws; its first unlock does not throw again, its second
    // drains its last hold quietly, and a third is an unlock by a thread that holds nothing
    assertEquals("lock:lost unlock:ok unlock:ok unlock:not-owner", oldOwner.get(10, TimeUnit.SECONDS));
    t1.join();
    assertTrue(lock.isHeldByCurrentThread(), "the old owner's unlocks took the lock from its new owner");
    assertTrue(backend.sem("j").availablePermits() == 0, "the old owner's calls freed the new owner's grant");
    lock.unlock();
    assertTrue(lock.tryLock(), "usable again");
    lock.unlock();
  }

  @Test
  void theOldOwnersFirstCallAfterDisplacementMayBeItsUnlock() throws Exception {
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch taken = new CountDownLatch(1);
    CompletableFuture<Throwable> unlocked = new CompletableFuture<>();
    Thread.ofPlatform().start(() -> {
      lock.lock();
      held.countDown();
      try {
        taken.await();
        lock.unlock();
        unlocked.complete(null);
      } catch (Throwable t) {
        unlocked.complete(t);
      }
    });
    assertTrue(held.await(10, TimeUnit.SECONDS));
    ((TestBackend.TestLease) lock.lease().orElseThrow()).expireOnBackend();
    assertTrue(lock.tryLock(10, TimeUnit.SECONDS));
    taken.countDown();
    Throwable t = unlocked.get(10, TimeUnit.SECONDS);
    assertTrue(t instanceof LeaseLostException, "the old owner's unlock: " + t);
    assertTrue(t.getMessage().contains("lost") && t.getMessage().contains(Thread.currentThread().getName()), t.getMessage());
    assertTrue(lock.isHeldByCurrentThread());
    lock.unlock();
  }

  @Test
  void aGrantWhileTheOwnersLeaseIsValidIsReportedAsTheBackendsFault() throws Exception {
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(1);
    Thread t1 = Thread.ofPlatform().name("valid-owner").start(() -> {
      lock.lock();
      held.countDown();
      try {
        done.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      lock.unlock();
    });
    assertTrue(held.await(10, TimeUnit.SECONDS));
    backend.sem("j").release(); // the backend forgets a valid holder: exclusion is broken
    IllegalStateException e = assertThrows(IllegalStateException.class, lock::lock);
    assertTrue(e.getMessage().contains("valid-owner") && e.getMessage().contains("valid"), e.getMessage());
    done.countDown();
    t1.join();
  }
}
