package dev.tumbler.lock.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * Background renewal and deadline enforcement. Tests that bound when something happens run on a ticker the
 * test moves, so a busy machine makes them slower, never wrong; the others use the real clock with short terms.
 */
class LeaseRenewerTest {
  private static final Duration T = Duration.ofMillis(300);
  private final TestBackend backend = new TestBackend();
  private final LeaseSettings settings = LeaseSettings.defaults().withLeaseTime(T);
  private TestBackend.TestService service = backend.open(settings, Ticker.system());

  @AfterEach
  void close() {
    backend.renewGate = null;
    service.close();
  }

  /**
   * Six terms on a ticker the test moves, {@code T/12} at a time: a renewal falls due every {@code T/3} and the
   * test waits for it before moving on, so a machine too busy to run the renewer promptly makes the test slower,
   * never wrong. (On the real clock this test lost the lease now and then: a stall of the JVM longer than the
   * {@code 5T/12} between a renewal's due time and the client's deadline, which no renewer can outlast.)
   */
  @Test
  void automaticRenewalKeepsTheLeaseAcrossManyTerms() throws Exception {
    ManualTicker ticker = new ManualTicker();
    AbstractLease l = acquireOn(ticker);
    Duration step = T.dividedBy(12);
    for (int i = 1; i <= 72; i++) {
      ticker.advance(step);
      if (ticker.read() - l.lastSentNanos() >= settings.renewIntervalNanos()) {
        awaitRenewalSentAt(l, ticker.read());
      } else {
        // a tick of the renewer's to look while nothing is due: a renewal now would come early (missed, not
        // misreported, when the machine is too busy to run the renewer meanwhile)
        Thread.sleep(T.dividedBy(24));
      }
      assertTrue(l.isValid(), "still valid after " + i + " × T/12");
      assertEquals(i / 4, backend.renewCalls.get(), "renewals after " + i + " × T/12: one per T/3, none early");
    }
    l.release();
  }

  /** A renewal noticed just before the client's deadline (the renewer was starved till then) still keeps it. */
  @Test
  void renewalNoticedJustBeforeTheDeadlineKeepsTheLease() throws Exception {
    ManualTicker ticker = new ManualTicker();
    AbstractLease l = acquireOn(ticker);
    ticker.advance(Duration.ofNanos(settings.trustedNanos() - 1));
    awaitRenewalSentAt(l, ticker.read());
    assertTrue(l.isValid());
    assertEquals(1, backend.renewCalls.get());
    l.release();
  }

  /** Reopens the service on {@code ticker} and acquires lock {@code a} there. */
  private AbstractLease acquireOn(ManualTicker ticker) throws Exception {
    service.close();
    service = backend.open(settings, ticker);
    return (AbstractLease) service.lock("a").acquire();
  }

  /** Waits until the backend has had {@code n} renewal calls: the ticker stands still meanwhile. */
  private void awaitCalls(int n) throws InterruptedException {
    await(() -> backend.renewCalls.get() >= n, () -> "fewer than " + n + " renewal calls: " + backend.renewCalls.get());
  }

  /** Waits until {@code l} was renewed by a request sent at {@code at}: the ticker stands still meanwhile. */
  private static void awaitRenewalSentAt(AbstractLease l, long at) throws InterruptedException {
    await(() -> {
      assertTrue(l.isValid(), "lost while a renewal was due: " + l.lostEvent());
      return l.lastSentNanos() == at;
    }, () -> "no renewal sent at the due time");
  }

