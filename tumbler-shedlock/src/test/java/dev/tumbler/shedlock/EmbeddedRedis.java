package dev.tumbler.shedlock;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import redis.embedded.RedisServer;

/** A real Redis server (the binary in {@code org.signal:embedded-redis}) on a free loopback port, without persistence. */
final class EmbeddedRedis implements AutoCloseable {
  private final RedisServer server;
  final int port;

  private EmbeddedRedis(RedisServer server, int port) {
    this.server = server;
    this.port = port;
  }

  static EmbeddedRedis start() {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    RedisServer server = RedisServer.builder().port(port).bind("127.0.0.1").setting("save \"\"")
        .setting("appendonly no").build();
    server.start();
    return new EmbeddedRedis(server, port);
  }

  String url() {
    return "lock:redis://127.0.0.1:" + port;
  }

  @Override
  public void close() {
    server.stop();
  }
}
