package dev.tumbler.torture.backend;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import redis.clients.jedis.Jedis;
import redis.embedded.RedisExecProvider;

/**
 * One {@code redis-server} process (the binary shipped in {@code org.signal:embedded-redis}) on a loopback port,
 * configured by a file in a directory of its own set-up, for the cluster and sentinel set-ups that
 * {@code RedisServer} cannot describe: it can be killed ({@code SIGKILL}, as a crash), paused, and started again
 * with the same file (a cluster node then rejoins with the node id its {@code nodes.conf} keeps; a sentinel with
 * what it rewrote into its file). No persistence: a server started again is empty. Each server has a working directory
 * of its own ({@code dir/<port>}), and its {@code dump.rdb} (which a replica writes when it receives a full
 * synchronisation, {@code save ""} or not) is deleted before each start: servers sharing one directory would load each
 * other's data on a restart, and a cluster node would find keys of slots it does not serve and set them importing.
 */
public final class RedisProcess extends ProcessServer implements AutoCloseable {
  private static Path binary;

  private final int port;
  private final Path conf;
  private final Path work;
  private final boolean sentinel;
  private final String id;

  private RedisProcess(int port, Path conf, Path work, boolean sentinel, String id) {
    this.port = port;
    this.conf = conf;
    this.work = work;
    this.sentinel = sentinel;
    this.id = id;
  }

  /**
   * Writes {@code redis-<port>.conf} in {@code dir} (loopback, no persistence, its working directory
   * {@code dir/<port>}, plus {@code settings}) and starts the server, waiting until it answers.
   */
  public static RedisProcess start(Path dir, int port, List<String> settings, boolean sentinel) {
    return start(dir, port, settings, sentinel, (sentinel ? "sentinel-" : "redis-") + port);
  }

  /** As {@link #start(Path, int, List, boolean)}, named {@code id} in reports. */
  public static RedisProcess start(Path dir, int port, List<String> settings, boolean sentinel, String id) {
    Path work = dir.resolve(Integer.toString(port)).toAbsolutePath();
    List<String> lines = new ArrayList<>(List.of("port " + port, "bind 127.0.0.1", "protected-mode no",
        "dir " + work));
    if (!sentinel) {
      lines.addAll(List.of("save \"\"", "appendonly no", "maxmemory-policy noeviction"));
    }
    lines.addAll(settings);
    Path conf = dir.resolve((sentinel ? "sentinel-" : "redis-") + port + ".conf");
    try {
      Files.createDirectories(work);
      Files.write(conf, lines);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    RedisProcess p = new RedisProcess(port, conf, work, sentinel, id);
    p.restart();
    return p;
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

  /** A plain client of this server (2 s time-out). */
  public Jedis client() {
    return new Jedis("127.0.0.1", port, 2000);
  }

  @Override
  public void start() {
    restart();
  }

  /**
   * Starts the process again (after {@link #kill}) from its file, and waits until it answers; tries again
   * a few times when the port lingers after a kill.
   */
  public synchronized void restart() {
    kill();
    for (int attempt = 1; ; attempt++) {
      try {
        launch();
        return;
      } catch (IllegalStateException e) {
        kill();
        if (attempt == 5) {
          throw e;
        }
        try {
          Thread.sleep(200);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
  }

  private void launch() {
    try {
      // no persistence: whatever a full synchronisation left on disk is not loaded again
      Files.deleteIfExists(work.resolve("dump.rdb"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot clear " + work, e);
    }
    List<String> cmd = new ArrayList<>(List.of(binary().toString(), conf.toAbsolutePath().toString()));
    if (sentinel) {
      cmd.add("--sentinel");
    }
    Process process = launch(new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(conf.resolveSibling(conf.getFileName() + ".log").toFile())));
    Processes.await(Duration.ofSeconds(15), "redis-server on port " + port + " to answer", () -> {
      if (!process.isAlive()) {
        throw Processes.exited("redis-server on port " + port, conf.resolveSibling(conf.getFileName() + ".log"));
      }
      try (Jedis j = client()) {
        return "PONG".equals(j.ping());
      } catch (RuntimeException e) {
        return false;
      }
    });
  }

  /** Kills the process. */
  @Override
  public void close() {
    kill();
  }

  /** The {@code redis-server} binary of {@code embedded-redis}, unpacked once. */
  static synchronized Path binary() {
    if (binary == null) {
      try {
        binary = RedisExecProvider.defaultProvider().get().toPath();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return binary;
  }
}
