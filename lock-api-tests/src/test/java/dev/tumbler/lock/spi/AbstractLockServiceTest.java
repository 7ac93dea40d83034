package dev.tumbler.lock.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.ServiceClosedException;
import dev.tumbler.lock.TransactionOptions;
import dev.tumbler.lock.UnsupportedCapabilityException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class AbstractLockServiceTest {
  private final TestBackend backend = new TestBackend();
  private final TestBackend.TestService service = backend.open(LeaseSettings.defaults(), Ticker.system());

  @Test
  void closeReleasesHeldLeasesAndTellsTheirHolders() throws Exception {
    Lease a = service.lock("a").acquire();
    Lease b = service.lock("b").acquire();
    AtomicReference<LeaseLostEvent> event = new AtomicReference<>();
    a.onLost(event::set);
    service.close();
    assertFalse(a.isValid());
    assertFalse(b.isValid());
    assertEquals(LeaseLostEvent.Reason.SERVICE_CLOSED, event.get().reason());
    assertEquals(2, backend.releaseCalls.get());
    assertTrue(service.doCloseCalled);
    assertTrue(backend.sem("a").tryAcquire(), "released on the backend");
  }

  @Test
  void closeEndsWaitsWithServiceClosedAndLeavesTheInterruptClear() throws Exception {
    Lease held = service.lock("a").acquire();
    CompletableFuture<Throwable> waiter = new CompletableFuture<>();
    AtomicReference<Boolean> interruptedAfter = new AtomicReference<>();
    Thread.ofPlatform().start(() -> {
      try {
        service.lock("a").acquire();
        waiter.complete(null);
      } catch (Throwable t) {
        interruptedAfter.set(Thread.currentThread().isInterrupted());
        waiter.complete(t);
      }
    });
    Thread.sleep(100);
    service.close();
    assertTrue(waiter.get(5, TimeUnit.SECONDS) instanceof ServiceClosedException, String.valueOf(waiter.get()));
    assertEquals(Boolean.FALSE, interruptedAfter.get());
    assertFalse(held.isValid());
  }

  /** close() interrupts a wait that is just ending: the interrupt is the service's, not left to the caller. */
  @Test
  void closeRacingTheEndOfAWaitLeavesNoStaleInterrupt() throws Exception {
    String result = service.blocking(() -> {
      Thread closer = Thread.ofPlatform().start(service::close);
      while (closer.isAlive()) {
        Thread.onSpinWait(); // the wait has "ended" but not returned yet when close() interrupts it
      }
      return "done";
    });
    assertEquals("done", result);
    assertFalse(Thread.currentThread().isInterrupted(), "stale interrupt left on the caller's thread");
  }

  /** A grant the backend makes while the service closes is given back, never handed to the caller. */
  @Test
  void grantLandingAfterCloseIsReleased() throws Exception {
    AbstractLock racing = new AbstractLock(service, "racing") {
      @Override
      protected AbstractLease doAcquire(Deadline deadline) {
        java.util.concurrent.Semaphore sem = backend.sem("racing");
        sem.acquireUninterruptibly();
        long sent = service().ticker().read();
        Thread closer = Thread.ofPlatform().start(service()::close);
        while (closer.isAlive()) {
          Thread.onSpinWait(); // the backend call "returns" only after close() has run
        }
        return backend.new TestLease("racing", 1, service().settings(), service().ticker(), sent, sem);
      }
    };
    assertThrows(ServiceClosedException.class, () -> racing.tryAcquire(Duration.ofSeconds(5)));
    assertEquals(1, backend.releaseCalls.get(), "the late grant was given back");
    assertTrue(backend.sem("racing").tryAcquire(), "free on the backend");
  }

  @Test
  void anInterruptFromTheCallerStaysAnInterrupt() throws Exception {
    Lease held = service.lock("a").acquire();
    CompletableFuture<Throwable> waiter = new CompletableFuture<>();
    Thread t = Thread.ofPlatform().start(() -> {
      try {
        service.lock("a").tryAcquire(Duration.ofSeconds(30));
        waiter.complete(null);
      } catch (Throwable e) {
        waiter.complete(e);
      }
    });
    Thread.sleep(100);
    t.interrupt();
    assertTrue(waiter.get(5, TimeUnit.SECONDS) instanceof InterruptedException);
    held.release();
    assertTrue(service.lock("a").tryAcquire(Duration.ZERO).isPresent(), "the interrupted waiter holds nothing");
    service.close();
  }

  /**
   * An interrupted timed acquire answers the caller once its attempt has ended, so that nothing of the
   * attempt is still queued at the backend afterwards (a soak run saw an interrupted waiter's request still
   * queued in a fair backend make the next tryAcquire(ZERO) fail); a backend that never lets the attempt end
   * costs the caller the grace, no more.
   */
  @Test
  @org.junit.jupiter.api.Timeout(value = 20, threadMode = org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD)
  void anInterruptedWaitEndsAfterItsAttempt() throws Exception {
    java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.atomic.AtomicBoolean cleanedUp = new java.util.concurrent.atomic.AtomicBoolean();
    AbstractLock slowToLeave = new AbstractLock(service, "slow-to-leave") {
      @Override
      protected AbstractLease doAcquire(Deadline deadline) throws InterruptedException {
        started.countDown();
        try {
          Thread.sleep(60_000);
        } catch (InterruptedException e) {
          long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
          while (System.nanoTime() - until < 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(until - System.nanoTime()); // leaving the queue
          }
          cleanedUp.set(true);
          throw e;
        }
        return null;
      }
    };
    CompletableFuture<String> seen = new CompletableFuture<>();
    Thread t = Thread.ofPlatform().start(() -> {
      try {
        slowToLeave.tryAcquire(Duration.ofSeconds(30));
        seen.complete("returned");
      } catch (InterruptedException e) {
        seen.complete("interrupted, attempt ended: " + cleanedUp.get());
      } catch (Throwable e) {
        seen.complete(e.toString());
      }
    });
    assertTrue(started.await(10, TimeUnit.SECONDS));
    t.interrupt();
    assertEquals("interrupted, attempt ended: true", seen.get(10, TimeUnit.SECONDS));

    // an attempt that ignores the interrupt is abandoned after the grace
    java.util.concurrent.CountDownLatch never = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch started2 = new java.util.concurrent.CountDownLatch(1);
    AbstractLock deaf = new AbstractLock(service, "deaf") {
      @Override
      protected AbstractLease doAcquire(Deadline deadline) {
        started2.countDown();
        boolean done = false;
        while (!done) {
          try {
            done = never.await(60, TimeUnit.SECONDS);
          } catch (InterruptedException ignored) {
            // a backend client that does not answer interrupts
          }
        }
        return null;
      }
    };
    CompletableFuture<Long> took = new CompletableFuture<>();
    Thread t2 = Thread.ofPlatform().start(() -> {
      long t0 = System.nanoTime();
      try {
        deaf.tryAcquire(Duration.ofSeconds(30));
      } catch (InterruptedException e) {
        took.complete(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
      } catch (Throwable e) {
        took.completeExceptionally(e);
      }
    });
    assertTrue(started2.await(10, TimeUnit.SECONDS));
    long interruptedAt = System.nanoTime();
    t2.interrupt();
    took.get(10, TimeUnit.SECONDS);
    long afterInterrupt = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - interruptedAt);
    never.countDown();
    assertTrue(afterInterrupt >= AbstractLockService.ANSWER_GRACE_MILLIS - 50
        && afterInterrupt < AbstractLockService.ANSWER_GRACE_MILLIS + 5_000, afterInterrupt + " ms after the interrupt");
    service.close();
  }

  /**
   * A backend client that re-asserts the interrupt before throwing (Curator does) must not leave it set:
   * an InterruptedException means the status is clear, and asJavaLock().lock() retries after one.
   */
  @Test
  void anInterruptedExceptionLeavesTheInterruptStatusClear() throws Exception {
    AbstractLock reasserting = new AbstractLock(service, "reasserting") {
      @Override
      protected AbstractLease doAcquire(Deadline deadline) throws InterruptedException {
        Thread.currentThread().interrupt();
        throw new InterruptedException("backend");
      }
    };
    CompletableFuture<Boolean> statusAfter = new CompletableFuture<>();
    Thread.ofPlatform().start(() -> {
      try {
        reasserting.acquire();
        statusAfter.completeExceptionally(new AssertionError("acquire returned"));
      } catch (InterruptedException e) {
        statusAfter.complete(Thread.currentThread().isInterrupted());
      } catch (Throwable e) {
        statusAfter.completeExceptionally(e);
      }
    });
    assertFalse(statusAfter.get(5, TimeUnit.SECONDS), "the interrupt status was left set after InterruptedException");
    service.close();
  }

  @Test
  void everyCallAfterCloseThrowsServiceClosed() throws Exception {
    dev.tumbler.lock.Lock handle = service.lock("a");
    service.close();
    service.close(); // idempotent
    assertTrue(service.isClosed());
    assertThrows(ServiceClosedException.class, () -> service.lock("b"));
    assertThrows(ServiceClosedException.class, handle::acquire);
    assertThrows(ServiceClosedException.class, () -> handle.tryAcquire(Duration.ZERO));
    assertThrows(ServiceClosedException.class, () -> handle.acquireAsync(Duration.ZERO));
    assertThrows(ServiceClosedException.class, () -> service.election("e"));
  }

  @Test
  void argumentChecksNameTheArgument() {
    assertEquals("name", assertThrows(NullPointerException.class, () -> service.lock(null)).getMessage());
    assertTrue(assertThrows(IllegalArgumentException.class, () -> service.lock(" ")).getMessage().contains("blank"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> service.lock("x".repeat(257))).getMessage()
        .contains("256"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> service.lock("a\nb")).getMessage()
        .contains("control"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> service.lock("a").tryAcquire(Duration.ofMillis(-1)))
        .getMessage().contains("maxWait"));
    assertThrows(NullPointerException.class, () -> service.lock("a").tryAcquire(null));
    service.lock("x".repeat(256)); // the longest allowed
    service.close();
  }

  @Test
  void undeclaredCapabilitiesAreTypedErrors() {
    UnsupportedCapabilityException e = assertThrows(UnsupportedCapabilityException.class,
        () -> service.semaphore("s", 2));
    assertEquals(Capability.SEMAPHORE, e.capability());
    assertThrows(UnsupportedCapabilityException.class, () -> service.readWriteLock("rw"));
    assertThrows(UnsupportedCapabilityException.class, () -> service.beginTransaction(TransactionOptions.defaults()));
    assertThrows(IllegalArgumentException.class, () -> service.semaphore("s", 0), "argument checks come first");
    service.close();
  }

  @Test
  void unwrapFindsTheServiceTheRenewerAndProviderObjects() {
    assertSame(service, service.unwrap(AbstractLockService.class));
    assertSame(service.renewer(), service.unwrap(LeaseRenewer.class));
    assertSame(backend, service.unwrap(TestBackend.class));
    LockException e = assertThrows(LockException.class, () -> service.unwrap(String.class));
    assertTrue(e.getMessage().contains("java.lang.String"));
    service.close();
  }

  /** A provider whose wait gives up early is asked again until the caller's full wait has passed. */
  @Test
  void providerGivingUpEarlyIsAskedAgain() throws Exception {
    java.util.concurrent.atomic.AtomicInteger attempts = new java.util.concurrent.atomic.AtomicInteger();
    AbstractLock impatient = new AbstractLock(service, "early") {
      @Override
      protected AbstractLease doAcquire(Deadline deadline) {
        attempts.incrementAndGet();
        return null; // gives up at once, whatever the deadline
      }
    };
    long start = System.nanoTime();
    assertTrue(impatient.tryAcquire(Duration.ofMillis(100)).isEmpty());
    assertTrue(System.nanoTime() - start >= 100_000_000L, "returned early");
    assertTrue(attempts.get() > 1);
    attempts.set(0);
    assertTrue(impatient.tryAcquire(Duration.ZERO).isEmpty());
    assertEquals(1, attempts.get(), "ZERO makes exactly one attempt");
    service.close();
  }

  /**
   * A lock that bounds its own wait has its timed acquire run on the caller's thread; other locks on a worker
   * thread. Either way a provider that gives up early is asked again for the full wait, ZERO makes one attempt,
   * and close ends the wait with ServiceClosedException.
   */
  @Test
  void aLockThatBoundsItsOwnWaitIsAttemptedOnTheCallersThread() throws Exception {
    for (boolean bounds : new boolean[] {true, false}) {
      TestBackend.TestService s = backend.open(LeaseSettings.defaults(), Ticker.system());
      java.util.List<Thread> threads = new java.util.concurrent.CopyOnWriteArrayList<>();
      AbstractLock lock = new AbstractLock(s, "own-" + bounds) {
        @Override
        protected AbstractLease doAcquire(Deadline deadline) {
          threads.add(Thread.currentThread());
          return null; // gives up at once, whatever the deadline
        }

        @Override
        protected boolean boundsItsOwnWait() {
          return bounds;
        }
      };
      long start = System.nanoTime();
      assertTrue(lock.tryAcquire(Duration.ofMillis(100)).isEmpty());
      assertTrue(System.nanoTime() - start >= 100_000_000L, "returned early");
      assertTrue(threads.size() > 1, "asked again: " + threads.size());
      for (Thread t : threads) {
        assertEquals(bounds, t == Thread.currentThread(), "bounds=" + bounds + ", attempted on " + t);
      }
      threads.clear();
      assertTrue(lock.tryAcquire(Duration.ZERO).isEmpty());
      assertEquals(1, threads.size(), "ZERO makes exactly one attempt");

      CompletableFuture<Throwable> waiter = new CompletableFuture<>();
      Thread.ofPlatform().start(() -> {
        try {
          lock.tryAcquire(Duration.ofSeconds(30));
          waiter.complete(null);
        } catch (Throwable t) {
          waiter.complete(t);
        }
      });
      Thread.sleep(100);
      s.close();
      Throwable t = waiter.get(5, TimeUnit.SECONDS);
      assertTrue(t instanceof ServiceClosedException, String.valueOf(t));
    }
    service.close();
  }

  /** A provider that stamps a lease with the start of a long wait hands over a dead lease: it is retried. */
  @Test
  void leaseBornExpiredIsGivenBackAndRetried() throws Exception {
    java.util.concurrent.atomic.AtomicInteger attempts = new java.util.concurrent.atomic.AtomicInteger();
    TestBackend.TestService shortLeases = backend.open(LeaseSettings.defaults().withLeaseTime(Duration.ofMillis(200)),
        Ticker.system());
    long longAgo = System.nanoTime() - Duration.ofSeconds(1).toNanos();
    AbstractLock stale = new AbstractLock(shortLeases, "stale") {
      @Override
      protected AbstractLease doAcquire(Deadline deadline) {
        java.util.concurrent.Semaphore sem = backend.sem("stale");
        sem.acquireUninterruptibly();
        long sent = attempts.incrementAndGet() == 1 ? longAgo : System.nanoTime();
        return backend.new TestLease("stale", attempts.get(), shortLeases.settings(), shortLeases.ticker(), sent, sem);
      }
    };
    dev.tumbler.lock.Lease l = stale.tryAcquire(Duration.ofSeconds(5)).orElseThrow();
    assertTrue(l.isValid(), "the caller got a live lease");
    assertEquals(2, attempts.get());
    assertEquals(1, backend.releaseCalls.get(), "the dead one was given back");
    l.release();
    shortLeases.close();
    service.close();
  }

  @Test
  void waitIsNeverShorterThanAsked() throws Exception {
    Lease held = service.lock("a").acquire();
    long start = System.nanoTime();
    assertTrue(service.lock("a").tryAcquire(Duration.ofMillis(150)).isEmpty());
    assertTrue(System.nanoTime() - start >= 150_000_000L);
    held.release();
    service.close();
  }

  @Test
  @org.junit.jupiter.api.Timeout(60)
  void aTimedAcquireTheBackendLeavesUnansweredEndsAfterTheGraceAndALateGrantIsReleased() throws Exception {
    backend.acquireGate = new java.util.concurrent.CountDownLatch(1);
    for (Duration wait : new Duration[] {Duration.ZERO, Duration.ofMillis(300)}) {
      long t0 = System.nanoTime();
      java.util.Optional<Lease> l = service.lock("deaf").tryAcquire(wait);
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertTrue(l.isEmpty(), "granted without an answer");
      assertTrue(ms >= wait.toMillis() + AbstractLockService.ANSWER_GRACE_MILLIS - 20,
          "gave up before the grace: " + ms + " ms");
      // the bound under test is maxWait + grace; without it this call never returns (the gate stays shut)
      assertTrue(ms < wait.toMillis() + AbstractLockService.ANSWER_GRACE_MILLIS + 5000, "took " + ms + " ms");
    }
    CompletableFuture<Lease> async = service.lock("deaf").acquireAsync(Duration.ofMillis(100));
    java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
        () -> async.get(AbstractLockService.ANSWER_GRACE_MILLIS + 5000, TimeUnit.MILLISECONDS));
    assertTrue(e.getCause() instanceof dev.tumbler.lock.LockTimeoutException, String.valueOf(e.getCause()));
    assertEquals(0, backend.releaseCalls.get());
    backend.acquireGate.countDown(); // the three abandoned attempts are answered now: each may be granted
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while ((backend.fencing.get() == 0 || backend.releaseCalls.get() < backend.fencing.get())
        && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertTrue(backend.fencing.get() >= 1, "no late grant");
    assertEquals(backend.fencing.get(), backend.releaseCalls.get(), "a late grant was not given back");
    backend.acquireGate = null;
    Lease again = service.lock("deaf").tryAcquire(Duration.ofSeconds(5)).orElseThrow(
        () -> new AssertionError("the late grant was leaked"));
    again.release();
  }
  /**
   * The answer can arrive between the caller's last look and its giving up. It is then the caller's: returned,
   * not dropped, and the caller does not spin (before, it looped on the failed cancel forever at full CPU and
   * the lease was never handed over).
   */
  @Test
  @org.junit.jupiter.api.Timeout(value = 10, threadMode = org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD)
  void anAnswerArrivingAsTheGraceEndsIsTheCallers() throws Exception {
    Thread idle = Thread.ofVirtual().unstarted(() -> { });
    CompletableFuture<AbstractLease> granted = new CompletableFuture<>();
    AbstractLease lease = backend.new TestLease("late", 1, service.settings(), service.ticker(), System.nanoTime(),
        backend.sem("late"));
    granted.complete(lease);
    assertSame(lease, service.afterGrace(granted, idle), "a grant that came just now was dropped");

    CompletableFuture<AbstractLease> empty = CompletableFuture.completedFuture(null);
    assertNull(service.afterGrace(empty, idle));

    CompletableFuture<AbstractLease> failed = CompletableFuture.failedFuture(new IllegalStateException("backend"));
    java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
        () -> service.afterGrace(failed, idle));
    assertEquals("backend", e.getCause().getMessage());

    CompletableFuture<AbstractLease> pending = new CompletableFuture<>();
    Thread stuck = Thread.ofVirtual().start(() -> {
      try {
        Thread.sleep(Long.MAX_VALUE);
      } catch (InterruptedException expected) {
        // abandoned
      }
    });
    assertNull(service.afterGrace(pending, stuck), "nothing answered: nothing granted");
    assertTrue(pending.isCancelled());
    stuck.join(5000);
    assertFalse(stuck.isAlive(), "the abandoned attempt was not interrupted");
    service.close();
  }
}
