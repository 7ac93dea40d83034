package dev.tumbler.lock.tck;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

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
 * were lost in the middle of their streams. A third, {@link #holdReplies(String)}, loses nothing but
 * holds back what the backend sends on some connections until {@link #releaseReplies()}: a slow link.
 * A fourth, {@link #holdRequests(String, long)}, delivers a request late, after its client may have given up on
 * it. Thread safe. Uses virtual threads; listens on 127.0.0.1.
 */
public final class TcpProxy implements AutoCloseable {

  private enum Mode { FORWARD, BLACKHOLE, CUT }

  private final InetSocketAddress target;
  private final ServerSocket server;
  private final Set<Link> links = ConcurrentHashMap.newKeySet();
  private volatile Mode mode = Mode.FORWARD;
  private volatile boolean closed;
  /** Guards {@link #holding}; waited on by pumps that hold replies. */
  private final Object holdLock = new Object();
  private byte[] holding;
  /** The marker of {@link #holdRequests}, its delay, and when the first request it held is delivered (0: none yet). */
  private volatile byte[] lateMarker;
  private volatile long lateMillis;
  private volatile boolean lateOthers;
  private final AtomicLong lateUntil = new AtomicLong();
  private final AtomicLong lateRequests = new AtomicLong();

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

  /**
   * Holds back what the backend sends on every connection whose client has sent {@code marker} among its first
   * 4 KiB (ASCII, any case: for example {@code "SUBSCRIBE"} picks a Redis client's subscriber connection), now or
   * later, until {@link #releaseReplies()}: the bytes wait in order and are lost only if the
   * connection closes meanwhile. The other connections and the other direction flow as usual.
   */
  public void holdReplies(String marker) {
    synchronized (holdLock) {
      holding = marker.toUpperCase(Locale.ROOT).getBytes(StandardCharsets.US_ASCII);
    }
  }

  /**
   * A request slow to arrive: the first one a client sends from now on that contains {@code marker} (ASCII, any
   * case) reaches the backend {@code millis} later, and every other one with it that comes meanwhile just after it,
   * in the order they came; later ones flow as usual. Its client may give up meanwhile (a read that timed out, the
   * connection closed or reset): the request is delivered all the same, and the backend's side is then half-closed,
   * so that the backend reads and runs it before it sees the end (what a server does with a request that was on
   * its way when the client went).
   */
  public void holdRequests(String marker, long millis) {
    hold(marker, millis, true);
  }

  /**
   * As {@link #holdRequests}, but only the first request with {@code marker} is held: the ones that come meanwhile
   * overtake it (a client that gave up on the first asks again, and its later request arrives first).
   */
  public void holdFirstRequest(String marker, long millis) {
    hold(marker, millis, false);
  }

  private void hold(String marker, long millis, boolean others) {
    lateMillis = millis;
    lateOthers = others;
    lateUntil.set(0);
    lateMarker = marker.toUpperCase(Locale.ROOT).getBytes(StandardCharsets.US_ASCII);
  }

  /** How many requests {@link #holdRequests} held back so far. */
  public long heldRequests() {
    return lateRequests.get();
  }

  /** Forwards what {@link #holdReplies} held back, in order, and holds nothing from now on. */
  public void releaseReplies() {
    synchronized (holdLock) {
      holding = null;
      holdLock.notifyAll();
    }
  }

  /** Whether bytes are forwarded now. */
  public boolean isForwarding() {
    return mode == Mode.FORWARD;
  }

  @Override
  public void close() {
    closed = true;
    releaseReplies();
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
      Thread.ofVirtual().start(() -> link.pump(client, backend, true));
      Thread.ofVirtual().start(() -> link.pump(backend, client, false));
    }
  }

  private static boolean contains(byte[] buf, int n, byte[] marker) {
    outer:
    for (int i = 0; i + marker.length <= n; i++) {
      for (int j = 0; j < marker.length; j++) {
        if (Character.toUpperCase((char) buf[i + j]) != marker[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
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
    /** Whether a request on this link was held by {@link #holdRequests}: its ends then close one at a time. */
    volatile boolean late;
    /** The first bytes the client sent, to match a hold's marker against (guarded by holdLock). */
    final byte[] opening = new byte[4096];
    int openingLength;

    Link(Socket a, Socket b) {
      this.a = a;
      this.b = b;
    }

    void pump(Socket from, Socket to, boolean fromClient) {
      byte[] buf = new byte[16 * 1024];
      boolean halfClosed = false;
      try {
        InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream();
        boolean delivering = true;
        while (true) {
          int n;
          try {
            n = in.read(buf);
          } catch (IOException e) {
            if (!late) {
              throw e;
            }
            n = -1; // a client that reset the link after a late request: that request still goes
          }
          if (n < 0) {
            break;
          }
          if (fromClient) {
            noteSent(buf, n);
            awaitLateRequest(buf, n);
          } else {
            awaitNoHold();
          }
          if (delivering && !starved && mode == Mode.FORWARD) {
            try {
              out.write(buf, 0, n);
              out.flush();
            } catch (IOException e) {
              if (!late) {
                throw e;
              }
              delivering = false; // the client is gone: read the backend to its end, so that it runs what it got
            }
          }
        }
        if (late && fromClient) {
          to.shutdownOutput(); // the backend reads the late request, then the end, and ends the link
          halfClosed = true;
        }
      } catch (IOException e) {
        // the link is gone
      } finally {
        if (!halfClosed) {
          close();
        }
      }
    }

    /** Holds a request that {@link #holdRequests} picks, and marks this link as one that carried a late request. */
    private void awaitLateRequest(byte[] buf, int n) {
      byte[] m = lateMarker;
      if (m == null || !contains(buf, n, m)) {
        return;
      }
      long now = System.currentTimeMillis();
      boolean first = lateUntil.compareAndSet(0, now + lateMillis);
      long until = first ? lateUntil.get() : lateOthers ? lateUntil.get() + 100 : 0;
      if (now < until) {
        late = true;
        lateRequests.incrementAndGet();
        try {
          Thread.sleep(until - now);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }

    private void noteSent(byte[] buf, int n) {
      synchronized (holdLock) {
        int k = Math.min(n, opening.length - openingLength);
        System.arraycopy(buf, 0, opening, openingLength, k);
        openingLength += k;
      }
    }

    /** Waits while a hold is in force and this connection's client sent its marker. */
    private void awaitNoHold() throws IOException {
      synchronized (holdLock) {
        while (holding != null && contains(opening, openingLength, holding) && !closed) {
          try {
            holdLock.wait();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while holding replies", e);
          }
        }
      }
    }

    void close() {
      links.remove(this);
      closeQuietly(a);
      closeQuietly(b);
    }
  }
}