  /** Polls {@code done} on the real clock, for 10 s at most: only so that a broken renewer ends the test. */
  private static void await(java.util.function.BooleanSupplier done, java.util.function.Supplier<String> failure)
      throws InterruptedException {
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!done.getAsBoolean()) {
      assertTrue(System.nanoTime() - giveUp < 0, failure);
      Thread.sleep(1);
    }
  }

  /**
   * Failing renewals are retried, and the lease is lost when the ticker reaches the client's deadline (3T/4 after
   * the acquisition was sent), not a moment before and without the ticker moving on towards the backend's T.
   */
  @Test
  void failingRenewalLosesTheLeaseAtTheClientDeadlineBeforeTheBackendTerm() throws Exception {
    ManualTicker ticker = new ManualTicker();
    AbstractLease l = acquireOn(ticker);
    long deadline = l.lastSentNanos() + settings.trustedNanos();
    backend.renewOutcome = null; // every renewal throws
    AtomicLong lostAt = new AtomicLong();
    AtomicReference<LeaseLostEvent> event = new AtomicReference<>();
    CountDownLatch lost = new CountDownLatch(1);
    l.onLost(e -> {
      lostAt.set(ticker.read());
      event.set(e);
      lost.countDown();
    });
    ticker.advance(Duration.ofNanos(settings.renewIntervalNanos()));
    awaitCalls(1); // the renewal due at T/3 fails
    // and is retried T/12 after it failed (when the renewer's catch reads the ticker: maybe after a step of the
    // test's, so the test walks on a little at a time until the retry, never past the deadline)
    Duration step = T.dividedBy(48);
    while (backend.renewCalls.get() < 2 && ticker.read() + step.toNanos() < deadline) {
      ticker.advance(step);
      Thread.sleep(T.dividedBy(24).toMillis());
    }
    assertTrue(backend.renewCalls.get() >= 2, "retried before the deadline: " + backend.renewCalls.get());
    ticker.advance(Duration.ofNanos(deadline - 1 - ticker.read()));
    Thread.sleep(T.dividedBy(12).toMillis()); // ticks of the renewer's, a moment before the deadline
    assertEquals(1, lost.getCount(), "lost before the client's deadline");
    assertTrue(l.isValid());
    ticker.advance(Duration.ofNanos(1));
    assertTrue(lost.await(10, TimeUnit.SECONDS), "the renewer fires the listener without anyone calling isValid");
    assertEquals(deadline, lostAt.get(), "lost at the client's deadline, with the backend's term T still ahead");
    assertEquals(LeaseLostEvent.Reason.EXPIRED, event.get().reason());
    assertFalse(l.isValid());
  }

  /** A renewal call that hangs past the client's deadline does not keep the lease, nor revive it when it returns. */
  @Test
  void hangingRenewalCannotDelayTheLoss() throws Exception {
    ManualTicker ticker = new ManualTicker();
    AbstractLease l = acquireOn(ticker);
    long deadline = l.lastSentNanos() + settings.trustedNanos();
    backend.renewGate = new CountDownLatch(1);
    CountDownLatch lost = new CountDownLatch(1);
    l.onLost(e -> lost.countDown());
    ticker.advance(Duration.ofNanos(settings.renewIntervalNanos()));
    awaitCalls(1); // the renewal is in the backend, and hangs there
    ticker.advance(Duration.ofNanos(deadline - ticker.read()));
    assertTrue(lost.await(10, TimeUnit.SECONDS), "lost at the deadline while the renewal call still hangs");
    backend.renewGate.countDown(); // the late success must not revive it
    Thread.sleep(50);
    assertFalse(l.isValid());
  }

  @Test
  void renewalRefusedByTheBackendRevokesAtOnce() throws Exception {
    Lease l = service.lock("a").acquire();
    backend.renewOutcome = false;
    AtomicReference<LeaseLostEvent> event = new AtomicReference<>();
    CountDownLatch lost = new CountDownLatch(1);
    l.onLost(e -> {
      event.set(e);
      lost.countDown();
    });
    assertTrue(lost.await(2, TimeUnit.SECONDS));
    assertEquals(LeaseLostEvent.Reason.REVOKED, event.get().reason());
  }

  @Test
  void pausedRenewalsLetTheLeaseExpireAndResumeRenewsNewLeases() throws Exception {
    ManualTicker ticker = new ManualTicker();
    AbstractLease l = acquireOn(ticker);
    service.renewer().pause();
    CountDownLatch lost = new CountDownLatch(1);
    l.onLost(e -> lost.countDown());
    ticker.advance(Duration.ofNanos(settings.renewIntervalNanos()));
    Thread.sleep(T.dividedBy(12).toMillis()); // renewer ticks while a renewal is due, and paused
    ticker.advance(Duration.ofNanos(settings.trustedNanos() - settings.renewIntervalNanos()));
    assertTrue(lost.await(10, TimeUnit.SECONDS));
    assertEquals(0, backend.renewCalls.get());
    l.release();
    service.renewer().resume();
    AbstractLease m = (AbstractLease) service.lock("b").acquire();
    for (int i = 1; i <= 24; i++) { // two terms, T/12 at a time: a renewal every T/3
      ticker.advance(T.dividedBy(12));
      if (ticker.read() - m.lastSentNanos() >= settings.renewIntervalNanos()) {
        awaitRenewalSentAt(m, ticker.read());
      }
      assertTrue(m.isValid(), "renewed again after resume, at " + i + " × T/12");
    }
    assertEquals(6, backend.renewCalls.get());
    m.release();
  }

  /**
   * With {@code renew=manual} nothing renews by itself: the holder's own renewal moves the deadline on, and the
   * lease is lost at the new deadline.
   */
  @Test
  void manualModeOnlyWatchesTheDeadline() throws Exception {
    ManualTicker ticker = new ManualTicker();
    service.close();
    service = backend.open(new LeaseSettings(T, 0.75, LeaseSettings.Renew.MANUAL, ""), ticker);
    AbstractLease l = (AbstractLease) service.lock("a").acquire();
    ticker.advance(T.dividedBy(2));
    Thread.sleep(T.dividedBy(12).toMillis()); // renewer ticks past the automatic renewal's due time: none
    assertEquals(0, backend.renewCalls.get());
    l.renew();
    long deadline = ticker.read() + l.settings().trustedNanos();
    CountDownLatch lost = new CountDownLatch(1);
    l.onLost(e -> lost.countDown());
    ticker.advance(Duration.ofNanos(deadline - 1 - ticker.read())); // past the first deadline, before the new one
    Thread.sleep(T.dividedBy(12).toMillis());
    assertEquals(1, lost.getCount(), "the holder's renewal moved the deadline on");
    assertTrue(l.isValid());
    ticker.advance(Duration.ofNanos(1));
    assertTrue(lost.await(10, TimeUnit.SECONDS));
    assertEquals(1, backend.renewCalls.get(), "only the explicit renewal");
  }

  @Test
  void releasedLeasesAreNoLongerWatched() throws Exception {
    Lease l = service.lock("a").acquire();
    assertEquals(1, service.renewer().watched());
    l.release();
    Thread.sleep(20);
    assertEquals(0, service.renewer().watched());
    int calls = backend.renewCalls.get();
    Thread.sleep(T.toMillis());
    assertEquals(calls, backend.renewCalls.get(), "no renewal after release");
  }

  /** Renewal failing while the holder releases: the release wins or the loss does, never both. */
  @RepeatedTest(20)
  void renewalFailingWhileTheHolderReleases() throws Exception {
    Lease l = service.lock("a").acquire();
    backend.renewOutcome = null;
    AtomicInteger fired = new AtomicInteger();
    l.onLost(e -> fired.incrementAndGet());
    Thread.sleep(T.toMillis() * 3 / 4 - 5 + (System.nanoTime() % 10));
    l.release();
    Thread.sleep(T.toMillis() / 2);
    assertEquals(1, backend.releaseCalls.get());
    assertTrue(fired.get() <= 1);
    assertFalse(l.isValid());
    // the lock is free again: the backend release happened exactly once
    assertTrue(service.lock("a").tryAcquire(Duration.ZERO).isPresent());
  }
}
