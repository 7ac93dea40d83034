package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.LockException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * PostgreSQL (9.5 or newer: {@code ON CONFLICT}). The clock is {@code clock_timestamp()}, the time the
 * statement runs rather than the start of its transaction, so a grant made after waiting for a row lock
 * still gets its full term. Releases notify waiters with {@code pg_notify}, in the same statement. A grant
 * is one call: pgjdbc sends the statements of a multi-statement {@code PreparedStatement} with one Sync,
 * and the server runs the messages before a Sync as one implicit transaction.
 */
final class PostgresDialect implements Dialect {

  @Override
  public String name() {
    return "postgresql";
  }

  @Override
  public String now() {
    return "clock_timestamp()";
  }

  @Override
  public String nowPlusMillis(long millis) {
    return "(clock_timestamp() + interval '" + millis + " milliseconds')";
  }

  @Override
  public String millisUntil(String column) {
    return "CAST(FLOOR(EXTRACT(EPOCH FROM (" + column + " - clock_timestamp())) * 1000) AS BIGINT)";
  }

  @Override
  public String timestampType() {
    return "TIMESTAMP WITH TIME ZONE";
  }

  @Override
  public String nextValue(String sequence) {
    return "nextval('" + sequence + "')";
  }

  @Override
  public String createSequence(String sequence) {
    return "CREATE SEQUENCE IF NOT EXISTS " + sequence + " START WITH 1 NO CYCLE";
  }

  @Override
  public String insertKeyIfAbsent(String table, String column) {
    return "INSERT INTO " + table + " (" + column + ") VALUES (?) ON CONFLICT DO NOTHING";
  }

  @Override
  public String insertReturning(String insert, String column) {
    return insert + " RETURNING " + column;
  }

  @Override
  public List<String> lockTimeoutStates() {
    // lock_not_available (lock_timeout), query_canceled (statement_timeout)
    return List.of("55P03", "57014");
  }

  @Override
  public boolean isMissingObject(SQLException e) {
    return "42P01".equals(e.getSQLState());
  }

  /** The least time a new connection is given to log in, whatever the {@code timeout}. */
  static final long MIN_LOGIN_SECONDS = 5;

  /**
   * A reply that does not come within the timeout (a partition) fails the call: a little above the server-side limits
   * of {@link #timeoutProperties}, which end a waiting statement first and leave the connection usable.
   */
  @Override
  public java.util.Optional<Duration> statementReadTimeout(Duration timeout) {
    return java.util.Optional.of(Duration.ofSeconds(Math.max(2, (timeout.toMillis() + 999) / 1000 + 1)));
  }

  @Override
  public Map<String, String> timeoutProperties(Duration timeout) {
    long ms = timeout.toMillis();
    String seconds = Long.toString(Math.max(1, (ms + 999) / 1000));
    Map<String, String> p = new LinkedHashMap<>();
    p.put("connectTimeout", seconds);
    // opening a session (a new backend process) takes longer than a statement on a busy server: a 1 s timeout failed
    // a service's first connection with "Connection attempt timed out" in a suite run. It bounds connect()'s first
    // connection and the pool's openings in the background; a wait's borrow keeps its own bound (JdbcLockService)
    p.put("loginTimeout", Long.toString(Math.max(MIN_LOGIN_SECONDS, (ms + 999) / 1000)));
    // the driver's read timeout bounds logging in too: a new backend on a busy server answered its authentication
    // request after more than the 2 s that bound a statement's reply (a suite run: "The connection attempt failed",
    // Read timed out, in doAuthentication). Logging in gets the login bound; each connection's statements get
    // statementReadTimeout, set once it is logged in
    p.put("socketTimeout", Long.toString(Math.max(MIN_LOGIN_SECONDS, (ms + 999) / 1000)));
    p.put("cancelSignalTimeout", seconds);
    p.put("tcpKeepAlive", "true");
    // a client cut off inside a transaction must not hold a key's row lock for long
    p.put("options", "-c lock_timeout=" + ms + " -c statement_timeout=" + ms
        + " -c idle_in_transaction_session_timeout=" + ms);
    return p;
  }

  /**
   * Refuses a fencing sequence with a {@code CACHE} above 1 (each session would hand out values from a block
   * of its own, out of order with the others', so a later grant could get a smaller token) or that is not
   * logged ({@code UNLOGGED}, PostgreSQL 15 and later: reset to its start after a crash). A sequence that is
   * missing is left to the first grant's error, as before.
   */
  @Override
  public void checkSequence(Connection c, String sequence) throws SQLException {
    try (PreparedStatement s = c.prepareStatement("SELECT q.seqcache, r.relpersistence FROM pg_sequence q "
        + "JOIN pg_class r ON r.oid = q.seqrelid WHERE q.seqrelid = to_regclass(?)")) {
      s.setString(1, sequence);
      try (ResultSet rs = s.executeQuery()) {
        if (!rs.next()) {
          return;
        }
        long cache = rs.getLong(1);
        String persistence = rs.getString(2);
        if (cache > 1) {
          throw new LockException("the fencing sequence " + sequence + " has CACHE " + cache + ": each session "
              + "would hand out tokens from a block of its own, out of order with the others', and a later grant "
              + "could get a smaller token; run ALTER SEQUENCE " + sequence + " CACHE 1");
        }
        if ("u".equals(persistence)) {
          throw new LockException("the fencing sequence " + sequence + " is UNLOGGED: after a crash it starts "
              + "again from its first value, and tokens would go back; run ALTER SEQUENCE " + sequence
              + " SET LOGGED, then move it past every token handed out");
        }
      }
    }
  }

  @Override
  public void lockForSchemaChange(Connection c) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("SELECT pg_advisory_xact_lock(7734251901)");
    }
  }

  @Override
  public boolean grantsInOneCall() {
    return true;
  }

  @Override
  public boolean canNotify() {
    return true;
  }

  @Override
  public String dequeue(String queue, String channel) {
    return "WITH d AS (DELETE FROM " + queue + " WHERE lock_key = ? AND waiter = ? RETURNING lock_key) "
        + "SELECT pg_notify('" + channel + "', lock_key) FROM d";
  }

  @Override
  public String release(String table, String queue, String channel, String local) {
    // NOTIFY costs every commit a turn on the server's notification queue: only when someone waits, and not when the
    // first in line is exclusive (">waiter key": it alone can be granted next, so it alone is woken) and waits in this
    // JVM (the release wakes it here). (local: letters, digits, '-', '_' and '.', as written into the statement)
    String first = "CASE WHEN h.mode = 'X' THEN h.waiter END";
    return "WITH d AS (DELETE FROM " + table + " WHERE lock_key = ? AND holder = ? RETURNING lock_key),\n"
        + " h AS (SELECT q.waiter, q.mode FROM " + queue + " q, d WHERE q.lock_key = d.lock_key AND q.expires_at > "
        + now() + " ORDER BY q.ticket LIMIT 1)\n"
        + "SELECT CASE WHEN h.mode <> 'X' OR left(h.waiter, " + local.length() + ") <> '" + local + "' THEN pg_notify('"
        + channel + "', COALESCE('>' || " + first + " || ' ', '') || d.lock_key) END, " + first
        + " FROM d LEFT JOIN h ON true";
  }
}
