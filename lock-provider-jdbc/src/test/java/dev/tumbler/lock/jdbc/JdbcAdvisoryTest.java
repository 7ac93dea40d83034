package dev.tumbler.lock.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code mode=advisory} on PostgreSQL beyond the TCK: a lock is freed the moment its session ends, the
 * holder hears within a check, grants share sessions, tokens come from the shared sequence.
 */
class JdbcAdvisoryTest {
  private static EmbeddedPg pg;

  @BeforeAll
  static void start() {
    pg = EmbeddedPg.get();
  }

  private static LockService connect(String user, String extra) {
    return LockProviders.connect("lock:jdbc:postgresql://" + pg.address() + "/postgres?user=" + user
        + "&createSchema=true&timeout=1s&recheck=200ms&table=advisory_locks&mode=advisory" + extra);
  }

  private static void sql(String... statements) throws Exception {
    try (Connection c = pg.admin(); Statement s = c.createStatement()) {
      for (String q : statements) {
        s.execute(q);
      }
    }
  }

  @Test
  void declaresNeitherExpiryNorLostBeforeGrant() {
    try (LockService s = connect("postgres", "")) {
      assertFalse(s.info().capabilities().contains(Capability.LEASE_EXPIRY));
      assertFalse(s.info().capabilities().contains(Capability.LOST_NOTIFICATION));
      assertTrue(s.info().capabilities().contains(Capability.FENCING));
    }
  }

  @Test
  void endedSessionFreesTheLockAtOnceAndTheHolderHearsWithinACheck() throws Exception {
    sql("DROP ROLE IF EXISTS tumbler_carol", "CREATE ROLE tumbler_carol LOGIN SUPERUSER");
    try (LockService carol = connect("tumbler_carol", ""); LockService dave = connect("postgres", "")) {
      Lease held = carol.lock("report").acquire();
      assertEquals(Duration.ofSeconds(Long.MAX_VALUE, 999_999_999), held.remaining(), "an advisory lease has a term");
      assertTrue(dave.lock("report").tryAcquire(Duration.ZERO).isEmpty(), "a held advisory lock was granted");
      CountDownLatch lost = new CountDownLatch(1);
      AtomicReference<LeaseLostEvent> event = new AtomicReference<>();
      held.onLost(e -> {
        event.set(e);
        lost.countDown();
      });
      sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'tumbler_carol'");
      // the server freed the lock with the session: another client is granted without waiting for any term
      Lease taken = dave.lock("report").tryAcquire(Duration.ofSeconds(5)).orElseThrow(
          () -> new AssertionError("the lock of an ended session was not freed"));
      assertTrue(taken.fencingToken() > held.fencingToken(), "the new grant's token is not above the ended session's");
      // the holder hears within a check (recheck 200 ms, plus the check's timeout of 1 s)
      assertTrue(lost.await(5, TimeUnit.SECONDS), "the holder whose session ended was never told");
      assertEquals(LeaseLostEvent.Reason.CONNECTION_LOST, event.get().reason());
      assertFalse(held.isValid());
      held.release(); // harmless: the session is gone
      taken.release();
      assertTrue(carol.lock("report").tryAcquire(Duration.ofSeconds(5)).isPresent(),
          "the client whose session ended cannot lock again on a new session");
    }
  }

