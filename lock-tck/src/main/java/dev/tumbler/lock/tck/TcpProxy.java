package dev.tumbler.lock.tck;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP forwarder on loopback that a test puts between one client and its backend, to cut that client
 * off and heal it without touching the others. Two faults:
 *
 * <ul>
 *   <li>{@link #blackhole()}: connections stay open but every byte is dropped both ways, and new
 *       connections are accepted and then starved — a network partition, which clients notice only by
 *       timeouts;
 *   <li>{@link #cut()}: every connection is reset and new ones are closed at once — a crashed peer.
 * </ul>
 *
 * {@link #heal()} ends either; connections that lived through a blackhole are closed then, since bytes
 * were lost in the middle of their streams. Thread safe. Uses virtual threads; listens on 127.0.0.1.
 */
public final class TcpProxy implements AutoCloseable {

  private enum Mode { FORWARD, BLACKHOLE, CUT }

  private final InetSocketAddress target;
  private final ServerSocket server;
  private final Set<Link> links = ConcurrentHashMap.newKeySet();
  private volatile Mode mode = Mode.FORWARD;
  private volatile boolean closed;

  private TcpProxy(InetSocketAddress target) throws IOException {
    this.target = target;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread.ofVirtual().name("tcp-proxy-accept-" + server.getLocalPort()).start(this::acceptLoop);
  }

  /** Starts a proxy on an ephemeral loopback port forwarding to {@code host:port}. */
  public static TcpProxy start(String host, int port) {
    try {
      return new TcpProxy(new InetSocketAddress(host, port));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start a proxy to " + host + ":" + port, e);
    }
  }

  /** The address clients connect to. */
  public String host() {
    return "127.0.0.1";
  }

  /** The port clients connect to. */
  public int port() {
    return server.getLocalPort();
  }

  /** {@code host:port} of the proxy. */
  public String address() {
    return host() + ":" + port();
  }

  /** Drops every byte both ways, keeping connections open (a partition). */
  public void blackhole() {
    mode = Mode.BLACKHOLE;
    for (Link l : links) {
      l.starved = true;
    }
  }

  /** Resets every connection and refuses new ones (a crash). */
  public void cut() {
    mode = Mode.CUT;
    for (Link l : links) {
      l.close();
    }
  }

  /** Forwards again; connections that lived through a blackhole are closed. */
  public void heal() {
    for (Link l : links) {
      if (l.starved) {
        l.close();
      }
    }
    mode = Mode.FORWARD;
  }

  /** Whether bytes are forwarded now. */
  public boolean isForwarding() {
    return mode == Mode.FORWARD;
  }

  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    for (Link l : links) {
      l.close();
    }
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return;
      }
      Mode m = mode;
      if (m == Mode.CUT) {
        closeQuietly(client);
        continue;
      }
      Socket backend = new Socket();
      try {
        backend.connect(target, 5000);
      } catch (IOException e) {
        closeQuietly(client);
        closeQuietly(backend);
        continue;
      }
      Link link = new Link(client, backend);
      link.starved = m == Mode.BLACKHOLE;
      links.add(link);
      Thread.ofVirtual().start(() -> link.pump(client, backend));
      Thread.ofVirtual().start(() -> link.pump(backend, client));
    }
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // nothing to do
    }
  }

  private final class Link {
    final Socket a;
    final Socket b;
    volatile boolean starved;

    Link(Socket a, Socket b) {
      this.a = a;
      this.b = b;
    }

    void pump(Socket from, Socket to) {
      byte[] buf = new byte[16 * 1024];
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        int n;
        while ((n = in.read(buf)) >= 0) {
          if (!starved && mode == Mode.FORWARD) {
            out.write(buf, 0, n);
            out.flush();
          }
        }
      } catch (IOException e) {
        // the link is gone
      } finally {
        close();
      }
    }

    void close() {
      links.remove(this);
      closeQuietly(a);
      closeQuietly(b);
    }
  }
}
