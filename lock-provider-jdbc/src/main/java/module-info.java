/**
 * The JDBC provider ({@code lock:jdbc:…}), on HikariCP. Applications reach it through {@code dev.tumbler.lock}
 * and the URL; its package is exported for {@code FencedTable} and {@code StaleTokenException}, fencing enforced
 * by the application's own tables (the package's other public class is the provider, which the class path's
 * {@code ServiceLoader} needs public; everything else in it is package-private). The JDBC driver is found by
 * {@code java.sql.DriverManager}, so it only has to be on the module path (or the class path); PostgreSQL's
 * driver is read, when present, for {@code LISTEN}/{@code NOTIFY}.
 */
@SuppressWarnings("requires-automatic") // PostgreSQL's driver has no module descriptor, only an automatic module name
module dev.tumbler.lock.jdbc {
  requires transitive dev.tumbler.lock;
  requires transitive java.sql;
  requires com.zaxxer.hikari;
  requires org.slf4j;
  requires static org.postgresql.jdbc;

  exports dev.tumbler.lock.jdbc;

  provides dev.tumbler.lock.spi.LockProvider with dev.tumbler.lock.jdbc.JdbcLockProvider;
}
