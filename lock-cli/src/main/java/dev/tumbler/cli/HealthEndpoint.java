package dev.tumbler.cli;

import dev.tumbler.peer.node.NodeStats;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * A node's plain-text HTTP endpoint, bound only to the address it is given:
 *
 * <ul>
 *   <li>{@code GET /health}: {@code 200 ok} while the node serves, {@code 503 starting} or {@code 503 stopping};
 *   <li>{@code GET /metrics}: {@link NodeMetrics};
 *   <li>any other path: 404; another method on those two: 405.
 * </ul>
 *
 * <p>Every answer is built from the status and the {@link NodeStats} of the moment; none holds a secret.
 *
 * <p><b>Slow and stalled clients.</b> A liveness probe must get its answer however many connections are open and
 * however slowly they send, or a healthy node is restarted. (The JDK's {@code HttpServer}, used before, read each
 * request's head on one of its two worker threads without a time-out: two connections that sent half a request held
 * both for ever.) So this is a small HTTP/1.1 server of its own, one request per connection:
 *
 * <ul>
 *   <li>each connection is read on a virtual thread of its own, so one slow connection never delays another;
 *   <li>a request's head (request line and headers) must arrive whole within {@link Limits#requestTimeout} of the
 *       connection being accepted, however it trickles in; else the connection gets {@code 408} and is closed;
 *   <li>a head larger than {@link Limits#maxRequestBytes} gets {@code 431} and is closed; a malformed one {@code 400};
 *   <li>at most {@link Limits#maxConnections} connections are open at once; a new one beyond that is admitted and
 *       the one open longest is shed: told {@code 503} with {@code Retry-After} if it is still sending its request,
 *       closed if it is stuck reading its answer. A probe sends its request as soon as it connects and is answered at
 *       once, so the connections open longest are the stalled ones: a flood of them can delay no probe, and it costs
 *       a bounded number of threads and sockets;
 *   <li>every answer says {@code Connection: close}.
 * </ul>
 *
 * <p>Thread safe.
 */
final class HealthEndpoint implements AutoCloseable {
  private static final String TEXT = "text/plain; charset=utf-8";
  /** How long, at most, the input is drained after an answer, so that closing does not reset it unread. */
  private static final Duration LINGER = Duration.ofMillis(500);

  /**
   * The endpoint's bounds.
   *
   * @param maxConnections connections open at once; the one open longest is shed to admit another
   * @param requestTimeout how long a request's head may take to arrive, from the connection's acceptance
   * @param maxRequestBytes the longest request head (request line and headers, with their line ends)
   */
  record Limits(int maxConnections, Duration requestTimeout, int maxRequestBytes) {
    /** 32 connections, 3 s for a request's head, 8 KiB per head. */
    static final Limits DEFAULT = new Limits(32, Duration.ofSeconds(3), 8 << 10);

    Limits {
      Objects.requireNonNull(requestTimeout, "requestTimeout");
      if (maxConnections < 1 || requestTimeout.isNegative() || requestTimeout.isZero() || maxRequestBytes < 64) {
        throw new IllegalArgumentException("limits out of range: " + maxConnections + ", " + requestTimeout + ", "
            + maxRequestBytes);
      }
    }
  }

  /** One accepted connection. */
  private static final class Connection {
    final Socket socket;
    final long accepted = System.nanoTime();
    /** Set (under {@code open}) once it has been shed to admit a newer one. */
    volatile boolean shed;
    /** Whether its request's head has arrived: from then on it is answered, and shedding closes it. */
    volatile boolean answering;

    Connection(Socket socket) {
      this.socket = socket;
    }
  }

  /** Why reading a request's head stopped. */
  private static final class BadRequest extends Exception {
    final int code;

    BadRequest(int code, String why) {
      super(why, null, false, false);
      this.code = code;
    }
  }

  private final ServerSocket server;
  private final Limits limits;
  private final Supplier<NodeStatus> status;
  private final Supplier<NodeStats> stats;
  // guarded by itself; oldest first
  private final LinkedHashSet<Connection> open = new LinkedHashSet<>();
  private final AtomicInteger served = new AtomicInteger();
  private volatile boolean closed;

  private HealthEndpoint(ServerSocket server, Limits limits, Supplier<NodeStatus> status, Supplier<NodeStats> stats) {
    this.server = server;
    this.limits = limits;
    this.status = status;
    this.stats = stats;
  }

  /**
   * Listens on {@code address} at once, with the {@linkplain Limits#DEFAULT default limits}.
   *
   * @param stats the node's counters; it answers null while the service is not open
   * @throws IOException if it cannot listen there
   */
  static HealthEndpoint start(InetSocketAddress address, Supplier<NodeStatus> status, Supplier<NodeStats> stats)
      throws IOException {
    return start(address, status, stats, Limits.DEFAULT);
  }

  /** As above, with {@code limits}. */
  static HealthEndpoint start(InetSocketAddress address, Supplier<NodeStatus> status, Supplier<NodeStats> stats,
      Limits limits) throws IOException {
    ServerSocket server = new ServerSocket();
    try {
      server.setReuseAddress(true);
      server.bind(address, 64);
    } catch (IOException | RuntimeException e) {
      server.close();
      throw e;
    }
    HealthEndpoint endpoint = new HealthEndpoint(server, limits, status, stats);
    Thread.ofPlatform().daemon().name("tumbler-http-accept").start(endpoint::acceptLoop);
    return endpoint;
  }

  /** Where it listens (the port chosen, for port 0). */
  InetSocketAddress address() {
    return (InetSocketAddress) server.getLocalSocketAddress();
  }

  /** Stops listening, at once, and closes every connection. */
  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException e) {
      // closing anyway
    }
    synchronized (open) {
      for (Connection c : open) {
        closeQuietly(c.socket);
      }
      open.clear();
    }
  }

  // ---------------------------------------------------------------- connections

  private void acceptLoop() {
    while (!closed) {
      Socket s;
      try {
        s = server.accept();
      } catch (IOException e) {
        if (closed) {
          return;
        }
        sleepQuietly(); // too many open files, say: do not spin
        continue;
      }
      Connection c = new Connection(s);
      Connection oldest = null;
      synchronized (open) {
        if (closed) {
          closeQuietly(s);
          return;
        }
        if (open.size() >= limits.maxConnections()) {
          Iterator<Connection> it = open.iterator();
          oldest = it.next();
          it.remove();
          oldest.shed = true;
        }
        open.add(c);
      }
      if (oldest != null) {
        shed(oldest);
      }
      Thread.ofVirtual().name("tumbler-http-" + served.incrementAndGet()).start(() -> serve(c));
    }
  }

  /**
   * Ends a connection to make room: one still sending its request is left to its reader, which sees the mark within
   * {@link #SHED_POLL} and answers 503 on its way out (shutting its input instead would lose the answer: a request
   * not read yet, and closed unread, resets the connection, and the client may drop the 503 with it); one being
   * answered (stuck, since answers are small and written at once) is closed.
   */
  private static void shed(Connection c) {
    if (c.answering) {
      closeQuietly(c.socket);
    }
  }

  /** How often a reader waiting for a request's bytes looks whether its connection was shed. */
  private static final Duration SHED_POLL = Duration.ofMillis(100);

  private void serve(Connection c) {
    Socket s = c.socket;
    try (s) {
      s.setTcpNoDelay(true);
      InputStream in = s.getInputStream();
      OutputStream out = s.getOutputStream();
      String head;
      try {
        head = readHead(c, in);
      } catch (BadRequest e) {
        c.answering = true;
        String[] response = switch (e.code) {
          case 503 -> new String[] {"Retry-After: 1", "busy: too many connections, this one was open longest; try "
              + "again\n"};
          case 408 -> new String[] {null, "request timeout: no complete request within "
              + limits.requestTimeout().toMillis() + " ms\n"};
          case 431 -> new String[] {null, "request too large: at most " + limits.maxRequestBytes() + " bytes\n"};
          default -> new String[] {null, "bad request: " + e.getMessage() + "\n"};
        };
        send(out, e.code, TEXT, response[0], response[1], false);
        linger(s, in);
        return;
      }
      c.answering = true;
      answer(out, head);
      linger(s, in);
    } catch (IOException e) {
      // the client went away, or was shed while it was answered: nothing more to do
    } finally {
      synchronized (open) {
        open.remove(c);
      }
    }
  }

  /**
   * The request's head, up to the blank line after its headers, within the request time-out counted from the
   * connection's acceptance and within the size limit.
   */
  private String readHead(Connection c, InputStream in) throws IOException, BadRequest {
    long deadline = c.accepted + limits.requestTimeout().toNanos();
    byte[] buf = new byte[limits.maxRequestBytes()];
    int n = 0;
    int scanned = 0;
    while (true) {
      int end = endOfHead(buf, scanned, n);
      scanned = Math.max(0, n - 2); // a blank line's first bytes may already be here
      if (end >= 0) {
        return new String(buf, 0, end, StandardCharsets.ISO_8859_1);
      }
      if (n == buf.length) {
        throw new BadRequest(431, "too large");
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new BadRequest(408, "timeout");
      }
      if (c.shed) {
        throw new BadRequest(503, "shed");
      }
      c.socket.setSoTimeout((int) Math.max(1, Math.min(SHED_POLL.toMillis(), Duration.ofNanos(left).toMillis())));
      int r;
      try {
        r = in.read(buf, n, buf.length - n);
      } catch (SocketTimeoutException e) {
        continue; // the time-out and the shed mark are looked at above
      }
      if (r < 0) {
        throw new IOException("closed by the client before its request ended");
      }
      n += r;
    }
  }

  /** The index of the head's end (before its blank line), looked for from {@code from}, or -1 if it is not here. */
  private static int endOfHead(byte[] buf, int from, int n) {
    for (int i = from; i + 1 < n; i++) {
      if (buf[i] == '\n' && (buf[i + 1] == '\n' || buf[i + 1] == '\r' && i + 2 < n && buf[i + 2] == '\n')) {
        return i;
      }
    }
    return -1;
  }

  private void answer(OutputStream out, String requestHead) throws IOException {
    String line = requestHead.lines().findFirst().orElse("");
    String[] parts = line.split(" ", -1);
    if (parts.length != 3 || parts[0].isEmpty() || !parts[2].startsWith("HTTP/1.")) {
      send(out, 400, TEXT, null, "bad request: not an HTTP/1.x request line\n", false);
      return;
    }
    String method = parts[0];
    String target = parts[1];
    if (target.regionMatches(true, 0, "http://", 0, 7)) { // absolute form: the path after the authority
      int slash = target.indexOf('/', 7);
      target = slash < 0 ? "/" : target.substring(slash);
    }
    int q = target.indexOf('?');
    String path = q < 0 ? target : target.substring(0, q);
    boolean noBody = method.equals("HEAD");
    if (!path.equals("/health") && !path.equals("/metrics")) {
      send(out, 404, TEXT, null, "not found: GET /health or /metrics\n", noBody);
    } else if (!method.equals("GET")) {
      send(out, 405, TEXT, "Allow: GET", "method not allowed: GET only\n", noBody);
    } else if (path.equals("/health")) {
      NodeStatus now = status.get();
      send(out, now == NodeStatus.SERVING ? 200 : 503, TEXT, null,
          (now == NodeStatus.SERVING ? "ok" : now.word()) + "\n", false);
    } else {
      send(out, 200, NodeMetrics.CONTENT_TYPE, null, NodeMetrics.render(stats.get(), status.get()), false);
    }
  }

  private static void send(OutputStream out, int code, String type, String extraHeader, String body, boolean noBody)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    StringBuilder sb = new StringBuilder("HTTP/1.1 ").append(code).append(' ').append(reason(code)).append("\r\n")
        .append("Content-Type: ").append(type).append("\r\n")
        .append("Cache-Control: no-store\r\n")
        .append("Content-Length: ").append(bytes.length).append("\r\n")
        .append("Connection: close\r\n");
    if (extraHeader != null) {
      sb.append(extraHeader).append("\r\n");
    }
    sb.append("\r\n");
    byte[] headBytes = sb.toString().getBytes(StandardCharsets.ISO_8859_1);
    byte[] all = new byte[headBytes.length + (noBody ? 0 : bytes.length)]; // a reply to HEAD has no body
    System.arraycopy(headBytes, 0, all, 0, headBytes.length);
    if (!noBody) {
      System.arraycopy(bytes, 0, all, headBytes.length, bytes.length);
    }
    out.write(all);
    out.flush();
  }

  private static String reason(int code) {
    return switch (code) {
      case 200 -> "OK";
      case 400 -> "Bad Request";
      case 404 -> "Not Found";
      case 405 -> "Method Not Allowed";
      case 408 -> "Request Timeout";
      case 431 -> "Request Header Fields Too Large";
      case 503 -> "Service Unavailable";
      default -> String.valueOf(code).toLowerCase(Locale.ROOT);
    };
  }

  /**
   * Ends the answer (FIN) and reads what the client still sends (a body nobody read, say) until it closes, for at
   * most {@link #LINGER}: closing with unread input would reset the connection, and the client could lose the answer.
   */
  private static void linger(Socket s, InputStream in) {
    try {
      s.shutdownOutput();
      long end = System.nanoTime() + LINGER.toNanos();
      byte[] sink = new byte[4096];
      int total = 0;
      while (total < (64 << 10)) {
        long left = end - System.nanoTime();
        if (left <= 0) {
          return;
        }
        s.setSoTimeout((int) Math.max(1, Duration.ofNanos(left).toMillis()));
        int r = in.read(sink);
        if (r < 0) {
          return;
        }
        total += r;
      }
    } catch (IOException e) {
      // closed, reset or timed out: done
    }
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // closing anyway
    }
  }

  private static void sleepQuietly() {
    try {
      Thread.sleep(50);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
