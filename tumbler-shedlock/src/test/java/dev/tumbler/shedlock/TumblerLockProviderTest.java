package dev.tumbler.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The provider's contract, on the embedded native node ({@code lock:native:local}, its leased algorithm), through
 * ShedLock's own API.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TumblerLockProviderTest {
  private LockService service;
  private TumblerLockProvider provider;
  private String name;

  @BeforeEach
  void open() {
    service = LockProviders.connect("lock:native:local?algorithm=lease&leaseTime=2s");
    provider = new TumblerLockProvider(service, "shedlock-");
    name = "job-" + UUID.randomUUID();
  }

  @AfterEach
  void close() {
    service.close();
  }

  private LockConfiguration config(Duration atMost, Duration atLeast) {
    return new LockConfiguration(Instant.now(), name, atMost, atLeast);
  }

  @Test
  void oneRunAtATimeAndEachRunsTokenIsLarger() {
    SimpleLock first = provider.lock(config(Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
    long token = TumblerLockProvider.currentLease().orElseThrow().fencingToken();
    assertTrue(provider.lock(config(Duration.ofSeconds(30), Duration.ZERO)).isEmpty(), "a second run while held");
    first.unlock();
    assertTrue(TumblerLockProvider.currentLease().isEmpty(), "no run on this thread after the unlock");
    SimpleLock second = provider.lock(config(Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
    assertTrue(TumblerLockProvider.currentLease().orElseThrow().fencingToken() > token, "tokens grow run to run");
    second.unlock();
    assertThrows(IllegalStateException.class, second::unlock, "ShedLock allows one unlock");
  }

  @Test
  void theNameIsTheTumblerLockNameAfterThePrefix() throws Exception {
    SimpleLock run = provider.lock(config(Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
    assertEquals("shedlock-" + name, TumblerLockProvider.currentLease().orElseThrow().name());
    assertTrue(service.lock("shedlock-" + name).tryAcquire(Duration.ZERO).isEmpty(), "the Tumbler lock is held");
    run.unlock();
    Optional<Lease> direct = service.lock("shedlock-" + name).tryAcquire(Duration.ZERO);
    assertTrue(direct.isPresent(), "the Tumbler lock is free after the unlock");
    direct.get().release();
  }

  @Test
  void anUnlockBeforeLockAtLeastForKeepsTheLockUntilThen() throws Exception {
    Duration atLeast = Duration.ofMillis(800);
    long asked = System.nanoTime();
    SimpleLock run = provider.lock(config(Duration.ofSeconds(30), atLeast)).orElseThrow();
    run.unlock();
    // held until lockAtLeastFor after the grant (the grant came after 'asked'), then given back
    Optional<SimpleLock> next;
    while ((next = provider.lock(config(Duration.ofSeconds(30), Duration.ZERO))).isEmpty()) {
      Thread.sleep(10);
      assertTrue(System.nanoTime() - asked < atLeast.toNanos() + Duration.ofSeconds(10).toNanos(),
          "still held 10 s after lockAtLeastFor");
    }
    assertTrue(System.nanoTime() - asked >= atLeast.toNanos(), "free before lockAtLeastFor: "
        + Duration.ofNanos(System.nanoTime() - asked));
    next.get().unlock();
  }

  @Test
  void aRunLongerThanLockAtMostForKeepsItsLockWhileTheInstanceLives() throws Exception {
    // lockAtMostFor 300 ms, a lease term of 2 s renewed while held: three terms later it is still held
    SimpleLock run = provider.lock(config(Duration.ofMillis(300), Duration.ZERO)).orElseThrow();
    Lease lease = TumblerLockProvider.currentLease().orElseThrow();
    Thread.sleep(6_000);
    assertTrue(lease.isValid(), "the lease of a live run ended");
    assertTrue(provider.lock(config(Duration.ofSeconds(30), Duration.ZERO)).isEmpty(), "another run started");
    run.unlock();
  }

  @Test
  void extendRenewsAndHandsOverToTheNewLock() {
    LockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
    long[] token = new long[2];
    executor.executeWithLock((Runnable) () -> {
      LockAssert.assertLocked();
      token[0] = TumblerLockProvider.currentLease().orElseThrow().fencingToken();
      LockExtender.extendActiveLock(Duration.ofSeconds(30), Duration.ZERO);
      token[1] = TumblerLockProvider.currentLease().orElseThrow().fencingToken();
    }, config(Duration.ofSeconds(30), Duration.ZERO));
    assertEquals(token[0], token[1], "an extension keeps the lease and its token");
    assertTrue(TumblerLockProvider.currentLease().isEmpty());
    SimpleLock again = provider.lock(config(Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
    again.unlock();
  }

  @Test
  void anExtensionOfALostLeaseIsEmptyAndLeavesNothingHeld() {
    SimpleLock run = provider.lock(config(Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
    Lease lease = TumblerLockProvider.currentLease().orElseThrow();
    lease.release(); // as if lost: no longer valid
    assertFalse(lease.isValid());
    assertTrue(run.extend(Duration.ofSeconds(30), Duration.ZERO).isEmpty());
    assertTrue(TumblerLockProvider.currentLease().isEmpty(), "the failed run is off the thread");
    assertThrows(IllegalStateException.class, run::unlock, "ShedLock allows no unlock after an extension");
    provider.lock(config(Duration.ofSeconds(30), Duration.ZERO)).orElseThrow().unlock();
  }

  @Test
  void nestedRunsEachSeeTheirOwnLease() {
    SimpleLock outer = provider.lock(config(Duration.ofSeconds(30), Duration.ZERO)).orElseThrow();
    Lease outerLease = TumblerLockProvider.currentLease().orElseThrow();
    SimpleLock inner = provider.lock(new LockConfiguration(Instant.now(), name + "-inner", Duration.ofSeconds(30),
        Duration.ZERO)).orElseThrow();
    assertEquals("shedlock-" + name + "-inner", TumblerLockProvider.currentLease().orElseThrow().name());
    inner.unlock();
    assertSame(outerLease, TumblerLockProvider.currentLease().orElseThrow());
    outer.unlock();
    assertTrue(TumblerLockProvider.currentLease().isEmpty());
  }

  @Test
  void anInterruptedThreadGetsNoLockAndKeepsItsInterrupt() {
    Thread.currentThread().interrupt();
    try {
      assertTrue(provider.lock(config(Duration.ofSeconds(30), Duration.ZERO)).isEmpty());
      assertTrue(Thread.currentThread().isInterrupted());
    } finally {
      Thread.interrupted();
    }
    provider.lock(config(Duration.ofSeconds(30), Duration.ZERO)).orElseThrow().unlock();
  }

  @Test
  void aNameTumblerRefusesSaysWhy() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> provider.lock(new LockConfiguration(Instant.now(), "bad\u0000name", Duration.ofSeconds(30),
            Duration.ZERO)));
    assertTrue(e.getMessage().contains("name"), e.getMessage());
  }
}
