package dev.tumbler.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.tumbler.peer.node.NodeStats;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A node's plain-text HTTP endpoint (the JDK's {@link HttpServer}, two threads), bound only to the address it is
 * given:
 *
 * <ul>
 *   <li>{@code GET /health}: {@code 200 ok} while the node serves, {@code 503 starting} or {@code 503 stopping};
 *   <li>{@code GET /metrics}: {@link NodeMetrics};
 *   <li>any other path: 404; another method on those two: 405.
 * </ul>
 *
 * <p>Every answer is built from the status and the {@link NodeStats} of the moment; none holds a secret.
 */
final class HealthEndpoint implements AutoCloseable {
  private static final String TEXT = "text/plain; charset=utf-8";

  private final HttpServer server;
  private final ExecutorService executor;

  private HealthEndpoint(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  /**
   * Listens on {@code address} at once.
   *
   * @param stats the node's counters; it answers null while the service is not open
   * @throws IOException if it cannot listen there
   */
  static HealthEndpoint start(InetSocketAddress address, Supplier<NodeStatus> status, Supplier<NodeStats> stats)
      throws IOException {
    HttpServer server = HttpServer.create(address, 16);
    AtomicInteger n = new AtomicInteger();
    ExecutorService executor = Executors.newFixedThreadPool(2,
        r -> Thread.ofPlatform().daemon().name("tumbler-http-" + n.incrementAndGet()).unstarted(r));
    server.setExecutor(executor);
    server.createContext("/", exchange -> {
      try (exchange) {
        answer(exchange, status.get(), stats);
      }
    });
    server.start();
    return new HealthEndpoint(server, executor);
  }

  private static void answer(HttpExchange exchange, NodeStatus status, Supplier<NodeStats> stats)
      throws IOException {
    String path = exchange.getRequestURI().getPath();
    boolean known = path.equals("/health") || path.equals("/metrics");
    if (!known) {
      send(exchange, 404, TEXT, "not found: GET /health or /metrics\n");
    } else if (!exchange.getRequestMethod().equals("GET")) {
      exchange.getResponseHeaders().set("Allow", "GET");
      send(exchange, 405, TEXT, "method not allowed: GET only\n");
    } else if (path.equals("/health")) {
      if (status == NodeStatus.SERVING) {
        send(exchange, 200, TEXT, "ok\n");
      } else {
        send(exchange, 503, TEXT, status.word() + "\n");
      }
    } else {
      send(exchange, 200, NodeMetrics.CONTENT_TYPE, NodeMetrics.render(stats.get(), status));
    }
  }

  private static void send(HttpExchange exchange, int code, String type, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", type);
    exchange.getResponseHeaders().set("Cache-Control", "no-store");
    if (exchange.getRequestMethod().equals("HEAD")) { // a reply to HEAD has no body
      exchange.sendResponseHeaders(code, -1);
      return;
    }
    exchange.sendResponseHeaders(code, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  /** Where it listens (the port chosen, for port 0). */
  InetSocketAddress address() {
    return server.getAddress();
  }

  /** Stops listening, at once, and ends its threads. */
  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
