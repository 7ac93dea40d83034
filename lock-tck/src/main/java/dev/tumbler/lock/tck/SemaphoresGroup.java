package dev.tumbler.lock.tck;

import static dev.tumbler.lock.tck.LockTck.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.Semaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The TCK group "semaphore" ({@link LockTck.Semaphores}; needs: SEMAPHORE). It checks: never more permits out than
 * the maximum (3 services × 3 threads); permits come back on release and on close(); a multi-permit waiter; wait
 * honoured.
 */
abstract class SemaphoresGroup extends TckGroup {

  SemaphoresGroup(LockTck tck) {
    super(tck);
  }

  @Test
  @DisplayName("availablePermits() counts the permits not out, through every handle of the name")
  void availablePermitsCounted() throws InterruptedException {
    String n = name("sem-available");
    Semaphore a = open().semaphore(n, 3);
    Semaphore b = open().semaphore(n, 3);
    assertEquals(3, b.availablePermits(), "availablePermits() of a new semaphore");
    Lease two = held(a.tryAcquire(2, GRANT_WAIT), "free permits were refused");
    eventually(SLACK, "availablePermits() did not fall to 1 with 2 of 3 out", () -> b.availablePermits() == 1);
    // "as last known; may be stale the moment it returns": the holder's own handle too (seen once on a native target
    // in a loaded build: 3 from the holder's handle just after the other handle had seen 1)
    eventually(SLACK, "availablePermits() of the holder's handle did not fall to 1 with 2 of 3 out",
        () -> a.availablePermits() == 1);
    two.release();
    eventually(SLACK, "availablePermits() did not come back to 3", () -> b.availablePermits() == 3);
  }

  @Test
  @Requires(value = Capability.LEASE_EXPIRY, anyFault = {FaultInjector.Fault.CUT_OFF_CLIENT,
      FaultInjector.Fault.PAUSE_RENEWALS})
  @DisplayName("the permits of a holder that is cut off come back when its lease expires")
  void permitsComeBackOnExpiry() throws Exception {
    String n = name("sem-expiry");
    LockService sa = open();
    Semaphore a = sa.semaphore(n, 2);
    Semaphore b = open().semaphore(n, 2);
    Lease l = held(a.tryAcquire(2, GRANT_WAIT), "free permits were refused");
    FaultInjector.Fault how = isolation();
    isolate(how, sa);
    try {
      held(b.tryAcquire(2, expiryBound()), "the permits of a cut-off holder never came back (" + how + ")").release();
      assertFalse(l.isValid(), "the cut-off holder still trusts its permits after they were granted again");
    } finally {
      restore(how, sa);
    }
  }

  @Test
  @DisplayName("an interrupted acquire throws InterruptedException and holds nothing")
  void interruptHoldsNothing() throws Exception {
    String n = name("sem-interrupt");
    Semaphore a = open().semaphore(n, 2);
    Semaphore b = open().semaphore(n, 2);
    Lease one = held(a.tryAcquire(1, GRANT_WAIT), "a free permit was refused");
    Job<Lease> waiter = start("sem-interrupted", () -> b.acquire(2));
    Job<Optional<Lease>> timed = start("sem-interrupted-try", () -> b.tryAcquire(2, GRANT_WAIT));
    Thread.sleep(200);
    waiter.thread().interrupt();
    timed.thread().interrupt();
    Throwable t = waiter.failure(SLACK);
    assertTrue(t instanceof InterruptedException, "an interrupted semaphore acquire ended with " + t);
    Throwable tt = timed.failure(SLACK);
    assertTrue(tt instanceof InterruptedException, "an interrupted semaphore tryAcquire(2, wait) ended with " + tt);
    one.release();
    held(a.tryAcquire(2, releaseBound()), "the interrupted acquire left permits out").release();
  }

