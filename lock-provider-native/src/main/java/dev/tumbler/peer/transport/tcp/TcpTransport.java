package dev.tumbler.peer.transport.tcp;

import dev.tumbler.peer.transport.Transport;
import dev.tumbler.peer.transport.tcp.Frames.Frame;
import dev.tumbler.peer.transport.tcp.Frames.FrameSealer;
import dev.tumbler.peer.transport.tcp.Frames.Hello;
import dev.tumbler.peer.transport.tcp.TcpProtocolException.Reason;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Transport} of a native cluster over TCP, optionally TLS, and of its members' thin clients
 * (below, "Clients"): handshakes of accepted connections on virtual threads, then blocking reads on one
 * platform thread per peer that reads its authenticated connections (see {@code serveInbound}), and one
 * platform thread per peer that dials it and writes what {@link #send} does not write itself (see
 * {@code Outbound}).
 *
 * <h2>Connections</h2>
 * Every node dials every peer (at its id, or at its {@linkplain TcpTransportConfig#dialAddress dial
 * address} when one is configured) and keeps one <em>outbound</em> connection per peer; it <b>sends only on
 * its outbound connections and receives only on inbound ones</b> (those its peers dialled). One TCP
 * stream per ordered pair gives FIFO delivery per pair. Each connection starts with a handshake (below);
 * afterwards the dialer sends DATA frames (and a PING when idle for a quarter of {@code idleTimeout}),
 * the acceptor sends nothing. Frames are length-prefixed and capped ({@code maxFrameSize}); see
 * {@link Frames} for the format.
 *
 * <h2>Up and down</h2>
 * <ul>
 *   <li>{@link Receiver#peerUp peerUp(p)} is called when the outbound connection to {@code p} has
 *       completed its handshake: from then until the next {@code peerDown(p)}, payloads {@link #send sent}
 *       to {@code p} are written to that one TCP stream, in order. The first callback for a peer is
 *       always {@code peerUp}; up and down alternate.
 *   <li>{@link Receiver#peerDown peerDown(p)} is called when that outbound connection ends: a write
 *       fails, {@code p} closes it, this node's send queue to {@code p} overflows, or the inbound
 *       connection from {@code p} ends (for any reason but being replaced by a newer one from {@code p}).
 *       The last rule makes a break in either direction visible to <em>both</em> nodes as a
 *       down/up cycle, so both re-send their state. Payloads queued but not yet written are dropped
 *       and never written to a later connection; payloads sent while down are dropped.
 *   <li>{@link Receiver#deliver deliver(p, …)} is called for each DATA frame on the current inbound
 *       connection from {@code p}, in order, from one thread at a time per peer. Deliveries from
 *       {@code p} may precede this node's own {@code peerUp(p)} (the two directions connect separately).
 *   <li>An inbound connection that receives nothing for {@code idleTimeout} (peers send heartbeats) is
 *       closed; that catches half-open connections and silent partitions.
 * </ul>
 * After a failed attempt or a broken link, the dialer waits and retries: exponential backoff from
 * {@code backoffMin} to {@code backoffMax}, each wait drawn uniformly from its upper half (jitter from
 * the configured random source), reset after a successful handshake.
 *
 * <h2>Handshake</h2>
 * Mutual HMAC-SHA256 challenge-response under the shared secret, with fresh 32-byte nonces from both
 * sides: the dialer sends HELLO (magic, protocol version, its id, the id it means to reach, its nonce);
 * the acceptor checks the version, that the dialled id is its own and that the dialer is a member, then
 * answers CHALLENGE (its nonce and its proof); the dialer checks the proof and answers RESPONSE (its
 * proof); the acceptor checks it and answers ACCEPT. Proofs cover a direction label, both ids and both
 * nonces, so a reflected, replayed or redirected handshake fails. Both derive a session key that tags
 * every later frame with a sequence number. With TLS, the TLS handshake comes first and the HMAC
 * handshake runs inside it, so a TLS certificate alone never admits a peer; the dialer checks the
 * acceptor's certificate against its host (SAN) as HTTPS does.
 *
 * <h2>Bad peers</h2>
 * A connection that sends a corrupt or oversized length, an unexpected frame, a frame with a wrong tag,
 * a wrong proof, an unknown id, or that has not finished its handshake within {@code handshakeTimeout}
 * is closed, and the reason logged (WARN, never the secret; at most {@value #LOG_BURST} such lines per
 * {@value #LOG_WINDOW_SECONDS} s, the rest summed up in one line); other connections are unaffected.
 *
 * <p>A flood of connections that never finish their handshake must not shut a member out. At most
 * {@value #MAX_UNIDENTIFIED} connections may wait for their first frame (HELLO); when a new one arrives and
 * there are that many, the one this node has been <em>reading longest</em> is closed: a member's connection
 * sends its HELLO at once, so it leaves the pool as soon as the node reads it. A connection whose handshake
 * thread has not started reading it is never closed to admit another (on a busy node the accept loop admits
 * connections faster than their threads start); when the pool holds only such connections, the node
 * accepts no more until one is read, and new connections wait in the listen backlog (see
 * {@link UnidentifiedPool}). A HELLO that names a member moves the connection out of that pool; at most
 * {@value #MAX_CLAIMS_PER_PEER} handshakes may claim one member at a time, again the oldest closed first.
 * (An attacker who knows a member's id and floods HELLOs naming it faster than that member's handshake round
 * trip can still delay it; keep the transport on a private network, or behind TLS.)
 *
 * <h2>Clients</h2>
 * A member may also serve thin clients ({@link TcpClientTransport}): processes that are not members and
 * hold a session with one member. With {@link TcpTransportConfig#clientListen() clientListen} set, the
 * member listens on a second socket ({@link #clientPort()}) for them, and never takes a client on its peer
 * listener:
 * <ul>
 *   <li><b>Credential.</b> Clients prove {@code clientSecret}, which must differ from the peers'
 *       {@code secret}. The handshake is the peers' (HELLO, CHALLENGE, RESPONSE, ACCEPT, fresh nonces),
 *       with labels of its own: the client proves under {@code "tumbler/1 client proof"}, the member under
 *       {@code "tumbler/1 member proof to a client"}. So a client's credential cannot open a peer link, nor
 *       the peers' secret a client connection: a different port, key and labels (no proof made for one
 *       listener verifies on the other, even under one key), and each listener refuses the other's ids (the
 *       peer listener answers a {@code client/…} id with {@code UNKNOWN_PEER}, as any non-member; the client
 *       listener answers anything but a client id with {@code BAD_CLIENT_ID}).
 *   <li><b>Ids.</b> A client names itself {@code client/} and 32 lowercase hex digits, drawn at random; the
 *       member does not check what the client says it dialled (it knows the member by the address it
 *       dialled, which may be a NAT's), but both proofs cover it.
 *   <li><b>Both ways.</b> A client connection carries DATA frames both ways, in order, each direction
 *       under its own key ({@code "tumbler/1 client-to-member key"}, {@code "tumbler/1 member-to-client
 *       key"}) with its own sequence numbers, so a frame sent back to its writer fails its tag; both ends
 *       send a PING when idle for a quarter of {@code idleTimeout} and close a connection that received
 *       nothing for {@code idleTimeout} (see {@code DuplexLink}).
 *   <li><b>Events.</b> For client id {@code c}: {@code peerUp(c)} when its handshake completes, before any
 *       {@code deliver(c, …)} from that connection; {@code deliver(c, …)} per DATA frame, from one thread at
 *       a time; {@code peerDown(c)} when the connection ends. {@link #send send(c, …)} queues for that
 *       connection and never blocks (a bounded queue per client; overflowing it closes the connection);
 *       {@link #isUp isUp(c)} says whether it is up. A second connection with the same id replaces the first:
 *       {@code peerDown(c)} for the old one, then {@code peerUp(c)} for the new, never the other way round.
 *       {@link #peers()} stays the members.
 *   <li><b>Limits.</b> The client listener has its own pool of connections waiting for their handshake (the
 *       rules of "Bad peers" below, with the same bound), so a flood of clients never takes room from
 *       members' handshakes; and it serves at most {@code maxClients} client connections, refusing a new
 *       client beyond them with {@code TOO_MANY_CLIENTS} (logged, rate-limited with the other refusals).
 * </ul>
 * Client connections are served on virtual threads (a member may serve thousands); see {@code ClientListener}.
 *
 * <p>Thread safe. Callbacks come from transport threads; none starts after {@link #close()} returns
 * (one already running may finish). {@link #send} never blocks.
 */
public final class TcpTransport implements Transport {
  private static final Logger LOG = LoggerFactory.getLogger(TcpTransport.class);

  /** Connections that may wait for their HELLO at once; beyond it the one read longest is closed. */
  static final int MAX_UNIDENTIFIED = 256;
  /** Handshakes that may claim one member at once (HELLO named it, proof not yet checked). */
  static final int MAX_CLAIMS_PER_PEER = 4;
  static final int LOG_BURST = 20;
  static final int LOG_WINDOW_SECONDS = 10;

  private enum State { LATENT, STARTED, CLOSED }

  private final TcpTransportConfig config;
  private final byte[] secret;
  private final ServerSocket server;
  private final String self;
  private final Set<String> peers;
  private final Map<String, Outbound> outbound = new LinkedHashMap<>();
  private final Map<String, MemberReader> readers = new LinkedHashMap<>();
  private final ConcurrentHashMap<String, Inbound> inbound = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, ReentrantLock> deliveryLocks = new ConcurrentHashMap<>();
  private final Set<Closeable> open = ConcurrentHashMap.newKeySet();
  private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
  // connections in their handshake: not yet named (by HELLO), and claiming each member, oldest first
  private final ReentrantLock handshakes = new ReentrantLock();
  private final java.util.concurrent.locks.Condition roomForUnidentified = handshakes.newCondition();
  private final UnidentifiedPool<Socket> unidentified = new UnidentifiedPool<>(MAX_UNIDENTIFIED); // handshakes
  private final Map<String, java.util.ArrayDeque<Socket>> claims = new java.util.HashMap<>(); // handshakes
  private final Set<Socket> evicted = ConcurrentHashMap.newKeySet();
  private final LogLimiter handshakeLog;
  private final SecureRandom nonces = new SecureRandom();
  private final AtomicLong generations = new AtomicLong();
  private final long sendQueueLimit;
  private final Object stateLock = new Object();
  private volatile State state = State.LATENT;
  private volatile Receiver receiver;
  /** The listener for thin clients, or null when {@code clientListen} is not set. */
  private final ClientListener clients;

  private TcpTransport(TcpTransportConfig config, ServerSocket server, ServerSocket clientServer) {
    this.config = config;
    this.secret = config.secret();
    this.server = server;
    String host = hostOf(config.self());
    this.self = portOf(config.self()) == 0 ? new InetSocketAddressId(host, server.getLocalPort()).id()
        : config.self();
    this.handshakeLog = new LogLimiter(LOG, this.self, LOG_WINDOW_SECONDS, java.util.concurrent.TimeUnit.SECONDS,
        LOG_BURST);
    this.peers = Set.copyOf(new LinkedHashSet<>(config.peers()));
    for (String p : config.peers()) {
      outbound.put(p, new Outbound(p));
      readers.put(p, new MemberReader(p));
    }
    // bounded so that a stuck peer cannot exhaust memory; overflowing closes the link (peerDown)
    this.sendQueueLimit = Math.max(16L << 20, 4L * config.maxFrameSize());
    Set<String> members = new LinkedHashSet<>(peers);
    members.add(self);
    this.clients = clientServer == null ? null : new ClientListener(this, self, Set.copyOf(members), config,
        clientServer);
  }

  /** A {@code host:port} id formatted like the configuration's. */
  private record InetSocketAddressId(String host, int port) {
    String id() {
      return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
  }

  /**
   * Binds the listen socket on this peer's address (port 0: a free port, see {@link #port()}), and the
   * client listener's on {@code clientListen} when it is set (see {@link #clientPort()}), and returns
   * without connecting anywhere; {@link #start} connects.
   *
   * @throws UncheckedIOException if an address cannot be bound (in use, not local); the message names it
   */
  public static TcpTransport open(TcpTransportConfig config) {
    Objects.requireNonNull(config, "config");
    ServerSocket server = null;
    ServerSocket clientServer = null;
    try {
      server = listen(config, config.self());
    } catch (IOException e) {
      closeQuietly(server);
      throw new UncheckedIOException("cannot listen on " + config.self() + ": " + e.getMessage(), e);
    }
    String clientListen = config.clientListen().orElse(null);
    if (clientListen != null) {
      try {
        clientServer = listen(config, clientListen);
      } catch (IOException e) {
        closeQuietly(server);
        closeQuietly(clientServer);
        throw new UncheckedIOException("cannot listen for clients on " + clientListen + ": " + e.getMessage(), e);
      }
    }
    return new TcpTransport(config, server, clientServer);
  }

  private static ServerSocket listen(TcpTransportConfig config, String address) throws IOException {
    ServerSocket server = config.tls() ? config.sslContext().getServerSocketFactory().createServerSocket()
        : new ServerSocket();
    try {
      server.setReuseAddress(true);
      server.bind(new InetSocketAddress(hostOf(address), portOf(address)), 128);
      return server;
    } catch (IOException e) {
      closeQuietly(server);
      throw e;
    }
  }

  @Override
  public String self() {
    return self;
  }

  @Override
  public Set<String> peers() {
    return peers;
  }

  /** The port the listen socket is bound to. */
  public int port() {
    return server.getLocalPort();
  }

  /** The port the client listener is bound to, or -1 when this member takes no clients. */
  public int clientPort() {
    return clients == null ? -1 : clients.port();
  }

  /** The settings this transport runs with. */
  public TcpTransportConfig config() {
    return config;
  }

  /**
   * Starts accepting connections and dialling every peer.
   *
   * @throws IllegalStateException if already started or closed
   */
  @Override
  public void start(Receiver receiver) {
    Objects.requireNonNull(receiver, "receiver");
    synchronized (stateLock) {
      if (state != State.LATENT) {
        throw new IllegalStateException("transport " + self + " is " + state.name().toLowerCase());
      }
      this.receiver = receiver;
      state = State.STARTED;
      spawn("tumbler-tcp-accept-" + self, this::acceptLoop);
      for (Outbound o : outbound.values()) {
        // a platform thread: one per peer, and on plain TCP it waits in a selector (see Outbound)
        spawnPlatform("tumbler-tcp-dial-" + o.peer, o::run);
      }
      for (MemberReader r : readers.values()) {
        spawnPlatform("tumbler-tcp-read-" + r.peer, r::run); // see serveInbound
      }
      if (clients != null) {
        clients.start();
      }
    }
    LOG.info("{}: listening on port {}{}, peers {}{}", self, port(), config.tls() ? " (TLS)" : "", peers,
        clients == null ? "" : ", clients on port " + clientPort());
  }

  /**
   * Queues {@code payload} for {@code peer} (a member, or a client of this member's client listener) and
   * returns at once. Dropped when the link is down (the receiver has been, or will be, told with
   * {@code peerDown}; a client id that never connected counts as down). The array must not be changed
   * afterwards.
   *
   * @throws IllegalArgumentException if {@code peer} is neither a member nor (with a client listener) a
   *     client id, or the payload exceeds maxFrameSize
   */
  @Override
  public void send(String peer, byte[] payload) {
    send(peer, List.of(payload));
  }

  /** Plain TCP writes the frames of {@code payloads} with one system call while nothing is queued before them. */
  @Override
  public void send(String peer, List<byte[]> payloads) {
    boolean client = isClient(peer);
    Outbound o = client ? null : outboundOf(peer);
    for (byte[] payload : payloads) {
      Objects.requireNonNull(payload, "payload");
      if (payload.length > config.maxFrameSize()) {
        throw new IllegalArgumentException("payload of " + payload.length + " bytes exceeds maxFrameSize "
            + config.maxFrameSize());
      }
    }
    if (client) {
      clients.send(peer, payloads);
    } else {
      o.send(payloads);
    }
  }

  /**
   * Whether the link to {@code peer} is up: for a member, this node's outbound connection; for a client,
   * its connection to this member's client listener.
   *
   * @throws IllegalArgumentException as {@link #send(String, byte[])}
   */
  @Override
  public boolean isUp(String peer) {
    return isClient(peer) ? clients.isUp(peer) : outboundOf(peer).generation != 0;
  }

  /** Whether {@code peer} names a client of this member's client listener (the id of one that may connect). */
  private boolean isClient(String peer) {
    Objects.requireNonNull(peer, "peer");
    return clients != null && Frames.isClientId(peer);
  }

  /**
   * Closes the listen sockets (the client listener's too) and every connection; no callback starts
   * afterwards. Idempotent.
   */
  /** Waits for what was queued for thin clients to be written (see {@link Transport#flush}). */
  @Override
  public void flush(long maxNanos) throws InterruptedException {
    if (clients != null) {
      clients.drain(maxNanos);
    }
  }

  @Override
  public void close() {
    synchronized (stateLock) {
      if (state == State.CLOSED) {
        return;
      }
      state = State.CLOSED;
    }
    closeQuietly(server);
    if (clients != null) {
      clients.close();
    }
    for (Closeable c : open) {
      closeQuietly(c);
    }
    for (Thread t : threads) {
      t.interrupt();
    }
    handshakeLog.flush();
    LOG.info("{}: transport closed", self);
  }

  /** Closes the current outbound connection to {@code peer} (tests: a break in one direction). */
  void breakLink(String peer) {
    outboundOf(peer).breakLink("asked to");
  }

  @Override
  public String toString() {
    return "TcpTransport[" + self + ", peers=" + peers + ", " + state.name().toLowerCase() + "]";
  }

  // ---------------------------------------------------------------- inbound side

  private void acceptLoop() {
    while (state == State.STARTED) {
      if (!awaitRoomForUnidentified()) {
        return;
      }
      Socket s;
      try {
        s = server.accept();
      } catch (IOException e) {
        if (state == State.STARTED) {
          LOG.warn("{}: accept failed: {}", self, e.toString());
          sleepQuietly(100);
        }
        continue;
      }
      Socket evict = admit(s);
      if (evict != null) {
        evicted.add(evict);
        closeQuietly(evict); // its thread logs it, rate-limited
      }
      open.add(s);
      if (state != State.STARTED) {
        closeQuietly(s);
        break;
      }
      spawn("tumbler-tcp-in-" + s.getRemoteSocketAddress(), () -> serveInbound(s));
    }
  }

  /**
   * A virtual thread per accepted connection runs its handshake up to the dialer's proof; a connection
   * that proves the secret is then handed, before its ACCEPT is sent, to its member's reader (see
   * {@link MemberReader}), a platform thread started with the transport, which sends the ACCEPT and reads
   * the connection until it ends. A platform thread blocked in a read is woken by the kernel directly,
   * where a virtual thread's read goes through the poller and the scheduler: two more thread hand-offs per
   * payload, on the path of every grant. The hand-off comes before the ACCEPT so that the dialer cannot
   * take the link for up (and break it, and reconnect) before the thread that must see its end reads it.
   * No thread is started per connection beyond the handshake's virtual one.
   */
  private void serveInbound(Socket s) {
    String remote = String.valueOf(s.getRemoteSocketAddress());
    Watchdog watchdog = new Watchdog(s, config.handshakeTimeout());
    String peer = null;
    boolean handedOver = false;
    try {
      s.setTcpNoDelay(true);
      s.setSoTimeout(millis(config.handshakeTimeout()));
      reading(s);
      if (s instanceof SSLSocket ssl) {
        ssl.startHandshake();
      }
      DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 1 << 16));
      DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), 1 << 12));
      Accepted a = acceptorHandshake(in, out, claimant -> claim(s, claimant));
      peer = a.peer;
      handedOver = readers.get(peer).handOver(new Handover(s, remote, a, in, out, watchdog));
      if (!handedOver) {
        throw new IOException("transport closed");
      }
    } catch (IOException | RuntimeException e) {
      logInboundEnd(s, remote, peer, watchdog, e);
    } finally {
      if (!handedOver) {
        watchdog.done();
        settle(s);
        evicted.remove(s);
        closeQuietly(s);
        open.remove(s);
      }
    }
  }

  /** A member's connection whose proof checked, for its member's reader. */
  private static final class Handover {
    final Socket socket;
    final String remote;
    final Accepted accepted;
    final DataInputStream in;
    final DataOutputStream out;
    final Watchdog watchdog;
    /** A newer connection from the member took its place: its end is not a break of the link. */
    volatile boolean replaced;

    Handover(Socket socket, String remote, Accepted accepted, DataInputStream in, DataOutputStream out,
        Watchdog watchdog) {
      this.socket = socket;
      this.remote = remote;
      this.accepted = accepted;
      this.in = in;
      this.out = out;
      this.watchdog = watchdog;
    }
  }

  /**
   * The reader of one member's connections: a platform thread, started with the transport, that serves
   * them one at a time, in the order their handshakes ended. A newer connection ends the one being read
   * (the member reconnected: the old one is dead to it) and replaces one still waiting.
   */
  private final class MemberReader {
    final String peer;
    // guarded by this
    private Handover next;
    private Handover serving;

    MemberReader(String peer) {
      this.peer = peer;
    }

    /** Hands {@code h} to this reader; returns false if the transport is closed (nothing was taken). */
    boolean handOver(Handover h) {
      Handover dropped;
      synchronized (this) {
        if (state != State.STARTED) {
          return false;
        }
        dropped = next;
        next = h;
        if (serving != null) {
          serving.replaced = true;
          closeQuietly(serving.socket);
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
        while (state == State.STARTED) {
          Handover h;
          synchronized (this) {
            while (next == null) {
              wait();
            }
            h = next;
            next = null;
            serving = h;
          }
          try {
            serveMember(peer, h);
          } catch (Error e) {
            // this thread must outlive one connection: it is the only one that reads this member
            LOG.error("{}: reading the connection from {} failed", self, peer, e);
          } finally {
            synchronized (this) {
              serving = null;
            }
          }
        }
      } catch (InterruptedException e) {
        // the transport closed
      } finally {
        Handover left;
        synchronized (this) {
          left = next;
          next = null;
        }
        if (left != null) {
          discard(left);
        }
      }
    }
  }

  /** Closes a handed-over connection that will never be served. */
  private void discard(Handover h) {
    h.watchdog.done();
    settle(h.socket);
    evicted.remove(h.socket);
    closeQuietly(h.socket);
    open.remove(h.socket);
  }

  /**
   * A member's connection whose proof checked, on its member's reader: sends the ACCEPT, makes the
   * connection the one that delivers from {@code peer}, and reads it until it ends; then, unless a newer
   * connection from {@code peer} replaced it, breaks the outbound link to {@code peer} (see the class
   * javadoc, "Up and down").
   */
  private void serveMember(String peer, Handover h) {
    Socket s = h.socket;
    String remote = h.remote;
    Watchdog watchdog = h.watchdog;
    DataOutputStream out = h.out;
    Inbound conn = null;
    Exception ending = null;
    try {
      // stopped before the ACCEPT: once the dialer has it, only the link's end may close the connection
      if (!watchdog.done()) {
        throw new SocketTimeoutException("handshake timed out");
      }
      Frames.write(out, Frames.ACCEPT, new byte[0]);
      out.flush();
      settle(s);
      conn = new Inbound(peer, s);
      Inbound old = inbound.put(peer, conn);
      if (old != null) {
        // the peer reconnected: its old connection is dead to it, and only the newest one delivers
        closeQuietly(old.socket);
      }
      LOG.debug("{}: inbound link from {} ({}) up", self, peer, remote);
      s.setSoTimeout(millis(config.idleTimeout()));
      readLoop(conn, h.in, new FrameSealer(h.accepted.sessionKey));
    } catch (IOException | RuntimeException e) {
      ending = e;
      logInboundEnd(s, remote, peer, watchdog, e);
    } finally {
      discard(h);
      // closed by the peer before a newer connection replaced it: a break all the same, whichever came first
      boolean replaced = h.replaced && !(ending instanceof EOFException);
      if (conn != null && inbound.remove(peer, conn) && !replaced) {
        Outbound o = outbound.get(peer);
        if (o != null) {
          o.breakLink("the inbound link from " + peer + " ended");
        }
      }
    }
  }

  /** Logs why an inbound connection ended; {@code peer} is null until its HELLO named a member it proved. */
  private void logInboundEnd(Socket s, String remote, String peer, Watchdog watchdog, Exception failure) {
    switch (failure) {
      case TcpProtocolException e -> {
        // a named peer's failures are worth a line each, but not one per retry of a peer whose secret differs
        boolean limited = peer == null || e.secretsDiffer();
        if (state == State.STARTED && (!limited || handshakeLog.allow(e.reason().name()))) {
          LOG.warn("{}: closing connection from {}{}: {}", self, remote, peer == null ? "" : " (" + peer + ")",
              e.getMessage());
        }
      }
      case IOException e -> {
        if (state == State.STARTED) {
          if (peer == null && evicted.remove(s)) {
            if (handshakeLog.allow("EVICTED")) {
              LOG.warn("{}: closing connection from {} during its handshake: read longest of {} waiting for a "
                  + "first frame, closed to admit a new connection", self, remote, MAX_UNIDENTIFIED);
            }
          } else if (watchdog.fired() || (peer == null && e instanceof SocketTimeoutException)) {
            if (handshakeLog.allow("TIMEOUT")) {
              LOG.warn("{}: closing connection from {}: {} (no complete handshake within {} ms)", self, remote,
                  Reason.TIMEOUT.text, config.handshakeTimeout().toMillis());
            }
          } else if (e instanceof SocketTimeoutException) {
            LOG.warn("{}: closing connection from {} ({}): nothing received for {} ms", self, remote, peer,
                config.idleTimeout().toMillis());
          } else if (peer == null) {
            if (handshakeLog.allow("IO")) {
              LOG.warn("{}: closing connection from {} during its handshake: {}", self, remote, describe(e));
            }
          } else {
            LOG.info("{}: inbound link from {} ended: {}", self, peer, describe(e));
          }
        }
      }
      default -> {
        if (state == State.STARTED) {
          LOG.error("{}: closing connection from {}{}: {}", self, remote, peer == null ? "" : " (" + peer + ")",
              failure.toString(), failure);
        }
      }
    }
  }

  private record Accepted(String peer, byte[] sessionKey) {}

  /**
   * Accept loop: waits until the pool of connections awaiting HELLO can take one more, that is until it is
   * not full or holds a connection that has been read (see {@link UnidentifiedPool}); meanwhile new
   * connections wait in the listen backlog. Returns false if the transport closed meanwhile.
   */
  private boolean awaitRoomForUnidentified() {
    handshakes.lock();
    try {
      while (!unidentified.hasRoom()) {
        if (state != State.STARTED) {
          return false;
        }
        roomForUnidentified.await(); // close() interrupts this thread
      }
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      handshakes.unlock();
    }
  }

  /**
   * Takes {@code s} into the pool of connections awaiting HELLO, after {@link #awaitRoomForUnidentified};
   * returns the connection to close to make room for it, or null.
   */
  private Socket admit(Socket s) {
    handshakes.lock();
    try {
      return unidentified.admit(s);
    } finally {
      handshakes.unlock();
    }
  }

  /** {@code s}'s handshake thread starts reading it: from now on it may be evicted to admit another. */
  private void reading(Socket s) {
    handshakes.lock();
    try {
      unidentified.reading(s);
      roomForUnidentified.signalAll();
    } finally {
      handshakes.unlock();
    }
  }

  /** {@code s}'s HELLO named member {@code peer}: it leaves the unnamed pool and claims that member. */
  private void claim(Socket s, String peer) {
    Socket oldest = null;
    handshakes.lock();
    try {
      unidentified.remove(s);
      roomForUnidentified.signalAll();
      java.util.ArrayDeque<Socket> q = claims.computeIfAbsent(peer, p -> new java.util.ArrayDeque<>());
      q.addLast(s);
      if (q.size() > MAX_CLAIMS_PER_PEER) {
        oldest = q.pollFirst();
      }
    } finally {
      handshakes.unlock();
    }
    if (oldest != null) {
      evicted.add(oldest);
      closeQuietly(oldest);
    }
  }

  /** {@code s} finished its handshake, or ended: it no longer counts in either pool. */
  private void settle(Socket s) {
    handshakes.lock();
    try {
      if (unidentified.remove(s)) {
        roomForUnidentified.signalAll();
      }
      claims.values().removeIf(q -> q.remove(s) && q.isEmpty());
    } finally {
      handshakes.unlock();
    }
  }

  private Accepted acceptorHandshake(DataInputStream in, DataOutputStream out, Consumer<String> named)
      throws IOException {
    Frame f = Frames.read(in, Frames.MAX_HANDSHAKE_FRAME);
    if (f.type() != Frames.HELLO) {
      throw new TcpProtocolException(Reason.UNEXPECTED_FRAME, "expected HELLO, got type " + f.type());
    }
    Hello hello;
    try {
      hello = Frames.parseHello(f.body());
    } catch (TcpProtocolException e) {
      if (e.reason() == Reason.VERSION) {
        reject(out, e.reason());
      }
      throw e;
    }
    if (!hello.dialled().equals(self)) {
      reject(out, Reason.WRONG_NODE);
      throw new TcpProtocolException(Reason.WRONG_NODE, "'" + printable(hello.dialled()) + "' from '"
          + printable(hello.dialer()) + "'");
    }
    if (!peers.contains(hello.dialer())) {
      reject(out, Reason.UNKNOWN_PEER);
      throw new TcpProtocolException(Reason.UNKNOWN_PEER, "'" + printable(hello.dialer()) + "' (members: "
          + peers + ")" + (hello.dialer().startsWith(Frames.CLIENT_ID_PREFIX)
              ? "; a client id: clients connect to a member's client listener" : ""));
    }
    named.accept(hello.dialer());
    byte[] nonce = nonce();
    byte[] proof = Frames.proof(secret, Frames.ACCEPTOR_PROOF, hello.dialer(), self, hello.nonce(), nonce);
    Frames.write(out, Frames.CHALLENGE, Frames.challenge(nonce, proof));
    out.flush();
    Frame r = Frames.read(in, Frames.MAX_HANDSHAKE_FRAME);
    if (r.type() != Frames.RESPONSE) {
      throw Frames.notAResponse(r, hello.dialer(), "secret"); // the dialer checks this node's proof first
    }
    byte[] expected = Frames.proof(secret, Frames.DIALER_PROOF, hello.dialer(), self, hello.nonce(), nonce);
    if (!Frames.sameProof(expected, Frames.parseResponse(r.body()))) {
      reject(out, Reason.BAD_MAC);
      throw new TcpProtocolException(Reason.BAD_MAC, "from '" + hello.dialer() + "'");
    }
    // the ACCEPT is sent by the thread that reads the connection afterwards (serveMember)
    return new Accepted(hello.dialer(),
        Frames.proof(secret, Frames.SESSION_KEY, hello.dialer(), self, hello.nonce(), nonce));
  }

  private void readLoop(Inbound conn, DataInputStream in, FrameSealer sealer) throws IOException {
    int max = config.maxFrameSize() + Frames.TAG_BYTES;
    while (true) {
      Frame f = Frames.read(in, max);
      switch (f.type()) {
        case Frames.DATA -> deliver(conn, sealer.open(Frames.DATA, f.body()));
        case Frames.PING -> {
          if (sealer.open(Frames.PING, f.body()).length != 0) {
            throw new TcpProtocolException(Reason.CORRUPT_FRAME, "PING with a payload");
          }
        }
        default -> throw new TcpProtocolException(Reason.UNEXPECTED_FRAME, "type " + f.type() + " after the handshake");
      }
    }
  }

  private void deliver(Inbound conn, byte[] payload) {
    conn.deliveryLock.lock();
    try {
      // only the newest connection from a peer delivers, and nothing after close
      if (state == State.STARTED && inbound.get(conn.peer) == conn) {
        receiver.deliver(conn.peer, payload);
      }
    } finally {
      conn.deliveryLock.unlock();
    }
  }

  private final class Inbound {
    final String peer;
    final Socket socket;
    // shared by every connection from one peer, so a replaced connection's last delivery cannot overlap
    final ReentrantLock deliveryLock;

    Inbound(String peer, Socket socket) {
      this.peer = peer;
      this.socket = socket;
      this.deliveryLock = deliveryLocks.computeIfAbsent(peer, k -> new ReentrantLock());
    }
  }

  // ---------------------------------------------------------------- outbound side

  /**
   * The sending end of one peer. On TLS, the dialer thread writes every frame, taking them from a queue. On
   * plain TCP the connection is a non-blocking {@link SocketChannel} after its handshake, and {@link #send}
   * writes a frame itself when nothing is queued or half written before it, and the socket takes it whole
   * at once: the usual case, which spares the hand-off to the dialer thread. Whatever the socket does not
   * take is left to the dialer thread, which waits in a selector until the socket is writable; later frames
   * queue behind it. So a send never blocks, and a peer that stops reading fills the queue until the link
   * is closed, as on TLS.
   */
  private final class Outbound {
    private record Item(long generation, byte[] payload) {}

    private static final Item WAKE = new Item(-1, new byte[0]);

    final String peer;
    final LinkedBlockingQueue<Item> queue = new LinkedBlockingQueue<>();
    final AtomicLong queuedBytes = new AtomicLong();
    /** Non-zero while the link is up: the id of the current connection. */
    volatile long generation;
    volatile Socket socket;
    /** The current plain TCP connection, which {@link #send} may write to; null on TLS and while down. */
    volatile Direct direct;
    /** Refusals logged once, not at every redial (the dialer thread's own). */
    private final RepeatedWarning refusals = new RepeatedWarning();

    Outbound(String peer) {
      this.peer = peer;
    }

    void send(List<byte[]> payloads) {
      long g = generation;
      if (g == 0) {
        LOG.trace("{}: link to {} down, payload dropped", self, peer);
        return;
      }
      Direct d = direct;
      if (d != null && d.generation == g && d.tryWrite(payloads)) {
        return;
      }
      for (byte[] payload : payloads) {
        if (queuedBytes.addAndGet(payload.length) > sendQueueLimit) {
          queuedBytes.addAndGet(-payload.length);
          breakLink("more than " + sendQueueLimit + " bytes queued");
          return;
        }
        queue.add(new Item(g, payload));
      }
      if (d != null) {
        d.selector.wakeup();
      }
    }

    /** Ends the current connection, if any; the dialer reports peerDown and reconnects. */
    void breakLink(String why) {
      Socket s = socket;
      if (s != null && generation != 0) {
        LOG.info("{}: closing link to {}: {}", self, peer, why);
        closeQuietly(s);
        queue.add(WAKE);
        Direct d = direct;
        if (d != null) {
          d.selector.wakeup();
        }
      }
    }

    /**
     * A plain TCP connection in non-blocking mode, after its handshake. Frames are sealed and written
     * under {@link #lock}, by {@link #send} or by the dialer thread, so that their sequence numbers follow
     * the order they reach the socket; the dialer thread takes queued items only under it too, so a frame
     * written directly never overtakes one queued before it.
     */
    private final class Direct {
      final long generation;
      final SocketChannel channel;
      final FrameSealer sealer;
      final Selector selector;
      final ReentrantLock lock = new ReentrantLock();
      // guarded by lock
      private ByteBuffer pending; // a frame the socket took only part of
      private IOException failure; // a direct write failed: the link is over
      private long lastWrite = System.nanoTime();

      Direct(long generation, SocketChannel channel, FrameSealer sealer, Selector selector) {
        this.generation = generation;
        this.channel = channel;
        this.sealer = sealer;
        this.selector = selector;
      }

      /**
       * Writes the frames of {@code payloads} now, with one system call, if nothing waits before them and
       * nobody else is writing; returns false if they must be queued instead. Never blocks: the channel is
       * non-blocking, and what the socket does not take is finished by the dialer thread.
       */
      boolean tryWrite(List<byte[]> payloads) {
        if (!lock.tryLock()) {
          return false;
        }
        try {
          if (pending != null || !queue.isEmpty()) {
            return false;
          }
          if (failure != null) {
            return true; // the link is going down: dropped, as its peerDown will say
          }
          try {
            ByteBuffer[] frames = new ByteBuffer[payloads.size()];
            long total = 0;
            for (int i = 0; i < frames.length; i++) {
              frames[i] = ByteBuffer.wrap(sealer.frame(Frames.DATA, payloads.get(i)));
              total += frames[i].remaining();
            }
            long written = frames.length == 1 ? channel.write(frames[0]) : channel.write(frames);
            lastWrite = System.nanoTime();
            if (written < total) {
              pending = rest(frames, (int) (total - written));
              selector.wakeup();
            }
          } catch (IOException e) {
            failure = e;
            closeQuietly(channel);
            selector.wakeup();
          }
          return true;
        } finally {
          lock.unlock();
        }
      }

      /** What {@code frames} still hold, {@code left} bytes, in one buffer. */
      private static ByteBuffer rest(ByteBuffer[] frames, int left) {
        ByteBuffer b = ByteBuffer.allocate(left);
        for (ByteBuffer f : frames) {
          b.put(f);
        }
        return b.flip();
      }

      /**
       * Dialer thread, under {@link #lock}: writes what the socket takes now (the rest of a half-written
       * frame, then queued items, then a PING if nothing was written for {@code heartbeat}). Returns
       * whether a frame is left half written.
       */
      boolean flush(long heartbeat) throws IOException {
        if (failure != null) {
          throw failure;
        }
        if (pending != null) {
          channel.write(pending);
          if (pending.hasRemaining()) {
            return true;
          }
          pending = null;
        }
        Item it;
        while ((it = queue.poll()) != null) {
          if (it == WAKE) {
            continue;
          }
          queuedBytes.addAndGet(-it.payload.length);
          if (it.generation != generation) {
            continue; // queued for an earlier connection: dropped, as peerDown said
          }
          if (write(sealer.frame(Frames.DATA, it.payload))) {
            return true;
          }
        }
        if (System.nanoTime() - lastWrite >= heartbeat) {
          return write(sealer.frame(Frames.PING, Frames.EMPTY));
        }
        return false;
      }

      /** Nanoseconds until a PING is due. Under {@link #lock}. */
      long untilPing(long heartbeat) {
        return heartbeat - (System.nanoTime() - lastWrite);
      }

      private boolean write(byte[] frame) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(frame);
        channel.write(b);
        lastWrite = System.nanoTime();
        if (b.hasRemaining()) {
          pending = b;
          return true;
        }
        return false;
      }
    }

    void run() {
      int failures = 0;
      while (state == State.STARTED) {
        Socket raw;
        try {
          // plain TCP dials through a channel, so that the link can turn non-blocking after its handshake
          raw = config.tls() ? new Socket() : SocketChannel.open().socket();
        } catch (IOException e) {
          LOG.error("{}: cannot open a socket to {}", self, peer, e);
          if (!sleepQuietly(backoff(failures++))) {
            return;
          }
          continue;
        }
        Selector selector = null;
        Socket s = raw;
        boolean wasUp = false;
        open.add(raw);
        try {
          Link link = connect(raw);
          s = link.socket;
          open.add(s);
          long g = generations.incrementAndGet();
          Direct d = null;
          if (s.getChannel() != null) {
            // plain TCP: from now on non-blocking, written by send and by this thread (see Direct)
            SocketChannel ch = s.getChannel();
            ch.configureBlocking(false);
            selector = Selector.open();
            d = new Direct(g, ch, new FrameSealer(link.sessionKey), selector);
            direct = d;
          }
          socket = s;
          generation = g;
          wasUp = true;
          failures = 0;
          refusals.reset();
          LOG.info("{}: link to {}{} up{}", self, peer, via(peer), config.tls() ? " (TLS)" : "");
          callback(r -> r.peerUp(peer));
          if (d != null) {
            directLoop(d);
          } else {
            Socket watched = s;
            spawn("tumbler-tcp-watch-" + peer, () -> watch(watched));
            writeLoop(s, g, link.out, new FrameSealer(link.sessionKey));
          }
        } catch (TcpProtocolException e) {
          String due = refusals.due(e.getMessage());
          if (state == State.STARTED && due != null) {
            LOG.warn("{}: link to {} refused: {}", self, peer, due);
          } else if (state == State.STARTED) {
            LOG.debug("{}: link to {} refused again: {}", self, peer, e.getMessage());
          }
        } catch (IOException e) {
          if (state == State.STARTED) {
            if (wasUp) {
              LOG.info("{}: link to {} broke: {}", self, peer, describe(e));
            } else {
              LOG.debug("{}: cannot connect to {}{}: {}", self, peer, via(peer), describe(e));
            }
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
          LOG.error("{}: link to {} failed", self, peer, e);
        } finally {
          generation = 0;
          direct = null;
          socket = null;
          closeQuietly(s);
          closeQuietly(raw);
          closeQuietly(selector);
          open.remove(s);
          open.remove(raw);
          List<Item> dropped = new ArrayList<>();
          queue.drainTo(dropped);
          for (Item it : dropped) {
            queuedBytes.addAndGet(-it.payload.length);
          }
          if (wasUp) {
            LOG.info("{}: link to {} down", self, peer);
            callback(r -> r.peerDown(peer));
          }
        }
        if (state != State.STARTED || Thread.currentThread().isInterrupted()) {
          return;
        }
        if (!sleepQuietly(backoff(failures++))) {
          return;
        }
      }
    }

    private record Link(Socket socket, DataOutputStream out, byte[] sessionKey) {}

    private Link connect(Socket raw) throws IOException {
      // dial the peer's dial address (NAT, alias, relay) if it has one; TLS still checks the peer's id host
      String host = hostOf(peer);
      int port = portOf(peer);
      String dial = config.dialAddress(peer);
      raw.setTcpNoDelay(true);
      raw.setKeepAlive(true);
      raw.connect(new InetSocketAddress(hostOf(dial), portOf(dial)), millis(config.connectTimeout()));
      Watchdog watchdog = new Watchdog(raw, config.handshakeTimeout());
      Socket s = raw;
      try {
        raw.setSoTimeout(millis(config.handshakeTimeout()));
        if (config.tls()) {
          SSLSocket ssl = (SSLSocket) config.sslContext().getSocketFactory().createSocket(raw, host, port, true);
          SSLParameters params = ssl.getSSLParameters();
          params.setEndpointIdentificationAlgorithm("HTTPS");
          ssl.setSSLParameters(params);
          s = ssl;
          open.add(ssl);
          ssl.startHandshake();
        }
        DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 1 << 12));
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), 1 << 16));
        byte[] key = dialerHandshake(in, out);
        s.setSoTimeout(0);
        return new Link(s, out, key);
      } catch (IOException e) {
        closeQuietly(s);
        open.remove(s);
        // the per-read timeout and the watchdog both end at the handshake timeout: either may come first
        if (watchdog.fired() || e instanceof SocketTimeoutException) {
          throw new TcpProtocolException(Reason.TIMEOUT, "no complete handshake with " + peer + " within "
              + config.handshakeTimeout().toMillis() + " ms");
        }
        throw e;
      } finally {
        watchdog.done();
      }
    }

    private byte[] dialerHandshake(DataInputStream in, DataOutputStream out) throws IOException {
      byte[] nonce = nonce();
      Frames.write(out, Frames.HELLO, Frames.hello(self, peer, nonce));
      out.flush();
      Frame c = Frames.read(in, Frames.MAX_HANDSHAKE_FRAME);
      rejected(c);
      if (c.type() != Frames.CHALLENGE) {
        throw new TcpProtocolException(Reason.UNEXPECTED_FRAME, "expected CHALLENGE, got type " + c.type());
      }
      byte[][] ch = Frames.parseChallenge(c.body());
      byte[] expected = Frames.proof(secret, Frames.ACCEPTOR_PROOF, self, peer, nonce, ch[0]);
      if (!Frames.sameProof(expected, ch[1])) {
        reject(out, Reason.BAD_MAC);
        throw new TcpProtocolException(Reason.BAD_MAC, peer + " did not prove the shared secret: its secret differs "
            + "from this node's");
      }
      Frames.write(out, Frames.RESPONSE, Frames.proof(secret, Frames.DIALER_PROOF, self, peer, nonce, ch[0]));
      out.flush();
      Frame a = Frames.read(in, Frames.MAX_HANDSHAKE_FRAME);
      rejected(a);
      if (a.type() != Frames.ACCEPT || a.body().length != 0) {
        throw new TcpProtocolException(Reason.UNEXPECTED_FRAME, "expected ACCEPT, got type " + a.type());
      }
      return Frames.proof(secret, Frames.SESSION_KEY, self, peer, nonce, ch[0]);
    }

    private void rejected(Frame f) throws TcpProtocolException {
      if (f.type() == Frames.REJECT) {
        Reason r = f.body().length == 1 ? Reason.ofCode(f.body()[0]) : Reason.REJECTED;
        throw new TcpProtocolException(Reason.REJECTED, peer + " says: " + r.text);
      }
    }

    /**
     * The dialer thread's part of a plain TCP link: finishes what {@link #send} left half written or
     * queued, sends a PING when nothing was written for a quarter of {@code idleTimeout}, and watches the
     * link (the acceptor never writes: end of stream or any byte means the link is over). Returns only by
     * throwing, when the link ends.
     */
    private void directLoop(Direct d) throws IOException {
      long heartbeat = TimeUnit.MILLISECONDS.toNanos(Math.max(1, config.idleTimeout().toMillis() / 4));
      SelectionKey key = d.channel.register(d.selector, SelectionKey.OP_READ);
      ByteBuffer one = ByteBuffer.allocate(1);
      try {
        directLoop(d, key, one, heartbeat);
      } catch (CancelledKeyException e) {
        throw new IOException("link closed"); // the channel was closed under the selector
      }
    }

    private void directLoop(Direct d, SelectionKey key, ByteBuffer one, long heartbeat) throws IOException {
      while (true) {
        if (!d.channel.isOpen() || generation != d.generation || state != State.STARTED) {
          throw new IOException("link closed");
        }
        boolean halfWritten;
        long untilPing;
        d.lock.lock();
        try {
          halfWritten = d.flush(heartbeat);
          untilPing = d.untilPing(heartbeat);
        } finally {
          d.lock.unlock();
        }
        key.interestOps(halfWritten ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ);
        d.selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(untilPing)));
        boolean readable = d.selector.selectedKeys().remove(key) && key.isValid() && key.isReadable();
        if (Thread.currentThread().isInterrupted()) {
          throw new IOException("link closed");
        }
        if (readable) {
          one.clear();
          int n = d.channel.read(one);
          if (n < 0) {
            throw new EOFException();
          }
          if (n > 0) {
            if (state == State.STARTED) {
              LOG.warn("{}: closing link to {}: it sent data on a send-only link", self, peer);
            }
            throw new IOException("link closed");
          }
        }
      }
    }

    private void writeLoop(Socket s, long g, DataOutputStream out, FrameSealer sealer)
        throws IOException, InterruptedException {
      long heartbeat = Math.max(1, config.idleTimeout().toMillis() / 4);
      while (true) {
        Item it = queue.poll(heartbeat, TimeUnit.MILLISECONDS);
        if (s.isClosed() || generation != g || state != State.STARTED) {
          throw new IOException("link closed");
        }
        if (it == null) {
          Frames.write(out, Frames.PING, sealer.seal(Frames.PING, new byte[0]));
          out.flush();
          continue;
        }
        if (it == WAKE) {
          continue;
        }
        queuedBytes.addAndGet(-it.payload.length);
        if (it.generation != g) {
          continue; // queued for an earlier connection: dropped, as peerDown said
        }
        Frames.write(out, Frames.DATA, sealer.seal(Frames.DATA, it.payload));
        if (queue.isEmpty()) {
          out.flush();
        }
      }
    }

    /** The acceptor never writes after ACCEPT: end of stream or any byte means the link is over. */
    private void watch(Socket s) {
      try {
        InputStream in = s.getInputStream();
        int b = in.read();
        if (b >= 0 && state == State.STARTED) {
          LOG.warn("{}: closing link to {}: it sent data on a send-only link", self, peer);
        }
      } catch (IOException e) {
        // closed, by either side
      } finally {
        closeQuietly(s);
        queue.add(WAKE);
      }
    }

    private long backoff(int failures) {
      synchronized (config.random()) {
        return backoffMillis(failures, config.backoffMin().toMillis(), config.backoffMax().toMillis(),
            config.random());
      }
    }
  }

  /**
   * The wait before reconnection attempt {@code failures + 1}: the ceiling {@code min × 2^failures}, capped
   * at {@code max}, and the wait drawn uniformly from the ceiling's upper half, so that peers that lost
   * each other at the same moment do not redial in lockstep.
   */
  static long backoffMillis(int failures, long min, long max, java.util.random.RandomGenerator random) {
    long ceiling = failures >= 30 ? max : Math.min(max, min << Math.max(0, failures));
    ceiling = Math.max(1, Math.min(max, ceiling));
    long half = ceiling / 2;
    return half + random.nextLong(ceiling - half + 1);
  }

  // ---------------------------------------------------------------- helpers

  /** Closes a socket when its handshake has not finished in time (a per-read timeout alone lets a slowloris live). */
  static final class Watchdog {
    private static final int RUNNING = 0;
    private static final int DONE = 1;
    private static final int FIRED = 2;

    private final Thread thread;
    // one of the three: either the handshake ended in time (DONE) or the socket is closed (FIRED), never both
    private final AtomicInteger outcome = new AtomicInteger(RUNNING);

    Watchdog(Socket s, Duration timeout) {
      thread = Thread.ofVirtual().name("tumbler-tcp-handshake-timer").start(() -> {
        try {
          Thread.sleep(timeout);
          if (outcome.compareAndSet(RUNNING, FIRED)) {
            closeQuietly(s);
          }
        } catch (InterruptedException e) {
          // handshake finished
        }
      });
    }

    /** Stops the watchdog; returns false if it fired first (the socket is closed, or is being closed). */
    boolean done() {
      if (outcome.compareAndSet(RUNNING, DONE)) {
        thread.interrupt();
        return true;
      }
      return outcome.get() == DONE;
    }

    boolean fired() {
      return outcome.get() == FIRED;
    }
  }

  /** Whether the transport is started and not closed (for the client listener). */
  boolean started() {
    return state == State.STARTED;
  }

  /** Registers a socket for {@link #close()} to close. */
  void track(Closeable c) {
    open.add(c);
  }

  void untrack(Closeable c) {
    open.remove(c);
  }

  void callback(Consumer<Receiver> call) {
    if (state != State.STARTED) {
      return;
    }
    try {
      call.accept(receiver);
    } catch (RuntimeException e) {
      LOG.error("{}: receiver failed", self, e);
    }
  }

  static void reject(DataOutputStream out, Reason reason) {
    try {
      Frames.write(out, Frames.REJECT, new byte[] {(byte) reason.code});
      out.flush();
    } catch (IOException e) {
      // best effort: the connection is closed next anyway
    }
  }

  byte[] nonce() {
    byte[] n = new byte[Frames.NONCE_BYTES];
    nonces.nextBytes(n);
    return n;
  }

  private final AtomicInteger threadCount = new AtomicInteger();

  void spawn(String name, Runnable r) {
    start(Thread.ofVirtual(), name, r);
  }

  void spawnPlatform(String name, Runnable r) {
    start(Thread.ofPlatform().daemon(), name, r);
  }

  private void start(Thread.Builder builder, String name, Runnable r) {
    Thread t = builder.name(name + "#" + threadCount.incrementAndGet()).unstarted(() -> {
      try {
        r.run();
      } finally {
        threads.remove(Thread.currentThread());
      }
    });
    threads.add(t);
    t.start();
  }

  private Outbound outboundOf(String peer) {
    Objects.requireNonNull(peer, "peer");
    Outbound o = outbound.get(peer);
    if (o == null) {
      throw new IllegalArgumentException("peer '" + peer + "' is not a member of " + self + "'s cluster " + peers);
    }
    return o;
  }

  /** " via host:port" when {@code peer} is dialled at a dial address, else empty: for log lines. */
  private String via(String peer) {
    String dial = config.dialAddress(peer);
    return dial.equals(peer) ? "" : " via " + dial;
  }

  static String hostOf(String id) {
    if (id.startsWith("[")) {
      return id.substring(1, id.indexOf(']'));
    }
    return id.substring(0, id.lastIndexOf(':'));
  }

  static int portOf(String id) {
    return Integer.parseInt(id.substring(id.lastIndexOf(':') + 1));
  }

  /** Strips control characters from a peer-supplied id before it reaches a log line. */
  static String printable(String s) {
    StringBuilder sb = new StringBuilder();
    s.codePoints().limit(80).forEach(c -> sb.appendCodePoint(Character.isISOControl(c) ? '?' : c));
    return sb.toString();
  }

  static String describe(IOException e) {
    if (e instanceof EOFException) {
      return "closed by the peer";
    }
    return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
  }

  static int millis(Duration d) {
    return (int) Math.min(Integer.MAX_VALUE, Math.max(1, d.toMillis()));
  }

  static boolean sleepQuietly(long ms) {
    try {
      Thread.sleep(ms);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  static void closeQuietly(Closeable c) {
    if (c != null) {
      try {
        c.close();
      } catch (IOException e) {
        // nothing to do
      }
    }
  }
}
