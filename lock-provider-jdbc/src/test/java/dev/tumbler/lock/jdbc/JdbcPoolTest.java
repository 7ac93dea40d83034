package dev.tumbler.lock.jdbc;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ServiceUnavailableException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The connection pool on PostgreSQL: the smallest pool each mode accepts, the {@code LISTEN} connection
 * borrowed only while the service has waiters, and a pool that has no connection left for the service.
 */
class JdbcPoolTest {
  private static final Duration LEASE = Duration.ofSeconds(2);
  private static final String TABLE = "pool_locks";
  private static EmbeddedPg pg;

  @BeforeAll
  static void start() {
    pg = EmbeddedPg.get();
  }

  private static HikariDataSource applicationPool(int size) {
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl("jdbc:postgresql://" + pg.address() + "/postgres");
    hc.setUsername("postgres");
    hc.setMaximumPoolSize(size);
    hc.setMinimumIdle(0);
    hc.setConnectionTimeout(2000);
    return new HikariDataSource(hc);
  }

  private static LockService withDataSource(HikariDataSource ds, String more) {
    Properties p = new Properties();
    p.put(JdbcLockProvider.DATA_SOURCE, ds);
    return LockProviders.connect("lock:jdbc:postgresql?createSchema=true&table=" + TABLE + more, p);
  }

  private static LockService own(String more) {
    return LockProviders.connect(pg.lockUrl(pg.address()) + "&createSchema=true&timeout=1s&table=" + TABLE + more);
  }

  /**
   * The report: after one wait the listener kept a pooled connection for good, so a pool of N served the
   * service with N-1 (with one connection, none: a free lock "not granted", renewals failing, releases
   * failing). With an application's pool of two, the smallest lease mode accepts: while a waiter waits, the
   * other connection serves a grant, its renewals and its release; once the wait is over the listener gives
   * its connection back, and the application may use one connection while the service uses the other.
   */
  @Test
  void theListeningConnectionGoesBackWhenTheLastWaiterLeaves() throws Exception {
    String leaseTime = "&leaseTime=" + LEASE.toMillis() + "ms";
    try (HikariDataSource app = applicationPool(2); LockService holder = own(leaseTime);
        LockService s = withDataSource(app, leaseTime)) {
      Lease held = holder.lock("job").acquire();
      AtomicReference<Object> outcome = new AtomicReference<>();
      Thread waiter = Thread.ofPlatform().start(() -> {
        try {
          outcome.set(s.lock("job").tryAcquire(Duration.ofSeconds(60)).orElse(null));
        } catch (Throwable t) {
          outcome.set(t);
        }
      });
      eventually(Duration.ofSeconds(15), "the waiting service never listened: " + outcome.get(), JdbcPoolTest::listening);
      // while it waits, the pool's other connection serves the service's calls
      grantRenewAndRelease(s, "while-waiting");
      assertTrue(waiter.isAlive(), "the waiter stopped waiting: " + outcome.get());
      held.release();
      waiter.join(Duration.ofSeconds(30));
      assertTrue(outcome.get() instanceof Lease, "the waiter was not granted after the release: " + outcome.get());
      ((Lease) outcome.get()).release();
      // no waiter is left: the listener gives its connection back to the pool
      eventually(Duration.ofSeconds(10), "the listening connection was not given back after the last wait ended "
          + "(active connections: " + app.getHikariPoolMXBean().getActiveConnections() + ")",
          () -> !listening() && app.getHikariPoolMXBean().getActiveConnections() == 0);
      // the application uses one of its two connections; the other is enough for the service
      try (Connection mine = app.getConnection()) {
        grantRenewAndRelease(s, "after-the-wait");
      }
    }
  }

  /** A free lock is granted at once, kept by its renewals for two terms, and released. */
  private static void grantRenewAndRelease(LockService s, String name) throws Exception {
    Lease l = s.lock(name).tryAcquire(Duration.ofSeconds(1)).orElseThrow(
        () -> new AssertionError("a free lock was not granted within 1 s"));
    AtomicReference<LeaseLostEvent> lost = new AtomicReference<>();
    l.onLost(lost::set);
    Thread.sleep(LEASE.multipliedBy(2).toMillis());
    assertNull(lost.get(), "renewals failed: the lease was lost");
    assertTrue(l.isValid(), "the lease is not valid after two terms of renewals");
    l.release();
    s.lock(name).tryAcquire(Duration.ofSeconds(1)).orElseThrow(
        () -> new AssertionError("the released lock was not free")).release();
  }

  @Test
  void poolsTooSmallForTheModeAreRefusedAtConnect() throws Exception {
    InvalidLockUrlException lease = assertThrows(InvalidLockUrlException.class,
        () -> own("&maximumPoolSize=1").close());
    assertTrue(lease.getMessage().contains("maximumPoolSize") && lease.getMessage().contains("2"),
        "the refusal does not name the setting and the size needed: " + lease.getMessage());
    InvalidLockUrlException advisory = assertThrows(InvalidLockUrlException.class,
        () -> own("&mode=advisory&maximumPoolSize=2").close());
    assertTrue(advisory.getMessage().contains("maximumPoolSize") && advisory.getMessage().contains("3"),
        "the refusal does not name the setting and the size needed: " + advisory.getMessage());
    try (HikariDataSource one = applicationPool(1)) {
      InvalidLockUrlException given = assertThrows(InvalidLockUrlException.class, () -> withDataSource(one, "").close());
      assertTrue(given.getMessage().contains("maximumPoolSize") && given.getMessage().contains("2"),
          "the refusal of the DataSource does not name the setting and the size needed: " + given.getMessage());
    }
    // the smallest pools accepted work
    for (String more : List.of("&maximumPoolSize=2", "&mode=advisory&maximumPoolSize=3")) {
      try (LockService s = own(more)) {
        s.lock("smallest").tryAcquire(Duration.ofSeconds(5)).orElseThrow().release();
      }
    }
  }

  @Test
  void aPoolWithNoConnectionLeftForTheServiceIsReportedAsSuch() throws Exception {
    try (HikariDataSource app = applicationPool(2); LockService s = withDataSource(app, "")) {
      List<Connection> taken = new ArrayList<>();
      try {
        taken.add(app.getConnection());
        taken.add(app.getConnection());
        ServiceUnavailableException e = assertThrows(ServiceUnavailableException.class,
            () -> s.lock("starved").tryAcquire(Duration.ofSeconds(1)));
        assertTrue(e.getMessage().contains("'starved'") && e.getMessage().contains("maximumPoolSize"),
            "the error does not say that the pool had no connection for the lock: " + e.getMessage());
      } finally {
        for (Connection c : taken) {
          c.close();
        }
      }
      s.lock("starved").tryAcquire(Duration.ofSeconds(5)).orElseThrow().release();
    }
  }

  /** Whether a session of the server listens on the table's channel (only the waiting service's can). */
  private static boolean listening() {
    try (Connection c = pg.admin(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM pg_stat_activity WHERE query = 'LISTEN " + TABLE
            + "_released'")) {
      rs.next();
      return rs.getLong(1) > 0;
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void eventually(Duration max, String failure, BooleanSupplier condition) throws InterruptedException {
    long until = System.nanoTime() + max.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - until > 0) {
        throw new AssertionError(failure);
      }
      Thread.sleep(20);
    }
  }
}
