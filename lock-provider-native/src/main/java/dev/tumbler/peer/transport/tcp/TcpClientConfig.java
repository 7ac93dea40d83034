package dev.tumbler.peer.transport.tcp;

import static dev.tumbler.peer.transport.tcp.TcpTransportConfig.invalid;
import static dev.tumbler.peer.transport.tcp.TcpTransportConfig.positive;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.Checks;
import dev.tumbler.lock.spi.LockUrl;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import javax.net.ssl.SSLContext;

/**
 * Settings of one {@link TcpClientTransport}: the members' client addresses, the clients' secret, optional
 * TLS, and the timeouts of the links. A class of its own rather than a flag on {@link TcpTransportConfig}:
 * a client has no listen address, no peer secret and no peers, and the settings it shares with a member
 * mean the same here ({@code tls} and the stores, {@code maxFrameSize}, {@code connectTimeout},
 * {@code handshakeTimeout}, {@code idleTimeout}, {@code backoffMin}, {@code backoffMax}).
 *
 * <p>A member's client address is {@code host:port} as the client dials it (IPv6 literals in brackets); it
 * is the member's id on the client ({@link TcpClientTransport#peers()}), and with TLS the member's
 * certificate is checked against its host. Use the members' {@code idleTimeout} and {@code maxFrameSize}:
 * each end closes a connection that carried nothing for its own {@code idleTimeout} (and pings every
 * quarter of it), or that brought a frame larger than its own {@code maxFrameSize}.
 *
 * <p>Immutable and thread safe (the secret is copied in and out; never in {@link #toString()}).
 */
public final class TcpClientConfig {

  /** The URL parameters {@link #fromUrl} reads; the caller adds its own and rejects any other. */
  public static final Set<String> PARAMETERS = Set.of("clientSecret", "tls", "keyStore", "keyStorePassword",
      "trustStore", "trustStorePassword", "maxFrameSize", "connectTimeout", "handshakeTimeout", "idleTimeout",
      "backoffMin", "backoffMax");

  private final List<String> members;
  private final byte[] clientSecret;
  private final SSLContext sslContext;
  private final int maxFrameSize;
  private final Duration connectTimeout;
  private final Duration handshakeTimeout;
  private final Duration idleTimeout;
  private final Duration backoffMin;
  private final Duration backoffMax;
  private final RandomGenerator random;

