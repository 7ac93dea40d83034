package dev.tumbler.peer.transport.tcp;

import static dev.tumbler.peer.transport.tcp.Sockets.normalizeId;
import static dev.tumbler.peer.transport.tcp.TcpLinkSettings.MIN_SECRET_BYTES;
import static dev.tumbler.peer.transport.tcp.TcpLinkSettings.invalid;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LockUrl;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;

/**
 * Settings of one {@link TcpTransport}: who this peer is, who its peers are, the shared secret that
 * authenticates them, and optionally a listener for thin clients. How its links run (TLS, the frame cap,
 * timeouts, backoff) is its {@link #link()}, the settings a client's {@link TcpClientConfig} has too.
 *
 * <p>Peer ids are {@code host:port} (IPv6 literals in brackets, {@code [::1]:7701}); a peer's id is the
 * address it listens on, and every node must spell a given peer the same way ({@code localhost:7701} and
 * {@code 127.0.0.1:7701} are different ids). By default a peer is dialled at its id; a <em>dial address</em>
 * ({@link Builder#dialAddress}, URL parameter {@code dialAddresses}) makes this node dial another
 * address for it instead — behind NAT or a port forward, through a DNS alias, or through a relay — while
 * the id stays the peer's identity: the handshake names the id, and TLS checks the certificate against the
 * id's host. The secret is required: there is no unauthenticated mode. It must be at least
 * {@value TcpLinkSettings#MIN_SECRET_BYTES} bytes, because a captured handshake lets an attacker guess a short
 * secret offline. The secret never appears in {@link #toString()}, messages or logs.
 *
 * <p><b>Clients.</b> A member may also take thin clients (processes that are not members) on a second
 * listener, {@link Builder#clientListen clientListen}, authenticated by their own credential,
 * {@link Builder#clientSecret clientSecret}. The client secret must differ from the peers' secret: it is
 * handed to every client process, and must not also open a peer link. At most
 * {@link Builder#maxClients maxClients} clients are served at once. See {@link TcpTransport}, "Clients".
 *
 * <p>Immutable and thread safe (the secret is copied in and out).
 */
public final class TcpTransportConfig {

  /** The URL parameters {@link #fromUrl} reads; the provider adds its own and rejects any other. */
  public static final Set<String> PARAMETERS = TcpLinkSettings.parametersAnd("peers", "secret", "dialAddresses",
      "clientListen", "clientSecret", "maxClients");

  /**
   * The URL parameter and {@link Properties} key of the dial addresses: a string
   * {@code id=host:port,id=host:port} or, in {@code Properties} only, a {@code Map<String, String>} from
   * peer id to address.
   */
  public static final String DIAL_ADDRESSES = "dialAddresses";

  /** Default and bounds of {@code maxClients}. */
  public static final int DEFAULT_MAX_CLIENTS = 1024;
  public static final int MAX_MAX_CLIENTS = 65536;

  private final String self;
  private final List<String> peers;
  private final Map<String, String> dialAddresses;
  private final byte[] secret;
  private final TcpLinkSettings link;
  private final String clientListen;
  private final byte[] clientSecret;
  private final int maxClients;

  private TcpTransportConfig(Builder b) {
    this.self = b.self;
    this.peers = List.copyOf(b.peers);
    this.dialAddresses = Collections.unmodifiableMap(new LinkedHashMap<>(b.dialAddresses));
    this.secret = b.secret.clone();
    this.link = b.link();
    this.clientListen = b.clientListen;
    this.clientSecret = b.clientSecret == null ? null : b.clientSecret.clone();
    this.maxClients = b.maxClients;
  }

  /**
   * A builder for the peer listening on {@code self} ({@code host:port}; port 0 picks a free port when the
   * transport opens, and the transport's {@link TcpTransport#self()} then carries the bound port).
   *
   * @throws IllegalArgumentException if {@code self} is not {@code host:port}
   */
  public static Builder builder(String self) {
    return new Builder(normalizeId(Objects.requireNonNull(self, "self"), "self", true));
  }

