package dev.tumbler.lock.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LeaseLostException;
import dev.tumbler.lock.ServiceUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/** The lease state machine, on a manual clock. */
class AbstractLeaseTest {
  private final ManualTicker ticker = new ManualTicker();
  private final TestBackend backend = new TestBackend();
  private final LeaseSettings tenSeconds = LeaseSettings.defaults().withLeaseTime(Duration.ofSeconds(10));

  private TestBackend.TestLease lease(LeaseSettings s) {
    java.util.concurrent.Semaphore sem = backend.sem("x");
    sem.acquireUninterruptibly();
    return backend.new TestLease("x", 7, s, ticker, ticker.read(), sem);
  }

  @Test
  void validUntilSentPlusTermTimesSafety() {
    TestBackend.TestLease l = lease(tenSeconds);
    assertTrue(l.isValid());
    assertEquals(Duration.ofMillis(7500), l.remaining());
    ticker.advance(Duration.ofMillis(7499));
    assertTrue(l.isValid());
    ticker.advance(Duration.ofMillis(1));
    assertFalse(l.isValid(), "valid at sent + T x 3/4");
    assertEquals(Duration.ZERO, l.remaining());
    assertEquals(LeaseLostEvent.Reason.EXPIRED, l.lostEvent().orElseThrow().reason());
  }

  @Test
  void expiryFiresListenersOnceEachInOrderAndAThrowingOneDoesNotStopTheOthers() {
    TestBackend.TestLease l = lease(tenSeconds);
    List<String> calls = new ArrayList<>();
    l.onLost(e -> calls.add("a:" + e.reason()));
    l.onLost(e -> {
      calls.add("b");
      throw new IllegalStateException("listener bug");
    });
    l.onLost(e -> calls.add("c:" + e.fencingToken()));
    ticker.advance(Duration.ofSeconds(8));
    assertFalse(l.isValid());
    assertFalse(l.isValid());
    assertFalse(l.markLost(LeaseLostEvent.Reason.REVOKED, "again", null), "a lost lease cannot be lost twice");
    assertEquals(List.of("a:EXPIRED", "b", "c:7"), calls);
  }

  @Test
  void listenerAddedAfterLossRunsAtOnce() {
    TestBackend.TestLease l = lease(tenSeconds);
    l.markLost(LeaseLostEvent.Reason.CONNECTION_LOST, "cut", null);
    AtomicInteger calls = new AtomicInteger();
    l.onLost(e -> calls.incrementAndGet());
    assertEquals(1, calls.get());
  }

  @Test
  void releaseFiresNoListenerAndCallsTheBackendOnce() {
    TestBackend.TestLease l = lease(tenSeconds);
    AtomicInteger calls = new AtomicInteger();
    l.onLost(e -> calls.incrementAndGet());
    l.release();
    l.close();
    l.release();
    assertFalse(l.isValid());
    assertEquals(0, calls.get());
    assertEquals(1, backend.releaseCalls.get());
    assertFalse(l.markLost(LeaseLostEvent.Reason.REVOKED, "late", null), "released is final");
    assertEquals(0, calls.get());
  }

  /** The contract: a listener is not called when the holder releases; one added after the release is taken, and never called. */
  @Test
  void aListenerAddedAfterTheReleaseIsTakenAndNeverCalled() {
    TestBackend.TestLease l = lease(tenSeconds);
    l.release();
    AtomicInteger calls = new AtomicInteger();
    assertEquals(l, l.onLost(e -> calls.incrementAndGet()));
    assertFalse(l.markLost(LeaseLostEvent.Reason.REVOKED, "late", null));
    ticker.advance(Duration.ofSeconds(20));
    assertFalse(l.isValid());
    assertEquals(0, calls.get());
  }

