package dev.tumbler.lock.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import redis.clients.jedis.Jedis;
import redis.embedded.RedisExecProvider;

/**
 * One {@code redis-server} process (the binary shipped in {@code org.signal:embedded-redis}) on a loopback
 * port, configured by a file in a directory of its own set-up, for the cluster and sentinel set-ups that
 * {@code RedisServer} cannot describe: it can be killed ({@code SIGKILL}, as a crash) and started again
 * with the same file (a cluster node then rejoins with the node id its {@code nodes.conf} keeps).
 */
final class RedisProcess implements AutoCloseable {
  private static Path binary;

  private final int port;
  private final Path conf;
  private final boolean sentinel;
  private Process process;

  private RedisProcess(int port, Path conf, boolean sentinel) {
    this.port = port;
    this.conf = conf;
    this.sentinel = sentinel;
  }

  /**
   * Writes {@code redis-<port>.conf} in {@code dir} (loopback, no persistence, plus {@code settings}) and
   * starts the server, waiting until it answers.
   */
  static RedisProcess start(Path dir, int port, List<String> settings, boolean sentinel) {
    List<String> lines = new ArrayList<>(List.of("port " + port, "bind 127.0.0.1", "protected-mode no",
        "dir " + dir.toAbsolutePath()));
    if (!sentinel) {
      lines.addAll(List.of("save \"\"", "appendonly no", "maxmemory-policy noeviction"));
    }
    lines.addAll(settings);
    Path conf = dir.resolve((sentinel ? "sentinel-" : "redis-") + port + ".conf");
    try {
      Files.write(conf, lines);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    RedisProcess p = new RedisProcess(port, conf, sentinel);
    p.restart();
    return p;
  }

  int port() {
    return port;
  }

  String address() {
    return "127.0.0.1:" + port;
  }

  Jedis client() {
    return new Jedis("127.0.0.1", port, 2000);
  }

  boolean isRunning() {
    return process != null && process.isAlive();
  }

  /**
   * Starts the process again (after {@link #kill}) from its file, and waits until it answers; tries again
   * a few times when the port lingers after a kill.
   */
  synchronized void restart() {
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
    List<String> cmd = new ArrayList<>(List.of(binary().toString(), conf.toAbsolutePath().toString()));
    if (sentinel) {
      cmd.add("--sentinel");
    }
    try {
      process = new ProcessBuilder(cmd).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(conf.resolveSibling(conf.getFileName() + ".log").toFile()))
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    await(Duration.ofSeconds(15), "redis-server on port " + port + " to answer", () -> {
      if (!process.isAlive()) {
        throw new IllegalStateException("redis-server on port " + port + " exited; see " + conf + ".log");
      }
      try (Jedis j = client()) {
        return "PONG".equals(j.ping());
      } catch (RuntimeException e) {
        return false;
      }
    });
  }

  /** Kills the process at once (SIGKILL): a crash, nothing is saved. */
  synchronized void kill() {
    if (process != null) {
      process.destroyForcibly();
      try {
        process.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      process = null;
    }
  }

  @Override
  public void close() {
    kill();
  }

  /** Polls {@code condition} every 50 ms until it holds, for at most {@code max}. */
  static void await(Duration max, String what, BooleanSupplier condition) {
    long until = System.nanoTime() + max.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - until > 0) {
        throw new IllegalStateException("gave up waiting " + max.toSeconds() + " s for " + what);
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted waiting for " + what, e);
      }
    }
  }

  static Path tempDir(String prefix) {
    try {
      return Files.createTempDirectory(prefix);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Deletes {@code dir} and what is in it (one level, as these set-ups write it). */
  static void delete(Path dir) {
    try (var files = Files.list(dir)) {
      for (Path f : files.toList()) {
        Files.deleteIfExists(f);
      }
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      // a temp directory left behind is harmless
    }
  }

  private static synchronized Path binary() {
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
