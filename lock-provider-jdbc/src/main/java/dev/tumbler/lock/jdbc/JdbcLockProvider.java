package dev.tumbler.lock.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariConfigMXBean;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.SQLExceptionOverride;
import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ProviderInfo;
import dev.tumbler.lock.ServiceInfo;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.LockProvider;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.lock.spi.TumblerVersion;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JDBC provider: locks in the relational database an application already has.
 * {@code lock:jdbc:<jdbc-url-without-"jdbc:">[?parameters]}, as in
 * {@code lock:jdbc:postgresql://db:5432/app?leaseTime=10s} or {@code lock:jdbc:h2:mem:locks}. Dialects:
 * PostgreSQL and H2.
 *
 * <p>Parameters: {@code leaseTime} (default 30s), {@code renew} ({@code auto}|{@code manual}),
 * {@code namespace}, {@code table} (default {@code tumbler_locks}), {@code createSchema} (default false),
 * {@code mode} ({@code lease}, the default, or {@code advisory}: PostgreSQL session advisory locks, with
 * fewer guarantees, see the README),
 * {@code timeout} (the bound of one database call, default 5s), {@code recheck} (the longest a waiter
 * sleeps without a notification, default 1s), {@code user}, {@code password}; HikariCP's pool settings
 * by their HikariCP names ({@code maximumPoolSize}, {@code minimumIdle}, {@code connectionTimeout},
 * {@code idleTimeout}, {@code maxLifetime}, {@code validationTimeout}, {@code keepaliveTime},
 * {@code leakDetectionThreshold}, {@code initializationFailTimeout}, {@code poolName},
 * {@code connectionTestQuery}, {@code connectionInitSql}, {@code schema}, {@code catalog},
 * {@code driverClassName}); and driver properties as {@code dataSource.<property>}, as in HikariCP's own
 * property files. Anything else is an error.
 *
 * <p>A pool smaller than the mode needs is refused ({@link InvalidLockUrlException} naming
 * {@code maximumPoolSize}): on PostgreSQL 2 in lease mode (one connection {@code LISTEN}s while the service
 * has waiters), 3 in advisory mode, 1 on H2; an application's HikariCP pool is checked the same way.
 *
 * <p>An application that has a {@link DataSource} passes it in the connect properties under
 * {@link #DATA_SOURCE}, with a URL that only names the database: the service then uses it and opens no
 * pool of its own (and closing the service leaves it open).
 *
 * <pre>{@code
 * Properties p = new Properties();
 * p.put(JdbcLockProvider.DATA_SOURCE, hikariDataSource);
 * LockService locks = LockProviders.connect("lock:jdbc:postgresql?leaseTime=10s", p);
 * }</pre>
 *
 * <p>Stateless and thread safe; found by {@link java.util.ServiceLoader}.
 */
public final class JdbcLockProvider implements LockProvider {

  private static final Logger LOG = LoggerFactory.getLogger(JdbcLockProvider.class);

  /** The connect property under which an application passes its {@link DataSource}. */
  public static final String DATA_SOURCE = "dataSource";

  static final String VERSION = TumblerVersion.current();
  private static final AtomicInteger POOLS = new AtomicInteger();

  @Override
  public String scheme() {
    return "jdbc";
  }

  @Override
  public ProviderInfo info() {
    return new ProviderInfo("jdbc", "Tumbler JDBC provider (HikariCP)", VERSION,
        "locks, read/write locks, semaphores and elections as lease rows in PostgreSQL or H2", JdbcLockService.CAPABILITIES);
  }

  @Override
  public LockService connect(LockUrl url, Properties info) {
    return connect(url, info, Ticker.system());
  }

  /** {@link #connect(LockUrl, Properties)} with an injected clock. */
  LockService connect(LockUrl url, Properties info, Ticker ticker) {
    Object given = info == null ? null : info.get(DATA_SOURCE);
    if (given != null && !(given instanceof DataSource)) {
      throw new InvalidLockUrlException("connect property '" + DATA_SOURCE + "' is a " + given.getClass().getName()
          + ", not a javax.sql.DataSource");
    }
    JdbcConfig config = JdbcConfig.from(url, given != null);
    DataSource ds;
    HikariDataSource pool = null;
    String database;
    if (given != null) {
      ds = (DataSource) given;
      checkPoolSize(config, ds);
      database = config.dialect().name() + "|ds@" + System.identityHashCode(ds) + "|" + config.table().holders();
    } else {
      pool = openPool(config);
      ds = pool;
      database = config.dialect().name() + "|" + config.jdbcUrl() + "|" + config.table().holders();
    }
    try {
      prepareSchema(config, ds);
      ServiceInfo serviceInfo = new ServiceInfo("jdbc", VERSION, url.toString(),
          config.advisory() ? JdbcLockService.ADVISORY_CAPABILITIES : JdbcLockService.CAPABILITIES);
      return new JdbcLockService(config, serviceInfo, ds, pool, database, ticker);
    } catch (RuntimeException e) {
      if (pool != null) {
        pool.close();
      }
      throw e;
    }
  }

  /**
   * Refuses an application's pool that is too small for the mode, when its size can be read (a HikariCP
   * pool, or a wrapper of one); of any other DataSource the README says what is needed, and a call that gets
   * no connection in time fails naming the pool.
   */
  private static void checkPoolSize(JdbcConfig config, DataSource ds) {
    Integer size = maximumPoolSize(ds);
    if (size != null && size < config.minimumPoolSize()) {
      throw new InvalidLockUrlException("the DataSource passed in the connect property '" + DATA_SOURCE + "' is a pool "
          + "of maximumPoolSize=" + size + ", too small: " + config.poolNeeds());
    }
  }

  /** The size of a HikariCP pool (or of one a DataSource wraps), or null when it cannot be read. */
  static Integer maximumPoolSize(DataSource ds) {
    if (ds instanceof HikariConfigMXBean h) {
      return h.getMaximumPoolSize();
    }
    try {
      if (ds.isWrapperFor(HikariDataSource.class)) {
        return ds.unwrap(HikariDataSource.class).getMaximumPoolSize();
      }
    } catch (SQLException | RuntimeException e) {
      // a DataSource that cannot say: nothing to check
    }
    return null;
  }

  private static HikariDataSource openPool(JdbcConfig config) {
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(config.jdbcUrl());
    config.user().ifPresent(hc::setUsername);
    config.password().ifPresent(hc::setPassword);
    long timeoutMs = config.timeout().toMillis();
    hc.setPoolName("tumbler-jdbc-" + POOLS.incrementAndGet());
    hc.setMaximumPoolSize(10);
    hc.setMinimumIdle(1);
    hc.setConnectionTimeout(Math.max(250, timeoutMs));
    // checking an idle connection (on a partition it waits for the whole of this) should not stretch a wait
    // much past its deadline: half the call bound, at most a second
    hc.setValidationTimeout(Math.max(250, Math.min(1000, timeoutMs / 2)));
    hc.setAutoCommit(true);
    hc.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
    Dialect dialect = config.dialect();
    // HikariCP evicts a connection on SQLState class 08 only; H2 reports a broken connection otherwise
    hc.setExceptionOverride(new SQLExceptionOverride() {
      @java.lang.Override
      public SQLExceptionOverride.Override adjudicate(SQLException e) {
        return dialect.isConnectionLost(e) ? SQLExceptionOverride.Override.MUST_EVICT
            : SQLExceptionOverride.Override.CONTINUE_EVICT;
      }
    });
    for (Map.Entry<String, String> e : config.dialect().timeoutProperties(config.timeout()).entrySet()) {
      hc.addDataSourceProperty(e.getKey(), e.getValue());
    }
    for (Map.Entry<String, String> e : config.driverProperties().entrySet()) {
      hc.addDataSourceProperty(e.getKey(), e.getValue());
    }
    Map<String, String> p = config.pool();
    try {
      p.forEach((k, v) -> set(hc, k, v));
      if (p.containsKey("maximumPoolSize") && !p.containsKey("minimumIdle")) {
        hc.setMinimumIdle(Math.min(1, hc.getMaximumPoolSize()));
      }
      hc.validate();
      java.util.Optional<java.time.Duration> read = dialect.statementReadTimeout(config.timeout());
      if (read.isPresent()) {
        hc.setDataSource(new StatementReadTimeout(new com.zaxxer.hikari.util.DriverDataSource(hc.getJdbcUrl(),
            hc.getDriverClassName(), hc.getDataSourceProperties(), hc.getUsername(), hc.getPassword()),
            Math.toIntExact(read.get().toMillis())));
      }
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw new InvalidLockUrlException("lock URL " + config.url() + ": pool settings rejected by HikariCP: " + e.getMessage());
    }
    // A new session on a busy server can be slow to answer its first statements: HikariCP checks a new connection
    // within its validation timeout (half the call bound), and a read that times out closes it, which failed the
    // pool's start. The server was reached, so the pool is started again, within the time a new session gets to log
    // in (at least 5 s, as PostgreSQL's loginTimeout), as long as the connection broke after it was made (SQLState
    // 08003, 08006); one refused, never made or timed out at login fails at once.
    long until = System.nanoTime() + Math.max(config.timeout().toNanos(),
        TimeUnit.SECONDS.toNanos(PostgresDialect.MIN_LOGIN_SECONDS));
    while (true) {
      try {
        return new HikariDataSource(hc);
      } catch (RuntimeException e) {
        Throwable cause = e.getCause() != null ? e.getCause() : e;
        if (refusedCredentials(cause)) {
          throw new dev.tumbler.lock.CredentialsRefusedException("the " + config.dialect().name() + " database of "
              + config.url() + " refused the credentials given (parameters 'user' and 'password'): "
              + cause.getMessage(), e);
        }
        if (!brokeAfterConnecting(cause) || System.nanoTime() >= until || Thread.currentThread().isInterrupted()) {
          throw new ServiceUnavailableException("cannot connect to the " + config.dialect().name() + " database of "
              + config.url() + ": " + cause.getMessage(), e);
        }
        LOG.debug("a new session of {} broke while it was set up; starting the pool again: {}", config.url(),
            cause.toString());
        try {
          Thread.sleep(100);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new ServiceUnavailableException("interrupted while connecting to the " + config.dialect().name()
              + " database of " + config.url() + ": " + cause.getMessage(), e);
        }
      }
    }
  }

  /** Whether {@code e} says a connection broke once made (SQLState 08003, 08006), not that it was never made. */
  static boolean brokeAfterConnecting(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s && ("08003".equals(s.getSQLState()) || "08006".equals(s.getSQLState()))) {
        return true;
      }
    }
    return false;
  }

  private static void set(HikariConfig hc, String key, String value) {
    switch (key) {
      case "maximumPoolSize" -> hc.setMaximumPoolSize(Integer.parseInt(value));
      case "minimumIdle" -> hc.setMinimumIdle(Integer.parseInt(value));
      case "connectionTimeout" -> hc.setConnectionTimeout(Long.parseLong(value));
      case "idleTimeout" -> hc.setIdleTimeout(Long.parseLong(value));
      case "maxLifetime" -> hc.setMaxLifetime(Long.parseLong(value));
      case "validationTimeout" -> hc.setValidationTimeout(Long.parseLong(value));
      case "keepaliveTime" -> hc.setKeepaliveTime(Long.parseLong(value));
      case "leakDetectionThreshold" -> hc.setLeakDetectionThreshold(Long.parseLong(value));
      case "initializationFailTimeout" -> hc.setInitializationFailTimeout(Long.parseLong(value));
      case "poolName" -> hc.setPoolName(value);
      case "connectionTestQuery" -> hc.setConnectionTestQuery(value);
      case "connectionInitSql" -> hc.setConnectionInitSql(value);
      case "schema" -> hc.setSchema(value);
      case "catalog" -> hc.setCatalog(value);
      case "driverClassName" -> hc.setDriverClassName(value);
      default -> throw new IllegalArgumentException("unknown pool setting " + key);
    }
  }

  /**
   * Whether {@code e} (or a cause) is the database refusing a login or a right: SQLState class {@code 28} (invalid
   * authorization) or {@code 42501} (insufficient privilege). Trying again cannot help.
   */
  static boolean refusedCredentials(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException s && s.getSQLState() != null
          && (s.getSQLState().startsWith("28") || s.getSQLState().equals("42501"))) {
        return true;
      }
    }
    return false;
  }

  private static void prepareSchema(JdbcConfig config, DataSource ds) {
    SQLException last = null;
    // a pool with no connection to hand out (its first one closed after a slow check, on a busy server) opens one at
    // login speed, not a call's: the borrow is tried again within the login window, as the pool's start is
    long loginUntil = System.nanoTime() + Math.max(config.timeout().toNanos(),
        TimeUnit.SECONDS.toNanos(PostgresDialect.MIN_LOGIN_SECONDS));
    for (int tries = 0; tries < 3; ) {
      try (Connection c = ds.getConnection()) {
        Schema.prepare(c, config.dialect(), config.table(), config.createSchema());
        return;
      } catch (java.sql.SQLTransientConnectionException e) {
        last = e;
        if (System.nanoTime() >= loginUntil || Thread.currentThread().isInterrupted()) {
          break;
        }
      } catch (SQLException e) {
        // several clients creating the schema at once may collide on a database that does not serialize DDL
        last = e;
        tries++;
        if (!config.createSchema()) {
          break;
        }
      }
    }
    String state = last.getSQLState();
    if (refusedCredentials(last)) {
      throw new dev.tumbler.lock.CredentialsRefusedException("the " + config.dialect().name() + " database of "
          + config.url() + " refused the user given (parameter 'user') the rights the lock table "
          + config.table().holders() + " needs: " + last.getMessage(), last);
    }
    if (state != null && state.startsWith("08") || last instanceof java.sql.SQLTransientConnectionException) {
      throw new ServiceUnavailableException("cannot reach the " + config.dialect().name() + " database of "
          + config.url() + ": " + last.getMessage(), last);
    }
    throw new LockException("cannot prepare the lock table " + config.table().holders() + " in the "
        + config.dialect().name() + " database of " + config.url() + ": " + last.getMessage(), last);
  }
}