  /** A release racing the lost listeners gives the lease back only once they have all run. */
  @Test
  void releaseFromAnotherThreadWaitsForTheLostListeners() throws Exception {
    TestBackend.TestLease l = lease(tenSeconds);
    java.util.concurrent.CountDownLatch inFirst = new java.util.concurrent.CountDownLatch(1);
    java.util.concurrent.CountDownLatch letGo = new java.util.concurrent.CountDownLatch(1);
    java.util.List<String> order = new java.util.concurrent.CopyOnWriteArrayList<>();
    l.onLost(e -> {
      inFirst.countDown();
      try {
        letGo.await();
      } catch (InterruptedException x) {
        Thread.currentThread().interrupt();
      }
      order.add("first listener");
    });
    l.onLost(e -> order.add("second listener"));
    Thread loser = Thread.ofPlatform().start(() -> l.markLost(LeaseLostEvent.Reason.EXPIRED, "test", null));
    inFirst.await();
    Thread releaser = Thread.ofPlatform().start(() -> {
      l.release();
      order.add("released: " + backend.releaseCalls.get());
    });
    Thread.sleep(200);
    assertEquals(0, backend.releaseCalls.get(), "the lease was given back while its lost listeners ran");
    letGo.countDown();
    loser.join(5000);
    releaser.join(5000);
    assertEquals(java.util.List.of("first listener", "second listener", "released: 1"), order);
  }

  @Test
  void releaseOfALostLeaseStillCleansUpTheBackendOnce() {
    TestBackend.TestLease l = lease(tenSeconds);
    l.markLost(LeaseLostEvent.Reason.CONNECTION_LOST, "cut", null);
    l.release();
    l.release();
    assertEquals(1, backend.releaseCalls.get());
    assertTrue(l.isLost());
  }

  @Test
  void renewExtendsFromTheMomentTheRequestWasSent() {
    TestBackend.TestLease l = lease(tenSeconds);
    ticker.advance(Duration.ofSeconds(5));
    l.renew();
    assertEquals(Duration.ofMillis(7500), l.remaining());
    assertEquals(1, backend.renewCalls.get());
  }

  @Test
  void lateSuccessCannotReviveAnExpiredLease() {
    TestBackend.TestLease l = lease(tenSeconds);
    long sent = ticker.read();
    ticker.advance(Duration.ofSeconds(8));
    assertFalse(l.extend(sent + Duration.ofSeconds(7).toNanos()));
    assertFalse(l.isValid());
  }

  @Test
  void extendNeverShortensValidity() {
    TestBackend.TestLease l = lease(tenSeconds);
    ticker.advance(Duration.ofSeconds(1));
    long before = l.validUntilNanos();
    assertTrue(l.extend(ticker.read() - Duration.ofSeconds(5).toNanos()));
    assertEquals(before, l.validUntilNanos());
  }

  @Test
  void renewRefusedByBackendIsRevoked() {
    TestBackend.TestLease l = lease(tenSeconds);
    backend.renewOutcome = false;
    assertThrows(LeaseLostException.class, l::renew);
    assertEquals(LeaseLostEvent.Reason.REVOKED, l.lostEvent().orElseThrow().reason());
  }

  @Test
  void renewThatCannotReachTheBackendKeepsTheLeaseUntilItsDeadline() {
    TestBackend.TestLease l = lease(tenSeconds);
    backend.renewOutcome = null;
    assertThrows(ServiceUnavailableException.class, l::renew);
    assertTrue(l.isValid());
  }

  @Test
  void renewOfAReleasedLeaseThrows() {
    TestBackend.TestLease l = lease(tenSeconds);
    l.release();
    LeaseLostException e = assertThrows(LeaseLostException.class, l::renew);
    assertTrue(e.getMessage().contains("released"), e.getMessage());
  }

  @Test
  void unboundedLeaseNeverExpires() {
    TestBackend.TestLease l = lease(LeaseSettings.unbounded(""));
    ticker.advance(Duration.ofDays(365));
    assertTrue(l.isValid());
    assertTrue(l.remaining().compareTo(Duration.ofDays(365 * 1000)) > 0);
  }

  /** Release racing expiry: exactly one outcome, listeners at most once, backend release once. */
  @RepeatedTest(200)
  void releaseRacingLoss() throws InterruptedException {
    TestBackend.TestLease l = lease(tenSeconds);
    AtomicInteger fired = new AtomicInteger();
    l.onLost(e -> fired.incrementAndGet());
    CountDownLatch go = new CountDownLatch(1);
    Thread a = Thread.ofPlatform().start(() -> {
      await(go);
      l.release();
    });
    Thread b = Thread.ofPlatform().start(() -> {
      await(go);
      l.markLost(LeaseLostEvent.Reason.EXPIRED, "race", null);
    });
    go.countDown();
    a.join();
    b.join();
    assertEquals(1, backend.releaseCalls.get());
    assertFalse(l.isValid());
    assertEquals(l.isLost() ? 1 : 0, fired.get());
  }

  static void await(CountDownLatch l) {
    try {
      l.await();
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }
}
