package dev.tumbler.peer.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tumbler.peer.TestPorts;
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
  static final Duration WAIT = Duration.ofSeconds(20);

  private TcpTestSupport() {}

  /**
   * A port that was free a moment ago (the transports under test bind it themselves), below the
   * ephemeral range so that no outgoing connection takes it meanwhile: see {@link TestPorts}.
   */
  static int freePort() throws IOException {
    return TestPorts.freePort();
  }

  static String id(int port) {
    return "127.0.0.1:" + port;
  }

  static TcpTransportConfig.Builder config(String self, List<String> peers) {
    return TcpTransportConfig.builder(self).peers(peers).secret(SECRET)
        .handshakeTimeout(Duration.ofMillis(1000)).idleTimeout(Duration.ofMillis(2000))
        .backoff(Duration.ofMillis(20), Duration.ofMillis(250)).random(new SplittableRandom(42));
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
