package dev.tumbler.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The registry's contract, on the embedded native node: the locks it gives, renewal, expiry of unused locks. */
class TumblerLockRegistryTest {
  private LockService service;
  private TumblerLockRegistry registry;

  @BeforeEach
  void open() {
    service = LockProviders.connect("lock:native:local?namespace=registry-test-" + System.nanoTime());
    registry = new TumblerLockRegistry(service);
  }

  @AfterEach
  void close() {
    service.close();
  }

  @Test
  void aKeyHasOneLockOwnedByTheThreadThatLockedIt() throws Exception {
    Lock lock = registry.obtain("orders");
    assertSame(lock, registry.obtain("orders"));
    lock.lock();
    try {
      assertTrue(registry.lease("orders").orElseThrow().isValid());
      // another thread, here as in another instance, waits on the backend
      assertEquals(false, CompletableFuture.supplyAsync(() -> registry.obtain("orders").tryLock()).get(10,
          TimeUnit.SECONDS));
      assertThrows(IllegalMonitorStateException.class, () -> {
        try {
          CompletableFuture.runAsync(lock::unlock).get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
          throw e.getCause();
        }
      });
    } finally {
      lock.unlock();
    }
    assertTrue(registry.lease("orders").isEmpty());
    assertEquals(true, CompletableFuture.supplyAsync(() -> {
      Lock other = registry.obtain("orders");
      boolean got = other.tryLock();
      if (got) {
        other.unlock();
      }
      return got;
    }).get(10, TimeUnit.SECONDS));
  }

  @Test
  void executeLockedRunsUnderTheLock() throws Exception {
    String result = registry.executeLocked("report", () -> {
      assertTrue(registry.lease("report").isPresent(), "the task runs without its lease");
      return "done";
    });
    assertEquals("done", result);
    assertTrue(registry.lease("report").isEmpty());
  }

  @Test
  void onlyTheHolderRenewsAndATtlMustBePositive() {
    assertThrows(IllegalStateException.class, () -> registry.renewLock("batch"));
    Lock lock = registry.obtain("batch");
    lock.lock();
    try {
      Lease lease = registry.lease("batch").orElseThrow();
      registry.renewLock("batch");
      registry.renewLock("batch", Duration.ofSeconds(30));
      assertTrue(lease.isValid());
      assertThrows(IllegalArgumentException.class, () -> registry.renewLock("batch", Duration.ZERO));
      assertThrows(IllegalArgumentException.class, () -> registry.renewLock("batch", Duration.ofSeconds(-1)));
    } finally {
      lock.unlock();
    }
    assertThrows(IllegalStateException.class, () -> registry.renewLock("batch"));
  }

  @Test
  void expiryForgetsUnusedLocksButNeverAHeldOrAWaitedForOne() throws Exception {
    Lock held = registry.obtain("held");
    Lock idle = registry.obtain("idle");
    Lock waited = registry.obtain("waited");
    held.lock();
    CompletableFuture<Boolean> waiter;
    try (LockService other = LockProviders.connect("lock:native:local?namespace=" + service.info().url()
        .replaceAll(".*namespace=", ""))) {
      // the name held elsewhere, so that this registry's thread waits for it
      dev.tumbler.lock.Lease elsewhere = other.lock("waited").acquire();
      waiter = CompletableFuture.supplyAsync(() -> {
        try {
          boolean got = waited.tryLock(10, TimeUnit.SECONDS);
          if (got) {
            waited.unlock();
          }
          return got;
        } catch (InterruptedException e) {
          throw new IllegalStateException(e);
        }
      });
      Thread.sleep(300); // the waiter waits
      registry.expireUnusedOlderThan(0);
      assertSame(held, registry.obtain("held"), "a held lock was forgotten");
      assertSame(waited, registry.obtain("waited"), "a lock a thread waits for was forgotten");
      assertNotSame(idle, registry.obtain("idle"), "an unused lock was kept");
      elsewhere.release();
      assertTrue(waiter.get(10, TimeUnit.SECONDS));
    } finally {
      held.unlock();
    }
    Thread.sleep(5);
    registry.expireUnusedOlderThan(1);
    assertNotSame(held, registry.obtain("held"), "a lock released and unused was kept");
  }

  @Test
  void aNameTheServiceRefusesIsAnIllegalArgumentThatSaysWhy() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> registry.obtain(""));
    assertTrue(e.getMessage() != null && !e.getMessage().isBlank());
    assertThrows(NullPointerException.class, () -> registry.obtain(null));
  }
}
