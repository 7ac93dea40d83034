package dev.tumbler.lock.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.LockTimeoutException;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** LockService's withLock, tryWithLock and runIfFree over the SPI test backend. */
class WithLockTest {
  private final TestBackend backend = new TestBackend();
  private final LockService a = backend.open(LeaseSettings.defaults(), Ticker.system());
  private final LockService b = backend.open(LeaseSettings.defaults(), Ticker.system());

  @AfterEach
  void close() {
    a.close();
    b.close();
  }

  @Test
  void returnsTheTaskValueAndShowsItTheLeaseAndItsToken() throws InterruptedException {
    AtomicReference<Lease> seen = new AtomicReference<>();
    long token = a.withLock("job", Duration.ofSeconds(1), lease -> {
      seen.set(lease);
      assertTrue(lease.isValid());
      assertEquals("job", lease.name());
      return lease.fencingToken();
    });
    assertEquals(backend.fencing.get(), token, "the token of the grant the task ran under");
    assertFalse(seen.get().isValid(), "released after the task");
    assertEquals(1, backend.releaseCalls.get());
    assertTrue(b.lock("job").tryAcquire(Duration.ZERO).orElseThrow().isValid(), "free for others");
  }

  @Test
  void releasesWhenTheTaskThrowsAndPassesTheExceptionOnUnchanged() {
    IOException boom = new IOException("disk full");
    AtomicReference<Lease> seen = new AtomicReference<>();
    IOException thrown = assertThrows(IOException.class, () -> a.withLock("job", Duration.ofSeconds(1), lease -> {
      seen.set(lease);
      throw boom;
    }));
    assertSame(boom, thrown);
    assertFalse(seen.get().isValid());
    assertEquals(1, backend.releaseCalls.get());
    IllegalStateException unchecked = assertThrows(IllegalStateException.class,
        () -> a.runIfFree("job", lease -> {
          throw new IllegalStateException("bug");
        }));
    assertEquals("bug", unchecked.getMessage());
    assertEquals(2, backend.releaseCalls.get());
  }

  @Test
  void waitsAtMostMaxWaitAndNamesTheLockWhenNotGranted() throws InterruptedException {
    try (Lease held = b.lock("job").acquire()) {
      AtomicBoolean ran = new AtomicBoolean();
      long start = System.nanoTime();
      LockTimeoutException e = assertThrows(LockTimeoutException.class,
          () -> a.withLock("job", Duration.ofMillis(200), lease -> ran.getAndSet(true)));
      long waitedMs = (System.nanoTime() - start) / 1_000_000;
      assertTrue(waitedMs >= 200, "gave up after " + waitedMs + "ms");
      assertFalse(ran.get());
      assertTrue(e.getMessage().contains("'job'") && e.getMessage().contains("test")
          && e.getMessage().contains("200ms"), e.getMessage());
      assertTrue(held.isValid());
    }
  }

  @Test
  void theSkipVariantsDoNotRunWhileTheLockIsHeldElsewhere() throws InterruptedException {
    AtomicBoolean ran = new AtomicBoolean();
    try (Lease held = b.lock("job").acquire()) {
      assertEquals(Optional.empty(), a.tryWithLock("job", lease -> ran.getAndSet(true)));
      assertFalse(a.runIfFree("job", lease -> ran.set(true)));
      assertTrue(held.isValid());
      assertEquals(Optional.empty(), a.tryWithLock("job", Duration.ofMillis(50), lease -> ran.getAndSet(true)));
    }
    assertFalse(ran.get());
    assertEquals(Optional.of("done"), a.tryWithLock("job", lease -> "done"));
    assertTrue(a.runIfFree("job", lease -> ran.set(true)));
    assertTrue(ran.get());
  }

  @Test
  void anInterruptedWaitThrowsAndDoesNotRunTheTask() throws InterruptedException {
    try (Lease held = b.lock("job").acquire()) {
      AtomicBoolean ran = new AtomicBoolean();
      Thread.currentThread().interrupt();
      assertThrows(InterruptedException.class, () -> a.withLock("job", Duration.ofSeconds(5), lease -> ran.getAndSet(true)));
      assertFalse(Thread.currentThread().isInterrupted(), "the interrupt is reported by the exception");
      assertFalse(ran.get());
      assertTrue(held.isValid());
    } finally {
      Thread.interrupted();
    }
  }

  @Test
  void badArgumentsAreNamed() {
    NullPointerException e = assertThrows(NullPointerException.class, () -> a.withLock("job", null, lease -> 1));
    assertEquals("maxWait", e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> a.withLock("job", Duration.ofMillis(-1), lease -> 1));
  }
}
