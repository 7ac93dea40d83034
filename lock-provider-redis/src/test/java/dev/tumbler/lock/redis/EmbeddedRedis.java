package dev.tumbler.lock.redis;

import dev.tumbler.lock.tck.LoopbackPorts;
import redis.clients.jedis.Jedis;
import redis.embedded.RedisServer;

/**
 * A real Redis server (the binary shipped in {@code org.signal:embedded-redis}) on a free loopback port,
 * without persistence, that a test can crash and restart on the same port.
 */
final class EmbeddedRedis implements AutoCloseable {
  private final int port;
  private RedisServer server;

  private EmbeddedRedis(int port) {
    this.port = port;
  }

  /**
   * Starts a server on a free port; on another port if the first was taken between the probe and the bind (another
   * module's tests run beside these and take ports of the same range).
   */
  static EmbeddedRedis start() {
    RuntimeException last = null;
    for (int i = 0; i < 5; i++) {
      EmbeddedRedis r = new EmbeddedRedis(LoopbackPorts.freePort());
      try {
        r.restart();
        return r;
      } catch (RuntimeException e) {
        last = e;
        r.stop();
      }
    }
    throw last;
  }

  int port() {
    return port;
  }

  String address() {
    return "127.0.0.1:" + port;
  }

  /** Kills the server: every key is gone (no persistence). */
  synchronized void stop() {
    if (server != null) {
      server.stop();
      server = null;
    }
  }

  /** Starts it again on the same port, empty. */
  synchronized void restart() {
    stop();
    RuntimeException last = null;
    for (int i = 0; i < 5; i++) {
      try {
        server = RedisServer.builder()
            .port(port)
            .bind("127.0.0.1")
            .setting("save \"\"")
            .setting("appendonly no")
            .setting("maxmemory-policy noeviction")
            // DEBUG SLEEP from loopback: how a test makes the server stop answering
            .setting("enable-debug-command local")
            .build();
        server.start();
        return;
      } catch (RuntimeException e) {
        // the port may linger for a moment after a stop
        last = e;
        server = null;
        try {
          Thread.sleep(200);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
    throw last;
  }

  boolean isRunning() {
    return server != null && server.isActive();
  }

  /** A plain client on this server, for tests that look at keys. */
  Jedis client() {
    return new Jedis("127.0.0.1", port);
  }

  @Override
  public void close() {
    stop();
  }

}
