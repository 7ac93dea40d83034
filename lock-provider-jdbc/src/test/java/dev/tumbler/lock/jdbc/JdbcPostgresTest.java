package dev.tumbler.lock.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ServiceClosedException;
import dev.tumbler.lock.tck.TcpProxy;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What the JDBC provider promises on PostgreSQL beyond the TCK: fencing across restarts, terminated clients, schema errors, fenced updates. */
class JdbcPostgresTest {
  private static final Duration LEASE = Duration.ofSeconds(2);
  private static EmbeddedPg pg;

  @BeforeAll
  static void start() {
    pg = EmbeddedPg.get();
  }

  private static LockService connect(String table, String extra) {
    return connect(table, extra, LEASE);
  }

  private static LockService connect(String table, String extra, Duration lease) {
    return LockProviders.connect(pg.lockUrl(pg.address()) + "&createSchema=true&timeout=1s&leaseTime="
        + lease.toMillis() + "ms&table=" + table + extra);
  }

  private static void sql(String... statements) throws Exception {
    try (Connection c = pg.admin(); Statement s = c.createStatement()) {
      for (String q : statements) {
        s.execute(q);
      }
    }
  }

  /**
   * A new session whose first statements are slow (a new server process on a busy machine) is set up again, within
   * the 5 s a new session gets to log in: HikariCP checks a new connection with its validation timeout (500 ms at
   * {@code timeout=1s}), a read that times out closes the connection, and the pool's first connection failing made
   * {@code connect} throw "cannot connect … This connection has been closed" (a suite run's JdbcPostgresTckTest). Here
   * the pool's first session sleeps 1.5 s in its init statement, the next ones do not.
   */
  @Test
  void aNewSessionSlowToSetUpIsSetUpAgainWithinTheLoginWindow() throws Exception {
    String seq = "slow_first_" + UUID.randomUUID().toString().substring(0, 8);
    sql("CREATE SEQUENCE " + seq);
    String init = "SELECT pg_sleep(CASE WHEN nextval('" + seq + "') = 1 THEN 1.5 ELSE 0 END)";
    try (LockService s = connect("slow_setup_locks", "&connectionInitSql="
        + URLEncoder.encode(init, StandardCharsets.UTF_8).replace("+", "%20"))) {
      s.lock("slow-setup").acquire().release();
    }
    try (Connection c = pg.admin(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT last_value FROM " + seq)) {
      assertTrue(rs.next() && rs.getLong(1) >= 2, "the slow first session was not the one that failed");
    }
  }

  /**
   * Logging in is bounded by the login window (5 s at least), not by a statement's read bound (2 s at
   * {@code timeout=1s}): a new server process on a busy machine answered its authentication after more than 2 s, and
   * the driver's read timeout, which bounded both, failed the service's first connection ("The connection attempt
   * failed", Read timed out, a suite run's JdbcPostgresAdvisoryTckTest). Here a relay holds back the server's first
   * reply on every connection for 3 s. Once logged in, a connection's reads are bounded by the statement bound again.
   */
  @Test
  void aLoginSlowerThanAStatementsReadBoundSucceedsAndStatementsKeepTheirBound() throws Exception {
    try (SlowFirstReply relay = new SlowFirstReply(pg.address(), 3_000);
        LockService s = LockProviders.connect(pg.lockUrl(relay.address()) + "&createSchema=true&timeout=1s&leaseTime="
            + LEASE.toMillis() + "ms&table=slow_login_locks")) {
      s.lock("slow-login").acquire().release();
      try (Connection c = s.unwrap(javax.sql.DataSource.class).getConnection()) {
        assertEquals(2_000, c.getNetworkTimeout(), "a logged-in connection's read bound");
      }
    }
  }

  /**
   * Advisory mode takes a session out of the pool for the locks it holds; a second lock of the same name then needs
   * a session of its own. Its login must not fall on the caller's time: on a busy server a new session's login takes
   * seconds, past a call's bound (a soak run's JdbcPostgresAdvisoryTckTest: "Connection is not available, request
   * timed out after 1003ms (total=1, active=1, idle=0)"). Here every login takes over 2 s (the relay holds back the
   * server's first reply), the calls' bound is 1 s: the pool opens a spare session once one is taken, and the try
   * of the same name on another session answers at once.
   */
  @Test
  void advisoryKeepsASpareSessionSoThatASecondSessionNeedsNoLoginOnTheCallersTime() throws Exception {
    String table = "&mode=advisory&table=spare_session_locks";
    LockProviders.connect(pg.lockUrl(pg.address()) + "&createSchema=true" + table).close();
    try (SlowFirstReply relay = new SlowFirstReply(pg.address(), 2_500);
        LockService s = LockProviders.connect(pg.lockUrl(relay.address()) + "&timeout=1s" + table)) {
      // HikariCP tops the pool up to its one idle connection 100 ms after it started (nothing is missing then: no
      // schema to create), then every 30 s: so only the spare that the service opens comes within one login (2.5 s)
      Thread.sleep(1_000);
      Lease held = s.lock("spare").acquire();
      com.zaxxer.hikari.HikariPoolMXBean pool = s.unwrap(com.zaxxer.hikari.HikariDataSource.class).getHikariPoolMXBean();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
      while (pool.getIdleConnections() == 0) {
        assertTrue(System.nanoTime() - until < 0, "no spare session within 15 s");
        Thread.sleep(20);
      }
      assertTrue(s.lock("spare").tryAcquire(Duration.ZERO).isEmpty(), "a second session took a held lock");
      held.release();
    }
  }

  /** A relay to PostgreSQL that holds back the first bytes the server sends on each connection. */
  private static final class SlowFirstReply implements AutoCloseable {
    private final java.net.ServerSocket server;
    private final java.util.List<java.net.Socket> sockets = new java.util.concurrent.CopyOnWriteArrayList<>();

    SlowFirstReply(String target, long delayMillis) throws java.io.IOException {
      server = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
      String host = target.substring(0, target.lastIndexOf(':'));
      int port = Integer.parseInt(target.substring(target.lastIndexOf(':') + 1));
      Thread.ofVirtual().start(() -> {
        while (!server.isClosed()) {
          try {
            java.net.Socket client = server.accept();
            java.net.Socket backend = new java.net.Socket(host, port);
            sockets.add(client);
            sockets.add(backend);
            Thread.ofVirtual().start(() -> pump(client, backend, 0));
            Thread.ofVirtual().start(() -> pump(backend, client, delayMillis));
          } catch (java.io.IOException e) {
            return;
          }
        }
      });
    }

    String address() {
      return "127.0.0.1:" + server.getLocalPort();
    }

    private static void pump(java.net.Socket from, java.net.Socket to, long firstDelayMillis) {
      byte[] buf = new byte[8192];
      try {
        int n = from.getInputStream().read(buf);
        if (n > 0) {
          Thread.sleep(firstDelayMillis);
        }
        while (n >= 0) {
          to.getOutputStream().write(buf, 0, n);
          n = from.getInputStream().read(buf);
        }
      } catch (java.io.IOException | InterruptedException e) {
        // one side closed: close both below
      }
      try {
        from.close();
        to.close();
      } catch (java.io.IOException ignored) {
        // closing anyway
      }
    }

    @Override
    public void close() throws java.io.IOException {
      server.close();
      for (java.net.Socket s : sockets) {
        s.close();
      }
    }
  }

  @Test
  void fencingTokensGrowAfterRestartAndDeletedRows() throws Exception {
    long highest = 0;
    try (LockService s = connect("restart_locks", "")) {
      for (String name : new String[] {"a", "b", "a", "c", "a"}) {
        try (Lease l = s.lock(name).acquire()) {
          assertTrue(l.fencingToken() > highest, "tokens did not increase before the restart");
          highest = l.fencingToken();
        }
      }
      try (Lease r = s.readWriteLock("a").readLock().acquire(); Lease p = s.semaphore("a", 3).acquire(2)) {
        highest = Math.max(highest, Math.max(r.fencingToken(), p.fencingToken()));
      }
    }
    // every row of the lock tables goes, then the server crashes and comes back
    sql("DELETE FROM restart_locks", "DELETE FROM restart_locks_keys");
    pg.restart();
    try (Connection c = pg.admin(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM restart_locks")) {
      rs.next();
      assertEquals(0, rs.getLong(1), "the lock rows are back after the restart");
    }
    try (LockService s = connect("restart_locks", "")) {
      for (String name : new String[] {"a", "b", "new"}) {
        try (Lease l = s.lock(name).acquire()) {
          assertTrue(l.fencingToken() > highest, "token " + l.fencingToken() + " of '" + name
              + "' after the restart is not above the " + highest + " granted before it");
          highest = l.fencingToken();
        }
      }
    }
  }

  @Test
  void clientWhoseConnectionsAreTerminatedHearsFirst() throws Exception {
    sql("DROP ROLE IF EXISTS tumbler_alice", "CREATE ROLE tumbler_alice LOGIN SUPERUSER");
    try (LockService alice = LockProviders.connect("lock:jdbc:postgresql://" + pg.address()
            + "/postgres?user=tumbler_alice&createSchema=true&timeout=1s&table=terminate_locks&leaseTime=" + LEASE.toMillis() + "ms");
        LockService bob = connect("terminate_locks", "")) {
      Lease held = alice.lock("job").acquire();
      AtomicLong lostAt = new AtomicLong();
      AtomicReference<LeaseLostEvent> event = new AtomicReference<>();
      held.onLost(e -> {
        lostAt.set(System.nanoTime());
        event.set(e);
      });
      // the database ends every session of the client and refuses new ones (an administrator, a failover)
      sql("ALTER ROLE tumbler_alice NOLOGIN",
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'tumbler_alice'");
      try {
        Lease taken = bob.lock("job").tryAcquire(LEASE.multipliedBy(3).plusSeconds(3)).orElseThrow(
            () -> new AssertionError("the lock of the terminated client never became free"));
        long grantedAt = System.nanoTime();
        assertNotNull(event.get(), "the terminated client had not heard onLost when another was granted");
        assertTrue(lostAt.get() - grantedAt < 0, "onLost ran after the other grant");
        assertFalse(held.isValid(), "the terminated client's lease is still valid");
        assertTrue(taken.fencingToken() > held.fencingToken(), "the new grant's token is not above the lost one's");
        taken.release();
      } finally {
        sql("ALTER ROLE tumbler_alice LOGIN");
      }
      held.release();
    }
  }

  @Test
  void waiterIsWokenByAnotherClientsNotification() throws Exception {
    // a minute's recheck, term and maxWait: a waiter that were not woken by the release would sleep a minute
    String slow = "/postgres?user=postgres&createSchema=true&timeout=1s&recheck=60s&leaseTime=60s&table=notify_locks";
    // the holder reaches the server by another address, so the two are not the same database to this JVM
    // and the release cannot wake the waiter in process: only PostgreSQL's notification can
    try (LockService holder = LockProviders.connect("lock:jdbc:postgresql://localhost:" + pg.port() + slow);
        LockService waiting = LockProviders.connect("lock:jdbc:postgresql://127.0.0.1:" + pg.port() + slow)) {
      Lease held = holder.lock("job").acquire();
      AtomicReference<Object> outcome = new AtomicReference<>();
      Thread waiter = Thread.ofPlatform().start(() -> {
        try {
          outcome.set(waiting.lock("job").tryAcquire(Duration.ofSeconds(60)).orElse(null));
        } catch (Throwable t) {
          outcome.set(t);
        }
      });
      long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      // the waiting service listens (it then wakes its waiters once, for releases it may have missed)...
      while (!listening("notify_locks_released")) {
        assertTrue(System.nanoTime() - until < 0, "the waiting service never listened: " + outcome.get());
        Thread.sleep(10);
      }
      Thread.sleep(200);
      // ...and its waiter is asleep again: only a notification can wake it before a minute has passed
      while (((JdbcLockService) waiting).waitersAsleep() == 0) {
        assertTrue(System.nanoTime() - until < 0, "the waiter never went to sleep in its wait: " + outcome.get());
        Thread.sleep(10);
      }
      held.release();
      waiter.join(Duration.ofSeconds(15));
      assertTrue(outcome.get() instanceof Lease, "the waiter was not granted within 15 s of the release (recheck "
          + "and maxWait 60 s): " + outcome.get());
      ((Lease) outcome.get()).release();
    }
  }

  /**
   * A release names the first waiter in line, and only that one wakes: the others could only look and see that they
   * are still behind it (with sixteen waiters on one name, every release cost sixteen looks, twice: once woken in
   * this JVM, once by the notification). The line is still served in order.
   */
  @Test
  void aReleaseWakesOnlyTheFirstInLine() throws Exception {
    // a minute's recheck and term: a waiter that no release wakes sleeps past the end of the test
    String slow = "/postgres?user=postgres&createSchema=true&timeout=1s&recheck=60s&leaseTime=60s&table=first_locks";
    try (LockService holder = LockProviders.connect("lock:jdbc:postgresql://127.0.0.1:" + pg.port() + slow);
        LockService waiting = LockProviders.connect("lock:jdbc:postgresql://127.0.0.1:" + pg.port() + slow)) {
      JdbcLockService w = (JdbcLockService) waiting;
      Lease held = holder.lock("job").acquire();
      int n = 4;
      List<AtomicReference<Object>> outcomes = new java.util.ArrayList<>();
      List<Thread> threads = new java.util.ArrayList<>();
      long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      for (int i = 0; i < n; i++) {
        AtomicReference<Object> outcome = new AtomicReference<>();
        outcomes.add(outcome);
        threads.add(Thread.ofPlatform().start(() -> {
          try {
            outcome.set(waiting.lock("job").tryAcquire(Duration.ofSeconds(50)).orElse(null));
          } catch (Throwable t) {
            outcome.set(t);
          }
        }));
        // each waiter is in line and asleep before the next one comes: the line's order is the threads' order
        while (w.waitersAsleep() < i + 1 || !listening("first_locks_released")) {
          assertTrue(System.nanoTime() - until < 0, "waiter " + i + " never went to sleep: " + outcome.get());
          Thread.sleep(10);
        }
      }
      Thread.sleep(200); // (the listener wakes every waiter once it listens; let them go back to sleep)
      while (w.waitersAsleep() < n) {
        assertTrue(System.nanoTime() - until < 0, "the waiters never went back to sleep");
        Thread.sleep(10);
      }
      Lease previous = held;
      for (int i = 0; i < n; i++) {
        long calls = w.waitCalls();
        previous.release();
        threads.get(i).join(Duration.ofSeconds(15));
        assertTrue(outcomes.get(i).get() instanceof Lease, "waiter " + i + " (first in line) was not granted within 15 "
            + "s of the release: " + outcomes.get(i).get());
        Thread.sleep(300); // (a wake-up of the others, the notification's included, would show by now)
        assertEquals(calls + 1, w.waitCalls(), "a release woke more waiters than the first in line (" + (n - i - 1)
            + " still waiting)");
        assertEquals(n - i - 1, w.waitersAsleep(), "the waiters behind the first did not sleep on");
        for (int k = i + 1; k < n; k++) {
          assertEquals(null, outcomes.get(k).get(), "waiter " + k + " was served before waiter " + i);
        }
        previous = (Lease) outcomes.get(i).get();
      }
      previous.release();
    }
  }

  private static boolean listening(String channel) throws Exception {
    try (Connection c = pg.admin(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM pg_stat_activity WHERE query = 'LISTEN " + channel + "'")) {
      rs.next();
      return rs.getLong(1) > 0;
    }
  }

  /** How long the relay holds a late request back in the tests below: past the call's read bound of 2 s. */
  private static final long HELD_BACK_MILLIS = 3_000;

  /**
   * A grant that reaches the server after its call gave up on the reply (the relay holds it back
   * {@value #HELD_BACK_MILLIS} ms; the call's read bound is 2 s at {@code timeout=1s}) commits all the same, later than the undo the call sent at once. The undo,
   * deleting nothing yet, must look again until such a grant can no longer commit: else that grant, a lease nobody
   * has, holds the name for its whole term (60 s here), with this very wait behind it. Seen on a loaded machine as a
   * waiter not granted within 15 s of a release ({@link #aReleaseWakesOnlyTheFirstInLine}; its log: "Read timed out"
   * in the waiter's grant).
   */
  @Test
  void aGrantThatReachesTheServerAfterItsCallTimedOutIsUndone() throws Exception {
    try (TcpProxy relay = TcpProxy.start("127.0.0.1", pg.port());
        LockService s = LockProviders.connect(pg.lockUrl(relay.address())
            + "&createSchema=true&timeout=1s&recheck=60s&leaseTime=60s&table=late_locks")) {
      long drawn = count("SELECT last_value FROM late_locks_fence");
      relay.holdRequests("nextval(", HELD_BACK_MILLIS); // (only a grant draws a token)
      Lease lease = s.lock("job").tryAcquire(Duration.ofSeconds(20)).orElse(null);
      assertNotNull(lease, "the wait ended without the lock: a grant that committed after its call timed out "
          + "kept it (" + count("SELECT COUNT(*) FROM late_locks") + " holder rows)");
      assertTrue(relay.heldRequests() >= 1, "no grant was held back");
      // the held grant reaches the server just before the wait's next attempt, on a session of its own: on a loaded
      // machine that session may run it after the next attempt's grant came back (a soak run read the sequence before it
      // had, and failed here once; the call had timed out at 2.1 s, the log showed)
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (count("SELECT last_value FROM late_locks_fence") < drawn + 2 && System.nanoTime() - until < 0) {
        Thread.sleep(20);
      }
      assertTrue(count("SELECT last_value FROM late_locks_fence") >= drawn + 2,
          "the grant held back never committed within 10 s of the lease: nothing was left to undo");
      assertEquals(1, count("SELECT COUNT(*) FROM late_locks"), "the late grant is held beside the lease");
      lease.release();
      assertEquals(0, count("SELECT COUNT(*) FROM late_locks"), "a grant is left after the release");
    }
  }

  /**
   * The same for a place in line: an attempt that reaches the server after its wait is over (the relay holds it back
   * {@value #HELD_BACK_MILLIS} ms; the wait gives up at its read bound, 2 s at most) is refused, since another service
   * holds the name, and takes a place in line for a term (60 s). Every later waiter sees that place ahead of it, and the release names it, so it wakes
   * nobody: a later waiter sat out the term. The place is now deleted again until the attempt can no longer come.
   */
  @Test
  void aPlaceInLineTakenByAnAttemptThatCameAfterItsWaitIsLeftAgain() throws Exception {
    String url = "&createSchema=true&timeout=1s&recheck=60s&leaseTime=60s&table=late_line_locks";
    try (TcpProxy relay = TcpProxy.start("127.0.0.1", pg.port());
        LockService late = LockProviders.connect(pg.lockUrl(relay.address()) + url);
        LockService holder = LockProviders.connect(pg.lockUrl(pg.address()) + url);
        LockService next = LockProviders.connect(pg.lockUrl(pg.address()) + url)) {
      Lease held = holder.lock("job").acquire();
      relay.holdRequests("nextval(", HELD_BACK_MILLIS); // (only a grant's attempt draws a token)
      try {
        assertTrue(late.lock("job").tryAcquire(Duration.ofMillis(200)).isEmpty(), "a held lock was granted");
      } catch (LockException e) {
        // the attempt's reply never came within the read bound: the wait ends unanswered, as it may
      }
      assertTrue(relay.heldRequests() >= 1, "no attempt was held back");
      Thread.sleep(HELD_BACK_MILLIS + 500); // (the held attempt has reached the server by now)
      AtomicReference<Object> outcome = new AtomicReference<>();
      Thread waiter = Thread.ofPlatform().start(() -> {
        try {
          outcome.set(next.lock("job").tryAcquire(Duration.ofSeconds(20)).orElse(null));
        } catch (Throwable t) {
          outcome.set(t);
        }
      });
      long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (((JdbcLockService) next).waitersAsleep() < 1) {
        assertTrue(System.nanoTime() - until < 0, "the waiter never went to sleep: " + outcome.get());
        Thread.sleep(10);
      }
      held.release();
      waiter.join(Duration.ofSeconds(25));
      assertTrue(outcome.get() instanceof Lease, "a waiter that came after the late attempt was not granted within "
          + "its 20 s wait: " + outcome.get());
      ((Lease) outcome.get()).release();
    }
  }

  @Test
  void waiterThatGivesUpLeavesTheLine() throws Exception {
    try (LockService a = connect("line_locks", ""); LockService b = connect("line_locks", "");
        LockService c = connect("line_locks", "")) {
      Lease held = a.lock("job").acquire();
      // a try that will not wait writes nothing: no place in line, no ticket drawn
      long drawn = count("SELECT last_value FROM line_locks_fence");
      assertTrue(b.lock("job").tryAcquire(Duration.ZERO).isEmpty(), "a held lock was granted");
      assertEquals(drawn, count("SELECT last_value FROM line_locks_fence"), "a try without waiting took a ticket");
      assertTrue(b.lock("job").tryAcquire(Duration.ofMillis(300)).isEmpty(), "a held lock was granted");
      assertEquals(0, count("SELECT COUNT(*) FROM line_locks_queue"), "a waiter that gave up kept its place in line");
      held.release();
      // nobody is ahead in line: a try without waiting gets the lock at once
      c.lock("job").tryAcquire(Duration.ZERO).orElseThrow(
          () -> new AssertionError("a waiter that gave up still held up the line")).release();
    }
  }

  /**
   * An admin session holding every name's row lock of {@code table} (its keys table, FOR UPDATE, in an open
   * transaction): a grant or renewal statement waits at it until the session commits or closes.
   */
  private Connection holdingKeyRows(String table) throws SQLException {
    Connection admin = pg.admin();
    admin.setAutoCommit(false);
    try (Statement st = admin.createStatement()) {
      st.execute("SELECT lock_key FROM " + table + "_keys FOR UPDATE");
    }
    return admin;
  }

  /**
   * An interrupt on a virtual thread closes the socket of a blocking read, and PostgreSQL goes on with the statement
   * it was given: the waiter's place in line (or a grant) is committed after the interrupted acquire gave up, with
   * nobody left to undo it, and it held up the line for a term (the suite's {@code Semaphores.interruptHoldsNothing}
   * on a loaded machine). The grant statement is held at the name's row lock here, so that the interrupt lands in
   * it; once the row is let go, the waiter must leave nothing behind.
   */
  @Test
  void interruptOnAVirtualThreadLeavesNoPlaceInLine() throws Exception {
    try (LockService a = connect("vcut_locks", ""); LockService b = connect("vcut_locks", "");
        LockService c = connect("vcut_locks", "")) {
      Lease one = a.semaphore("s", 2).acquire(1);
      AtomicReference<Throwable> ended = new AtomicReference<>();
      try (Connection admin = holdingKeyRows("vcut_locks")) {
        Thread waiter = Thread.ofVirtual().start(() -> {
          try {
            b.semaphore("s", 2).tryAcquire(2, Duration.ofSeconds(10));
            ended.set(new AssertionError("the wait ended without an interrupt"));
          } catch (Throwable t) {
            ended.set(t);
          }
        });
        Thread.sleep(300); // the attempt's statement now waits for the row lock (lock_timeout 1 s)
        waiter.interrupt();
        assertTrue(waiter.join(Duration.ofSeconds(5)), "the interrupted wait did not end");
        assertTrue(ended.get() instanceof InterruptedException, "the interrupted wait ended with " + ended.get());
        admin.rollback(); // the statement the interrupt cut off goes on now
      }
      long end = System.nanoTime() + Duration.ofSeconds(1).toNanos(); // half the term the place would last
      long left = count("SELECT COUNT(*) FROM vcut_locks_queue");
      while (left > 0 && System.nanoTime() - end < 0) {
        Thread.sleep(20);
        left = count("SELECT COUNT(*) FROM vcut_locks_queue");
      }
      assertEquals(0, left, "the interrupted waiter's place in line outlived it");
      one.release();
      c.semaphore("s", 2).tryAcquire(2, Duration.ZERO).orElseThrow(
          () -> new AssertionError("the interrupted waiter still held up the line")).release();
    }
  }

  /**
   * Waiters keep their places in line while the name's row lock is out of reach longer than a term (another client's
   * transaction holds it; on a loaded machine, the tries of the waiters behind): a place is kept without that lock.
   * Before, only a try (under the row lock) kept it, so every try timed out, every place lapsed, and the line
   * started again in whatever order the tries came back (a waiter of a hot lock ungranted for 30 s on H2).
   */
  @Test
  void waitersKeepTheirPlacesWhileTheNameRowIsLockedPastATerm() throws Exception {
    // a term whose third (2 s) is longer than a try's wait for the row (timeout=1s), as with the defaults: a try that
    // timed out was counted as keeping the place, so the first in line never kept it again and lost it after a term
    // (with a 2 s term the third was shorter than the wait, which hid it but for a soak run's "tickets 2,3 before, 5
    // after")
    Duration lease = Duration.ofSeconds(6);
    try (LockService a = connect("keep_locks", "", lease); LockService b = connect("keep_locks", "", lease);
        LockService c = connect("keep_locks", "", lease)) {
      Lease held = a.lock("job").acquire();
      AtomicReference<Lease> first = new AtomicReference<>();
      AtomicReference<Lease> second = new AtomicReference<>();
      Thread w1 = Thread.ofPlatform().start(() -> first.set(waitFor(b, "job")));
      awaitCount("SELECT COUNT(*) FROM keep_locks_queue", 1);
      Thread w2 = Thread.ofPlatform().start(() -> second.set(waitFor(c, "job")));
      awaitCount("SELECT COUNT(*) FROM keep_locks_queue", 2);
      String tickets = "SELECT string_agg(ticket::text, ',' ORDER BY ticket) FROM keep_locks_queue";
      String before = text(tickets);
      try (Connection admin = holdingKeyRows("keep_locks")) {
        Thread.sleep(lease.toMillis() * 7 / 4); // a place not kept for a term lapses
        // both places are live now, kept by looks at the line that need no row lock
        String live = text("SELECT string_agg(ticket::text, ',' ORDER BY ticket) FROM keep_locks_queue "
            + "WHERE expires_at > now()");
        admin.rollback();
        assertEquals(before, live, "places in line lapsed while the name's row was locked");
      }
      Thread.sleep(500); // the tries that waited for the row go on
      // (the holder's renewals needed the row too: its lease may have lapsed, and the first waiter been granted)
      String after = text(tickets);
      assertTrue(after != null && List.of(before.split(",")).containsAll(List.of(after.split(","))),
          "the waiters lost their places in line while the name's row was locked: tickets " + before + " before, "
          + after + " after");
      held.release();
      w1.join(Duration.ofSeconds(10));
      assertNotNull(first.get(), "the first waiter in line was not granted");
      assertTrue(w2.isAlive(), "the second waiter was granted beside the first");
      first.get().release();
      w2.join(Duration.ofSeconds(10));
      assertNotNull(second.get(), "the second waiter was not granted after the first");
      second.get().release();
    }
  }

  /**
   * A renewal the service's close cuts short says the service was closed: the close shuts the pool down, which aborts
   * the connection in use, and HikariCP then fails even its close with a NullPointerException, which reached the
   * caller as "unexpected failure renewing" (the TCK's chaos storm on H2, closing services under their workers). Here
   * the renewal waits for the name's row, which another transaction holds, while the service closes.
   */
  @Test
  void aRenewalTheServiceClosesUnderSaysTheServiceClosed() throws Exception {
    LockService s = connect("close_renew_locks", "");
    Lease held = s.lock("job").acquire();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    try (Connection admin = holdingKeyRows("close_renew_locks")) {
      Thread renewing = Thread.ofPlatform().start(() -> {
        try {
          held.renew();
        } catch (RuntimeException e) {
          failure.set(e);
        }
      });
      long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (count("SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE "
          + "'%close_renew_locks_keys%' AND query NOT LIKE '%pg_stat_activity%'") == 0) {
        assertTrue(System.nanoTime() - end < 0, "the renewal did not wait for the row within 10 s");
        Thread.sleep(5);
      }
      s.close();
      renewing.join(Duration.ofSeconds(10));
      admin.rollback();
    }
    assertTrue(failure.get() instanceof ServiceClosedException,
        "a renewal cut short by close: " + failure.get());
  }

  private static Lease waitFor(LockService s, String name) {
    try {
      return s.lock(name).tryAcquire(Duration.ofSeconds(30)).orElse(null);
    } catch (InterruptedException e) {
      return null;
    }
  }

  private static void awaitCount(String query, long n) throws Exception {
    long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (count(query) != n) {
      assertTrue(System.nanoTime() - end < 0, "not " + n + " rows within 10 s: " + query);
      Thread.sleep(20);
    }
  }

  private static String text(String query) throws Exception {
    try (Connection c = pg.admin(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(query)) {
      rs.next();
      return rs.getString(1);
    }
  }

  /** A release in a {@code finally} after an interrupt, on a virtual thread, still frees the lock. */
  @Test
  void releaseOnAnInterruptedVirtualThreadFreesTheLock() throws Exception {
    try (LockService a = connect("vrel_locks", ""); LockService b = connect("vrel_locks", "")) {
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread t = Thread.ofVirtual().start(() -> {
        try {
          Lease l = a.lock("job").acquire();
          Thread.currentThread().interrupt(); // the work under the lock was interrupted
          l.release();
          assertTrue(Thread.currentThread().isInterrupted(), "the release swallowed the caller's interrupt");
        } catch (Throwable e) {
          failure.set(e);
        }
      });
      assertTrue(t.join(Duration.ofSeconds(10)), "the release did not end");
      if (failure.get() != null) {
        throw new AssertionError("the release on an interrupted virtual thread failed", failure.get());
      }
      b.lock("job").tryAcquire(Duration.ZERO).orElseThrow(
          () -> new AssertionError("the lock released on an interrupted virtual thread stayed held")).release();
    }
  }

  @Test
  void schemaVersion1IsMigratedOnlyWhenAsked() throws Exception {
    sql("DROP TABLE IF EXISTS v1_locks, v1_locks_keys, v1_locks_meta, v1_locks_queue", "DROP SEQUENCE IF EXISTS v1_locks_fence",
        "CREATE TABLE v1_locks_meta (setting VARCHAR(64) NOT NULL PRIMARY KEY, setting_value VARCHAR(256) NOT NULL)",
        "INSERT INTO v1_locks_meta (setting, setting_value) VALUES ('schema_version', '1')",
        "CREATE TABLE v1_locks_keys (lock_key VARCHAR(600) NOT NULL PRIMARY KEY)",
        "CREATE TABLE v1_locks (lock_key VARCHAR(600) NOT NULL, holder VARCHAR(64) NOT NULL, mode CHAR(1) NOT NULL, "
            + "permits INTEGER NOT NULL, token BIGINT NOT NULL, owner VARCHAR(300) NOT NULL, "
            + "acquired_at TIMESTAMP WITH TIME ZONE NOT NULL, expires_at TIMESTAMP WITH TIME ZONE NOT NULL, "
            + "PRIMARY KEY (lock_key, holder))",
        "CREATE SEQUENCE v1_locks_fence START WITH 1 NO CYCLE");
    LockException e = assertThrows(LockException.class, () -> LockProviders.connect(pg.lockUrl(pg.address())
        + "&table=v1_locks").close());
    assertTrue(e.getMessage().contains("version 1") && e.getMessage().contains("v1_locks_queue")
        && e.getMessage().contains("createSchema=true"), "the error does not say what to migrate, and how: " + e.getMessage());
    try (LockService s = connect("v1_locks", "")) {
      s.lock("after-migration").acquire().release();
    }
    assertEquals(2, count("SELECT CAST(setting_value AS INTEGER) FROM v1_locks_meta WHERE setting = 'schema_version'"));
  }

  private static long count(String query) throws Exception {
    return Long.parseLong(text(query));
  }

  /**
   * Every keyword of PostgreSQL (all of {@code pg_get_keywords()}) and of H2 is either refused by the
   * {@code table} check or usable, unquoted, as a table and schema name on both databases: the check's list of
   * reserved words leaves out none that would fail later with a syntax error.
   */
  @Test
  void everyKeywordIsRefusedOrUsableAsATableName() throws Exception {
    java.util.Set<String> words = new java.util.TreeSet<>();
    try (Connection c = pg.admin(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT word FROM pg_get_keywords()")) {
      while (rs.next()) {
        words.add(rs.getString(1));
      }
    }
    // H2 names its keywords as constants of its parser's utility class
    for (java.lang.reflect.Field f : org.h2.util.ParserUtil.class.getFields()) {
      if (f.getType() == int.class && org.h2.util.ParserUtil.isKeyword(f.getName(), true)) {
        words.add(f.getName().toLowerCase(java.util.Locale.ROOT));
      }
    }
    assertTrue(words.size() > 400 && words.contains("select") && words.contains("rownum"), "keywords: " + words);
    java.util.List<String> refused = new java.util.ArrayList<>();
    java.util.List<String> broken = new java.util.ArrayList<>();
    try (Connection p = pg.admin(); Statement ps = p.createStatement();
        Connection h = java.sql.DriverManager.getConnection("jdbc:h2:mem:keywords;DB_CLOSE_DELAY=-1");
        Statement hs = h.createStatement()) {
      for (String w : words) {
        try {
          JdbcConfig.TableNames.of(dev.tumbler.lock.spi.LockUrl.parse("lock:jdbc:h2:mem:x"), w);
          JdbcConfig.TableNames.of(dev.tumbler.lock.spi.LockUrl.parse("lock:jdbc:h2:mem:x"), w + ".locks");
        } catch (dev.tumbler.lock.InvalidLockUrlException e) {
          refused.add(w);
          continue;
        }
        for (Statement s : List.of(ps, hs)) {
          try {
            s.execute("CREATE TABLE " + w + " (lock_key VARCHAR(10))");
            s.execute("SELECT lock_key FROM " + w + " WHERE lock_key = 'x' FOR UPDATE");
            s.execute("DROP TABLE " + w);
            s.execute("CREATE SCHEMA " + w);
            s.execute("CREATE TABLE " + w + ".locks (lock_key VARCHAR(10))");
            s.execute("DROP TABLE " + w + ".locks");
            s.execute("DROP SCHEMA " + w);
          } catch (java.sql.SQLException e) {
            broken.add(w + " (" + (s == ps ? "postgresql" : "h2") + ": " + e.getMessage().lines().findFirst().orElse("")
                + ")");
          }
        }
      }
    }
    assertTrue(broken.isEmpty(), "accepted as table or schema names, but refused by the database: " + broken);
    assertTrue(refused.containsAll(List.of("select", "user", "rownum", "table")), "refused: " + refused);
  }

  @Test
  void fencingSequenceWithACacheIsRefused() throws Exception {
    try (LockService s = connect("cached_locks", "")) {
      s.lock("a").acquire().release();
    }
    // a cache per session would hand out tokens out of order: a later grant could get a smaller one
    sql("ALTER SEQUENCE cached_locks_fence CACHE 20");
    try {
      LockException e = assertThrows(LockException.class, () -> connect("cached_locks", "").close());
      assertTrue(e.getMessage().contains("cached_locks_fence") && e.getMessage().contains("CACHE 1"),
          "the error does not name the sequence and the way out: " + e.getMessage());
    } finally {
      sql("ALTER SEQUENCE cached_locks_fence CACHE 1");
    }
    try (LockService s = connect("cached_locks", "")) {
      s.lock("a").acquire().release();
    }
  }

  @Test
  void missingSchemaIsAnErrorNamingTheTable() throws Exception {
    LockException e = assertThrows(LockException.class, () -> LockProviders.connect(pg.lockUrl(pg.address())
        + "&table=absent_locks").close());
    assertTrue(e.getMessage().contains("absent_locks_meta") && e.getMessage().contains("createSchema=true"),
        "the error does not name the missing table and the way out: " + e.getMessage());
  }

  @Test
  void fencedUpdateOfOrdersRejectsStaleHolder() throws Exception {
    // the README's worked example
    sql("DROP TABLE IF EXISTS orders",
        "CREATE TABLE orders (id BIGINT PRIMARY KEY, status VARCHAR(20) NOT NULL)",
        "INSERT INTO orders (id, status) VALUES (42, 'new')");
    FencedTable orders = FencedTable.of("orders", "fence_token");
    sql(orders.addColumnDdl());
    try (LockService a = connect("orders_locks", ""); LockService b = connect("orders_locks", "");
        Connection c = pg.admin()) {
      Lease first = a.lock("order-42").acquire();
      assertEquals(1, orders.updateOrThrow(c, first, "status = ?", "id = ?", "packed", 42L));
      assertEquals(1, orders.updateOrThrow(c, first, "status = ?", "id = ?", "packing", 42L),
          "a holder could not write twice with its own token");
      // the first holder stalls (a long GC pause): its lease ends, and another holder takes over and writes
      a.unwrap(dev.tumbler.lock.spi.LeaseRenewer.class).pause();
      Lease second = b.lock("order-42").tryAcquire(LEASE.multipliedBy(3).plusSeconds(3)).orElseThrow();
      assertEquals(1, orders.updateOrThrow(c, second, "status = ?", "id = ?", "shipped", 42L));
      // the first holder wakes up and writes: the database rejects it
      StaleTokenException stale = assertThrows(StaleTokenException.class,
          () -> orders.updateOrThrow(c, first, "status = ?", "id = ?", "cancelled", 42L));
      assertEquals(first.fencingToken(), stale.token());
      assertEquals(0, orders.update(c, first.fencingToken(), "status = ?", "id = ?", "cancelled", 42L));
      try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT status, fence_token FROM orders WHERE id = 42")) {
        rs.next();
        assertEquals("shipped", rs.getString(1), "the stale holder's write got through");
        assertEquals(second.fencingToken(), rs.getLong(2));
      }
      second.release();
      first.release();
    }
  }
}
