package dev.tumbler.lock.jdbc;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * H2 2.x, in memory, embedded or in server mode ({@code NETWORK_TIMEOUT} bounds a remote call). {@code CURRENT_TIMESTAMP} is the database's time (fixed
 * within a transaction). H2 has no notifications: waiters in this JVM are woken by its releases, others
 * re-check with a bounded backoff.
 */
final class H2Dialect implements Dialect {

  @Override
  public String name() {
    return "h2";
  }

  @Override
  public String now() {
    return "CURRENT_TIMESTAMP";
  }

  @Override
  public String nowPlusMillis(long millis) {
    return "DATEADD(MILLISECOND, " + millis + ", CURRENT_TIMESTAMP)";
  }

  @Override
  public String millisUntil(String column) {
    return "DATEDIFF(MILLISECOND, CURRENT_TIMESTAMP, " + column + ")";
  }

  @Override
  public String timestampType() {
    return "TIMESTAMP WITH TIME ZONE";
  }

  @Override
  public String nextValue(String sequence) {
    return "NEXT VALUE FOR " + sequence;
  }

  @Override
  public String createSequence(String sequence) {
    return "CREATE SEQUENCE IF NOT EXISTS " + sequence + " START WITH 1 NO CYCLE";
  }

  @Override
  public String insertKeyIfAbsent(String table, String column) {
    return "MERGE INTO " + table + " (" + column + ") KEY (" + column + ") VALUES (?)";
  }

  @Override
  public String insertReturning(String insert, String column) {
    return "SELECT " + column + " FROM FINAL TABLE (" + insert + ")";
  }

  /**
   * Without waiting ({@code LOCK_TIMEOUT_1} at once). H2's client gives up a call at its network timeout without
   * closing that call's socket (it only drops it), so the server session goes on: a grant's lock wait that outlasted
   * the call's bound took the row once free and kept it in a transaction nobody would end, until the client's garbage
   * collector closed the socket, and the name was refused to everyone. The wait can outlast {@code LOCK_TIMEOUT}
   * too: H2 waits again, for the whole time-out, for each new holder of a contended row. Another grant holds the
   * row for a few statements; the attempt is tried again after a short backoff, or woken by a release in this JVM.
   */
  @Override
  public String lockKeyRow() {
    return "FOR UPDATE NOWAIT";
  }

  @Override
  public List<String> lockTimeoutStates() {
    // LOCK_TIMEOUT_1 (50200), and a deadlock H2 resolves by failing one side (40001)
    return List.of("HYT00", "40001");
  }

  @Override
  public boolean isConnectionLost(SQLException e) {
    // in server mode: CONNECTION_BROKEN_1, DATABASE_CALLED_AT_SHUTDOWN / closed, IO_EXCEPTION_2
    int code = e.getErrorCode();
    return code == 90067 || code == 90121 || code == 90028;
  }

  @Override
  public boolean isMissingObject(SQLException e) {
    // 42104: "table not found (this database is empty)", H2's word for a missing table in an empty database
    return "42S02".equals(e.getSQLState()) || "42102".equals(e.getSQLState()) || "42104".equals(e.getSQLState())
        || e.getErrorCode() == 42102 || e.getErrorCode() == 42104 || e.getErrorCode() == 90036;
  }

  @Override
  public Map<String, String> timeoutProperties(Duration timeout) {
    // how long a statement waits for a row lock (the key row another client holds in its grant
    // transaction); and, in server mode (jdbc:h2:tcp:), how long a reply may take before the call fails
    // (a partition), a little above the lock wait, which ends a waiting statement first
    long ms = timeout.toMillis();
    return Map.of("LOCK_TIMEOUT", Long.toString(ms), "NETWORK_TIMEOUT", Long.toString(ms + 1000));
  }

  @Override
  public String release(String table, String queue, String channel, String local) {
    return "DELETE FROM " + table + " WHERE lock_key = ? AND holder = ?";
  }
}
