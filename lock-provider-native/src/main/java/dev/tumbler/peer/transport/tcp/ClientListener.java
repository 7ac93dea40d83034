package dev.tumbler.peer.transport.tcp;

import dev.tumbler.peer.transport.tcp.Frames.Frame;
import dev.tumbler.peer.transport.tcp.Frames.Hello;
import dev.tumbler.peer.transport.tcp.TcpProtocolException.Reason;
import dev.tumbler.peer.transport.tcp.TcpTransport.Watchdog;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A member's listener for thin clients, owned by one {@link TcpTransport} (see its "Clients" section): it
 * accepts connections on {@code clientListen}, runs the client handshake under {@code clientSecret}, and
 * serves each accepted client over one {@link DuplexLink}.
 *
 * <p>Threads: an accept loop; per connection a virtual thread that runs the handshake and then reads the
 * connection until it ends, and a virtual thread that writes to it. Virtual, unlike a peer's platform
 * reader, because a member may serve thousands of clients.
 *
 * <p>Events of one client id are ordered: {@code peerUp} before the first {@code deliver} of its connection,
 * {@code peerDown} after the last; and a connection that replaces an older one of the same id is announced
 * only once the older one's {@code peerDown} has been called, so up and down alternate per id.
 *
 * <p>Limits. Connections that have not finished their handshake wait in a pool of their own (at most
 * {@value TcpTransport#MAX_UNIDENTIFIED}, the one read longest closed to admit another, as on the peer
 * listener), so a client flood never takes room from members' handshakes. A client connection stays in it
 * until its proof is checked, not only until its HELLO: any id of the right form names a client, so there is
 * no per-member claim to move it to. At most {@code maxClients} connections are served at once; a new client
 * beyond it is refused with {@link Reason#TOO_MANY_CLIENTS} after its proof (a reconnecting client replaces
 * its old connection and takes no more room).
 *
 * <p>Thread safe.
 */
final class ClientListener {
  private static final Logger LOG = LoggerFactory.getLogger(TcpTransport.class);

  private final TcpTransport owner;
  private final String self;
  private final Set<String> members;
  private final TcpTransportConfig config;
  private final byte[] clientSecret;
  private final ServerSocket server;
  private final long queueLimit;
  private final LogLimiter log;
  private final ReentrantLock handshakes = new ReentrantLock();
  private final Condition room = handshakes.newCondition();
  private final UnidentifiedPool<Socket> unidentified = new UnidentifiedPool<>(TcpTransport.MAX_UNIDENTIFIED);
  private final Set<Socket> evicted = ConcurrentHashMap.newKeySet();
  // written under `registry`, read without it
  private final ConcurrentHashMap<String, Client> clients = new ConcurrentHashMap<>();
  private final Object registry = new Object();

  /** One client connection being served (or about to be). */
  private static final class Client {
    final String id;
    final DuplexLink link;
    /** Completes after this connection's last callback: its peerDown, or nothing if it never went up. */
    final CompletableFuture<Void> ended = new CompletableFuture<>();
    /** Set just before its peerUp: from then on {@link #send} writes to it. */
    volatile boolean up;

    Client(String id, DuplexLink link) {
      this.id = id;
      this.link = link;
    }
  }

  ClientListener(TcpTransport owner, String self, Set<String> members, TcpTransportConfig config,
      ServerSocket server) {
    this.owner = owner;
    this.self = self;
    this.members = members;
    this.config = config;
    this.clientSecret = config.clientSecret();
    this.server = server;
    // client messages are small; bounded per client so that a thousand slow clients cannot exhaust memory
    this.queueLimit = Math.max(4L << 20, 2L * config.maxFrameSize());
    this.log = new LogLimiter(LOG, self, TcpTransport.LOG_WINDOW_SECONDS, TimeUnit.SECONDS, TcpTransport.LOG_BURST,
        "client connections refused or closed");
  }

  int port() {
    return server.getLocalPort();
  }

  void start() {
    owner.spawn("tumbler-tcp-client-accept-" + self, this::acceptLoop);
  }

  /** Waits until what was queued for every client is written, or {@code maxNanos} pass in all. */
  void drain(long maxNanos) throws InterruptedException {
    long end = System.nanoTime() + maxNanos;
    for (Client c : List.copyOf(clients.values())) {
      c.link.drain(Math.max(0, end - System.nanoTime()));
    }
  }

  /** Closes the listen socket; the owner closes the connections (they are in its open set) and threads. */
  void close() {
    TcpTransport.closeQuietly(server);
    for (Client c : clients.values()) {
      c.link.close("the transport closed");
    }
    log.flush();
  }

  /** Queues {@code payloads} for {@code client}; dropped if it is not up (its peerDown was or will be called). */
  void send(String client, List<byte[]> payloads) {
    Client c = clients.get(client);
    if (c == null || !c.up || !c.link.send(payloads)) {
      LOG.trace("{}: client {} not connected, payload dropped", self, client);
    }
  }

  boolean isUp(String client) {
    Client c = clients.get(client);
    return c != null && c.up && !c.link.isClosed();
  }

  // ---------------------------------------------------------------- accepting

  private void acceptLoop() {
    while (owner.started()) {
      if (!awaitRoom()) {
        return;
      }
      Socket s;
      try {
        s = server.accept();
      } catch (IOException e) {
        if (owner.started()) {
          LOG.warn("{}: accepting a client failed: {}", self, e.toString());
          TcpTransport.sleepQuietly(100);
        }
        continue;
      }
      Socket evict;
      handshakes.lock();
      try {
        evict = unidentified.admit(s);
      } finally {
        handshakes.unlock();
      }
      if (evict != null) {
        evicted.add(evict);
        TcpTransport.closeQuietly(evict); // its thread logs it, rate-limited
      }
      owner.track(s);
      if (!owner.started()) {
        TcpTransport.closeQuietly(s);
        break;
      }
      owner.spawn("tumbler-tcp-client-" + s.getRemoteSocketAddress(), () -> serve(s));
    }
  }

  /** As the peer listener's: waits until the pool can take one more (see {@link UnidentifiedPool}). */
  private boolean awaitRoom() {
    handshakes.lock();
    try {
      while (!unidentified.hasRoom()) {
        if (!owner.started()) {
          return false;
        }
        room.await(); // close() interrupts this thread
      }
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      handshakes.unlock();
    }
  }

  private void reading(Socket s) {
    handshakes.lock();
    try {
      unidentified.reading(s);
      room.signalAll();
    } finally {
      handshakes.unlock();
    }
  }

  private void settle(Socket s) {
    handshakes.lock();
    try {
      if (unidentified.remove(s)) {
        room.signalAll();
      }
    } finally {
      handshakes.unlock();
    }
  }

  // ---------------------------------------------------------------- one connection

  private record Proven(String client, byte[] toMember, byte[] toClient) {}

  /**
   * Runs the handshake of {@code s}, then (this thread) reads the connection until it ends. See the class
   * javadoc for the order of a client's events.
   */
  private void serve(Socket s) {
    String remote = String.valueOf(s.getRemoteSocketAddress());
    Watchdog watchdog = new Watchdog(s, config.handshakeTimeout());
    String client = null;
    Client conn = null;
    try {
      s.setTcpNoDelay(true);
      s.setSoTimeout(TcpTransport.millis(config.handshakeTimeout()));
      reading(s);
      if (s instanceof SSLSocket ssl) {
        ssl.startHandshake();
      }
      DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 1 << 12));
      DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), 1 << 12));
      Proven p = handshake(in, out);
      client = p.client();
      settle(s);
      conn = new Client(client, new DuplexLink(s, in, out, p.toClient(), p.toMember(), config.maxFrameSize(),
          config.idleTimeout(), queueLimit));
      Client old = register(conn, out);
      if (old != null) {
        // the client reconnected: its old connection is dead to it. Announce this one after the old one's end
        old.link.close("replaced by a newer connection from " + client);
        awaitEnd(old);
      }
      // stopped before the ACCEPT: once the client has it, only the link's end may close the connection
      if (!watchdog.done()) {
        throw new SocketTimeoutException("handshake timed out");
      }
      Frames.write(out, Frames.ACCEPT, Frames.EMPTY);
      out.flush();
      String id = client;
      DuplexLink link = conn.link;
      if (!link.isClosed()) {
        conn.up = true;
        LOG.debug("{}: client {} ({}) up", self, id, remote);
        owner.callback(r -> r.peerUp(id));
      }
      owner.spawn("tumbler-tcp-client-write-" + id, link::writeLoop);
      link.readLoop(payload -> owner.callback(r -> r.deliver(id, payload)));
    } catch (IOException | RuntimeException e) {
      logEnd(s, remote, client, conn, watchdog, e);
    } finally {
      watchdog.done();
      settle(s);
      evicted.remove(s);
      TcpTransport.closeQuietly(s);
      owner.untrack(s);
      if (conn != null) {
        conn.link.close("ended");
        synchronized (registry) {
          clients.remove(conn.id, conn);
        }
        if (conn.up) {
          String id = conn.id;
          owner.callback(r -> r.peerDown(id));
        }
        conn.ended.complete(null);
      }
    }
  }

  /** Waits for {@code old}'s last callback; its reader ends as soon as its socket is closed. */
  private static void awaitEnd(Client old) throws IOException {
    try {
      old.ended.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("transport closed");
    } catch (ExecutionException e) {
      throw new IllegalStateException(e); // never completed exceptionally
    }
  }

  /**
   * Makes {@code conn} its client's connection; returns the one it replaces, or null.
   *
   * @throws TcpProtocolException (after sending the REJECT) if {@code maxClients} are served and this is a
   *     new client
   */
  private Client register(Client conn, DataOutputStream out) throws IOException {
    int served;
    synchronized (registry) {
      if (!owner.started()) {
        throw new IOException("transport closed");
      }
      Client old = clients.get(conn.id);
      served = clients.size();
      if (old != null || served < config.maxClients()) {
        clients.put(conn.id, conn);
        return old;
      }
    }
    TcpTransport.reject(out, Reason.TOO_MANY_CLIENTS);
    throw new TcpProtocolException(Reason.TOO_MANY_CLIENTS, "'" + conn.id + "' refused: " + served
        + " clients served, maxClients " + config.maxClients());
  }

  /**
   * The member's side of the client handshake, up to and including the check of the client's proof. The
   * client names itself in its HELLO; what it says it dialled is not checked (it knows this member only by
   * the address it dialled, which may be a NAT's or a DNS alias's) but is covered by both proofs.
   */
  private Proven handshake(DataInputStream in, DataOutputStream out) throws IOException {
    Frame f = Frames.read(in, Frames.MAX_HANDSHAKE_FRAME);
    if (f.type() != Frames.HELLO) {
      throw new TcpProtocolException(Reason.UNEXPECTED_FRAME, "expected HELLO, got type " + f.type());
    }
    Hello hello;
    try {
      hello = Frames.parseHello(f.body());
    } catch (TcpProtocolException e) {
      if (e.reason() == Reason.VERSION) {
        TcpTransport.reject(out, e.reason());
      }
      throw e;
    }
    String client = hello.dialer();
    if (!Frames.isClientId(client)) {
      TcpTransport.reject(out, Reason.BAD_CLIENT_ID);
      throw new TcpProtocolException(Reason.BAD_CLIENT_ID, "'" + TcpTransport.printable(client) + "'"
          + (members.contains(client) ? " is a member's id: members dial the peer listener" : ""));
    }
    byte[] nonce = owner.nonce();
    String dialled = hello.dialled();
    byte[] proof = Frames.proof(clientSecret, Frames.MEMBER_PROOF, client, dialled, hello.nonce(), nonce);
    Frames.write(out, Frames.CHALLENGE, Frames.challenge(nonce, proof));
    out.flush();
    Frame r = Frames.read(in, Frames.MAX_HANDSHAKE_FRAME);
    if (r.type() != Frames.RESPONSE) {
      throw Frames.notAResponse(r, client, "clientSecret"); // the client checks this member's proof first
    }
    byte[] expected = Frames.proof(clientSecret, Frames.CLIENT_PROOF, client, dialled, hello.nonce(), nonce);
    if (!Frames.sameProof(expected, Frames.parseResponse(r.body()))) {
      TcpTransport.reject(out, Reason.BAD_MAC);
      throw new TcpProtocolException(Reason.BAD_MAC, "from '" + client + "' (not the client secret: its clientSecret "
          + "differs from this member's)");
    }
    return new Proven(client,
        Frames.proof(clientSecret, Frames.CLIENT_TO_MEMBER_KEY, client, dialled, hello.nonce(), nonce),
        Frames.proof(clientSecret, Frames.MEMBER_TO_CLIENT_KEY, client, dialled, hello.nonce(), nonce));
  }

  /**
   * Logs why a client connection ended. Everything before and during the handshake is rate-limited, as on
   * the peer listener (anyone who can connect can cause it); so are protocol errors and idle timeouts of
   * accepted clients, which a thousand clients could cause as well. A client's ordinary end is INFO.
   */
  private void logEnd(Socket s, String remote, String client, Client conn, Watchdog watchdog, Exception failure) {
    if (!owner.started()) {
      return;
    }
    String who = client == null ? remote : remote + " (" + client + ")";
    boolean accepted = conn != null && conn.up;
    switch (failure) {
      case TcpProtocolException e -> {
        if (log.allow(e.reason().name())) {
          LOG.warn("{}: closing client connection from {}: {}", self, who,
              accepted ? conn.link.ending(e) : e.getMessage());
        }
      }
      case IOException e -> {
        if (accepted) {
          if (e instanceof SocketTimeoutException && conn.link.closedBecause() == null) {
            // a half-open connection, or a client gone silent: worth a warning, but a thousand clients behind
            // one broken router would each cause one
            if (log.allow("IDLE")) {
              LOG.warn("{}: closing client connection from {}: {}", self, who, conn.link.ending(e));
            }
          } else {
            LOG.info("{}: client connection from {} ended: {}", self, who, conn.link.ending(e));
          }
        } else if (evicted.remove(s)) {
          if (log.allow("EVICTED")) {
            LOG.warn("{}: closing client connection from {} during its handshake: read longest of {} waiting "
                + "for their handshake, closed to admit a new connection", self, remote, TcpTransport.MAX_UNIDENTIFIED);
          }
        } else if (watchdog.fired() || e instanceof SocketTimeoutException) {
          if (log.allow("TIMEOUT")) {
            LOG.warn("{}: closing client connection from {}: {} (no complete handshake within {} ms)", self, who,
                Reason.TIMEOUT.text, config.handshakeTimeout().toMillis());
          }
        } else if (conn != null && conn.link.isClosed()) {
          LOG.info("{}: client connection from {} ended before it was up: {}", self, who,
              conn.link.closedBecause());
        } else if (log.allow("IO")) {
          LOG.warn("{}: closing client connection from {} during its handshake: {}", self, who,
              e instanceof EOFException ? "closed by the client" : TcpTransport.describe(e));
        }
      }
      default -> LOG.error("{}: closing client connection from {}: {}", self, who, failure.toString(), failure);
    }
  }
}
