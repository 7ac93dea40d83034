package dev.tumbler.peer.transport.tcp;

import dev.tumbler.peer.transport.Transport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Transport} of a native cluster over TCP, optionally TLS, and of its members' thin clients
 * (below, "Clients"): handshakes of accepted connections on virtual threads, then blocking reads on one
 * platform thread per peer that reads its authenticated connections (see {@link PeerInbound}), and one
 * platform thread per peer that dials it and writes what {@link #send} does not write itself (see
 * {@link Redialer} and {@link PeerOutbound}). The parts, one job each: {@link Listener} (a listen socket, its
 * limits and handshakes), {@link Handshake}, {@link Frames} (the wire format), {@link Redialer} (dialling and
 * backoff), {@link PeerOutbound} and {@link PeerInbound} (the two directions of a peer link), {@link ClientLinks}
 * and {@link DuplexLink} (thin clients), {@link Lifecycle} (threads, sockets, callbacks).
 *
 * <h2>Connections</h2>
 * A member's {@link #self()} is its listen address (with the port it bound, when {@code self} gave port 0); its
 * {@link #peers()} are the other members, never a client. Every node dials every peer (at its id, or at its {@linkplain TcpTransportConfig#dialAddress dial
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
 * After a failed attempt or a broken link, the dialer waits and retries, with exponential backoff and jitter
 * ({@link Redialer}).
 *
 * <h2>Handshake</h2>
 * Mutual HMAC-SHA256 challenge-response under the shared secret, with fresh nonces from both sides
 * ({@link Handshake}): the dialer names its id and the id it means to reach; the acceptor checks that the
 * dialled id is its own and that the dialer is a member. Proofs cover a direction label, both ids and both
 * nonces, so a reflected, replayed or redirected handshake fails; a session key then tags every later frame
 * with a sequence number. With TLS, the TLS handshake comes first and the HMAC handshake runs inside it, so a
 * TLS certificate alone never admits a peer; the dialer checks the acceptor's certificate against its host
 * (SAN) as HTTPS does.
 *
 * <h2>Bad peers</h2>
 * A connection that sends a corrupt or oversized length, an unexpected frame, a frame with a wrong tag,
 * a wrong proof, an unknown id, or that has not finished its handshake within {@code handshakeTimeout}
 * is closed, and the reason logged (WARN, never the secret; at most {@value Listener#LOG_BURST} such lines per
 * {@value Listener#LOG_WINDOW_SECONDS} s, the rest summed up in one line); other connections are unaffected.
 * A flood of connections that never finish their handshake does not shut a member out: at most
 * {@value Listener#MAX_UNIDENTIFIED} may wait for their HELLO, the one read longest closed to admit another, and
 * at most {@value Listener#MAX_CLAIMS_PER_NAME} handshakes may claim one member at a time (see {@link Listener}).
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
 *       {@code secret}. The handshake is the peers', with labels of its own ({@link Handshake#CLIENTS}). So a
 *       client's credential cannot open a peer link, nor the peers' secret a client connection: a different
 *       port, key and labels (no proof made for one listener verifies on the other, even under one key), and
 *       each listener refuses the other's ids (the peer listener answers a {@code client/…} id with
 *       {@code UNKNOWN_PEER}, as any non-member; the client listener anything but a client id with
 *       {@code BAD_CLIENT_ID}).
 *   <li><b>Ids.</b> A client names itself {@code client/} and 32 lowercase hex digits, drawn at random; the
 *       member does not check what the client says it dialled (it knows the member by the address it
 *       dialled, which may be a NAT's), but both proofs cover it.
 *   <li><b>Both ways.</b> A client connection carries DATA frames both ways, in order, each direction
 *       under its own key with its own sequence numbers, so a frame sent back to its writer fails its tag;
 *       both ends send a PING when idle for a quarter of {@code idleTimeout} and close a connection that
 *       received nothing for {@code idleTimeout} (see {@link DuplexLink}).
 *   <li><b>Events.</b> For client id {@code c}: {@code peerUp(c)} when its handshake completes, before any
 *       {@code deliver(c, …)} from that connection; {@code deliver(c, …)} per DATA frame, from one thread at
 *       a time; {@code peerDown(c)} when the connection ends. {@link #send send(c, …)} queues for that
 *       connection and never blocks (a bounded queue per client; overflowing it closes the connection);
 *       {@link #isUp isUp(c)} says whether it is up. A second connection with the same id replaces the first:
 *       {@code peerDown(c)} for the old one, then {@code peerUp(c)} for the new, never the other way round.
 *       {@link #peers()} stays the members.
 *   <li><b>Limits.</b> The client listener has its own pool of connections waiting for their handshake (the
 *       rules of "Bad peers" above, with the same bound), so a flood of clients never takes room from
 *       members' handshakes; and it serves at most {@code maxClients} client connections, refusing a new
 *       client beyond them with {@code TOO_MANY_CLIENTS} (logged, rate-limited with the other refusals).
 * </ul>
 * Client connections are served on virtual threads (a member may serve thousands); see {@link ClientLinks}.
 *
 * <p>Thread safe. Callbacks come from transport threads; none starts after {@link #close()} returns
 * (one already running may finish). {@link #send} never blocks.
 */
public final class TcpTransport extends TcpEndpoint {
  private static final Logger LOG = LoggerFactory.getLogger(TcpTransport.class);

  private final TcpTransportConfig config;
  private final ServerSocket server;
  private final Map<String, PeerOutbound> outbound = new LinkedHashMap<>();
  private final Map<String, Redialer<?>> dialers = new LinkedHashMap<>();
  private final Listener peerListener;
  private final PeerInbound inbound;
  /** The listener for thin clients and what it serves, or null when {@code clientListen} is not set. */
  private final Listener clientListener;
  private final ClientLinks clients;

  private TcpTransport(TcpTransportConfig config, ServerSocket server, ServerSocket clientServer) {
    super(Sockets.portOf(config.self()) == 0 ? Sockets.id(Sockets.hostOf(config.self()), server.getLocalPort())
        : config.self(), Set.copyOf(config.peers()), LOG);
    this.config = config;
    this.server = server;
    TcpLinkSettings link = config.link();
    Handshake handshake = new Handshake(Handshake.PEERS, config.secret());
    // bounded so that a stuck peer cannot exhaust memory; overflowing closes the link (peerDown)
    long queueLimit = Math.max(16L << 20, 4L * link.maxFrameSize());
    for (String p : config.peers()) {
      PeerOutbound o = new PeerOutbound(self, p, link, life, LOG, queueLimit);
      outbound.put(p, o);
      dialers.put(p, new Redialer<>(p, config.dialAddress(p), link, handshake, life, self, LOG, o));
    }
    this.peerListener = new Listener(server, Listener.PEERS, handshake, link.handshakeTimeout(), life, self, LOG);
    this.inbound = new PeerInbound(self, outbound, link, life, LOG, peerListener);
    if (clientServer == null) {
      this.clientListener = null;
      this.clients = null;
    } else {
      Set<String> members = new LinkedHashSet<>(peers);
      members.add(self);
      this.clientListener = new Listener(clientServer, Listener.CLIENTS, new Handshake(Handshake.CLIENTS,
          config.clientSecret()), link.handshakeTimeout(), life, self, LOG);
      this.clients = new ClientLinks(self, Set.copyOf(members), link, config.maxClients(), life, LOG, clientListener);
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
      throw new UncheckedIOException("cannot listen on " + config.self() + ": " + e.getMessage(), e);
    }
    String clientListen = config.clientListen().orElse(null);
    if (clientListen != null) {
      try {
        clientServer = listen(config, clientListen);
      } catch (IOException e) {
        Sockets.closeQuietly(server);
        throw new UncheckedIOException("cannot listen for clients on " + clientListen + ": " + e.getMessage(), e);
      }
    }
    return new TcpTransport(config, server, clientServer);
  }

  private static ServerSocket listen(TcpTransportConfig config, String address) throws IOException {
    TcpLinkSettings link = config.link();
    ServerSocket server = link.tls() ? link.sslContext().getServerSocketFactory().createServerSocket()
        : new ServerSocket();
    try {
      server.setReuseAddress(true);
      server.bind(new InetSocketAddress(Sockets.hostOf(address), Sockets.portOf(address)), 128);
      return server;
    } catch (IOException e) {
      Sockets.closeQuietly(server);
      throw e;
    }
  }

  /** The port the listen socket is bound to. */
  public int port() {
    return server.getLocalPort();
  }

  /** The port the client listener is bound to, or -1 when this member takes no clients. */
  public int clientPort() {
    return clientListener == null ? -1 : clientListener.port();
  }

  /**
   * Starts accepting connections and dialling every peer.
   *
   * @throws IllegalStateException if already started or closed
   */
  @Override
  public void start(Receiver receiver) {
    life.start(receiver, () -> {
      peerListener.start(inbound);
      // a platform thread per peer: on plain TCP it waits in a selector (see PeerOutbound)
      dialers.forEach((p, d) -> life.spawnPlatform("tumbler-tcp-dial-" + p, d));
      inbound.start();
      if (clients != null) {
        clientListener.start(clients);
      }
    });
    LOG.info("{}: listening on port {}{}, peers {}{}", self, port(), config.link().tls() ? " (TLS)" : "", peers,
        clients == null ? "" : ", clients on port " + clientPort());
  }

  /**
   * Queues {@code payloads} for {@code peer} (a member, or a client of this member's client listener) and
   * returns at once. Dropped when the link is down (the receiver has been, or will be, told with
   * {@code peerDown}; a client id that never connected counts as down). The arrays must not be changed
   * afterwards. Plain TCP writes the frames of {@code payloads} with one system call while nothing is queued
   * before them.
   *
   * @throws IllegalArgumentException if {@code peer} is neither a member nor (with a client listener) a
   *     client id, or a payload exceeds maxFrameSize
   */
  @Override
  public void send(String peer, List<byte[]> payloads) {
    PeerOutbound o = linkTo(peer);
    config.link().checkPayloads(payloads);
    if (o == null) {
      clients.send(peer, payloads);
    } else {
      o.send(payloads);
    }
  }

  /**
   * Whether the link to {@code peer} is up: for a member, this node's outbound connection; for a client,
   * its connection to this member's client listener.
   *
   * @throws IllegalArgumentException as {@link #send(String, List)}
   */
  @Override
  public boolean isUp(String peer) {
    PeerOutbound o = linkTo(peer);
    return o == null ? clients.isUp(peer) : o.isUp();
  }

  /**
   * The outbound link to member {@code peer}, or null if {@code peer} names a client of this member's client
   * listener (the id of one that may connect).
   *
   * @throws IllegalArgumentException if it is neither
   */
  private PeerOutbound linkTo(String peer) {
    Objects.requireNonNull(peer, "peer");
    if (clients != null && Frames.isClientId(peer)) {
      return null;
    }
    PeerOutbound o = outbound.get(peer);
    if (o == null) {
      throw new IllegalArgumentException("peer '" + peer + "' is not a member of " + self + "'s cluster " + peers);
    }
    return o;
  }

  /** Waits for what was queued for thin clients to be written (see {@link Transport#flush}). */
  @Override
  public void flush(long maxNanos) throws InterruptedException {
    if (clients != null) {
      clients.drain(maxNanos);
    }
  }

  @Override
  void closing() {
    peerListener.close();
    if (clients != null) {
      clientListener.close();
      clients.close();
    }
  }

  /** Closes the current outbound connection to {@code peer} (tests: a break in one direction). */
  void breakLink(String peer) {
    linkTo(peer).breakLink("asked to");
  }
}
