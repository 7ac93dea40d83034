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

/** Background renewal and deadline enforcement, on the real clock with short terms. */
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

  /** Waits until {@code l} was renewed by a request sent at {@code at}: the ticker stands still meanwhile. */
  private static void awaitRenewalSentAt(AbstractLease l, long at) throws InterruptedException {
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10); // only so that a broken renewer ends the test
    while (l.lastSentNanos() != at) {
      assertTrue(l.isValid(), "lost while a renewal was due: " + l.lostEvent());
      assertTrue(System.nanoTime() - giveUp < 0, "no renewal sent at the due time");
      Thread.sleep(1);
    }
  }

  @Test
  void failingRenewalLosesTheLeaseAtTheClientDeadlineBeforeTheBackendTerm() throws Exception {
    long sent = System.nanoTime();
    Lease l = service.lock("a").acquire();
    backend.renewOutcome = null; // every renewal throws
    AtomicLong lostAt = new AtomicLong();
    AtomicReference<LeaseLostEvent> event = new AtomicReference<>();
    CountDownLatch lost = new CountDownLatch(1);
    l.onLost(e -> {
      lostAt.set(System.nanoTime());
      event.set(e);
      lost.countDown();
    });
    assertTrue(lost.await(5, TimeUnit.SECONDS), "the renewer fires the listener without anyone calling isValid");
    long elapsed = lostAt.get() - sent;
    assertTrue(elapsed >= T.toNanos() * 3 / 4 - 1_000_000, "not before sent + 3T/4: " + elapsed);
    assertTrue(elapsed < T.toNanos(), "before the backend's term ends: " + elapsed);
    assertEquals(LeaseLostEvent.Reason.EXPIRED, event.get().reason());
    assertTrue(backend.renewCalls.get() >= 2, "retried: " + backend.renewCalls.get());
    assertFalse(l.isValid());
  }

  @Test
  void hangingRenewalCannotDelayTheLoss() throws Exception {
    Lease l = service.lock("a").acquire();
    backend.renewGate = new CountDownLatch(1);
    CountDownLatch lost = new CountDownLatch(1);
    l.onLost(e -> lost.countDown());
    long start = System.nanoTime();
    assertTrue(lost.await(T.toMillis() * 3, TimeUnit.MILLISECONDS), "lost while the renewal call still hangs");
    assertTrue(System.nanoTime() - start < T.toNanos());
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
    service.renewer().pause();
    Lease l = service.lock("a").acquire();
    CountDownLatch lost = new CountDownLatch(1);
    l.onLost(e -> lost.countDown());
    assertTrue(lost.await(2, TimeUnit.SECONDS));
    assertEquals(0, backend.renewCalls.get());
    l.release();
    service.renewer().resume();
    Lease m = service.lock("b").acquire();
    Thread.sleep(T.toMillis() * 2);
    assertTrue(m.isValid());
    m.release();
  }

  @Test
  void manualModeOnlyWatchesTheDeadline() throws Exception {
    service.close();
    service = backend.open(new LeaseSettings(T, 0.75, LeaseSettings.Renew.MANUAL, ""), Ticker.system());
    Lease l = service.lock("a").acquire();
    Thread.sleep(T.toMillis() / 2);
    l.renew();
    CountDownLatch lost = new CountDownLatch(1);
    l.onLost(e -> lost.countDown());
    assertTrue(lost.await(2, TimeUnit.SECONDS));
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
