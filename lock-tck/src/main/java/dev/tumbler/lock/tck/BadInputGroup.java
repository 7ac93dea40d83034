package dev.tumbler.lock.tck;

import static dev.tumbler.lock.tck.LockTck.*;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ReadWriteLock;
import dev.tumbler.lock.Semaphore;
import java.time.Duration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The TCK group "bad input" ({@link LockTck.BadInput}; needs: —). It checks: null/negative waits, acquireAsync
 * (thrown or failed future), onLost(null), unwrap(null), semaphore maxPermits/permits bounds; a huge wait is no
 * limit, not an overflow.
 */
abstract class BadInputGroup extends TckGroup {

  BadInputGroup(LockTck tck) {
    super(tck);
  }

  @Test
  @DisplayName("lock arguments are checked")
  void lockArguments() throws Exception {
    LockService s = open();
    Lock l = s.lock(name("args"));
    assertRejects(NullPointerException.class, "wait", "tryAcquire(null)", () -> l.tryAcquire(null));
    assertRejects(IllegalArgumentException.class, "wait", "tryAcquire(-1ms)", () -> l.tryAcquire(Duration.ofMillis(-1)));
    assertRejectsAsync(NullPointerException.class, "wait", "acquireAsync(null)", () -> l.acquireAsync(null));
    assertRejectsAsync(IllegalArgumentException.class, "wait", "acquireAsync(-1ms)",
        () -> l.acquireAsync(Duration.ofMillis(-1)));
    try (Lease lease = l.acquire()) {
      assertRejects(NullPointerException.class, "listener", "onLost(null)", () -> lease.onLost(null));
    }
    assertThrows(NullPointerException.class, () -> s.unwrap(null), "unwrap(null)");
    // a huge wait is no wait limit, not an overflow
    try (Lease lease = held(l.tryAcquire(Duration.ofSeconds(Long.MAX_VALUE)), "tryAcquire(huge) failed on a free lock")) {
      assertTrue(lease.isValid());
    }
  }

  @Test
  @Requires(Capability.SEMAPHORE)
  @DisplayName("semaphore arguments are checked")
  void semaphoreArguments() {
    LockService s = open();
    String n = name("sem-args");
    assertRejects(IllegalArgumentException.class, "maxPermits", "semaphore(n, 0)", () -> s.semaphore(n, 0));
    assertRejects(IllegalArgumentException.class, "maxPermits", "semaphore(n, -1)", () -> s.semaphore(n, -1));
    Semaphore sem = s.semaphore(n, 2);
    assertRejects(IllegalArgumentException.class, "permits", "acquire(0)", () -> sem.acquire(0));
    assertRejects(IllegalArgumentException.class, "permits", "acquire(3) of 2", () -> sem.acquire(3));
    assertRejects(IllegalArgumentException.class, "permits", "tryAcquire(-1, ZERO)", () -> sem.tryAcquire(-1, Duration.ZERO));
    assertRejects(IllegalArgumentException.class, "permits", "tryAcquire(3, ZERO) of 2", () -> sem.tryAcquire(3, Duration.ZERO));
    assertRejects(NullPointerException.class, "wait", "tryAcquire(1, null)", () -> sem.tryAcquire(1, null));
    assertRejects(IllegalArgumentException.class, "wait", "tryAcquire(1, -1ms)", () -> sem.tryAcquire(1, Duration.ofMillis(-1)));
  }

  @Test
  @Requires(Capability.READ_WRITE)
  @DisplayName("read/write lock arguments are checked")
  void readWriteArguments() {
    ReadWriteLock rw = open().readWriteLock(name("rw-args"));
    assertRejects(IllegalArgumentException.class, "wait", "readLock().tryAcquire(-1ms)",
        () -> rw.readLock().tryAcquire(Duration.ofMillis(-1)));
    assertRejects(NullPointerException.class, "wait", "writeLock().tryAcquire(null)", () -> rw.writeLock().tryAcquire(null));
  }
}
