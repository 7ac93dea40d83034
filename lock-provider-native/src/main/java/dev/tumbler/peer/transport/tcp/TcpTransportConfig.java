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
      "backoffMin", "backoffMax", "dialAddresses");

  /**
   * The URL parameter and {@link Properties} key of the dial addresses: a string
   * {@code id=host:port,id=host:port} or, in {@code Properties} only, a {@code Map<String, String>} from
   * peer id to address.
   */
  public static final String DIAL_ADDRESSES = "dialAddresses";

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
   * peers instead of their ids; in {@code info} also a {@code Map<String, String>}). Other parameters are left to the caller, who checks them against
   * {@link #PARAMETERS} plus its own.
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
    Object rawSecret = props.get("secret");
    byte[] secretBytes = rawSecret instanceof byte[] bytes ? bytes.clone()
        : u.parameter("secret").map(s -> s.getBytes(StandardCharsets.UTF_8)).orElse(null);
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
      b.sslContext(sslContextFrom(u));
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

  private static SSLContext sslContextFrom(LockUrl u) {
    String keyStore = u.parameter("keyStore").orElseThrow(() -> invalid(u, "keyStore",
        "tls=true needs a key store with this peer's certificate and key (or an SSLContext in Properties)"));
    char[] keyPassword = u.parameter("keyStorePassword").map(String::toCharArray).orElseThrow(
        () -> invalid(u, "keyStorePassword", "required with keyStore"));
    try {
      KeyStore ks = load(u, "keyStore", keyStore, keyPassword);
      KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      try {
        kmf.init(ks, keyPassword);
      } catch (GeneralSecurityException e) {
        throw invalid(u, "keyStorePassword", "cannot read the private key (wrong password?)");
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
      ctx.init(kmf.getKeyManagers(), tmf == null ? null : tmf.getTrustManagers(), null);
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

  private static Duration positive(LockUrl u, String name, Duration defaultValue) {
    Duration d = u.duration(name, defaultValue);
    if (d.isZero()) {
      throw invalid(u, name, "must be greater than zero");
    }
    return d;
  }

  private static InvalidLockUrlException invalid(LockUrl u, String param, String reason) {
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

  /** Without the secret. */
  @Override
  public String toString() {
    return "TcpTransportConfig[self=" + self + ", peers=" + peers
        + (dialAddresses.isEmpty() ? "" : ", dialAddresses=" + dialAddresses) + ", secret=***, tls=" + tls()
        + ", maxFrameSize=" + maxFrameSize + ", connectTimeout=" + connectTimeout + ", handshakeTimeout="
        + handshakeTimeout + ", idleTimeout=" + idleTimeout + ", backoff=" + backoffMin + ".." + backoffMax + "]";
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
     * @throws IllegalStateException if no secret was set
     * @throws IllegalArgumentException if a dial address is set for a peer that is not a member
     */
    public TcpTransportConfig build() {
      if (secret == null) {
        throw new IllegalStateException("secret: a shared secret is required");
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
