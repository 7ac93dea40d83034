package dev.tumbler.peer.transport.tcp;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.Checks;
import dev.tumbler.lock.spi.LockUrl;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * Settings of one {@link TcpTransport}: who this peer is, who its peers are, the shared secret that
 * authenticates them, optional TLS, and the limits and timeouts of the links.
 *
 * <p>Peer ids are {@code host:port} (IPv6 literals in brackets, {@code [::1]:7701}); a peer's id is the
 * address it listens on, and every node must spell a given peer the same way ({@code localhost:7701} and
 * {@code 127.0.0.1:7701} are different ids). By default a peer is dialled at its id; a <em>dial address</em>
 * ({@link Builder#dialAddress}, URL parameter {@code dialAddresses}) makes this node dial another
 * address for it instead — behind NAT or a port forward, through a DNS alias, or through a relay — while
 * the id stays the peer's identity: the handshake names the id, and TLS checks the certificate against the
 * id's host. The secret is required: there is no unauthenticated mode.
 * It must be at least {@value #MIN_SECRET_BYTES} bytes, because a captured handshake lets an attacker
 * guess a short secret offline. The secret never appears in {@link #toString()}, messages or logs.
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

  /** The smallest accepted secret, in bytes (UTF-8 bytes for a secret given as text). */
  public static final int MIN_SECRET_BYTES = 16;
  /** Default cap on one payload: 1 MiB. */
  public static final int DEFAULT_MAX_FRAME_SIZE = 1 << 20;
  /** Smallest and largest accepted {@code maxFrameSize}. */
  public static final int MIN_MAX_FRAME_SIZE = 1024;
  public static final int MAX_MAX_FRAME_SIZE = 64 << 20;

  /** The URL parameters {@link #fromUrl} reads; the provider adds its own and rejects any other. */
  public static final Set<String> PARAMETERS = Set.of("peers", "secret", "tls", "keyStore", "keyStorePassword",
      "trustStore", "trustStorePassword", "maxFrameSize", "connectTimeout", "handshakeTimeout", "idleTimeout",
      "backoffMin", "backoffMax", "dialAddresses", "clientListen", "clientSecret", "maxClients");

  /**
   * The URL parameter and {@link Properties} key of the dial addresses: a string
   * {@code id=host:port,id=host:port} or, in {@code Properties} only, a {@code Map<String, String>} from
   * peer id to address.
   */
  public static final String DIAL_ADDRESSES = "dialAddresses";

  /** Default and bounds of {@code maxClients}. */
  public static final int DEFAULT_MAX_CLIENTS = 1024;
  public static final int MAX_MAX_CLIENTS = 65536;

  /** The {@link Properties} key under which a ready {@link SSLContext} object may be passed. */
  public static final String SSL_CONTEXT_PROPERTY = "sslContext";

  private final String self;
  private final List<String> peers;
  private final Map<String, String> dialAddresses;
  private final byte[] secret;
  private final SSLContext sslContext;
  private final int maxFrameSize;
  private final Duration connectTimeout;
  private final Duration handshakeTimeout;
  private final Duration idleTimeout;
  private final Duration backoffMin;
  private final Duration backoffMax;
  private final RandomGenerator random;
  private final String clientListen;
  private final byte[] clientSecret;
  private final int maxClients;

  private TcpTransportConfig(Builder b) {
    this.self = b.self;
    this.peers = List.copyOf(b.peers);
    this.dialAddresses = Collections.unmodifiableMap(new LinkedHashMap<>(b.dialAddresses));
    this.secret = b.secret.clone();
    this.sslContext = b.sslContext;
    this.maxFrameSize = b.maxFrameSize;
    this.connectTimeout = b.connectTimeout;
    this.handshakeTimeout = b.handshakeTimeout;
    this.idleTimeout = b.idleTimeout;
    this.backoffMin = b.backoffMin;
    this.backoffMax = b.backoffMax;
    this.random = b.random;
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
   * carry an {@link SSLContext} under {@value #SSL_CONTEXT_PROPERTY} (which implies TLS) and the secret
   * as a {@code byte[]} under {@code secret}.
   *
   * <p>Parameters: {@code peers} (comma-separated {@code host:port}; this peer's own id may be listed and
   * is skipped), {@code secret} (required, at least {@value #MIN_SECRET_BYTES} bytes), {@code tls},
   * {@code keyStore}, {@code keyStorePassword}, {@code trustStore}, {@code trustStorePassword} (key stores
   * in any format the JDK detects, PKCS12 or JKS; without a trust store the JDK's default trust applies),
   * {@code maxFrameSize} (bytes, default 1 MiB), {@code connectTimeout} (5s), {@code handshakeTimeout}
   * (5s), {@code idleTimeout} (10s; heartbeats go every quarter of it), {@code backoffMin} (100ms),
   * {@code backoffMax} (5s), {@code dialAddresses} ({@code id=host:port,...}: where to dial the listed
   * peers instead of their ids; in {@code info} also a {@code Map<String, String>}), {@code clientListen}
   * ({@code host:port} of the listener for thin clients, port 0 for a free one; none by default),
   * {@code clientSecret} (required with {@code clientListen}, at least {@value #MIN_SECRET_BYTES} bytes,
   * different from {@code secret}; in {@code info} also as a {@code byte[]}), {@code maxClients} (1 to
   * {@value #MAX_MAX_CLIENTS}, default {@value #DEFAULT_MAX_CLIENTS}; only with {@code clientListen}). Other
   * parameters are left to the caller, who checks them against {@link #PARAMETERS} plus its own.
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
      for (String p : peerList.split(",", -1)) {
        try {
          ids.add(normalizeId(p.trim(), "peers", false));
        } catch (IllegalArgumentException e) {
          throw invalid(u, "peers", e.getMessage());
        }
      }
      try {
        b.peers(ids);
      } catch (IllegalArgumentException e) {
        throw invalid(u, "peers", e.getMessage());
      }
    }
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
    } else if (rawDial != null && !(rawDial instanceof String)) {
      throw new InvalidLockUrlException("lock URL " + u + ": property '" + DIAL_ADDRESSES
          + "' must be a String (id=host:port,...) or a Map<String, String>, not " + rawDial.getClass().getName());
    } else {
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
    }
    try {
      for (Map.Entry<String, String> e : dial.entrySet()) {
        b.dialAddress(e.getKey(), e.getValue());
      }
    } catch (IllegalArgumentException e) {
      throw invalid(u, DIAL_ADDRESSES, e.getMessage());
    }
    byte[] secretBytes = secretFrom(u, props, "secret");
    if (secretBytes == null) {
      throw invalid(u, "secret", "a shared secret is required to authenticate peers (at least "
          + MIN_SECRET_BYTES + " bytes; pass it in Properties rather than in the URL where you can)");
    }
    try {
      b.secret(secretBytes);
    } catch (IllegalArgumentException e) {
      throw invalid(u, "secret", e.getMessage());
    } finally {
      Arrays.fill(secretBytes, (byte) 0);
    }
    clientsFromUrl(u, props, b);
    b.maxFrameSize(u.integer("maxFrameSize", DEFAULT_MAX_FRAME_SIZE, MIN_MAX_FRAME_SIZE, MAX_MAX_FRAME_SIZE));
    b.connectTimeout(positive(u, "connectTimeout", b.connectTimeout));
    b.handshakeTimeout(positive(u, "handshakeTimeout", b.handshakeTimeout));
    b.idleTimeout(positive(u, "idleTimeout", b.idleTimeout));
    Duration min = positive(u, "backoffMin", b.backoffMin);
    Duration max = positive(u, "backoffMax", b.backoffMax);
    if (max.compareTo(min) < 0) {
      throw invalid(u, "backoffMax", max.toMillis() + "ms is less than backoffMin " + min.toMillis() + "ms");
    }
    b.backoff(min, max);

    Object ctx = props.get(SSL_CONTEXT_PROPERTY);
    if (ctx != null && !(ctx instanceof SSLContext)) {
      throw new InvalidLockUrlException("lock URL " + u + ": property '" + SSL_CONTEXT_PROPERTY
          + "' must be a javax.net.ssl.SSLContext, not " + ctx.getClass().getName());
    }
    boolean tls = u.bool("tls", ctx != null);
    if (ctx instanceof SSLContext c) {
      if (!tls) {
        throw invalid(u, "tls", "false, but an SSLContext was passed in property '" + SSL_CONTEXT_PROPERTY + "'");
      }
      b.sslContext(c);
    } else if (tls) {
      b.sslContext(sslContextFrom(u, true));
    } else {
      for (String p : List.of("keyStore", "keyStorePassword", "trustStore", "trustStorePassword")) {
        if (u.parameter(p).isPresent()) {
          throw invalid(u, p, "given without tls=true");
        }
      }
    }
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      throw invalid(u, DIAL_ADDRESSES, e.getMessage());
    }
  }

  /**
   * A secret parameter: a {@code byte[]} in {@code props} under {@code name}, else the (overridden) URL
   * parameter as UTF-8; null when absent. The caller clears the array it gets.
   */
  static byte[] secretFrom(LockUrl u, Properties props, String name) {
    Object raw = props.get(name);
    return raw instanceof byte[] bytes ? bytes.clone()
        : u.parameter(name).map(s -> s.getBytes(StandardCharsets.UTF_8)).orElse(null);
  }

  /** {@code clientListen}, {@code clientSecret} and {@code maxClients}; checked here to name the parameter. */
  private static void clientsFromUrl(LockUrl u, Properties props, Builder b) {
    Optional<String> listen = u.parameter("clientListen").map(String::trim).filter(s -> !s.isEmpty());
    byte[] clientSecret = secretFrom(u, props, "clientSecret");
    try {
      if (listen.isEmpty()) {
        if (clientSecret != null) {
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
      if (clientSecret == null) {
        throw invalid(u, "clientSecret", "required with clientListen: the credential of this cluster's clients "
            + "(at least " + MIN_SECRET_BYTES + " bytes, different from 'secret')");
      }
      try {
        b.clientSecret(clientSecret);
      } catch (IllegalArgumentException e) {
        throw invalid(u, "clientSecret", e.getMessage());
      }
      if (b.secret != null && MessageDigest.isEqual(b.secret, clientSecret)) {
        throw invalid(u, "clientSecret", SAME_SECRETS);
      }
      b.maxClients(u.integer("maxClients", DEFAULT_MAX_CLIENTS, 1, MAX_MAX_CLIENTS));
    } finally {
      if (clientSecret != null) {
        Arrays.fill(clientSecret, (byte) 0);
      }
    }
  }

  private static final String SAME_SECRETS = "must differ from 'secret': 'clientSecret' is given to every client, "
      + "and with the peers' 'secret' a client could open a peer link";

  /**
   * The TLS context the URL's stores describe. A member needs a key store (it presents a certificate to
   * whoever dials it); a client may go without one ({@code keyStoreRequired} false), since members do not
   * ask dialers for a certificate: the HMAC handshake authenticates the client.
   */
  static SSLContext sslContextFrom(LockUrl u, boolean keyStoreRequired) {
    String keyStore = u.parameter("keyStore").orElse(null);
    if (keyStore == null && keyStoreRequired) {
      throw invalid(u, "keyStore",
          "tls=true needs a key store with this peer's certificate and key (or an SSLContext in Properties)");
    }
    if (keyStore == null && u.parameter("keyStorePassword").isPresent()) {
      throw invalid(u, "keyStorePassword", "given without keyStore");
    }
    char[] keyPassword = keyStore == null ? new char[0] : u.parameter("keyStorePassword").map(String::toCharArray)
        .orElseThrow(() -> invalid(u, "keyStorePassword", "required with keyStore"));
    try {
      KeyManagerFactory kmf = null;
      if (keyStore != null) {
        KeyStore ks = load(u, "keyStore", keyStore, keyPassword);
        kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        try {
          kmf.init(ks, keyPassword);
        } catch (GeneralSecurityException e) {
          throw invalid(u, "keyStorePassword", "cannot read the private key (wrong password?)");
        }
      }
      TrustManagerFactory tmf = null;
      String trustStore = u.parameter("trustStore").orElse(null);
      if (trustStore != null) {
        char[] trustPassword = u.parameter("trustStorePassword").map(String::toCharArray).orElse(null);
        KeyStore ts = load(u, "trustStore", trustStore, trustPassword);
        tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ts);
      } else if (u.parameter("trustStorePassword").isPresent()) {
        throw invalid(u, "trustStorePassword", "given without trustStore");
      }
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf == null ? null : tmf.getTrustManagers(), null);
      return ctx;
    } catch (GeneralSecurityException e) {
      throw new InvalidLockUrlException("lock URL " + u + ": cannot set up TLS: " + e.getClass().getSimpleName(), e);
    } finally {
      Arrays.fill(keyPassword, '\0');
    }
  }

  private static KeyStore load(LockUrl u, String param, String file, char[] password) {
    Path path = Path.of(file);
    if (!Files.isReadable(path)) {
      throw invalid(u, param, "cannot read file " + path);
    }
    try {
      return KeyStore.getInstance(path.toFile(), password);
    } catch (IOException | GeneralSecurityException e) {
      // the JDK reports a wrong password as an IOException whose cause is an UnrecoverableKeyException
      throw invalid(u, param, "cannot load " + path + " (wrong password, or not a PKCS12/JKS key store): "
          + e.getClass().getSimpleName());
    }
  }

  static Duration positive(LockUrl u, String name, Duration defaultValue) {
    Duration d = u.duration(name, defaultValue);
    if (d.isZero()) {
      throw invalid(u, name, "must be greater than zero");
    }
    return d;
  }

  static InvalidLockUrlException invalid(LockUrl u, String param, String reason) {
    return new InvalidLockUrlException("lock URL " + u + ": parameter '" + param + "': " + reason);
  }

  /**
   * Normalizes {@code host:port}: host lower case, IPv6 in brackets.
   *
   * @throws IllegalArgumentException naming {@code what} if malformed
   */
  static String normalizeId(String id, String what, boolean allowPortZero) {
    String s = id.trim();
    String host;
    String port;
    if (s.startsWith("[")) {
      int close = s.indexOf(']');
      if (close < 0 || close + 1 >= s.length() || s.charAt(close + 1) != ':') {
        throw new IllegalArgumentException(what + ": '" + id + "' is not [ipv6]:port");
      }
      host = s.substring(1, close);
      port = s.substring(close + 2);
    } else {
      int colon = s.lastIndexOf(':');
      if (colon <= 0 || s.indexOf(':') != colon) {
        throw new IllegalArgumentException(what + ": '" + id + "' is not host:port");
      }
      host = s.substring(0, colon);
      port = s.substring(colon + 1);
    }
    if (host.isEmpty()) {
      throw new IllegalArgumentException(what + ": '" + id + "' has no host");
    }
    int p;
    try {
      p = Integer.parseInt(port);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(what + ": '" + id + "' has no valid port");
    }
    if (p < (allowPortZero ? 0 : 1) || p > 65535) {
      throw new IllegalArgumentException(what + ": port " + p + " in '" + id + "' is out of range");
    }
    return new LockUrl.HostAndPort(host.toLowerCase(Locale.ROOT), p).toString();
  }

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

  /** The TLS context, or null when links are plain TCP. */
  public SSLContext sslContext() {
    return sslContext;
  }

  public boolean tls() {
    return sslContext != null;
  }

  /** The largest payload one frame may carry; a larger incoming frame closes its connection. */
  public int maxFrameSize() {
    return maxFrameSize;
  }

  public Duration connectTimeout() {
    return connectTimeout;
  }

  /** The longest a handshake (TLS and HMAC) may take, from accept or connect; then the connection is closed. */
  public Duration handshakeTimeout() {
    return handshakeTimeout;
  }

  /** A link with no frame for this long is closed; heartbeats are sent every quarter of it. */
  public Duration idleTimeout() {
    return idleTimeout;
  }

  public Duration backoffMin() {
    return backoffMin;
  }

  public Duration backoffMax() {
    return backoffMax;
  }

  /** The random source of reconnection jitter. */
  public RandomGenerator random() {
    return random;
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
        + (dialAddresses.isEmpty() ? "" : ", dialAddresses=" + dialAddresses) + ", secret=***, tls=" + tls()
        + ", maxFrameSize=" + maxFrameSize + ", connectTimeout=" + connectTimeout + ", handshakeTimeout="
        + handshakeTimeout + ", idleTimeout=" + idleTimeout + ", backoff=" + backoffMin + ".." + backoffMax
        + (clientListen == null ? "" : ", clientListen=" + clientListen + ", clientSecret=***, maxClients="
            + maxClients) + "]";
  }

  /** Builds a {@link TcpTransportConfig}; every setter checks its value. Not thread safe. */
  public static final class Builder {
    private final String self;
    private final Set<String> peers = new LinkedHashSet<>();
    private final Map<String, String> dialAddresses = new LinkedHashMap<>();
    private byte[] secret;
    private SSLContext sslContext;
    private int maxFrameSize = DEFAULT_MAX_FRAME_SIZE;
    private Duration connectTimeout = Duration.ofSeconds(5);
    private Duration handshakeTimeout = Duration.ofSeconds(5);
    private Duration idleTimeout = Duration.ofSeconds(10);
    private Duration backoffMin = Duration.ofMillis(100);
    private Duration backoffMax = Duration.ofSeconds(5);
    private RandomGenerator random = new SplittableRandom();
    private String clientListen;
    private byte[] clientSecret;
    private int maxClients = DEFAULT_MAX_CLIENTS;

    private Builder(String self) {
      this.self = self;
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
     * @throws IllegalArgumentException if shorter than {@value #MIN_SECRET_BYTES} bytes
     */
    public Builder secret(byte[] secret) {
      Objects.requireNonNull(secret, "secret");
      if (secret.length < MIN_SECRET_BYTES) {
        throw new IllegalArgumentException("secret: must be at least " + MIN_SECRET_BYTES + " bytes, got "
            + secret.length);
      }
      this.secret = secret.clone();
      return this;
    }

    /** TLS on every link, or null for plain TCP. The HMAC handshake runs inside TLS all the same. */
    public Builder sslContext(SSLContext sslContext) {
      this.sslContext = sslContext;
      return this;
    }

    public Builder maxFrameSize(int bytes) {
      if (bytes < MIN_MAX_FRAME_SIZE || bytes > MAX_MAX_FRAME_SIZE) {
        throw new IllegalArgumentException("maxFrameSize: " + bytes + " is not within [" + MIN_MAX_FRAME_SIZE
            + ", " + MAX_MAX_FRAME_SIZE + "]");
      }
      this.maxFrameSize = bytes;
      return this;
    }

    public Builder connectTimeout(Duration d) {
      this.connectTimeout = Checks.positive(d, "connectTimeout");
      return this;
    }

    public Builder handshakeTimeout(Duration d) {
      this.handshakeTimeout = Checks.positive(d, "handshakeTimeout");
      return this;
    }

    public Builder idleTimeout(Duration d) {
      this.idleTimeout = Checks.positive(d, "idleTimeout");
      return this;
    }

    /** Reconnection waits start at {@code min}, double per failed attempt up to {@code max}, with jitter. */
    public Builder backoff(Duration min, Duration max) {
      Checks.positive(min, "backoffMin");
      Checks.positive(max, "backoffMax");
      if (max.compareTo(min) < 0) {
        throw new IllegalArgumentException("backoffMax " + max + " is less than backoffMin " + min);
      }
      this.backoffMin = min;
      this.backoffMax = max;
      return this;
    }

    /** The random source for reconnection jitter (seed it for reproducible tests). */
    public Builder random(RandomGenerator random) {
      this.random = Objects.requireNonNull(random, "random");
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
     * @throws IllegalArgumentException if shorter than {@value #MIN_SECRET_BYTES} bytes
     */
    public Builder clientSecret(byte[] clientSecret) {
      Objects.requireNonNull(clientSecret, "clientSecret");
      if (clientSecret.length < MIN_SECRET_BYTES) {
        throw new IllegalArgumentException("clientSecret: must be at least " + MIN_SECRET_BYTES + " bytes, got "
            + clientSecret.length);
      }
      this.clientSecret = clientSecret.clone();
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
