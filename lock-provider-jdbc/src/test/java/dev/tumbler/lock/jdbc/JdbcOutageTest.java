package dev.tumbler.lock.jdbc;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.AbstractLockService;
import dev.tumbler.lock.tck.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A database that cannot be reached: a wait rides the outage out until its {@code maxWait} and then throws
 * {@link ServiceUnavailableException} naming the lock, never "not granted"; it ends by its {@code maxWait}
 * plus the API's answer grace; and once the database is back, locks work. The services use the default
 * {@code timeout} (5 s), so HikariCP's {@code connectionTimeout} is longer than the shorter waits asked.
 */
class JdbcOutageTest {
  /** How late a wait may end: the API's answer grace (the documented bound) and 1 s for a busy machine. */
  private static final long LATE_MILLIS = AbstractLockService.ANSWER_GRACE_MILLIS + 1000;
  private static final String SECRET = "pw-" + UUID.randomUUID();
  private static EmbeddedPg pg;

  @BeforeAll
  static void start() {
    pg = EmbeddedPg.get();
  }

  private static LockService connect(String address) {
    // the embedded server trusts local connections, so the password is sent and ignored: it must not be shown
    return LockProviders.connect("lock:jdbc:postgresql://" + address + "/postgres?user=postgres&password=" + SECRET
        + "&createSchema=true&table=outage_locks");
  }

  @Test
  void waitsDuringAStoppedDatabaseEndAtTheirMaxWaitWithServiceUnavailable() throws Exception {
    try (LockService s = connect(pg.address())) {
      long before;
      try (Lease warm = s.lock("warm").acquire()) {
        before = warm.fencingToken();
      }
      pg.stop();
      try {
        for (Duration w : List.of(Duration.ofSeconds(1), Duration.ofSeconds(8))) {
          unavailableAfter(s, "stopped-" + w.toSeconds(), w, true);
        }
        // a wait that outlasts the outage is granted once the database is back
        AtomicReference<Throwable> restartFailed = new AtomicReference<>();
        Thread restarter = Thread.ofPlatform().start(() -> {
          try {
            Thread.sleep(2000);
            pg.restart();
          } catch (Throwable t) {
            restartFailed.set(t);
          }
        });
        try {
          Lease through = s.lock("through").tryAcquire(Duration.ofSeconds(60)).orElseThrow(
              () -> new AssertionError("a wait of 60 s did not ride out an outage of a few seconds"));
          assertTrue(through.fencingToken() > before, "the token after the outage is not above the one before");
          through.release();
        } finally {
          restarter.join();
        }
        assertTrue(restartFailed.get() == null, "restarting the server failed: " + restartFailed.get());
      } finally {
        if (!pg.isRunning()) {
          pg.restart();
        }
      }
      worksAgain(s, before);
    }
  }

  @Test
  void waitsThroughAPartitionEndAtTheirMaxWaitWithServiceUnavailable() throws Exception {
    try (TcpProxy proxy = TcpProxy.start("127.0.0.1", pg.port()); LockService s = connect(proxy.address())) {
      long before;
      try (Lease warm = s.lock("warm").acquire()) {
        before = warm.fencingToken();
      }
      proxy.blackhole();
      try {
        // (the service names the lock when its own call fails; a borrow that waits for a session the
        // partition never opens is ended by the API's grace, whose error names the database and the acquire)
        unavailableAfter(s, "partitioned-1", Duration.ofSeconds(1), false);
      } finally {
        proxy.heal();
      }
      worksAgain(s, before);
    }
  }

  /**
   * A tryAcquire of a free lock in an outage: ServiceUnavailableException, not before its wait, and in time,
   * without the password; naming the lock when {@code namesLock}.
   */
  private static void unavailableAfter(LockService s, String name, Duration w, boolean namesLock) {
    long t0 = System.nanoTime();
    ServiceUnavailableException e = assertThrows(ServiceUnavailableException.class, () -> s.lock(name).tryAcquire(w)
        .ifPresent(Lease::release), "tryAcquire(" + w.toMillis() + "ms) of a free lock did not report the outage");
    long took = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(took >= w.toMillis(), "tryAcquire(" + w.toMillis() + "ms) gave up after " + took + " ms, before its wait "
        + "was over: " + e.getMessage());
    assertTrue(took <= w.toMillis() + LATE_MILLIS, "tryAcquire(" + w.toMillis() + "ms) took " + took
        + " ms; the bound is its wait plus " + LATE_MILLIS + " ms");
    assertTrue(!namesLock || e.getMessage().contains("'" + name + "'"), "the error does not name the lock: "
        + e.getMessage());
    assertTrue(e.getMessage().contains("postgresql database of"), "the error does not name the database: "
        + e.getMessage());
    assertFalse(e.getMessage().contains(SECRET), "the error shows the password: " + e.getMessage());
  }

  /** Once the database is back: a free lock is granted with a larger token, renewed and released. */
  private static void worksAgain(LockService s, long before) throws Exception {
    Lease after = s.lock("after").tryAcquire(Duration.ofSeconds(30)).orElseThrow(
        () -> new AssertionError("no grant once the database was back"));
    assertTrue(after.fencingToken() > before, "the token after the outage is not above the one before");
    after.renew();
    assertTrue(after.isValid(), "the lease granted after the outage is not valid after a renewal");
    after.release();
    s.lock("after").tryAcquire(Duration.ZERO).orElseThrow(
        () -> new AssertionError("a released lock was not free after the outage")).release();
  }
}
