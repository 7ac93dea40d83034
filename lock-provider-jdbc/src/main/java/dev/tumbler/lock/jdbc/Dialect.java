package dev.tumbler.lock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What differs between databases: the database clock in SQL, sequences, "insert if absent", reading a
 * generated token back, the DDL's types, and how a waiter can be woken. Everything else (the tables, the
 * grant transaction, the lease rule) is shared. A new database is one class implementing this interface
 * and a line in {@link #forSubprotocol}. Implementations are stateless and thread safe.
 *
 * <p>The clock: every expression that reads time reads the database's clock, never the client's, so
 * clients whose wall clocks disagree still agree on which leases have expired.
 */
interface Dialect {

  /** The JDBC subprotocol this dialect serves ({@code postgresql}, {@code h2}). */
  String name();

  /** An SQL expression for the database's current time, of the type {@link #timestampType()}. */
  String now();

  /** An SQL expression for the database's current time plus {@code millis} milliseconds. */
  String nowPlusMillis(long millis);

  /** An SQL expression for the whole milliseconds from the database's now to the timestamp {@code column}. */
  String millisUntil(String column);

  /** The column type of a timestamp with time zone. */
  String timestampType();

  /** An SQL expression that draws the next value of {@code sequence}. */
  String nextValue(String sequence);

  /** {@code CREATE SEQUENCE} if it does not exist. */
  String createSequence(String sequence);

  /**
   * A statement that inserts {@code (column) VALUES (?)} into {@code table} unless a row with that key
   * exists, without failing when it does (and waiting, rather than failing, for a concurrent insert).
   */
  String insertKeyIfAbsent(String table, String column);

  /**
   * Turns {@code insert} (an {@code INSERT ... VALUES (...)} statement) into a query whose one row holds
   * the inserted {@code column}.
   */
  String insertReturning(String insert, String column);

  /**
   * The clause that locks the name's key row for a grant's transaction of several calls: {@code FOR UPDATE}, which
   * waits for another transaction holding the row up to the database's own lock time-out. A dialect whose client
   * cannot end a call it gave up on at its network timeout (the server session would go on and take the row) locks
   * it without waiting; an attempt refused that way meets a {@linkplain #lockTimeoutStates() lock time-out state} and
   * is tried again.
   */
  default String lockKeyRow() {
    return "FOR UPDATE";
  }

  /**
   * SQLStates that mean "the row lock or statement waited too long" (the holder of the row is slow or
   * gone): an attempt that meets one is retried, not failed.
   */
  List<String> lockTimeoutStates();

  /**
   * Whether {@code e} says that the connection is gone (beyond SQLState class {@code 08}, which every
   * dialect treats so): the call is reported as the database being unreachable, and the service's own
   * pool evicts the connection.
   */
  default boolean isConnectionLost(SQLException e) {
    return false;
  }

  /** Whether {@code e} says that a table or sequence does not exist. */
  boolean isMissingObject(SQLException e);

  /**
   * Checks that {@code sequence} keeps handing out increasing values to every session, as fencing needs.
   * Nothing by default.
   *
   * @throws dev.tumbler.lock.LockException naming the sequence, what is wrong and the statement that mends it
   * @throws SQLException if the database cannot be asked
   */
  default void checkSequence(Connection c, String sequence) throws SQLException {}

  /** Driver properties that bound every call by {@code timeout} (connect, socket reads, lock waits). */
  Map<String, String> timeoutProperties(Duration timeout);

  /**
   * How long a reply to a statement may take on a connection once it is logged in, set on each new connection with
   * {@link Connection#setNetworkTimeout} when the driver's own read timeout (in {@link #timeoutProperties}) is the
   * longer one that logging in needs; empty where the properties bound both alike.
   */
  default java.util.Optional<Duration> statementReadTimeout(Duration timeout) {
    return java.util.Optional.empty();
  }

  /**
   * Serializes concurrent schema creation by several clients at once, inside the DDL's transaction
   * (PostgreSQL: a transaction-scoped advisory lock); nothing where the database serializes DDL itself.
   */
  default void lockForSchemaChange(Connection c) throws SQLException {}

  /**
   * Whether a {@code PreparedStatement} of several {@code ;}-separated statements reaches the database in
   * one round trip and runs as one transaction (committed at its end in auto-commit mode, rolled back
   * whole when one statement fails) in which each statement sees what committed before it started (READ
   * COMMITTED: a snapshot per statement), and whether {@code WITH ... AS (INSERT ... RETURNING ...)} is
   * available. The service then grants in one call (see {@code JdbcLockService}); otherwise in a
   * transaction of several calls.
   */
  default boolean grantsInOneCall() {
    return false;
  }

  /**
   * Whether this database can push release notifications to waiters ({@link #release} then names the
   * channel and {@link Notifications} listens on it).
   */
  default boolean canNotify() {
    return false;
  }

  /**
   * The release statement: deletes the row {@code WHERE lock_key = ? AND holder = ?}; where
   * {@link #canNotify()}, it also publishes the key on {@code channel} when it deleted a row and a live
   * waiter is in the name's line in {@code queue} (a refused acquire joins the line in the transaction that
   * refused it, so a waiter that saw this holder is in line unless its refusal was still committing while
   * this statement ran; it then looks again within {@code recheck}). When the first live waiter in line is
   * exclusive, the statement names it: the payload is {@code >waiter key} instead of {@code key}, and the
   * statement's second column is that waiter (null otherwise), so that only that waiter is woken ({@link Wakeups});
   * a release that names no waiter wakes every waiter of the key. Nothing is published when the waiter named is one
   * of this JVM's on the same database (its id starts with {@code local}): the release wakes it here. Whether a row
   * was deleted: a statement with a result set returns a row exactly when it deleted one, one without tells by its
   * update count (an uncertain grant's undo looks again until it deletes one).
   */
  String release(String table, String queue, String channel, String local);

  /**
   * The statement by which a waiter leaves the line: deletes {@code WHERE lock_key = ? AND waiter = ?} from
   * {@code queue}; where {@link #canNotify()}, it also publishes the key on {@code channel} (whoever was
   * behind it may go now). Whether a place was deleted: a statement with a result set returns a row for it, one
   * without tells by its update count.
   */
  default String dequeue(String queue, String channel) {
    return "DELETE FROM " + queue + " WHERE lock_key = ? AND waiter = ?";
  }

  /** The dialect for a JDBC URL's subprotocol, or null when there is none. */
  static Dialect forSubprotocol(String subprotocol) {
    return switch (subprotocol) {
      case "postgresql" -> new PostgresDialect();
      case "h2" -> new H2Dialect();
      default -> null;
    };
  }

  /** The subprotocols there is a dialect for. */
  List<String> SUPPORTED = List.of("postgresql", "h2");
}
