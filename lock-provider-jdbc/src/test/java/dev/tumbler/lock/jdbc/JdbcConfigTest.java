package dev.tumbler.lock.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** URLs, parameters, secrets and a DataSource passed in code; on in-memory H2. */
class JdbcConfigTest {

  /** A new session gets 5 s to log in however short the call timeout (a 1 s login failed a suite run's connect). */
  @Test
  void aNewSessionIsGivenAtLeastFiveSecondsToLogIn() {
    java.util.Map<String, String> oneSecond = new PostgresDialect().timeoutProperties(java.time.Duration.ofSeconds(1));
    assertEquals("5", oneSecond.get("loginTimeout"));
    assertEquals("1", oneSecond.get("connectTimeout"), "a TCP connect keeps the call timeout");
    assertEquals("7", new PostgresDialect().timeoutProperties(java.time.Duration.ofSeconds(7)).get("loginTimeout"));
  }
  private static final String SECRET = "s3cret-" + UUID.randomUUID();

  private static String h2() {
    return "lock:jdbc:h2:mem:cfg-" + UUID.randomUUID().toString().substring(0, 8) + ";DB_CLOSE_DELAY=-1";
  }

  private static InvalidLockUrlException rejected(String url) {
    return assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect(url).close(), url);
  }

  @Test
  void unknownParametersAreErrorsThatNameThem() {
    InvalidLockUrlException e = rejected(h2() + "?maximumPoolSise=3");
    assertTrue(e.getMessage().contains("maximumPoolSise"), e.getMessage());
  }

  @Test
  void hikariParameterNamesAreAccepted() throws Exception {
    try (LockService s = LockProviders.connect(h2() + "?createSchema=true&maximumPoolSize=3&minimumIdle=1"
        + "&connectionTimeout=2000&idleTimeout=30s&poolName=orders-locks&dataSource.MODE=Regular")) {
      HikariDataSource pool = s.unwrap(HikariDataSource.class);
      assertEquals(3, pool.getMaximumPoolSize());
      assertEquals(2000, pool.getConnectionTimeout());
      assertEquals(30_000, pool.getIdleTimeout());
      assertEquals("orders-locks", pool.getPoolName());
      try (Lease l = s.lock("x").acquire()) {
        assertTrue(l.isValid());
      }
    }
    InvalidLockUrlException e = rejected(h2() + "?maximumPoolSize=lots");
    assertTrue(e.getMessage().contains("maximumPoolSize"), e.getMessage());
  }

  @Test
  void onePooledConnectionIsEnoughOnH2() throws Exception {
    // H2 has no LISTEN: holders and waiters of one service take turns on one connection
    try (LockService s = LockProviders.connect(h2() + "?createSchema=true&maximumPoolSize=1&leaseTime=2s")) {
      Lease held = s.lock("x").acquire();
      assertTrue(s.lock("x").tryAcquire(java.time.Duration.ofMillis(300)).isEmpty(), "a held lock was granted");
      try (Lease other = s.lock("y").tryAcquire(java.time.Duration.ofSeconds(1)).orElseThrow()) {
        assertTrue(other.isValid());
      }
      held.release();
      s.lock("x").tryAcquire(java.time.Duration.ofSeconds(1)).orElseThrow().release();
    }
  }

  @Test
  void passwordsNeverShown() throws Exception {
    InvalidLockUrlException inUrl = rejected("lock:jdbc:postgresql://app:" + SECRET + "@db:5432/app");
    assertFalse(inUrl.getMessage().contains(SECRET), inUrl.getMessage());
    InvalidLockUrlException inH2 = rejected("lock:jdbc:h2:mem:x;USER=sa;PASSWORD=" + SECRET);
    assertFalse(inH2.getMessage().contains(SECRET), inH2.getMessage());
    InvalidLockUrlException asDriverProperty = rejected(h2() + "?dataSource.password=" + SECRET);
    assertFalse(asDriverProperty.getMessage().contains(SECRET), asDriverProperty.getMessage());
    try (LockService s = LockProviders.connect(h2() + "?createSchema=true&user=sa&password=" + SECRET)) {
      assertFalse(s.info().url().contains(SECRET), s.info().url());
      assertFalse(s.toString().contains(SECRET));
    }
  }

  @Test
  void aRefusedPasswordIsCredentialsRefusedNamingTheParameterNotTheValue() throws Exception {
    String db = h2();
    try (LockService owner = LockProviders.connect(db + "?createSchema=true&user=sa&password=" + SECRET)) {
      dev.tumbler.lock.CredentialsRefusedException e = assertThrows(dev.tumbler.lock.CredentialsRefusedException.class,
          () -> LockProviders.connect(db + "?user=sa&password=not-" + SECRET).close());
      assertTrue(e.getMessage().contains("'password'"), e.getMessage());
      assertFalse(e.getMessage().contains(SECRET), e.getMessage());
      assertTrue(owner.lock("x").tryAcquire(java.time.Duration.ZERO).isPresent());
    }
  }

  @Test
  void aMissingTableInAnEmptyDatabaseSaysHowToCreateIt() {
    dev.tumbler.lock.LockException e = assertThrows(dev.tumbler.lock.LockException.class,
        () -> LockProviders.connect(h2()).close());
    assertTrue(e.getMessage().contains("createSchema=true"), e.getMessage());
  }

  @Test
  void malformedUrlsSayWhatIsWrong() {
    assertTrue(rejected("lock:jdbc://db:5432/app").getMessage().contains("lock:jdbc:postgresql://"));
    InvalidLockUrlException e = rejected("lock:jdbc:mysql://db/app");
    assertTrue(e.getMessage().contains("mysql") && e.getMessage().contains("postgresql"), e.getMessage());
    assertTrue(rejected("lock:jdbc:postgresql").getMessage().contains(JdbcLockProvider.DATA_SOURCE));
    assertTrue(rejected(h2() + "?table=drop%20table").getMessage().contains("table"));
    assertTrue(rejected(h2() + "?timeout=5").getMessage().contains("timeout"));
  }

  @Test
  void reservedWordsAreRefusedAsTableOrSchemaNames() {
    // each passed the old check, then failed at connect with a raw SQL syntax error
    for (String table : List.of("select", "user", "USER", "Order", "table", "limit", "current_user", "rownum", "_rowid_",
        "value", "key", "analyse", "public.select", "user.locks", "select.locks")) {
      InvalidLockUrlException e = rejected(h2() + "?createSchema=true&table=" + table);
      assertTrue(e.getMessage().contains("'table'") && e.getMessage().contains("reserved"),
          "table=" + table + " refused without saying why: " + e.getMessage());
    }
  }

  @Test
  void schemasOfTheDatabaseItselfAreRefused() {
    // table=information_schema.tables&createSchema=true created four tables inside information_schema on PostgreSQL
    for (String table : List.of("information_schema.tables", "INFORMATION_SCHEMA.locks", "Information_Schema.locks",
        "pg_catalog.locks", "pg_toast.locks", "pg_temp.locks", "pg_temp_3.locks", "PG_CATALOG.locks", "pg_class")) {
      InvalidLockUrlException e = rejected(h2() + "?createSchema=true&table=" + table);
      assertTrue(e.getMessage().contains("'table'") && e.getMessage().toLowerCase(java.util.Locale.ROOT).contains(
          table.toLowerCase(java.util.Locale.ROOT).substring(0, table.indexOf('.') < 0 ? table.length() : table.indexOf('.'))),
          "table=" + table + " refused without naming the schema: " + e.getMessage());
    }
  }

  @Test
  void applicationNamesThatMerelyContainReservedWordsAreAccepted() throws Exception {
    for (String table : List.of("users", "selection", "user_locks", "order_locks", "app.locks", "public.tumbler_locks",
        "pg.locks", "information.locks", "locks_pg_catalog")) {
      JdbcConfig c = JdbcConfig.from(dev.tumbler.lock.spi.LockUrl.parse(h2() + "?table=" + table), false);
      assertEquals(table.toLowerCase(java.util.Locale.ROOT), c.table().holders());
    }
    try (LockService s = LockProviders.connect(h2() + "?createSchema=true&table=public.selection")) {
      s.lock("x").acquire().release();
    }
  }

  @Test
  void dataSourcePassedInCodeIsUsedWithoutASecondPool() throws Exception {
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl("jdbc:h2:mem:app-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    hc.setMaximumPoolSize(4);
    try (HikariDataSource app = new HikariDataSource(hc)) {
      Properties p = new Properties();
      p.put(JdbcLockProvider.DATA_SOURCE, app);
      try (LockService s = LockProviders.connect("lock:jdbc:h2?createSchema=true&leaseTime=5s", p)) {
        assertSame(app, s.unwrap(DataSource.class), "the service does not use the DataSource it was given");
        try (Lease l = s.lock("x").acquire()) {
          assertTrue(l.fencingToken() > 0);
        }
      }
      assertFalse(app.isClosed(), "closing the service closed the application's DataSource");
      p.setProperty("maximumPoolSize", "3");
      InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
          () -> LockProviders.connect("lock:jdbc:h2", p).close());
      assertTrue(e.getMessage().contains("maximumPoolSize"), e.getMessage());
      Properties wrong = new Properties();
      wrong.put(JdbcLockProvider.DATA_SOURCE, "not a pool");
      assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect("lock:jdbc:h2", wrong).close());
    }
  }

  @Test
  void keysAreInjective() {
    assertFalse(Primitive.key("a/1", Primitive.Kind.MUTEX, "b").equals(Primitive.key("a", Primitive.Kind.MUTEX, "1/b")));
    assertFalse(Primitive.key("", Primitive.Kind.MUTEX, "x").equals(Primitive.key("", Primitive.Kind.SEMAPHORE, "x")));
  }
}
