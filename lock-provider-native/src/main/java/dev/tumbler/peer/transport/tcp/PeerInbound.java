package dev.tumbler.peer.transport.tcp;

import static dev.tumbler.peer.transport.tcp.Sockets.printable;

import dev.tumbler.peer.transport.tcp.Frames.FrameSealer;
import dev.tumbler.peer.transport.tcp.Frames.Hello;
import dev.tumbler.peer.transport.tcp.TcpProtocolException.Reason;
import java.io.EOFException;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;

/**
 * The peer listener's {@link Listener.Role}: who may dial this member (a member, naming this node), and the
 * reading of its peers' connections. A virtual thread per accepted connection runs its handshake up to the
 * dialer's proof; a connection that proves the secret is then handed, before its ACCEPT is sent, to its member's
 * reader, a platform thread started with the transport, which sends the ACCEPT and reads the connection until it
 * ends. A platform thread blocked in a read is woken by the kernel directly, where a virtual thread's read goes
 * through the poller and the scheduler: two more thread hand-offs per payload, on the path of every grant. The
 * hand-off comes before the ACCEPT so that the dialer cannot take the link for up (and break it, and reconnect)
 * before the thread that must see its end reads it. No thread is started per connection beyond the handshake's.
 *
 * <p>Only the newest connection from a peer delivers; a newer one ends the one being read (the peer reconnected:
 * the old one is dead to it). When a connection ends for any other reason, the outbound link to that peer is
 * broken too, so that a break in either direction is a down/up cycle on both nodes (see {@link TcpTransport}).
 *
 * <p>Thread safe.
 */
final class PeerInbound implements Listener.Role {
  private final String self;
  private final Set<String> peers;
  private final Map<String, PeerOutbound> outbound;
  private final TcpLinkSettings settings;
  private final Lifecycle life;
  private final Logger log;
  private final Listener listener;
  private final Map<String, Reader> readers = new LinkedHashMap<>();
  private final ConcurrentHashMap<String, Inbound> inbound = new ConcurrentHashMap<>();

  PeerInbound(String self, Map<String, PeerOutbound> outbound, TcpLinkSettings settings, Lifecycle life, Logger log,
      Listener listener) {
    this.self = self;
    this.peers = Set.copyOf(outbound.keySet());
    this.outbound = outbound;
    this.settings = settings;
    this.life = life;
    this.log = log;
    this.listener = listener;
    for (String p : outbound.keySet()) {
      readers.put(p, new Reader(p));
    }
  }

  /** Starts the readers, one platform thread per peer. */
  void start() {
    for (Reader r : readers.values()) {
      life.spawnPlatform("tumbler-tcp-read-" + r.peer, r::run);
    }
  }

  /** A peer dials this node's id, and is a member; then its connection claims that member. */
  @Override
  public void check(Socket s, Hello hello) throws TcpProtocolException {
    if (!hello.dialled().equals(self)) {
      throw new TcpProtocolException(Reason.WRONG_NODE, "'" + printable(hello.dialled()) + "' from '"
          + printable(hello.dialer()) + "'");
    }
    if (!peers.contains(hello.dialer())) {
      throw new TcpProtocolException(Reason.UNKNOWN_PEER, "'" + printable(hello.dialer()) + "' (members: " + peers
          + ")" + (hello.dialer().startsWith(Frames.CLIENT_ID_PREFIX)
              ? "; a client id: clients connect to a member's client listener" : ""));
    }
    listener.claim(s, hello.dialer());
  }

  @Override
  public boolean serve(Listener.Accepted a) throws IOException {
    if (!readers.get(a.proven().dialer()).handOver(a)) {
      throw new IOException("transport closed");
    }
    return true;
  }

  /**
   * The reader of one member's connections: serves them one at a time, in the order their handshakes ended. A newer
   * connection ends the one being read and replaces one still waiting.
   */
  private final class Reader {
    final String peer;
    /** Held by every connection from this peer as it delivers, so a replaced one's last delivery cannot overlap. */
    final ReentrantLock deliveryLock = new ReentrantLock();
    // guarded by this
    private Listener.Accepted next;
    private Listener.Accepted serving;
    /** A newer connection from the member took the place of the one being served: its end is not a break. */
    private boolean replaced;

    Reader(String peer) {
      this.peer = peer;
    }

    /** Hands {@code a} to this reader; returns false if the transport is closed (nothing was taken). */
    boolean handOver(Listener.Accepted a) {
      Listener.Accepted dropped;
      synchronized (this) {
        if (!life.started()) {
          return false;
        }
        dropped = next;
        next = a;
        if (serving != null) {
          replaced = true;
          Sockets.closeQuietly(serving.socket());
        }
        notifyAll();
      }
      if (dropped != null) {
        discard(dropped);
      }
      return true;
    }

