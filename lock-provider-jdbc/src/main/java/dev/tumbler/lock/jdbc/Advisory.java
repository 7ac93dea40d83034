package dev.tumbler.lock.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.spi.Deadline;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code mode=advisory} on PostgreSQL: each grant is a session advisory lock ({@code pg_try_advisory_lock},
 * {@code pg_try_advisory_lock_shared} for read locks, one lock per permit among {@code maxPermits} slot
 * locks for semaphores). The server releases a session's locks the moment the session ends, so a crashed
 * client frees its locks at once, and no lock row is ever written.
 *
 * <h2>Sessions</h2>
 * A service keeps the connections that hold its locks out of the pool, as {@link Session}s, and puts many
 * grants on one session: a grant goes to a session that holds nothing of the same lock name (a session
 * re-taking its own advisory lock would succeed, so two grants of one name never share a session), else
 * to a new one. So a service holding a thousand different locks pins one connection, and one holding the
 * same read lock three times pins three. An election's grant has a session of its own, whose
 * {@code application_name} names the leader. A session that holds nothing goes back to the pool.
 *
 * <p>A watcher checks every held session every {@code recheck}; a session that fails the check (ended,
 * cut off, or not answering within {@code timeout}) is dropped: its leases are told {@code onLost}
 * ({@link LeaseLostEvent.Reason#CONNECTION_LOST}) first, then its connection is closed for good, which
 * ends the session if the server still had it.
 *
 * <h2>What it keeps, and what it cannot</h2>
 * It keeps mutual exclusion among the sessions of one database; fencing tokens drawn from the same
 * sequence as in lease mode, in the grant's own statement, after the lock is held (a later holder's token
 * is larger: it drew after every earlier holder, who drew while holding); elections. It cannot keep
 * {@code LOST_NOTIFICATION}: a session that is terminated or cut off loses its locks on the server at once,
 * and its client hears only at the next check. Nor {@code LEASE_EXPIRY}: a holder that is paused, or whose
 * session the server still believes alive, keeps its locks as long as that lasts; leases have no term.
 * Waiters are woken by {@code pg_notify} on release and look again within {@code recheck} (a session
 * that ended sends nothing). Not fair. Thread safe.
 */
final class Advisory {
  private static final Logger LOG = LoggerFactory.getLogger(Advisory.class);

  private final JdbcLockService service;
  private final DataSource dataSource;
  private final Duration recheck;
  private final int checkTimeoutSeconds;
  private final String lockSql;
  private final String sharedSql;
  private final String electionSql;
  private final String permitsSql;
  private final String unlockSql;
  private final String unlockSharedSql;
  private final String unlockSlotsSql;
  private final String leaderSql;
  private final String slotsHeldSql;

  /** Sessions holding (or trying) grants; guarded by itself. */
  private final List<Session> sessions = new ArrayList<>();
  private Thread watcher;
  private boolean closed;

  Advisory(JdbcLockService service, DataSource dataSource, JdbcConfig config) {
    this.service = service;
    this.dataSource = dataSource;
    this.recheck = config.recheck();
    this.checkTimeoutSeconds = (int) Math.max(1, (config.timeout().toMillis() + 999) / 1000);
    JdbcConfig.TableNames t = config.table();
    String next = "nextval('" + t.sequence() + "')";
    // CASE evaluates nextval only when the lock was taken: a token is drawn while holding, never before
    this.lockSql = "SELECT CASE WHEN pg_try_advisory_lock(?) THEN " + next + " END";
    this.sharedSql = "SELECT CASE WHEN pg_try_advisory_lock_shared(?) THEN " + next + " END";
    // OFFSET 0 keeps the subquery from being merged: the lock is tried once, then the name set when held
    this.electionSql = "SELECT t, CASE WHEN t IS NOT NULL THEN set_config('application_name', ?, false) END FROM "
        + "(SELECT CASE WHEN pg_try_advisory_lock(?) THEN " + next + " END AS t OFFSET 0) s";
    // the CTE holds volatile calls, so it runs once; the caller gives back what it took when it is too little
    this.permitsSql = "WITH got AS (SELECT k FROM unnest(?::bigint[]) AS k WHERE pg_try_advisory_lock(k) LIMIT ?) "
        + "SELECT array_agg(k), CASE WHEN count(*) = ? THEN " + next + " END FROM got";
    String notify = "pg_notify('" + t.channel() + "', ?)";
    this.unlockSql = "SELECT pg_advisory_unlock(?), " + notify;
    this.unlockSharedSql = "SELECT pg_advisory_unlock_shared(?), " + notify;
    this.unlockSlotsSql = "SELECT (SELECT count(*) FROM unnest(?::bigint[]) AS k WHERE pg_advisory_unlock(k)), " + notify;
    String thisDatabase = "l.database = (SELECT oid FROM pg_database WHERE datname = current_database())";
    this.leaderSql = "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        + "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.classid = ?::bigint::oid "
        + "AND l.objid = ?::bigint::oid AND " + thisDatabase;
    this.slotsHeldSql = "SELECT count(*) FROM pg_locks l JOIN unnest(?::bigint[]) AS k "
        + "ON l.classid = ((k >> 32) & 4294967295)::oid AND l.objid = (k & 4294967295)::oid "
        + "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND " + thisDatabase;
  }

  /** The advisory lock key of a lock key: the first 64 bits of its SHA-256 (collisions: about 2^-64 a pair). */
  static long keyOf(String lockKey) {
    try {
      byte[] h = MessageDigest.getInstance("SHA-256").digest(lockKey.getBytes(StandardCharsets.UTF_8));
      long k = 0;
      for (int i = 0; i < 8; i++) {
        k = (k << 8) | (h[i] & 0xff);
      }
      return k;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  /** The slot keys of a semaphore: one advisory lock per permit. */
  static Long[] slotsOf(String lockKey, int maxPermits) {
    Long[] slots = new Long[maxPermits];
    for (int i = 0; i < maxPermits; i++) {
      slots[i] = keyOf(lockKey + "#" + i);
    }
    return slots;
  }

  /**
   * One try, no wait: the lease, or null when the lock is taken.
   *
   * @param owner for an election, its candidate, set as the session's {@code application_name}
   * @param deadline bounds the wait for a connection, when a new session is needed
   * @throws InterruptedException if interrupted while waiting for a connection
   */
  AdvisoryLease tryGrant(Primitive p, String owner, int permits, int maxPermits, long sent, Deadline deadline)
      throws SQLException, InterruptedException {
    Session s = reserve(p, deadline);
    AdvisoryLease granted = null;
    try {
      synchronized (s) {
        if (s.dead) {
          throw new SQLException("the session was dropped", "08003");
        }
        // run to its end even if interrupted: a cut read would end the session, and every lock it holds with it
        granted = JdbcLockService.uncut(() -> grantOn(s, p, owner, permits, maxPermits, sent));
      }
      if (granted == null) {
        return null;
      }
      synchronized (sessions) {
        // a session dropped since the grant (another call on it failed, or its check did) took the lock with it: the
        // drop marks lost only the leases it finds here, so a grant it did not find is no grant
        if (s.dead) {
          granted = null;
          throw new SQLException("the session holding the grant was dropped", "08003");
        }
        s.leases.add(granted);
        startWatcher();
      }
      return granted;
    } catch (SQLException | RuntimeException e) {
      // a lock may have been taken before the failure: give back whatever of this name the session holds,
      // or, if that fails too, drop the session
      granted = null;
      undo(s, p, maxPermits, e);
      if (s.dead && !(e instanceof SQLException se && JdbcLockService.sessionEnded(se))) {
        // another call dropped the session under this one (its connection closed: "Connection is closed", with no
        // SQLState): the session ended, as a broken connection would have ended it
        throw new SQLException("the session was dropped while " + p.describe() + " was tried on it", "08003", e);
      }
      throw e;
    } finally {
      if (granted == null) {
        unreserve(s, p.key());
      }
    }
  }

  /** One try for {@code p} on session {@code s}, whose monitor the caller holds: the lease, or null. */
  private AdvisoryLease grantOn(Session s, Primitive p, String owner, int permits, int maxPermits, long sent)
      throws SQLException {
    if (p.mode() == 'P') {
      Permits got = tryPermits(s.connection, p, permits, maxPermits);
      return got == null ? null : new AdvisoryLease(this, service, p, s, got.token(), permits, sent, got.slots());
    }
    String sql = p.isElection() ? electionSql : p.mode() == 'S' ? sharedSql : lockSql;
    Long token;
    try (PreparedStatement st = s.connection.prepareStatement(sql)) {
      int i = 1;
      if (p.isElection()) {
        st.setString(i++, owner.length() > 63 ? owner.substring(0, 63) : owner);
      }
      st.setLong(i, keyOf(p.key()));
      try (ResultSet rs = st.executeQuery()) {
        rs.next();
        token = rs.getObject(1, Long.class);
      }
    }
    return token == null ? null : new AdvisoryLease(this, service, p, s, token, permits, sent, null);
  }

  /** A semaphore's grant: the slot locks taken and the token drawn after them. */
  private record Permits(Long[] slots, long token) {}

  /** Exactly {@code permits} slots and their token, or null (with whatever was taken given back). */
  private Permits tryPermits(Connection c, Primitive p, int permits, int maxPermits) throws SQLException {
    Long[] slots = slotsOf(p.key(), maxPermits);
    // start at a random slot, so that concurrent clients do not all try the same ones first
    int start = ThreadLocalRandom.current().nextInt(maxPermits);
    Long[] order = new Long[maxPermits];
    for (int i = 0; i < maxPermits; i++) {
      order[i] = slots[(start + i) % maxPermits];
    }
    Long token;
    Long[] taken;
    try (PreparedStatement st = c.prepareStatement(permitsSql)) {
      st.setArray(1, c.createArrayOf("bigint", order));
      st.setInt(2, permits);
      st.setInt(3, permits);
      try (ResultSet rs = st.executeQuery()) {
        rs.next();
        Array got = rs.getArray(1);
        taken = got == null ? new Long[0] : toLongs((Object[]) got.getArray());
        token = rs.getObject(2, Long.class);
      }
    }
    if (token == null || taken.length != permits) {
      if (taken.length > 0) {
        unlockSlots(c, p, taken);
      }
      return null;
    }
    return new Permits(taken, token);
  }

  private static Long[] toLongs(Object[] a) {
    Long[] l = new Long[a.length];
    for (int i = 0; i < a.length; i++) {
      l[i] = ((Number) a[i]).longValue();
    }
    return l;
  }

  private void unlockSlots(Connection c, Primitive p, Long[] slots) throws SQLException {
    try (PreparedStatement st = c.prepareStatement(unlockSlotsSql)) {
      st.setArray(1, c.createArrayOf("bigint", slots));
      st.setString(2, p.key());
      st.execute();
    }
  }

  /** Gives a lease's locks back, tells waiters, and returns the session to the pool once it holds nothing. */
  void release(AdvisoryLease lease) {
    Session s = lease.session();
    Primitive p = lease.primitive();
    Exception failed = null;
    try {
      synchronized (s) {
        if (s.dead) {
          return; // dropped: its connection is closed, and its locks went with its session
        }
        try {
          JdbcLockService.uncut(() -> {
            unlock(s.connection, p, lease.slots());
            return null;
          });
        } catch (SQLException | RuntimeException e) {
          failed = e;
        }
      }
      if (failed != null) {
        drop(s, "giving back " + p.describe() + " failed: " + failed.getMessage(), failed);
        if (!(failed instanceof SQLException se && JdbcLockService.sessionEnded(se))) {
          throw service.translate("releasing " + p.describe(), failed);
        }
        // the session, and with it the lock, is gone already
      }
    } finally {
      synchronized (sessions) {
        s.leases.remove(lease);
      }
      unreserve(s, p.key());
    }
  }

  /** Gives back {@code p}'s lock (or the given slots, or all of a semaphore's) on a session, and tells waiters. */
  private void unlock(Connection c, Primitive p, Long[] slots) throws SQLException {
    if (p.mode() == 'P') {
      unlockSlots(c, p, slots);
      return;
    }
    try (PreparedStatement st = c.prepareStatement(p.mode() == 'S' ? unlockSharedSql : unlockSql)) {
      st.setLong(1, keyOf(p.key()));
      st.setString(2, p.key());
      st.execute();
    }
  }

  /** Whether the lease's session is still held by this service (the watcher drops sessions that fail). */
  boolean stillHeld(AdvisoryLease lease) {
    return !lease.session().dead;
  }

  /** How many of a semaphore's slot locks some session holds. */
  int slotsHeld(Primitive p, int maxPermits) throws SQLException {
    try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(slotsHeldSql)) {
      st.setArray(1, c.createArrayOf("bigint", slotsOf(p.key(), maxPermits)));
      try (ResultSet rs = st.executeQuery()) {
        rs.next();
        return (int) Math.min(maxPermits, rs.getLong(1));
      }
    }
  }

  /** The candidate whose session holds the election's lock. */
  Optional<String> leaderOf(Primitive p) throws SQLException {
    long k = keyOf(p.key());
    try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(leaderSql)) {
      st.setLong(1, k >>> 32);
      st.setLong(2, k & 0xffffffffL);
      try (ResultSet rs = st.executeQuery()) {
        return rs.next() ? Optional.ofNullable(rs.getString(1)) : Optional.empty();
      }
    }
  }

  /** Drops every session (the service is closing; its leases were released or lost before). */
  void close() {
    List<Session> all;
    Thread w;
    synchronized (sessions) {
      closed = true;
      all = new ArrayList<>(sessions);
      w = watcher;
    }
    if (w != null) {
      w.interrupt();
    }
    for (Session s : all) {
      drop(s, "the service was closed", null);
    }
  }

  // ---- sessions

  /**
   * One connection kept out of the pool and the grants it holds. Its calls are made holding its monitor;
   * {@link #keys} and {@link #leases} are guarded by {@link Advisory#sessions}.
   */
  static final class Session {
    final Connection connection;
    /** Only an election's grant, whose {@code application_name} names the leader. */
    final boolean dedicated;
    /** Lock keys with a grant or an attempt on this session: at most one of each. */
    final Set<String> keys = new HashSet<>();
    final Set<AdvisoryLease> leases = new HashSet<>();
    volatile boolean dead;

    Session(Connection connection, boolean dedicated) {
      this.connection = connection;
      this.dedicated = dedicated;
    }
  }

  /** A live session without a grant of {@code p}'s name (an election's: a new one), reserved for it. */
  private Session reserve(Primitive p, Deadline deadline) throws SQLException, InterruptedException {
    boolean dedicated = p.isElection();
    if (!dedicated) {
      synchronized (sessions) {
        if (closed) {
          throw new SQLException("the service is closed", "08003");
        }
        for (Session s : sessions) {
          if (!s.dead && !s.dedicated && !s.keys.contains(p.key())) {
            s.keys.add(p.key());
            return s;
          }
        }
      }
    }
    // (the session is kept: its network timeout is left as the pool set it)
    Connection c = service.borrow(deadline, "trying " + p.describe(), false);
    try {
      if (!c.getAutoCommit()) {
        c.setAutoCommit(true); // a session lock taken in a transaction outlives it; none is needed
      }
    } catch (SQLException e) {
      discard(c);
      throw e;
    }
    Session s = new Session(c, dedicated);
    synchronized (sessions) {
      if (closed) {
        discard(c);
        throw new SQLException("the service is closed", "08003");
      }
      s.keys.add(p.key());
      sessions.add(s);
    }
    service.keepOneSpare();
    return s;
  }

  /** Ends a reservation or grant of {@code key} on {@code s}; a session left with nothing goes back to the pool. */
  private void unreserve(Session s, String key) {
    boolean idle;
    synchronized (sessions) {
      s.keys.remove(key);
      idle = s.keys.isEmpty() && !s.dead;
      if (idle) {
        sessions.remove(s);
      }
    }
    if (idle) {
      synchronized (s) {
        try {
          if (s.dedicated) {
            try (var st = s.connection.createStatement()) {
              st.execute("RESET application_name");
            }
          }
          s.connection.close();
        } catch (SQLException e) {
          discard(s.connection);
        }
      }
    }
  }

  private void undo(Session s, Primitive p, int maxPermits, Exception cause) {
    synchronized (s) {
      if (s.dead) {
        return;
      }
      try {
        JdbcLockService.uncut(() -> {
          unlock(s.connection, p, slotsOf(p.key(), maxPermits));
          return null;
        });
        return;
      } catch (SQLException | RuntimeException e) {
        cause.addSuppressed(e);
      }
    }
    drop(s, "an attempt on " + p.describe() + " failed and could not be undone: " + cause.getMessage(), cause);
  }

  /**
   * Drops a session: its leases hear {@code onLost} first, then its connection is closed for good (ending
   * the session on the server, if it still had it, and with it every lock it held).
   */
  private void drop(Session s, String why, Exception cause) {
    List<AdvisoryLease> lost;
    synchronized (sessions) {
      if (s.dead) {
        return;
      }
      s.dead = true;
      sessions.remove(s);
      lost = new ArrayList<>(s.leases);
    }
    for (AdvisoryLease l : lost) {
      l.markLost(LeaseLostEvent.Reason.CONNECTION_LOST, "the database session holding it was dropped: " + why, cause);
    }
    discard(s.connection);
  }

  private void startWatcher() {
    if (watcher == null && !closed) {
      watcher = Thread.ofVirtual().name("tumbler-jdbc-advisory-watch").start(this::watch);
    }
  }

  /** Checks every held session every {@code recheck}, until the service closes or holds nothing. */
  private void watch() {
    while (true) {
      List<Session> held;
      synchronized (sessions) {
        if (closed || sessions.isEmpty()) {
          watcher = null;
          return;
        }
        held = new ArrayList<>(sessions);
      }
      for (Session s : held) {
        boolean alive;
        synchronized (s) {
          if (s.dead) {
            continue;
          }
          try {
            alive = s.connection.isValid(checkTimeoutSeconds);
          } catch (SQLException e) {
            alive = false;
          }
        }
        if (!alive) {
          LOG.debug("a database session holding advisory locks failed its check; its leases are lost");
          drop(s, "it did not answer a check within " + checkTimeoutSeconds + "s", null);
        }
      }
      try {
        Thread.sleep(recheck);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Takes the connection out of the pool for good, so that no lock it may hold is handed on. */
  private void discard(Connection c) {
    try {
      if (dataSource instanceof HikariDataSource h) {
        h.evictConnection(c);
        return;
      }
      c.abort(Runnable::run);
      c.close();
    } catch (SQLException | RuntimeException e) {
      LOG.debug("discarding a connection failed: {}", e.toString());
    }
  }
}