  /**
   * Builds the settings from a {@code lock:native://host:port?peers=...&secret=...} URL. String entries of
   * {@code info} override URL parameters (as {@code LockProviders.connect} does); {@code info} may also
   * carry the secrets as {@code byte[]} under {@code secret} and {@code clientSecret}.
   *
   * <p>Parameters: {@code peers} (comma-separated {@code host:port}; this peer's own id may be listed and
   * is skipped), {@code secret} (required, at least {@value TcpLinkSettings#MIN_SECRET_BYTES} bytes),
   * {@code dialAddresses} ({@code id=host:port,...}: where to dial the listed peers instead of their ids; in
   * {@code info} also a {@code Map<String, String>}), {@code clientListen} ({@code host:port} of the listener for
   * thin clients, port 0 for a free one; none by default), {@code clientSecret} (required with
   * {@code clientListen}, at least {@value TcpLinkSettings#MIN_SECRET_BYTES} bytes, different from {@code secret}),
   * {@code maxClients} (1 to {@value #MAX_MAX_CLIENTS}, default {@value #DEFAULT_MAX_CLIENTS}; only with
   * {@code clientListen}), and the links' parameters (see {@link TcpLinkSettings.Builder#fromUrl}; a member needs a
   * key store with TLS). Other parameters are left to the caller, who checks them against {@link #PARAMETERS} plus
   * its own.
   *
   * @throws InvalidLockUrlException naming the parameter that is missing or invalid; never quoting a
   *     secret or password
   */
  public static TcpTransportConfig fromUrl(LockUrl url, Properties info) {
    Objects.requireNonNull(url, "url");
    Properties props = info == null ? new Properties() : info;
    LockUrl u = url.withOverrides(props);
    if (!u.isHierarchical() || u.hosts().size() != 1 || !u.hosts().get(0).hasPort()) {
      throw new InvalidLockUrlException("lock URL " + u + ": a TCP peer URL names exactly one listen address "
          + "with its port, as in lock:native://127.0.0.1:7701?peers=127.0.0.1:7702,127.0.0.1:7703");
    }
    String selfId = u.hosts().get(0).toString();
    Builder b;
    try {
      b = builder(selfId);
    } catch (IllegalArgumentException e) {
      throw new InvalidLockUrlException("lock URL " + u + ": " + e.getMessage(), e);
    }
    String peerList = u.string("peers", "");
    if (!peerList.isBlank()) {
      List<String> ids = new ArrayList<>();
      try {
        for (String p : peerList.split(",", -1)) {
          ids.add(normalizeId(p.trim(), "peers", false));
        }
        b.peers(ids);
      } catch (IllegalArgumentException e) {
        throw invalid(u, "peers", e.getMessage());
      }
    }
    try {
      for (Map.Entry<String, String> e : dialAddressesFrom(u, props).entrySet()) {
        b.dialAddress(e.getKey(), e.getValue());
      }
    } catch (IllegalArgumentException e) {
      throw invalid(u, DIAL_ADDRESSES, e.getMessage());
    }
    if (!TcpLinkSettings.secretFromUrl(u, props, "secret", b::secret)) {
      throw invalid(u, "secret", "a shared secret is required to authenticate peers (at least "
          + MIN_SECRET_BYTES + " bytes; pass it in Properties rather than in the URL where you can)");
    }
    clientsFromUrl(u, props, b);
    b.fromUrl(u, props, true);
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      throw invalid(u, DIAL_ADDRESSES, e.getMessage());
    }
  }

  /** {@value #DIAL_ADDRESSES}, from {@code props} (a String or a Map) or the URL; not yet checked. */
  private static Map<String, String> dialAddressesFrom(LockUrl u, Properties props) {
    Object rawDial = props.get(DIAL_ADDRESSES);
    Map<String, String> dial = new LinkedHashMap<>();
    if (rawDial instanceof Map<?, ?> m) {
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (!(e.getKey() instanceof String k) || !(e.getValue() instanceof String v)) {
          throw new InvalidLockUrlException("lock URL " + u + ": property '" + DIAL_ADDRESSES
              + "' must map peer ids to host:port strings");
        }
        dial.put(k, v);
      }
      return dial;
    }
    if (rawDial != null && !(rawDial instanceof String)) {
      throw new InvalidLockUrlException("lock URL " + u + ": property '" + DIAL_ADDRESSES
          + "' must be a String (id=host:port,...) or a Map<String, String>, not " + rawDial.getClass().getName());
    }
    String text = u.string(DIAL_ADDRESSES, "");
    if (!text.isBlank()) {
      for (String pair : text.split(",", -1)) {
        int eq = pair.indexOf('=');
        if (eq < 0) {
          throw invalid(u, DIAL_ADDRESSES, "'" + pair.trim() + "' is not id=host:port");
        }
        if (dial.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim()) != null) {
          throw invalid(u, DIAL_ADDRESSES, "'" + pair.substring(0, eq).trim() + "' is listed twice");
        }
      }
    }
    return dial;
  }

  /** {@code clientListen}, {@code clientSecret} and {@code maxClients}; checked here to name the parameter. */
  private static void clientsFromUrl(LockUrl u, Properties props, Builder b) {
    Optional<String> listen = u.parameter("clientListen").map(String::trim).filter(s -> !s.isEmpty());
    if (listen.isEmpty()) {
      if (props.get("clientSecret") instanceof byte[] || u.parameter("clientSecret").isPresent()) {
        throw invalid(u, "clientSecret", "given without clientListen (a member takes clients only on a client "
            + "listener)");
      }
      if (u.parameter("maxClients").isPresent()) {
        throw invalid(u, "maxClients", "given without clientListen");
      }
      return;
    }
    try {
      b.clientListen(listen.get());
      b.checkClientListen();
    } catch (IllegalArgumentException e) {
      throw invalid(u, "clientListen", e.getMessage());
    }
    if (!TcpLinkSettings.secretFromUrl(u, props, "clientSecret", b::clientSecret)) {
      throw invalid(u, "clientSecret", "required with clientListen: the credential of this cluster's clients "
          + "(at least " + MIN_SECRET_BYTES + " bytes, different from 'secret')");
    }
    if (MessageDigest.isEqual(b.secret, b.clientSecret)) {
      throw invalid(u, "clientSecret", SAME_SECRETS);
    }
    b.maxClients(u.integer("maxClients", DEFAULT_MAX_CLIENTS, 1, MAX_MAX_CLIENTS));
  }

  private static final String SAME_SECRETS = "must differ from 'secret': 'clientSecret' is given to every client, "
      + "and with the peers' 'secret' a client could open a peer link";

  /** This peer's id, {@code host:port} as configured (port 0 until the transport binds). */
  public String self() {
    return self;
  }

  /** The other peers' ids, in configuration order, without this peer. */
  public List<String> peers() {
    return peers;
  }

  /**
   * The peers dialled somewhere else than at their id: peer id → {@code host:port}. Unmodifiable; peers
   * not in it are dialled at their id.
   */
  public Map<String, String> dialAddresses() {
    return dialAddresses;
  }

  /** Where this node dials {@code peer}: its dial address if one is set, else its id. */
  public String dialAddress(String peer) {
    return dialAddresses.getOrDefault(Objects.requireNonNull(peer, "peer"), peer);
  }

  /** A copy of the shared secret. */
  public byte[] secret() {
    return secret.clone();
  }

  /** How the links run: TLS, the frame cap, timeouts, backoff. */
  public TcpLinkSettings link() {
    return link;
  }

  /**
   * The address of the listener for thin clients ({@code host:port}, port 0 until the transport binds: see
   * {@link TcpTransport#clientPort()}), or empty when this member takes no clients.
   */
  public Optional<String> clientListen() {
    return Optional.ofNullable(clientListen);
  }

  /** A copy of the clients' secret, or null when this member takes no clients. */
  public byte[] clientSecret() {
    return clientSecret == null ? null : clientSecret.clone();
  }

  /** The most client connections served at once; a client beyond it is refused. */
  public int maxClients() {
    return maxClients;
  }

  /** Without the secrets. */
  @Override
  public String toString() {
    return "TcpTransportConfig[self=" + self + ", peers=" + peers
        + (dialAddresses.isEmpty() ? "" : ", dialAddresses=" + dialAddresses) + ", secret=***, " + link.describe()
        + (clientListen == null ? "" : ", clientListen=" + clientListen + ", clientSecret=***, maxClients="
            + maxClients) + "]";
  }

  /** Builds a {@link TcpTransportConfig}; every setter checks its value. Not thread safe. */
  public static final class Builder extends TcpLinkSettings.Builder<Builder> {
    private final String self;
    private final Set<String> peers = new LinkedHashSet<>();
    private final Map<String, String> dialAddresses = new LinkedHashMap<>();
    private byte[] secret;
    private String clientListen;
    private byte[] clientSecret;
    private int maxClients = DEFAULT_MAX_CLIENTS;

    private Builder(String self) {
      this.self = self;
    }

    @Override
    Builder thisBuilder() {
      return this;
    }

    /**
     * The other peers ({@code host:port}); this peer's own id is skipped, so a whole cluster list may be
     * passed.
     *
     * @throws IllegalArgumentException if an id is malformed or listed twice
     */
    public Builder peers(List<String> ids) {
      Objects.requireNonNull(ids, "peers");
      peers.clear();
      for (String id : ids) {
        String n = normalizeId(Objects.requireNonNull(id, "peer id"), "peers", false);
        if (n.equals(self)) {
          continue;
        }
        if (!peers.add(n)) {
          throw new IllegalArgumentException("peers: '" + n + "' is listed twice");
        }
      }
      return this;
    }

    /**
     * Dials {@code peer} at {@code address} instead of at its id (NAT, port forwards, DNS aliases,
     * relays). A host name is looked up at every dial (through the JVM's DNS cache), so an alias that
     * moves is followed when the link reconnects. The peer's id stays its identity: the handshake names
     * the id, and with TLS the peer's certificate is checked against the id's host, not the address
     * dialled. May be called before or after {@link #peers}; {@link #build} checks that {@code peer} is a
     * member.
     *
     * @throws IllegalArgumentException if either is not {@code host:port} (port 1 to 65535), or
     *     {@code peer} is this node
     */
    public Builder dialAddress(String peer, String address) {
      String p = normalizeId(Objects.requireNonNull(peer, "peer"), "dialAddresses: peer", false);
      String a = normalizeId(Objects.requireNonNull(address, "address"), "dialAddresses: address of " + p, false);
      if (p.equals(self)) {
        throw new IllegalArgumentException("dialAddresses: '" + p + "' is this node, which is never dialled");
      }
      dialAddresses.put(p, a);
      return this;
    }

    /**
     * The shared secret (copied).
     *
     * @throws IllegalArgumentException if shorter than {@value TcpLinkSettings#MIN_SECRET_BYTES} bytes
     */
    public Builder secret(byte[] secret) {
      this.secret = TcpLinkSettings.checkSecret(secret, "secret");
      return this;
    }

    /**
     * Takes thin clients on a second listener at {@code hostPort} (port 0: a free port, see
     * {@link TcpTransport#clientPort()}); a {@link #clientSecret} is then required. Clients are never taken
     * on the peer listener.
     *
     * @throws IllegalArgumentException if {@code hostPort} is not {@code host:port} (port 0 to 65535)
     */
    public Builder clientListen(String hostPort) {
      this.clientListen = normalizeId(Objects.requireNonNull(hostPort, "clientListen"), "clientListen", true);
      return this;
    }

    /** @throws IllegalArgumentException if {@code clientListen} is this peer's own listen address */
    private void checkClientListen() {
      if (clientListen != null && clientListen.equals(self) && !self.endsWith(":0")) {
        throw new IllegalArgumentException("clientListen: " + clientListen + " is this peer's listen address; "
            + "clients need a port of their own");
      }
    }

    /**
     * The secret that authenticates clients (copied); it must differ from {@link #secret} ({@link #build}
     * checks).
     *
     * @throws IllegalArgumentException if shorter than {@value TcpLinkSettings#MIN_SECRET_BYTES} bytes
     */
    public Builder clientSecret(byte[] clientSecret) {
      this.clientSecret = TcpLinkSettings.checkSecret(clientSecret, "clientSecret");
      return this;
    }

    /**
     * The most client connections served at once (default {@value #DEFAULT_MAX_CLIENTS}); a client beyond it
     * is refused until one leaves.
     *
     * @throws IllegalArgumentException if not within 1 to {@value #MAX_MAX_CLIENTS}
     */
    public Builder maxClients(int maxClients) {
      if (maxClients < 1 || maxClients > MAX_MAX_CLIENTS) {
        throw new IllegalArgumentException("maxClients: " + maxClients + " is not within [1, " + MAX_MAX_CLIENTS
            + "]");
      }
      this.maxClients = maxClients;
      return this;
    }

    /**
     * @throws IllegalStateException if no secret was set, or {@code clientListen} was set without a
     *     {@code clientSecret}
     * @throws IllegalArgumentException if a dial address is set for a peer that is not a member, the client
     *     secret equals the secret, a client secret is set without {@code clientListen}, or
     *     {@code clientListen} is this peer's own address
     */
    public TcpTransportConfig build() {
      if (secret == null) {
        throw new IllegalStateException("secret: a shared secret is required");
      }
      checkClientListen();
      if (clientListen != null && clientSecret == null) {
        throw new IllegalStateException("clientSecret: required with clientListen " + clientListen);
      }
      if (clientListen == null && clientSecret != null) {
        throw new IllegalArgumentException("clientSecret: given without clientListen");
      }
      if (clientSecret != null && MessageDigest.isEqual(secret, clientSecret)) {
        throw new IllegalArgumentException("clientSecret: " + SAME_SECRETS);
      }
      for (String p : dialAddresses.keySet()) {
        if (!peers.contains(p)) {
          throw new IllegalArgumentException("dialAddresses: '" + p + "' is not one of the peers " + peers);
        }
      }
      return new TcpTransportConfig(this);
    }
  }
}