  private TcpClientConfig(Builder b) {
    this.members = List.copyOf(b.members);
    this.clientSecret = b.clientSecret.clone();
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
   * A builder for a client of the members whose client listeners are at {@code members} ({@code host:port}
   * each, in the order the client prefers them).
   *
   * @throws IllegalArgumentException if {@code members} is empty, or an address is malformed or listed twice
   */
  public static Builder builder(List<String> members) {
    return new Builder(members);
  }

  /**
   * Builds the settings from a {@code lock:native://h1:7781,h2:7781?clientSecret=...} URL: its hosts are the
   * members' client addresses, in order. String entries of {@code info} override URL parameters; {@code info}
   * may also carry the client secret as a {@code byte[]} under {@code clientSecret}, and an {@link SSLContext}
   * under {@value TcpTransportConfig#SSL_CONTEXT_PROPERTY} (which implies TLS).
   *
   * <p>Parameters: {@code clientSecret} (required, at least {@value TcpTransportConfig#MIN_SECRET_BYTES}
   * bytes), {@code tls}, {@code trustStore}, {@code trustStorePassword} (without a trust store the JDK's
   * default trust applies), {@code keyStore}, {@code keyStorePassword} (optional: members do not ask a
   * client for a certificate), and {@code maxFrameSize}, {@code connectTimeout}, {@code handshakeTimeout},
   * {@code idleTimeout}, {@code backoffMin}, {@code backoffMax} with the members' defaults. Whether the URL
   * is a client's at all (rather than a member's) is the caller's to decide; other parameters are left to
   * it, to check against {@link #PARAMETERS} plus its own.
   *
   * @throws InvalidLockUrlException naming the parameter that is missing or invalid; never quoting a
   *     secret or password
   */
  public static TcpClientConfig fromUrl(LockUrl url, Properties info) {
    Objects.requireNonNull(url, "url");
    Properties props = info == null ? new Properties() : info;
    LockUrl u = url.withOverrides(props);
    if (!u.isHierarchical() || u.hosts().isEmpty()) {
      throw new InvalidLockUrlException("lock URL " + u + ": a TCP client URL names the members' client "
          + "addresses, as in lock:native://127.0.0.1:7781,127.0.0.1:7782?clientSecret=...");
    }
    List<String> addresses = new ArrayList<>();
    for (LockUrl.HostAndPort h : u.hosts()) {
      if (!h.hasPort()) {
        throw new InvalidLockUrlException("lock URL " + u + ": member address '" + h + "' has no port");
      }
      addresses.add(h.toString());
    }
    Builder b;
    try {
      b = builder(addresses);
    } catch (IllegalArgumentException e) {
      throw new InvalidLockUrlException("lock URL " + u + ": " + e.getMessage(), e);
    }
    byte[] secret = TcpTransportConfig.secretFrom(u, props, "clientSecret");
    if (secret == null) {
      throw invalid(u, "clientSecret", "the clients' secret is required to connect to the members (at least "
          + TcpTransportConfig.MIN_SECRET_BYTES + " bytes; pass it in Properties rather than in the URL where "
          + "you can)");
    }
    try {
      b.clientSecret(secret);
    } catch (IllegalArgumentException e) {
      throw invalid(u, "clientSecret", e.getMessage());
    } finally {
      Arrays.fill(secret, (byte) 0);
    }
    b.maxFrameSize(u.integer("maxFrameSize", TcpTransportConfig.DEFAULT_MAX_FRAME_SIZE,
        TcpTransportConfig.MIN_MAX_FRAME_SIZE, TcpTransportConfig.MAX_MAX_FRAME_SIZE));
    b.connectTimeout(positive(u, "connectTimeout", b.connectTimeout));
    b.handshakeTimeout(positive(u, "handshakeTimeout", b.handshakeTimeout));
    b.idleTimeout(positive(u, "idleTimeout", b.idleTimeout));
    Duration min = positive(u, "backoffMin", b.backoffMin);
    Duration max = positive(u, "backoffMax", b.backoffMax);
    if (max.compareTo(min) < 0) {
      throw invalid(u, "backoffMax", max.toMillis() + "ms is less than backoffMin " + min.toMillis() + "ms");
    }
    b.backoff(min, max);

    Object ctx = props.get(TcpTransportConfig.SSL_CONTEXT_PROPERTY);
    if (ctx != null && !(ctx instanceof SSLContext)) {
      throw new InvalidLockUrlException("lock URL " + u + ": property '" + TcpTransportConfig.SSL_CONTEXT_PROPERTY
          + "' must be a javax.net.ssl.SSLContext, not " + ctx.getClass().getName());
    }
    boolean tls = u.bool("tls", ctx != null);
    if (ctx instanceof SSLContext c) {
      if (!tls) {
        throw invalid(u, "tls", "false, but an SSLContext was passed in property '"
            + TcpTransportConfig.SSL_CONTEXT_PROPERTY + "'");
      }
      b.sslContext(c);
    } else if (tls) {
      b.sslContext(TcpTransportConfig.sslContextFrom(u, false));
    } else {
      for (String p : List.of("keyStore", "keyStorePassword", "trustStore", "trustStorePassword")) {
        if (u.parameter(p).isPresent()) {
          throw invalid(u, p, "given without tls=true");
        }
      }
    }
    return b.build();
  }

  /** The members' client addresses, in the order given; they are the members' ids on the client. */
  public List<String> members() {
    return members;
  }

  /** A copy of the clients' secret. */
  public byte[] clientSecret() {
    return clientSecret.clone();
  }

  /** The TLS context, or null when connections are plain TCP. */
  public SSLContext sslContext() {
    return sslContext;
  }

  public boolean tls() {
    return sslContext != null;
  }

  /** The largest payload one frame may carry, either way; a larger incoming frame closes its connection. */
  public int maxFrameSize() {
    return maxFrameSize;
  }

  public Duration connectTimeout() {
    return connectTimeout;
  }

  /** The longest a handshake (TLS and HMAC) may take, from connect; then the connection is closed. */
  public Duration handshakeTimeout() {
    return handshakeTimeout;
  }

  /** A connection with no frame received for this long is closed; a PING goes every quarter of it. */
  public Duration idleTimeout() {
    return idleTimeout;
  }

  public Duration backoffMin() {
    return backoffMin;
  }

  public Duration backoffMax() {
    return backoffMax;
  }

  /** The random source of reconnection jitter (never of the client id or nonces: those are SecureRandom's). */
  public RandomGenerator random() {
    return random;
  }

  /** Without the secret. */
  @Override
  public String toString() {
    return "TcpClientConfig[members=" + members + ", clientSecret=***, tls=" + tls() + ", maxFrameSize="
        + maxFrameSize + ", connectTimeout=" + connectTimeout + ", handshakeTimeout=" + handshakeTimeout
        + ", idleTimeout=" + idleTimeout + ", backoff=" + backoffMin + ".." + backoffMax + "]";
  }

  /** Builds a {@link TcpClientConfig}; every setter checks its value. Not thread safe. */
  public static final class Builder {
    private final Set<String> members = new LinkedHashSet<>();
    private byte[] clientSecret;
    private SSLContext sslContext;
    private int maxFrameSize = TcpTransportConfig.DEFAULT_MAX_FRAME_SIZE;
    private Duration connectTimeout = Duration.ofSeconds(5);
    private Duration handshakeTimeout = Duration.ofSeconds(5);
    private Duration idleTimeout = Duration.ofSeconds(10);
    private Duration backoffMin = Duration.ofMillis(100);
    private Duration backoffMax = Duration.ofSeconds(5);
    private RandomGenerator random = new SplittableRandom();

    private Builder(List<String> addresses) {
      Objects.requireNonNull(addresses, "members");
      for (String a : addresses) {
        String n = TcpTransportConfig.normalizeId(Objects.requireNonNull(a, "member address"), "members", false);
        if (!members.add(n)) {
          throw new IllegalArgumentException("members: '" + n + "' is listed twice");
        }
      }
      if (members.isEmpty()) {
        throw new IllegalArgumentException("members: at least one member's client address is required");
      }
    }

    /**
     * The clients' secret (copied): the members' {@code clientSecret}.
     *
     * @throws IllegalArgumentException if shorter than {@value TcpTransportConfig#MIN_SECRET_BYTES} bytes
     */
    public Builder clientSecret(byte[] clientSecret) {
      Objects.requireNonNull(clientSecret, "clientSecret");
      if (clientSecret.length < TcpTransportConfig.MIN_SECRET_BYTES) {
        throw new IllegalArgumentException("clientSecret: must be at least " + TcpTransportConfig.MIN_SECRET_BYTES
            + " bytes, got " + clientSecret.length);
      }
      this.clientSecret = clientSecret.clone();
      return this;
    }

    /** TLS on every connection, or null for plain TCP. The HMAC handshake runs inside TLS all the same. */
    public Builder sslContext(SSLContext sslContext) {
      this.sslContext = sslContext;
      return this;
    }

    public Builder maxFrameSize(int bytes) {
      if (bytes < TcpTransportConfig.MIN_MAX_FRAME_SIZE || bytes > TcpTransportConfig.MAX_MAX_FRAME_SIZE) {
        throw new IllegalArgumentException("maxFrameSize: " + bytes + " is not within ["
            + TcpTransportConfig.MIN_MAX_FRAME_SIZE + ", " + TcpTransportConfig.MAX_MAX_FRAME_SIZE + "]");
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
     * @throws IllegalStateException if no client secret was set
     */
    public TcpClientConfig build() {
      if (clientSecret == null) {
        throw new IllegalStateException("clientSecret: the clients' secret is required");
      }
      return new TcpClientConfig(this);
    }
  }
}