  @Test
  void manyLocksShareFewSessionsAndOneNameNeverSharesOne() throws Exception {
    // a pool of 3: 40 different locks fit on one session; two grants of one name need two
    try (LockService s = connect("postgres", "&maximumPoolSize=3")) {
      List<Lease> held = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        held.add(s.lock("many-" + i).acquire());
      }
      assertEquals(1, advisoryHolders(), "40 different locks took more than one session");
      assertTrue(s.lock("many-7").tryAcquire(Duration.ZERO).isEmpty(), "a lock held by this service was granted to it again");
      Lease r1 = s.readWriteLock("shared").readLock().acquire();
      Lease r2 = s.readWriteLock("shared").readLock().acquire();
      assertTrue(s.readWriteLock("shared").writeLock().tryAcquire(Duration.ZERO).isEmpty(),
          "a write lock was granted beside this service's read locks");
      r1.release();
      assertTrue(s.readWriteLock("shared").writeLock().tryAcquire(Duration.ZERO).isEmpty(),
          "a write lock was granted beside the other read lock");
      r2.release();
      s.readWriteLock("shared").writeLock().tryAcquire(Duration.ZERO).orElseThrow(
          () -> new AssertionError("the write lock stayed taken after both reads")).release();
      Lease p = s.semaphore("slots", 3).acquire(2);
      assertEquals(1, s.semaphore("slots", 3).availablePermits());
      assertTrue(s.semaphore("slots", 3).tryAcquire(2, Duration.ZERO).isEmpty(), "2 of 3 permits granted twice");
      p.release();
      assertEquals(3, s.semaphore("slots", 3).availablePermits(), "released permits are still counted");
      for (Lease l : held) {
        l.release();
      }
      assertEquals(0, advisoryHolders(), "a lock outlived its release");
    }
  }

  @Test
  void poolTooSmallForTheGrantsIsAnErrorNamingTheSetting() throws Exception {
    // the smallest pool advisory mode accepts: three read locks of one name take its three sessions
    try (LockService s = connect("postgres", "&maximumPoolSize=3&connectionTimeout=300ms")) {
      Lease r1 = s.readWriteLock("crowd").readLock().acquire();
      Lease r2 = s.readWriteLock("crowd").readLock().acquire();
      Lease r3 = s.readWriteLock("crowd").readLock().acquire();
      LockException e = assertThrows(LockException.class,
          () -> s.readWriteLock("crowd").readLock().tryAcquire(Duration.ofSeconds(2)));
      assertTrue(e.getMessage().contains("maximumPoolSize"), "the error does not name the pool setting: " + e.getMessage());
      r1.release();
      r2.release();
      r3.release();
    }
  }

  @Test
  void tokensComeFromTheSequenceSharedWithLeaseMode() throws Exception {
    try (LockService advisory = connect("postgres", "");
        LockService lease = LockProviders.connect(pg.lockUrl(pg.address())
            + "&createSchema=true&timeout=1s&table=advisory_locks&leaseTime=5s")) {
      long last = 0;
      for (int i = 0; i < 3; i++) {
        try (Lease a = advisory.lock("mixed").acquire()) {
          assertTrue(a.fencingToken() > last);
          last = a.fencingToken();
        }
        try (Lease b = lease.lock("mixed").acquire()) {
          assertTrue(b.fencingToken() > last);
          last = b.fencingToken();
        }
      }
    }
  }

  @Test
  void badModesAreRefusedByName() {
    var e = assertThrows(dev.tumbler.lock.InvalidLockUrlException.class,
        () -> LockProviders.connect("lock:jdbc:h2:mem:adv?mode=advisory"));
    assertTrue(e.getMessage().contains("advisory") && e.getMessage().contains("h2"), e.getMessage());
    e = assertThrows(dev.tumbler.lock.InvalidLockUrlException.class, () -> connect("postgres", "&leaseTime=5s"));
    assertTrue(e.getMessage().contains("leaseTime"), e.getMessage());
    e = assertThrows(dev.tumbler.lock.InvalidLockUrlException.class,
        () -> LockProviders.connect(pg.lockUrl(pg.address()) + "&mode=sessions"));
    assertTrue(e.getMessage().contains("'mode'") && e.getMessage().contains("sessions"), e.getMessage());
  }

  /** Sessions of the server holding advisory locks (this JVM's server: only this test's clients). */
  private static long advisoryHolders() throws Exception {
    try (Connection c = pg.admin(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(DISTINCT pid) FROM pg_locks WHERE locktype = 'advisory'")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
