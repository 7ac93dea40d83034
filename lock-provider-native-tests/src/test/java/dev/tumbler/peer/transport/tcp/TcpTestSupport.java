package dev.tumbler.peer.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tumbler.lock.tck.LoopbackPorts;
import dev.tumbler.peer.transport.Transport;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

/** Helpers shared by the TCP transport tests. */
final class TcpTestSupport {
  static final byte[] SECRET = "correct horse battery staple".getBytes(StandardCharsets.UTF_8);
  /** The clients' secret of the members under test: not the peers' {@link #SECRET}. */
  static final byte[] CLIENT_SECRET = "a client's secret, not a member's".getBytes(StandardCharsets.UTF_8);
  static final Duration WAIT = Duration.ofSeconds(20);

  private TcpTestSupport() {}

  /**
   * A port that was free a moment ago (the transports under test bind it themselves), below the
   * ephemeral range so that no outgoing connection takes it meanwhile: see {@link LoopbackPorts}.
   */
  static int freePort() throws IOException {
    return LoopbackPorts.freePort();
  }

  static String id(int port) {
    return "127.0.0.1:" + port;
  }

  static TcpTransportConfig.Builder config(String self, List<String> peers) {
    return TcpTransportConfig.builder(self).peers(peers).secret(SECRET)
        .handshakeTimeout(Duration.ofMillis(1000)).idleTimeout(Duration.ofMillis(2000))
        .backoff(Duration.ofMillis(20), Duration.ofMillis(250)).random(new SplittableRandom(42));
  }

  /** A member's settings as {@link #config}, taking clients on {@code clientListen} under {@link #CLIENT_SECRET}. */
  static TcpTransportConfig.Builder memberConfig(String self, List<String> peers, String clientListen) {
    return config(self, peers).clientListen(clientListen).clientSecret(CLIENT_SECRET);
  }

  /** A client's settings with the test timeouts of {@link #config}. */
  static TcpClientConfig.Builder clientConfig(List<String> members) {
    return TcpClientConfig.builder(members).clientSecret(CLIENT_SECRET)
        .handshakeTimeout(Duration.ofMillis(1000)).idleTimeout(Duration.ofMillis(2000))
        .backoff(Duration.ofMillis(20), Duration.ofMillis(250)).random(new SplittableRandom(42));
  }

  /** The client address of {@code member}, as a client dials it. */
  static String clientAddress(TcpTransport member) {
    return id(member.clientPort());
  }

  /** A well-formed client id, random. */
  static String randomClientId() {
    byte[] b = new byte[16];
    new java.security.SecureRandom().nextBytes(b);
    return "client/" + java.util.HexFormat.of().formatHex(b);
  }

