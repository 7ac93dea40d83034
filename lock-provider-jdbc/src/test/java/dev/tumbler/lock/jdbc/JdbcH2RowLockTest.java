package dev.tumbler.lock.jdbc;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import org.h2.tools.Server;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A name's key row locked by another session past an attempt's bound, on H2 in server mode. H2's client gives up a
 * call at its network timeout but never closes the socket of the call it gave up (it only drops it from its list), so
 * the server session goes on: it took the row lock when the other session let go and kept it, in a transaction nobody
 * would end, until the client JVM's garbage collector closed that socket. The name was then refused to every client,
 * whatever its lease term. (A suite run: twelve threads spinning on {@code tryAcquire(ZERO)} saw no grant for 30 s;
 * H2 waits again for each new holder of a row, so a wait on a contended row outlasts its {@code LOCK_TIMEOUT}.) Here
 * the lock wait is made to outlast the bound by a {@code LOCK_TIMEOUT} longer than the service's timeout, which a URL
 * may set. An attempt must not wait on the row at all: another session's grant transaction holds it only for a few
 * statements.
 */
class JdbcH2RowLockTest {
  /** How long the other session keeps the row: past every attempt's network timeout (1.5 s for a try, 2 s else). */
  private static final long HELD_MILLIS = 2500;

  private Connection keeper;
  private Server server;
  private String database;

  @BeforeEach
  void start() throws SQLException {
    database = "rowlock-" + UUID.randomUUID().toString().substring(0, 8);
    keeper = DriverManager.getConnection("jdbc:h2:mem:" + database + ";DB_CLOSE_DELAY=-1");
    server = Server.createTcpServer("-tcpPort", Integer.toString(EmbeddedPg.freePort())).start();
  }

  @AfterEach
  void stop() throws SQLException {
    server.stop();
    try (Statement s = keeper.createStatement()) {
      s.execute("SHUTDOWN");
    }
  }

  private LockService connect() {
    return LockProviders.connect("lock:jdbc:h2:tcp://127.0.0.1:" + server.getPort() + "/mem:" + database
        + "?createSchema=true&timeout=1s&leaseTime=2s&dataSource.LOCK_TIMEOUT=10000");
  }

  @Test
  void aTryWhileAnotherSessionHoldsTheRowIsRefusedAndLeavesNothingLocked() throws Exception {
    try (LockService s = connect()) {
      Lock lock = s.lock("busy");
      lock.acquire().release(); // the name's key row exists
      Thread other = holdRowFor(HELD_MILLIS);
      long t0 = System.nanoTime();
      Optional<Lease> tried;
      try {
        tried = lock.tryAcquire(Duration.ZERO);
      } catch (LockException e) {
        throw new AssertionError("a try on a name whose row another session held failed instead of being refused", e);
      }
      long tookMs = (System.nanoTime() - t0) / 1_000_000;
      assertFalse(tried.isPresent(), "granted while another session held the name's row");
      assertTrue(tookMs < 1000, "a try waited " + tookMs + " ms on the name's row");
      other.join();
      assertGrantedSoon(lock);
    }
  }

  @Test
  void aWaitWhileAnotherSessionHoldsTheRowIsGrantedOnceItIsFree() throws Exception {
    try (LockService s = connect()) {
      Lock lock = s.lock("busy-wait");
      lock.acquire().release();
      Thread other = holdRowFor(HELD_MILLIS);
      long t0 = System.nanoTime();
      Optional<Lease> got = lock.tryAcquire(Duration.ofSeconds(8));
      long tookMs = (System.nanoTime() - t0) / 1_000_000;
      other.join();
      assertTrue(got.isPresent(), "not granted within 8 s though the row was free after " + HELD_MILLIS + " ms");
      got.get().release();
      assertTrue(tookMs < HELD_MILLIS + 3000, "granted " + tookMs + " ms after asking, the row free after " + HELD_MILLIS);
      assertGrantedSoon(lock);
    }
  }

  @Test
  void aRenewalWhileAnotherSessionHoldsTheRowBrieflyGoesThrough() throws Exception {
    try (LockService s = connect()) {
      Lease lease = s.lock("held").acquire();
      // another client's grant attempt on the name holds its row for a moment: the holder's renewal waits it out
      Thread other = holdRowFor(300);
      long t0 = System.nanoTime();
      try {
        lease.renew();
      } catch (LockException e) {
        throw new AssertionError("a renewal failed while another session held the name's row for 300 ms", e);
      }
      long tookMs = (System.nanoTime() - t0) / 1_000_000;
      other.join();
      assertTrue(lease.isValid(), "the lease was lost by a renewal that went through");
      assertTrue(tookMs < 1000 + 500, "the renewal took " + tookMs + " ms, more than the call timeout (1 s)");
      lease.release();
      assertGrantedSoon(s.lock("held"));
    }
  }

  /** Locks every key row in another session (a grant transaction of another client) and lets go after {@code ms}. */
  private Thread holdRowFor(long ms) throws Exception {
    Connection c = DriverManager.getConnection("jdbc:h2:mem:" + database);
    c.setAutoCommit(false);
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
        "SELECT lock_key FROM " + JdbcConfig.DEFAULT_TABLE + "_keys FOR UPDATE")) {
      assertTrue(rs.next(), "no key row to lock");
    }
    return Thread.ofPlatform().start(() -> {
      try (c) {
        Thread.sleep(ms);
        c.commit();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
  }

  /** The name is free: granted within a lease term, not kept from everyone by a session left holding its row. */
  private static void assertGrantedSoon(Lock lock) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(4).toNanos();
    while (System.nanoTime() < end) {
      try {
        Optional<Lease> l = lock.tryAcquire(Duration.ZERO);
        if (l.isPresent()) {
          l.get().release();
          return;
        }
      } catch (LockException e) {
        // a pooled connection the earlier call broke: try again
      }
      Thread.sleep(50);
    }
    fail("the name was refused to every try for 4 s after the other session let go of its row (lease term 2 s)");
  }
}
