package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.LockException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * The provider's tables: their DDL, the check made when a service opens, and their creation when
 * {@code createSchema=true}.
 *
 * <ul>
 *   <li>{@code <table>}: one row per grant (a held lock, read lock, write lock, block of permits or
 *       leadership term), with its fencing token and its expiry by the database clock;
 *   <li>{@code <table>_keys}: one row per lock name, never deleted by the provider; every grant and renewal
 *       of a name locks it first, so they are serialized per name;
 *   <li>{@code <table>_queue}: one row per waiting acquire, with its place in line (a ticket from the
 *       fencing sequence) and an expiry by the database clock that each of its attempts extends; a grant
 *       goes to no one while a live waiter that it must not pass is ahead of it (since version 2);
 *   <li>{@code <table>_meta}: {@code schema_version}, so that a later release can migrate;
 *   <li>{@code <table>_fence}: the sequence fencing tokens are drawn from, under the name's row lock. It
 *       does not go back when rows are deleted, nor across restarts and crashes; it can after a failover
 *       to a standby that lost WAL, a restore, or when made {@code UNLOGGED}, restarted or given a
 *       {@code CACHE} above 1 (the README's "What keeps tokens increasing").
 * </ul>
 */
final class Schema {
  /** The schema version this provider writes and reads. */
  static final int VERSION = 2;

  private Schema() {}

  /** The statements that create the schema, each idempotent. */
  static List<String> ddl(Dialect d, JdbcConfig.TableNames t) {
    String ts = d.timestampType();
    return List.of(
        "CREATE TABLE IF NOT EXISTS " + t.meta() + " (setting VARCHAR(64) NOT NULL PRIMARY KEY, setting_value VARCHAR(256) NOT NULL)",
        "CREATE TABLE IF NOT EXISTS " + t.keys() + " (lock_key VARCHAR(600) NOT NULL PRIMARY KEY)",
        "CREATE TABLE IF NOT EXISTS " + t.holders() + " ("
            + "lock_key VARCHAR(600) NOT NULL, "
            + "holder VARCHAR(64) NOT NULL, "
            + "mode CHAR(1) NOT NULL, "
            + "permits INTEGER NOT NULL, "
            + "token BIGINT NOT NULL, "
            + "owner VARCHAR(300) NOT NULL, "
            + "acquired_at " + ts + " NOT NULL, "
            + "expires_at " + ts + " NOT NULL, "
            + "PRIMARY KEY (lock_key, holder))",
        d.createSequence(t.sequence()),
        queueDdl(d, t));
  }

  /** The waiters' table, new in version 2: all that migrating from version 1 creates. */
  static String queueDdl(Dialect d, JdbcConfig.TableNames t) {
    return "CREATE TABLE IF NOT EXISTS " + t.queue() + " ("
        + "lock_key VARCHAR(600) NOT NULL, "
        + "waiter VARCHAR(64) NOT NULL, "
        + "mode CHAR(1) NOT NULL, "
        + "permits INTEGER NOT NULL, "
        + "ticket BIGINT NOT NULL, "
        + "expires_at " + d.timestampType() + " NOT NULL, "
        + "PRIMARY KEY (lock_key, waiter))";
  }

  /**
   * Checks that the schema exists and has a version this provider reads, and that the dialect accepts the
   * fencing sequence ({@link Dialect#checkSequence}); creates the schema first when {@code create}.
   *
   * @throws LockException naming the missing table, the unsupported version, or what is wrong with the sequence
   * @throws SQLException if the database cannot be reached
   */
  static void prepare(Connection c, Dialect d, JdbcConfig.TableNames t, boolean create) throws SQLException {
    if (create) {
      createIfMissing(c, d, t);
    }
    Integer version = readVersion(c, d, t);
    if (version == null) {
      throw new LockException("the lock table " + t.holders() + " has no schema version row in " + t.meta()
          + ": create the schema with the DDL in the lock-provider-jdbc README, or connect with createSchema=true");
    }
    if (version == 1) {
      throw new LockException("the lock table " + t.holders() + " has schema version 1; this provider reads version "
          + VERSION + ", which adds the table " + t.queue() + ": connect once with createSchema=true, or run the "
          + "migration in the lock-provider-jdbc README");
    }
    if (version != VERSION) {
      throw new LockException("the lock table " + t.holders() + " has schema version " + version
          + "; this provider reads version " + VERSION);
    }
    for (String table : List.of(t.keys(), t.holders(), t.queue())) {
      try (Statement s = c.createStatement()) {
        s.executeQuery("SELECT 1 FROM " + table + " WHERE 1 = 0").close();
      } catch (SQLException e) {
        if (d.isMissingObject(e)) {
          throw missing(table, t);
        }
        throw e;
      }
    }
    d.checkSequence(c, t.sequence());
  }

  private static Integer readVersion(Connection c, Dialect d, JdbcConfig.TableNames t) throws SQLException {
    try (PreparedStatement s = c.prepareStatement("SELECT setting_value FROM " + t.meta() + " WHERE setting = 'schema_version'")) {
      try (ResultSet rs = s.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        try {
          return Integer.valueOf(rs.getString(1).trim());
        } catch (NumberFormatException e) {
          throw new LockException("the schema version in " + t.meta() + " is not a number: '" + rs.getString(1) + "'");
        }
      }
    } catch (SQLException e) {
      if (d.isMissingObject(e)) {
        throw missing(t.meta(), t);
      }
      throw e;
    }
  }

  private static LockException missing(String table, JdbcConfig.TableNames t) {
    return new LockException("the table " + table + " of the lock table " + t.holders() + " does not exist: create "
        + "the schema with the DDL in the lock-provider-jdbc README, or connect with createSchema=true");
  }

  private static void createIfMissing(Connection c, Dialect d, JdbcConfig.TableNames t) throws SQLException {
    boolean auto = c.getAutoCommit();
    c.setAutoCommit(false);
    try {
      d.lockForSchemaChange(c);
      try (Statement s = c.createStatement()) {
        for (String sql : ddl(d, t)) {
          s.execute(sql);
        }
      }
      try (PreparedStatement s = c.prepareStatement("SELECT setting_value FROM " + t.meta() + " WHERE setting = 'schema_version'");
          ResultSet rs = s.executeQuery()) {
        if (!rs.next()) {
          try (PreparedStatement i = c.prepareStatement("INSERT INTO " + t.meta() + " (setting, setting_value) VALUES ('schema_version', ?)")) {
            i.setString(1, Integer.toString(VERSION));
            i.executeUpdate();
          }
        } else if (rs.getString(1).trim().equals("1")) {
          // version 1 to 2: the waiters' table, created above with the rest
          try (PreparedStatement u = c.prepareStatement("UPDATE " + t.meta() + " SET setting_value = ? WHERE setting = 'schema_version'")) {
            u.setString(1, Integer.toString(VERSION));
            u.executeUpdate();
          }
        }
      }
      c.commit();
    } catch (SQLException | RuntimeException e) {
      try {
        c.rollback();
      } catch (SQLException r) {
        e.addSuppressed(r);
      }
      throw e;
    } finally {
      c.setAutoCommit(auto);
    }
  }
}