    void run() {
      try {
        while (life.started()) {
          Listener.Accepted a;
          synchronized (this) {
            while (next == null) {
              wait();
            }
            a = next;
            next = null;
            serving = a;
            replaced = false;
          }
          try {
            serve(this, a);
          } catch (Error e) {
            // this thread must outlive one connection: it is the only one that reads this member
            log.error("{}: reading the connection from {} failed", self, peer, e);
          } finally {
            synchronized (this) {
              serving = null;
            }
          }
        }
      } catch (InterruptedException e) {
        // the transport closed
      } finally {
        Listener.Accepted left;
        synchronized (this) {
          left = next;
          next = null;
        }
        if (left != null) {
          discard(left);
        }
      }
    }

    synchronized boolean replaced() {
      return replaced;
    }
  }

  /** Closes a handed-over connection that will never be served, or no longer is. */
  private void discard(Listener.Accepted a) {
    listener.discard(a.socket(), a.watchdog());
  }

  /**
   * A member's connection whose proof checked, on its member's reader: sends the ACCEPT, makes the connection the
   * one that delivers from {@code peer}, and reads it until it ends; then, unless a newer connection from
   * {@code peer} replaced it, breaks the outbound link to {@code peer}.
   */
  private void serve(Reader reader, Listener.Accepted a) {
    String peer = reader.peer;
    Socket s = a.socket();
    String who = a.remote() + " (" + peer + ")";
    Inbound conn = null;
    Exception ending = null;
    try {
      // stopped before the ACCEPT: once the dialer has it, only the link's end may close the connection
      if (!a.watchdog().done()) {
        listener.failed(s, who, a.watchdog(), new SocketTimeoutException("handshake timed out"));
        return;
      }
      Frames.write(a.out(), Frames.ACCEPT, Frames.EMPTY);
      a.out().flush();
      listener.settle(s);
      conn = new Inbound(peer, s, reader.deliveryLock);
      Inbound old = inbound.put(peer, conn);
      if (old != null) {
        // the peer reconnected: its old connection is dead to it, and only the newest one delivers
        Sockets.closeQuietly(old.socket);
      }
      log.debug("{}: inbound link from {} ({}) up", self, peer, a.remote());
      s.setSoTimeout(Sockets.millis(settings.idleTimeout()));
      FrameSealer sealer = new FrameSealer(a.proven().keys().toAcceptor());
      while (true) {
        deliver(conn, Frames.readData(a.in(), sealer, settings.maxFrameSize()));
      }
    } catch (IOException | RuntimeException e) {
      ending = e;
      ended(who, peer, e);
    } finally {
      discard(a);
      // closed by the peer before a newer connection replaced it: a break all the same, whichever came first
      boolean replaced = reader.replaced() && !(ending instanceof EOFException);
      if (conn != null && inbound.remove(peer, conn) && !replaced) {
        outbound.get(peer).breakLink("the inbound link from " + peer + " ended");
      }
    }
  }

  /** Logs why a member's connection ended after its handshake. */
  private void ended(String who, String peer, Exception failure) {
    if (!life.started()) {
      return;
    }
    switch (failure) {
      case TcpProtocolException e -> {
        // a named peer's failures are worth a line each, but not one per retry of a peer whose secret differs
        if (!e.secretsDiffer() || listener.limiter().allow(e.reason().name())) {
          log.warn("{}: closing connection from {}: {}", self, who, e.getMessage());
        }
      }
      case SocketTimeoutException e -> log.warn("{}: closing connection from {}: nothing received for {} ms", self,
          who, settings.idleTimeout().toMillis());
      case IOException e -> log.info("{}: inbound link from {} ended: {}", self, peer, Sockets.describe(e));
      default -> log.error("{}: closing connection from {}: {}", self, who, failure.toString(), failure);
    }
  }

  private void deliver(Inbound conn, byte[] payload) {
    conn.deliveryLock.lock();
    try {
      // only the newest connection from a peer delivers, and nothing after close
      if (inbound.get(conn.peer) == conn) {
        life.deliver(conn.peer, payload);
      }
    } finally {
      conn.deliveryLock.unlock();
    }
  }

  /** A member's connection being read; {@code deliveryLock} is its reader's. */
  private record Inbound(String peer, Socket socket, ReentrantLock deliveryLock) {}
}
