package dev.tumbler.lock.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.LockTimeoutException;
import dev.tumbler.lock.ReadWriteLock;
import dev.tumbler.lock.Semaphore;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The meters against the native provider's embedded node ({@code lock:native:local}), on a mock clock. */
class MeteredLockServiceTest {
  private final MockClock clock = new MockClock();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
  private final LockService raw = LockProviders.connect("lock:native:local");
  private final MeteredLockService locks = MeteredLockService.of(raw, registry);
  // every service on lock:native:local shares its locks: a name per test keeps the tests apart
  private final String name = "metered-" + UUID.randomUUID();

  @AfterEach
  void close() {
    locks.close();
  }

  private double acquires(String kind, String outcome) {
    var c = registry.find(MeteredLockService.ACQUIRE)
        .tags("provider", "native", "kind", kind, "outcome", outcome).counter();
    return c == null ? 0 : c.count();
  }

  private double active(String kind) {
    var g = registry.find(MeteredLockService.ACTIVE).tags("provider", "native", "kind", kind).gauge();
    return g == null ? 0 : g.value();
  }

  @Test
  void acquireTimeoutAndReleaseAreRecorded() throws Exception {
    Lock lock = locks.lock(name);
    Lease lease = lock.acquire();
    assertEquals(1, acquires("lock", "acquired"));
    assertEquals(1, active("lock"));

    clock.add(Duration.ofMillis(250));
    assertEquals(Optional.empty(), lock.tryAcquire(Duration.ZERO));
    assertEquals(1, acquires("lock", "timeout"));
    var waitedOut = registry.get(MeteredLockService.WAIT).tags("kind", "lock", "outcome", "timeout").timer();
    assertEquals(1, waitedOut.count());

    clock.add(Duration.ofSeconds(2));
    lease.release();
    lease.release(); // idempotent: the hold is recorded once
    assertEquals(0, active("lock"));
    var held = registry.get(MeteredLockService.HELD).tags("provider", "native", "kind", "lock", "end", "released").timer();
    assertEquals(1, held.count());
    assertEquals(2250, held.totalTime(TimeUnit.MILLISECONDS), 0.001);
    assertNull(registry.find(MeteredLockService.LOST).counter());
    // no lock names as tags unless asked for
    assertTrue(registry.getMeters().stream().allMatch(m -> m.getId().getTag("name") == null));
  }

  @Test
  void aServiceClosedUnderAHeldLeaseCountsALoss() throws Exception {
    Lease lease = locks.lock(name).acquire();
    clock.add(Duration.ofSeconds(1));
    locks.close();
    assertFalse(lease.isValid());
    var lost = registry.get(MeteredLockService.LOST).tags("kind", "lock", "reason", "service_closed").counter();
    assertEquals(1, lost.count());
    var held = registry.get(MeteredLockService.HELD).tags("kind", "lock", "end", "lost").timer();
    assertEquals(1, held.count());
    assertEquals(1000, held.totalTime(TimeUnit.MILLISECONDS), 0.001);
    lease.release(); // after the loss: nothing more is recorded
    assertEquals(1, held.count());
    assertNull(registry.find(MeteredLockService.HELD).tags("end", "released").timer());
    assertEquals(0, active("lock"));
  }

  @Test
  void anInterruptedWaitAndATimedOutFutureAreRecorded() throws Exception {
    try (LockService other = LockProviders.connect("lock:native:local"); Lease held = other.lock(name).acquire()) {
      Lock lock = locks.lock(name);
      Thread.currentThread().interrupt();
      assertThrows(InterruptedException.class, lock::acquire);
      assertEquals(1, acquires("lock", "interrupted"));

      var failure = assertThrows(ExecutionException.class,
          () -> lock.acquireAsync(Duration.ofMillis(50)).get(10, TimeUnit.SECONDS));
      assertInstanceOf(LockTimeoutException.class, failure.getCause());
      assertEquals(1, acquires("lock", "timeout"));
      assertTrue(held.isValid());
    }
    Lease later = locks.lock(name).acquireAsync(Duration.ofSeconds(10)).get(10, TimeUnit.SECONDS);
    assertEquals(1, acquires("lock", "acquired"));
    later.close();
    assertEquals(0, active("lock"));
  }