  @Test
  @DisplayName("never more permits out than the maximum")
  void permitsNeverExceeded() throws Exception {
    String n = name("sem");
    int max = 3;
    AtomicInteger inUse = new AtomicInteger();
    AtomicInteger peak = new AtomicInteger();
    List<Job<Void>> jobs = new ArrayList<>();
    for (int s = 0; s < 3; s++) {
      Semaphore sem = open().semaphore(n, max);
      assertEquals(max, sem.maxPermits());
      assertEquals(n, sem.name());
      for (int t = 0; t < 3; t++) {
        jobs.add(start("permits-" + s + "-" + t, () -> {
          for (int r = 0; r < 6; r++) {
            int k = 1 + (r % 2);
            Lease l = held(sem.tryAcquire(k, GRANT_WAIT.multipliedBy(2)), "no permits within the wait");
            assertEquals(k, l.permits(), "lease.permits()");
            peak.accumulateAndGet(inUse.addAndGet(k), Math::max);
            Thread.sleep(1);
            inUse.addAndGet(-k);
            l.release();
          }
          return null;
        }));
      }
    }
    for (Job<Void> j : jobs) {
      j.get(Duration.ofSeconds(90));
    }
    assertTrue(peak.get() <= max, "up to " + peak.get() + " permits were out at once; the maximum is " + max);
    assertEquals(0, inUse.get());
  }

  @Test
  @DisplayName("permits are counted, and come back on release")
  void permitsComeBackOnRelease() throws InterruptedException {
    String n = name("sem-release");
    Semaphore a = open().semaphore(n, 3);
    Semaphore b = open().semaphore(n, 3);
    Lease two = held(a.tryAcquire(2, GRANT_WAIT), "2 of 3 free permits were refused");
    Lease one = held(b.tryAcquire(1, Duration.ZERO), "the third permit was refused");
    long z = System.nanoTime();
    assertTrue(b.tryAcquire(1, Duration.ZERO).isEmpty(), "a fourth permit of 3 was granted");
    assertTrue(millisSince(z) < SLACK.toMillis(), "tryAcquire(1, ZERO) waited " + millisSince(z) + " ms: ZERO tries once");
    long t0 = System.nanoTime();
    assertTrue(b.tryAcquire(1, SHORT_WAIT).isEmpty(), "a permit was granted with all out");
    assertWaited(t0, SHORT_WAIT, "semaphore tryAcquire(" + SHORT_WAIT.toMillis() + "ms)");
    two.release();
    two.release();
    Lease again = held(b.tryAcquire(2, releaseBound()), "released permits did not come back");
    assertTrue(a.tryAcquire(1, Duration.ZERO).isEmpty(), "a permit beyond the maximum was granted after a release");
    again.release();
    one.release();
    Lease all = held(a.tryAcquire(3, releaseBound()), "all permits did not come back");
    all.release();
    eventually(SLACK, "availablePermits() did not come back to the maximum", () -> a.availablePermits() == 3);
  }

  @Test
  @DisplayName("closing a service gives its permits back")
  void permitsComeBackOnClose() throws InterruptedException {
    String n = name("sem-close");
    LockService sa = open();
    Semaphore a = sa.semaphore(n, 3);
    Semaphore b = open().semaphore(n, 3);
    Lease l = held(a.tryAcquire(2, GRANT_WAIT), "free permits were refused");
    assertTrue(b.tryAcquire(2, Duration.ZERO).isEmpty(), "2 permits granted with only 1 free");
    sa.close();
    assertFalse(l.isValid(), "a lease is still valid after its service was closed");
    held(b.tryAcquire(3, releaseBound()), "the closed service's permits did not come back (leaked on close)").release();
  }

  @Test
  @DisplayName("a waiter for several permits is granted when enough come back")
  void waiterGranted() throws Exception {
    String n = name("sem-wait");
    Semaphore a = open().semaphore(n, 2);
    Semaphore b = open().semaphore(n, 2);
    Lease l1 = a.acquire(1);
    Lease l2 = a.acquire(1);
    Job<Lease> waiter = start("sem-waiter", () -> b.acquire(2));
    Thread.sleep(150);
    l1.release();
    Thread.sleep(150);
    assertFalse(waiter.result().isDone(), "2 permits were granted with 1 free");
    l2.release();
    Lease both = waiter.get(GRANT_WAIT);
    assertEquals(2, both.permits());
    both.release();
  }
}