  static void await(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("timed out waiting until " + what);
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        fail("interrupted");
      }
    }
  }

  /** Waits until the node closes {@code s}: a read sees end of stream or a reset. */
  static void assertClosedByNode(Socket s) throws IOException {
    s.setSoTimeout((int) WAIT.toMillis());
    InputStream in = s.getInputStream();
    try {
      // drain what the node sent (a REJECT, say) until the end of the stream
      byte[] buf = new byte[512];
      while (in.read(buf) >= 0) {
        // keep reading
      }
    } catch (SocketTimeoutException e) {
      fail("the node did not close the connection within " + WAIT);
    } catch (IOException e) {
      // reset: closed as well
    }
    assertTrue(true);
  }

  private static volatile java.io.ByteArrayOutputStream capture;

  /** Inside {@link #logged}: what was logged so far. */
  static String logSoFar() {
    java.io.ByteArrayOutputStream buf = capture;
    if (buf == null) {
      throw new IllegalStateException("not inside logged(...)");
    }
    synchronized (buf) {
      return buf.toString(StandardCharsets.UTF_8);
    }
  }

  interface IoAction {
    void run() throws Exception;
  }

  /**
   * Runs {@code action}, returning what was logged meanwhile (slf4j-simple writes to System.err), and
   * checks that neither secret is in it. Waits for the log to settle: a node logs just after it closes.
   */
  static String logged(IoAction action) throws Exception {
    java.io.PrintStream saved = System.err;
    java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
    capture = buf;
    java.io.PrintStream tee = new java.io.PrintStream(new java.io.OutputStream() {
      @Override
      public synchronized void write(int c) {
        saved.write(c);
        buf.write(c);
      }

      @Override
      public synchronized void write(byte[] d, int off, int len) {
        saved.write(d, off, len);
        buf.write(d, off, len);
      }
    }, true, StandardCharsets.UTF_8);
    System.setErr(tee);
    try {
      action.run();
      long deadline = System.nanoTime() + 5_000_000_000L;
      int size = -1;
      while (System.nanoTime() < deadline && (buf.size() == 0 || buf.size() != size)) {
        size = buf.size();
        Thread.sleep(200);
      }
    } finally {
      System.setErr(saved);
      capture = null;
    }
    String log = buf.toString(StandardCharsets.UTF_8);
    assertTrue(!log.contains(new String(SECRET, StandardCharsets.UTF_8)), "secret in the log: " + log);
    assertTrue(!log.contains(new String(CLIENT_SECRET, StandardCharsets.UTF_8)), "client secret in the log: " + log);
    return log;
  }

  /**
   * Records every callback in one sequence ({@code "up p"}, {@code "data p"}, {@code "down p"}) and notes
   * any that breaks the transport's order: a delivery while down, two ups or two downs in a row.
   */
  static final class Sequenced implements Transport.Receiver {
    final List<String> events = new CopyOnWriteArrayList<>();
    final List<String> violations = new CopyOnWriteArrayList<>();
    final Map<String, List<byte[]>> delivered = new ConcurrentHashMap<>();
    private final Map<String, Boolean> up = new ConcurrentHashMap<>();

    @Override
    public void deliver(String peer, byte[] payload) {
      if (!isUp(peer)) {
        violations.add("delivery from " + peer + " while it is down");
      }
      events.add("data " + peer);
      delivered.computeIfAbsent(peer, k -> new CopyOnWriteArrayList<>()).add(payload);
    }

    // the event goes in before the state flips: a test that waits for isUp to change then reads the events must find
    // it there (a loaded run saw [up] after waiting for down)
    @Override
    public synchronized void peerUp(String peer) {
      events.add("up " + peer);
      if (up.put(peer, true) == Boolean.TRUE) {
        violations.add("up twice in a row: " + peer);
      }
    }

    @Override
    public synchronized void peerDown(String peer) {
      events.add("down " + peer);
      if (up.put(peer, false) != Boolean.TRUE) {
        violations.add("down while not up: " + peer);
      }
    }

    boolean isUp(String peer) {
      return up.getOrDefault(peer, false);
    }

    List<byte[]> from(String peer) {
      return delivered.getOrDefault(peer, List.of());
    }

    /** The up and down events of {@code peer}, in order. */
    List<String> links(String peer) {
      return new ArrayList<>(events).stream().filter(e -> e.equals("up " + peer) || e.equals("down " + peer))
          .toList();
    }

    long count(String event) {
      return new ArrayList<>(events).stream().filter(event::equals).count();
    }
  }

  /** Records every callback of a receiver. */
  static final class Recorder implements Transport.Receiver {
    final Map<String, List<byte[]>> delivered = new ConcurrentHashMap<>();
    final List<String> events = new CopyOnWriteArrayList<>();
    final Map<String, Boolean> up = new ConcurrentHashMap<>();
    /** While set and closed, a delivery waits for it (at most 10 s): the reader stops reading meanwhile. */
    volatile java.util.concurrent.CountDownLatch gate;

    @Override
    public void deliver(String peer, byte[] payload) {
      java.util.concurrent.CountDownLatch g = gate;
      if (g != null) {
        try {
          g.await(10, java.util.concurrent.TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      delivered.computeIfAbsent(peer, k -> new CopyOnWriteArrayList<>()).add(payload);
    }

    @Override
    public void peerUp(String peer) {
      events.add("up " + peer);
      up.put(peer, true);
    }

    @Override
    public void peerDown(String peer) {
      events.add("down " + peer);
      up.put(peer, false);
    }

    boolean isUp(String peer) {
      return up.getOrDefault(peer, false);
    }

    List<byte[]> from(String peer) {
      return delivered.getOrDefault(peer, List.of());
    }

    long count(String event) {
      return new ArrayList<>(events).stream().filter(event::equals).count();
    }
  }
}