  @Test
  void readWriteSemaphoreAndJavaLockAreMeteredByKind() throws Exception {
    // the embedded node runs Lamport (mutex only): one-node in-memory clusters of the algorithms that have the others
    try (LockService agent = MeteredLockService.of(
            LockProviders.connect("lock:native:mem/" + name + "-agent?node=a&algorithm=agent"), registry);
        LockService buckets = MeteredLockService.of(
            LockProviders.connect("lock:native:mem/" + name + "-buckets?node=a&algorithm=buckets"), registry)) {
      readWriteAndSemaphore(agent, buckets);
    }
    javaLock();
  }

  private void readWriteAndSemaphore(LockService agent, LockService buckets) throws Exception {
    ReadWriteLock rw = agent.readWriteLock(name + "-rw");
    try (Lease r1 = rw.readLock().acquire(); Lease r2 = rw.readLock().acquire()) {
      assertEquals(2, active("read"));
      assertEquals(Optional.empty(), rw.writeLock().tryAcquire(Duration.ZERO));
    }
    assertEquals(2, acquires("read", "acquired"));
    assertEquals(1, acquires("write", "timeout"));

    Semaphore s = buckets.semaphore(name + "-s", 3);
    try (Lease two = s.acquire(2)) {
      assertEquals(2, two.permits());
      assertEquals(Optional.empty(), s.tryAcquire(2, Duration.ZERO));
      assertEquals(1, active("semaphore"));
    }
    assertEquals(1, acquires("semaphore", "acquired"));
    assertEquals(1, acquires("semaphore", "timeout"));
  }

  private void javaLock() {

    Lock lock = locks.lock(name);
    assertSame(lock.asJavaLock(), lock.asJavaLock());
    lock.asJavaLock().lock();
    try {
      assertEquals(1, active("lock"));
    } finally {
      lock.asJavaLock().unlock();
    }
    assertEquals(1, acquires("lock", "acquired"));
    assertEquals(0, active("lock"));
  }

  /** Leadership changes reach their listeners on another thread: polls for up to 5 s. */
  private static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "condition not met within 5 s");
      Thread.sleep(10);
    }
  }

  @Test
  void leadershipTermsAreActiveThenHeld() throws Exception {
    try (LockService agent = MeteredLockService.of(
            LockProviders.connect("lock:native:mem/" + name + "-election?node=a&algorithm=agent"), registry);
        var election = agent.election(name + "-leader")) {
      election.join();
      assertTrue(election.awaitLeadership(Duration.ofSeconds(10)));
      waitFor(() -> active("election") == 1);
      clock.add(Duration.ofSeconds(3));
      election.resign();
      waitFor(() -> active("election") == 0);
      var held = registry.get(MeteredLockService.HELD).tags("kind", "election", "end", "released").timer();
      assertEquals(1, held.count());
      assertEquals(3000, held.totalTime(TimeUnit.MILLISECONDS), 0.001);
    }
  }

  @Test
  void lockNamesAndExtraTagsWhenAskedFor() throws Exception {
    SimpleMeterRegistry named = new SimpleMeterRegistry();
    try (LockService svc = MeteredLockService.builder(LockProviders.connect("lock:native:local"), named)
        .tagLockNames(true).tags(Tags.of("app", "billing")).build()) {
      svc.lock(name).acquire().release();
    }
    assertNotNull(named.find(MeteredLockService.ACQUIRE).tags("name", name, "app", "billing", "outcome", "acquired")
        .counter());
    assertNotNull(named.find(MeteredLockService.HELD).tags("name", name, "end", "released").timer());
  }

  @Test
  void settingsAreCheckedAndUnwrapFindsBothLayers() {
    assertSame(locks, locks.unwrap(MeteredLockService.class));
    assertSame(raw, locks.delegate());
    var twice = assertThrows(IllegalArgumentException.class, () -> MeteredLockService.of(locks, registry));
    assertTrue(twice.getMessage().contains("already"), twice.getMessage());
    var clash = assertThrows(IllegalArgumentException.class,
        () -> MeteredLockService.builder(raw, registry).tags(Tags.of("kind", "x")));
    assertTrue(clash.getMessage().contains("'kind'"), clash.getMessage());
  }
}
