package dev.tumbler.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code /health} and {@code /metrics} of a real {@code tumbler node}, in this JVM, beside a second member. */
@Timeout(90)
class NodeEndpointTest {
  private static final String SECRET = "node-endpoint-test-secret-0123";
  private static final Duration WAIT = Duration.ofSeconds(30);

  @TempDir
  Path dir;

  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /**
   * The command's output, held up at the first line that holds a given text until the test lets it go: the node
   * logs "starting" once its endpoint listens, and "stopping" once {@code /health} says so, so the test can ask
   * {@code /health} while the node is at that point, however fast it would otherwise go by.
   */
  static final class GatedOutput extends Writer {
    private final StringBuffer text = new StringBuffer();
    private final String gate;
    final CountDownLatch reached = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);

    GatedOutput(String gate) {
      this.gate = gate;
    }

    @Override
    public void write(char[] buf, int off, int len) {
      text.append(buf, off, len);
      if (reached.getCount() > 0 && text.indexOf(gate) >= 0) {
        reached.countDown();
        try {
          release.await(WAIT.toSeconds(), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}

    @Override
    public String toString() {
      return text.toString();
    }
  }

  private HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
    return send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(10))
        .GET().build());
  }

  private HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> getUntil(int port, String path, Predicate<HttpResponse<String>> done)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    HttpResponse<String> r = get(port, path);
    while (!done.test(r) && System.nanoTime() < deadline) {
      Thread.sleep(50);
      r = get(port, path);
    }
    return r;
  }

  @Test
  void healthAndMetricsFollowTheNodeFromStartToStop() throws Exception {
    int self = freePort();
    int peer = freePort();
    int httpPort = freePort();
    Path config = dir.resolve("node1.conf");
    Files.writeString(config, "# member 1 of 2\nlisten=127.0.0.1:" + self + "\npeers=127.0.0.1:" + peer
        + "\nalgorithm=lease\nhttp=127.0.0.1:" + httpPort + "\n");
    CommandLine cl = Tumbler.commandLine();
    GatedOutput starting = new GatedOutput(" starting: ");
    GatedOutput out = new GatedOutput(" stopping: ");
    StringWriter err = new StringWriter();
    // the first writer holds the start up, the second the stop
    cl.setOut(new PrintWriter(new Writer() {
      @Override
      public void write(char[] buf, int off, int len) {
        starting.write(buf, off, len);
        out.write(buf, off, len);
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    }, true));
    cl.setErr(new PrintWriter(err, true));
    NodeCommand node = cl.getSubcommands().get("node").getCommand();
    node.env = Map.of("TUMBLER_SECRET", SECRET);
    PrintStream stderrBefore = System.err;
    AtomicInteger code = new AtomicInteger(-1);
    Thread t = Thread.ofPlatform().name("node-under-test").start(
        () -> code.set(cl.execute("node", "--config", config.toString())));
    LockService other = null;
    try {
      assertTrue(starting.reached.await(WAIT.toSeconds(), TimeUnit.SECONDS), out + "\n" + err);
      HttpResponse<String> health = get(httpPort, "/health");
      assertEquals(503, health.statusCode());
      assertEquals("starting\n", health.body());
      assertTrue(get(httpPort, "/metrics").body().contains("tumbler_status{state=\"starting\"} 1\n"));
      starting.release.countDown();

      Properties secret = new Properties();
      secret.setProperty("secret", SECRET);
      other = LockProviders.connect("lock:native://127.0.0.1:" + peer + "?peers=127.0.0.1:" + self
          + "&algorithm=lease", secret);
      health = getUntil(httpPort, "/health", r -> r.statusCode() == 200);
      assertEquals(200, health.statusCode(), health.body());
      assertEquals("ok\n", health.body());
      assertEquals("text/plain; charset=utf-8", health.headers().firstValue("Content-Type").orElseThrow());

      HttpResponse<String> metrics = getUntil(httpPort, "/metrics", r -> r.body().contains("tumbler_view_term"));
      String m = metrics.body();
      assertEquals(200, metrics.statusCode());
      assertEquals(NodeMetrics.CONTENT_TYPE, metrics.headers().firstValue("Content-Type").orElseThrow());
      assertTrue(m.contains("tumbler_status{state=\"serving\"} 1\n"), m);
      assertTrue(m.contains("tumbler_node_info{node=\"127.0.0.1:" + self + "\",algorithm=\"lease\"} 1\n"), m);
      assertTrue(m.contains("# TYPE tumbler_messages_sent_total counter\n"), m);
      assertTrue(Pattern.compile("(?m)^tumbler_messages_sent_by_type_total\\{type=\"[^\"]+\"} [1-9]\\d*$").matcher(m)
          .find(), m);
      assertTrue(Pattern.compile("(?m)^tumbler_view_leader\\{node=\"127\\.0\\.0\\.1:(" + self + "|" + peer
          + ")\",position=\"0\",incarnation=\"\\d+\"} 1$").matcher(m).find(), m);
      Pattern sample = Pattern.compile("tumbler_[a-z_]+(\\{([a-z]+=\"[^\"]*\",?)+})? -?\\d+");
      for (String line : m.lines().toList()) {
        assertTrue(line.startsWith("# HELP tumbler_") || line.startsWith("# TYPE tumbler_")
            || sample.matcher(line).matches(), "a line of the text format: " + line);
      }
      assertFalse(m.contains(SECRET) || health.body().contains(SECRET));

      assertEquals(404, get(httpPort, "/").statusCode());
      assertEquals(404, get(httpPort, "/healthz").statusCode());
      HttpResponse<String> post = send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/health"))
          .POST(HttpRequest.BodyPublishers.ofString("x")).build());
      assertEquals(405, post.statusCode());
      assertEquals("GET", post.headers().firstValue("Allow").orElseThrow());

      String up = out.toString().lines().filter(l -> l.contains(" up: ")).findFirst().orElseThrow();
      assertTrue(up.contains("INFO tumbler.node - tumbler node 127.0.0.1:" + self + " up: algorithm lease, peers "
          + "127.0.0.1:" + peer + ", listen 127.0.0.1:" + self + ", http 127.0.0.1:" + httpPort + ", url lock:native://"
          + "127.0.0.1:" + self + "?peers=127.0.0.1:" + peer + "&algorithm=lease&secret=***"), up);

      node.requestStop(); // what SIGTERM's shutdown hook calls
      assertTrue(out.reached.await(WAIT.toSeconds(), TimeUnit.SECONDS), out.toString());
      health = get(httpPort, "/health");
      assertEquals(503, health.statusCode());
      assertEquals("stopping\n", health.body());
      out.release.countDown();
      t.join(WAIT.toMillis());
      assertFalse(t.isAlive());
      assertEquals(0, code.get(), out + "\n" + err);
      String log = out.toString();
      assertTrue(log.indexOf(" stopping: algorithm lease") < log.indexOf(" stopped: algorithm lease"), log);
      assertThrows(IOException.class, () -> get(httpPort, "/health"), "the endpoint closed last");
      assertSame(stderrBefore, System.err, "the log is put back");
      assertFalse(log.contains(SECRET) || err.toString().contains(SECRET), log + err);
      assertEquals("", err.toString());
    } finally {
      starting.release.countDown();
      out.release.countDown();
      node.requestStop();
      t.join(WAIT.toMillis());
      if (other != null) {
        other.close();
      }
    }
  }
}
