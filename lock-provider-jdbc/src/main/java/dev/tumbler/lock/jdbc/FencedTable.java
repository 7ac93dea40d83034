package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.Lease;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Fencing enforced where the data lives: a table of the application's own with a fencing-token column,
 * whose updates go through {@link #update} so that a write carrying a token lower than the row's is
 * rejected by the database itself — even from a holder that was paused past the end of its lease and
 * woke up believing it still held the lock.
 *
 * <p>The pattern: add {@code fence_token BIGINT NOT NULL DEFAULT 0} to the table ({@link #addColumnDdl()}).
 * Every write of a protected row becomes
 * <pre>{@code UPDATE orders SET <your SET>, fence_token = :token WHERE (<your WHERE>) AND fence_token <= :token}</pre>
 * one statement, so there is no window between the check and the write. A holder may write as often as it
 * likes with its own token; once a later holder (a larger token) has written a row, every earlier holder's
 * writes to it update nothing. Rows written by different holders of different locks each carry their own
 * last token, so one column serves any number of locks as long as each row is protected by one lock.
 *
 * <pre>{@code
 * FencedTable orders = FencedTable.of("orders", "fence_token");
 * try (Lease lease = locks.lock("order-42").acquire(); Connection c = dataSource.getConnection()) {
 *   orders.updateOrThrow(c, lease, "status = ?", "id = ?", "shipped", 42);  // StaleTokenException if fenced off
 * }
 * }</pre>
 *
 * <p>The SET and WHERE fragments are SQL written by the application (never user input); their values go
 * in as parameters. Immutable and thread safe; the connection's transaction is the caller's.
 */
public final class FencedTable {
  private static final Pattern IDENTIFIER = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*\\.)?[A-Za-z_][A-Za-z0-9_]*");

  private final String table;
  private final String column;

  private FencedTable(String table, String column) {
    this.table = table;
    this.column = column;
  }

  /**
   * A fenced table.
   *
   * @param table the table, optionally {@code schema.table}
   * @param tokenColumn its {@code BIGINT} fencing-token column
   * @throws IllegalArgumentException if either is not a plain SQL identifier
   */
  public static FencedTable of(String table, String tokenColumn) {
    return new FencedTable(identifier(table, "table"), identifier(tokenColumn, "tokenColumn"));
  }

  private static String identifier(String s, String argument) {
    Objects.requireNonNull(s, argument);
    if (!IDENTIFIER.matcher(s).matches()) {
      throw new IllegalArgumentException(argument + " is not an SQL identifier (letters, digits, '_'): '" + s + "'");
    }
    return s;
  }

  /** The DDL that adds the token column to an existing table. */
  public String addColumnDdl() {
    return "ALTER TABLE " + table + " ADD COLUMN " + column + " BIGINT NOT NULL DEFAULT 0";
  }

  /** The statement {@link #update} runs for the given fragments. */
  public String updateSql(String set, String where) {
    Objects.requireNonNull(set, "set");
    Objects.requireNonNull(where, "where");
    return "UPDATE " + table + " SET " + set + ", " + column + " = ? WHERE (" + where + ") AND " + column + " <= ?";
  }

  /**
   * Updates the rows matching {@code where} unless they carry a larger token than {@code token}.
   *
   * @param set the SET list, as in {@code "status = ?, updated_at = CURRENT_TIMESTAMP"}
   * @param where the condition, as in {@code "id = ?"}
   * @param params the values of the {@code ?} in {@code set}, then those in {@code where}
   * @return the rows updated: 0 when none matched or every match was fenced off
   */
  public int update(Connection c, long token, String set, String where, Object... params) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(updateSql(set, where))) {
      int setParams = count(set);
      int i = 1;
      for (int k = 0; k < setParams && k < params.length; k++) {
        s.setObject(i++, params[k]);
      }
      s.setLong(i++, token);
      for (int k = setParams; k < params.length; k++) {
        s.setObject(i++, params[k]);
      }
      s.setLong(i, token);
      return s.executeUpdate();
    }
  }

  /** {@link #update} with the lease's fencing token. */
  public int update(Connection c, Lease lease, String set, String where, Object... params) throws SQLException {
    return update(c, lease.fencingToken(), set, where, params);
  }

  /**
   * {@link #update}, failing when nothing was updated because a row matching {@code where} carries a
   * larger token.
   *
   * @return the rows updated (0 when no row matches {@code where} at all)
   * @throws StaleTokenException if the write was fenced off
   */
  public int updateOrThrow(Connection c, Lease lease, String set, String where, Object... params) throws SQLException {
    long token = lease.fencingToken();
    int n = update(c, token, set, where, params);
    if (n > 0) {
      return n;
    }
    Object[] whereParams = java.util.Arrays.copyOfRange(params, Math.min(params.length, count(set)), params.length);
    try (PreparedStatement s = c.prepareStatement("SELECT MAX(" + column + ") FROM " + table + " WHERE (" + where + ")")) {
      for (int k = 0; k < whereParams.length; k++) {
        s.setObject(k + 1, whereParams[k]);
      }
      try (ResultSet rs = s.executeQuery()) {
        if (rs.next()) {
          long seen = rs.getLong(1);
          if (!rs.wasNull() && seen > token) {
            throw new StaleTokenException("write to " + table + " of '" + lease.name() + "' rejected: fencing token "
                + token + " is below the " + seen + " a later holder wrote", token);
          }
        }
      }
    }
    return 0;
  }

  /** The {@code ?} placeholders in an SQL fragment, outside quoted strings. */
  static int count(String sql) {
    int n = 0;
    boolean quoted = false;
    for (int i = 0; i < sql.length(); i++) {
      char ch = sql.charAt(i);
      if (ch == '\'') {
        quoted = !quoted;
      } else if (ch == '?' && !quoted) {
        n++;
      }
    }
    return n;
  }

  @Override
  public String toString() {
    return "FencedTable[" + table + "." + column + "]";
  }
}
