package dev.tumbler.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.LoopbackPorts;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
    int self = LoopbackPorts.freePort();
    int peer = LoopbackPorts.freePort();
    int httpPort = LoopbackPorts.freePort();
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

  // ---- issue 40: slow and stalled clients

  private static final byte[] HALF_REQUEST = "GET /health HTTP/1.1\r\nHost: x\r\n".getBytes(StandardCharsets.US_ASCII);

  /** A connection that sends half a request and then nothing. */
  private static Socket stalled(int port) throws IOException {
    Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
    s.getOutputStream().write(HALF_REQUEST);
    s.getOutputStream().flush();
    return s;
  }

  /** A connection that sends half a request, one byte a second, on a thread of its own. */
  private static Socket trickling(int port, List<Thread> threads) throws IOException {
    Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
    threads.add(Thread.ofVirtual().start(() -> {
      try {
        for (byte b : HALF_REQUEST) {
          s.getOutputStream().write(b);
          s.getOutputStream().flush();
          Thread.sleep(1000);
        }
      } catch (IOException | InterruptedException e) {
        // closed by the endpoint, or by the test
      }
    }));
    return s;
  }

  /** What the endpoint sends on {@code s} until it closes it (at most {@code patience}). */
  private static String readToEnd(Socket s, Duration patience) throws IOException {
    s.setSoTimeout((int) patience.toMillis());
    try {
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
    } catch (java.net.SocketTimeoutException e) {
      return ""; // no whole answer (answer and end) within the patience
    } catch (SocketException e) {
      return "(reset)"; // closed with our half request unread: closed as well
    }
  }

  /**
   * Issue 40: two connections that sent half a request held both threads of the JDK's HttpServer, and /health never
   * answered again. Here 300 stalled connections and three that send a byte a second, against an endpoint whose
   * request time-out (20 s) is far longer than the wait for the answer: /health and /metrics must answer while every
   * one of them is still within its time-out, so neither can be waiting for them.
   */
  @Test
  void stalledAndTricklingConnectionsDoNotStarveHealth() throws Exception {
    Duration requestTimeout = Duration.ofSeconds(20);
    HealthEndpoint.Limits limits = new HealthEndpoint.Limits(16, requestTimeout, 8 << 10);
    List<Socket> sockets = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    try (HealthEndpoint endpoint = HealthEndpoint.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
        () -> NodeStatus.SERVING, () -> null, limits)) {
      int port = endpoint.address().getPort();
      long opened = System.nanoTime();
      for (int i = 0; i < 3; i++) {
        sockets.add(trickling(port, threads));
      }
      for (int i = 0; i < 300; i++) {
        sockets.add(stalled(port));
      }
      HttpRequest probe = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
          .timeout(requestTimeout.dividedBy(2)).GET().build();
      HttpResponse<String> health = send(probe);
      HttpResponse<String> metrics = send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
          .timeout(requestTimeout.dividedBy(2)).GET().build());
      Duration took = Duration.ofNanos(System.nanoTime() - opened);
      assertEquals(200, health.statusCode(), health.body());
      assertEquals("ok\n", health.body());
      assertEquals(200, metrics.statusCode());
      assertTrue(metrics.body().contains("tumbler_status{state=\"serving\"} 1"), metrics.body());
      assertTrue(took.compareTo(requestTimeout) < 0, "answered within the stalled connections' time-out: " + took);
      // the connections open longest were shed to make room, told 503 first. Which were open longest is the server's
      // order of acceptance, not the order they were opened in (300 connects overflow the listen backlog, and a
      // refused SYN is sent again a second later): so the first stalled ones in opening order that were shed
      String told = "";
      for (int i = 3; i < sockets.size() && told.isEmpty(); i++) {
        String answer = readToEnd(sockets.get(i), Duration.ofMillis(300));
        if (!answer.isEmpty()) {
          told = answer;
        }
      }
      assertTrue(told.startsWith("HTTP/1.1 503 Service Unavailable\r\n") && told.contains("Retry-After: 1\r\n"),
          "a shed connection was not told 503 with Retry-After: '" + told + "'");
    } finally {
      for (Socket s : sockets) {
        s.close();
      }
      for (Thread t : threads) {
        t.join();
      }
    }
  }

  /**
   * A connection shed right after it was accepted, before the endpoint read its half request, is still told 503:
   * shutting its input and closing it with the request unread reset the connection, and the client lost the answer
   * (seen once in a full run: the connection the test expected to be shed first read nothing but a reset).
   */
  @Test
  void aConnectionShedAtOnceIsStillTold503() throws Exception {
    HealthEndpoint.Limits limits = new HealthEndpoint.Limits(1, Duration.ofSeconds(20), 8 << 10);
    try (HealthEndpoint endpoint = HealthEndpoint.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
        () -> NodeStatus.SERVING, () -> null, limits)) {
      int port = endpoint.address().getPort();
      for (int i = 0; i < 30; i++) {
        try (Socket first = stalled(port); Socket second = stalled(port)) {
          String told = readToEnd(first, WAIT);
          assertTrue(told.startsWith("HTTP/1.1 503 Service Unavailable\r\n") && told.contains("Retry-After: 1\r\n"),
              "round " + i + ": the connection shed to admit another was not told 503: '" + told + "'");
          assertTrue(second.isConnected());
        }
      }
    }
  }

  /**
   * A request's head must arrive whole within the request time-out, counted from the connection's acceptance:
   * stalled and trickling connections are answered 408 and closed once it has passed, not before.
   */
  @Test
  void stalledAndTricklingConnectionsAreClosedAfterTheRequestTimeout() throws Exception {
    Duration requestTimeout = Duration.ofSeconds(2);
    HealthEndpoint.Limits limits = new HealthEndpoint.Limits(64, requestTimeout, 8 << 10);
    List<Socket> sockets = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    try (HealthEndpoint endpoint = HealthEndpoint.start(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
        () -> NodeStatus.SERVING, () -> null, limits)) {
      int port = endpoint.address().getPort();
      long start = System.nanoTime();
      for (int i = 0; i < 2; i++) {
        sockets.add(trickling(port, threads));
      }
      for (int i = 0; i < 20; i++) {
        sockets.add(stalled(port));
      }
      for (Socket s : sockets) {
        String got = readToEnd(s, WAIT);
        Duration after = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(after.compareTo(requestTimeout) >= 0, "closed only after the time-out: " + after);
        assertTrue(got.startsWith("HTTP/1.1 408 Request Timeout\r\n") || got.equals("(reset)"), got);
      }
      // and a head larger than the limit is refused, not read for ever
      try (Socket big = new Socket(InetAddress.getLoopbackAddress(), port)) {
        big.getOutputStream().write(("GET /health HTTP/1.1\r\nX: " + "a".repeat(9000) + "\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
        assertTrue(readToEnd(big, WAIT).startsWith("HTTP/1.1 431 "), "431 for a head over 8 KiB");
      }
    } finally {
      for (Socket s : sockets) {
        s.close();
      }
      for (Thread t : threads) {
        t.join();
      }
    }
  }
}
