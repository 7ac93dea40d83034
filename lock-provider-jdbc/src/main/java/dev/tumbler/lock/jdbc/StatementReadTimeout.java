package dev.tumbler.lock.jdbc;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.concurrent.Executor;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The pool's source of connections where logging in needs a longer read timeout than a statement's reply: each new
 * connection logs in under the driver's own (long) read timeout, then gets the statement bound with
 * {@link Connection#setNetworkTimeout} before the pool hands it out. HikariCP reads that bound from the first
 * connection as the one to restore after its own checks.
 */
final class StatementReadTimeout implements DataSource {
  /** The executor {@link Connection#setNetworkTimeout} asks for; PostgreSQL's driver does not use it. */
  private static final Executor DIRECT = Runnable::run;

  private final DataSource source;
  private final int millis;

  StatementReadTimeout(DataSource source, int millis) {
    this.source = source;
    this.millis = millis;
  }

  @Override
  public Connection getConnection() throws SQLException {
    return bounded(source.getConnection());
  }

  @Override
  public Connection getConnection(String username, String password) throws SQLException {
    return bounded(source.getConnection(username, password));
  }

  private Connection bounded(Connection c) throws SQLException {
    try {
      c.setNetworkTimeout(DIRECT, millis);
      return c;
    } catch (SQLException | RuntimeException e) {
      try {
        c.close();
      } catch (SQLException closing) {
        e.addSuppressed(closing);
      }
      throw e;
    }
  }

  @Override
  public PrintWriter getLogWriter() throws SQLException {
    return source.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) throws SQLException {
    source.setLogWriter(out);
  }

  @Override
  public void setLoginTimeout(int seconds) throws SQLException {
    source.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() throws SQLException {
    return source.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    return source.getParentLogger();
  }

  @Override
  public <T> T unwrap(Class<T> type) throws SQLException {
    if (type.isInstance(this)) {
      return type.cast(this);
    }
    return source.unwrap(type);
  }

  @Override
  public boolean isWrapperFor(Class<?> type) throws SQLException {
    return type.isInstance(this) || source.isWrapperFor(type);
  }
}
