/**
 * The JDBC provider ({@code lock:jdbc:…}), on HikariCP. It exports nothing: applications reach it through
 * {@code dev.tumbler.lock} and the URL. The JDBC driver is found by {@code java.sql.DriverManager}, so it only
 * has to be on the module path (or the class path); PostgreSQL's driver is read, when present, for
 * {@code LISTEN}/{@code NOTIFY}.
 */
module dev.tumbler.lock.jdbc {
  requires dev.tumbler.lock;
  requires java.sql;
  requires com.zaxxer.hikari;
  requires org.slf4j;
  requires static org.postgresql.jdbc;

  provides dev.tumbler.lock.spi.LockProvider with dev.tumbler.lock.jdbc.JdbcLockProvider;
}
