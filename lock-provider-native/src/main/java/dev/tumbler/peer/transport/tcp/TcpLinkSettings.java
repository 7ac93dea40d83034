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
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.random.RandomGenerator;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * What members and thin clients set alike about their links, parsed and checked once: optional TLS, the cap on a
 * frame, the timeouts of connecting, of the handshake and of silence, and the reconnection backoff with its random
 * source. {@link TcpTransportConfig} (a member) and {@link TcpClientConfig} (a client) each hold one and add what
 * differs. The parameters mean the same on both sides; give a client its members' {@code idleTimeout} and
 * {@code maxFrameSize}: each end closes a connection that carried nothing for its own {@code idleTimeout} (and pings
 * every quarter of it), or that brought a frame larger than its own {@code maxFrameSize}.
 *
 * <p>Immutable and thread safe; {@link #random()} is shared, and its users synchronize on it.
 *
 * @param sslContext the TLS context, or null when links are plain TCP; the HMAC handshake runs inside TLS all the same
 * @param maxFrameSize the largest payload one frame may carry; a larger incoming frame closes its connection
 * @param connectTimeout the longest a dial may take to connect
 * @param handshakeTimeout the longest a handshake (TLS and HMAC) may take, from accept or connect; then the
 *     connection is closed
 * @param idleTimeout a connection that received no frame for this long is closed; heartbeats go every quarter of it
 * @param backoffMin the first wait before a redial; waits double per failed attempt, with jitter
 * @param backoffMax the longest wait before a redial
 * @param random the random source of reconnection jitter (never of ids or nonces: those are SecureRandom's)
 */
public record TcpLinkSettings(SSLContext sslContext, int maxFrameSize, Duration connectTimeout,
    Duration handshakeTimeout, Duration idleTimeout, Duration backoffMin, Duration backoffMax,
    RandomGenerator random) {

  /** The smallest accepted secret, in bytes (UTF-8 bytes for a secret given as text). */
  public static final int MIN_SECRET_BYTES = 16;
  /** Default cap on one payload: 1 MiB. */
  public static final int DEFAULT_MAX_FRAME_SIZE = 1 << 20;
  /** Smallest and largest accepted {@code maxFrameSize}. */
  public static final int MIN_MAX_FRAME_SIZE = 1024;
  public static final int MAX_MAX_FRAME_SIZE = 64 << 20;
  /** The {@link Properties} key under which a ready {@link SSLContext} object may be passed. */
  public static final String SSL_CONTEXT_PROPERTY = "sslContext";

  /** The URL parameters {@link Builder#fromUrl} reads, on both sides. */
  private static final List<String> PARAMETERS = List.of("tls", "keyStore", "keyStorePassword", "trustStore",
      "trustStorePassword", "maxFrameSize", "connectTimeout", "handshakeTimeout", "idleTimeout", "backoffMin",
      "backoffMax");

  /** The URL parameters of one side: these and the shared ones. */
  static Set<String> parametersAnd(String... more) {
    Set<String> all = new HashSet<>(PARAMETERS);
    all.addAll(List.of(more));
    return Set.copyOf(all);
  }

  /**
   * @throws IllegalArgumentException if a value is out of range, naming it
   * @throws NullPointerException if anything but {@code sslContext} is null
   */
  public TcpLinkSettings {
    checkFrameSize(maxFrameSize);
    Checks.positive(connectTimeout, "connectTimeout");
    Checks.positive(handshakeTimeout, "handshakeTimeout");
    Checks.positive(idleTimeout, "idleTimeout");
    checkBackoff(backoffMin, backoffMax);
    Objects.requireNonNull(random, "random");
  }

  public boolean tls() {
    return sslContext != null;
  }

  /**
   * Checks what a transport is asked to send.
   *
   * @throws IllegalArgumentException if a payload is larger than {@code maxFrameSize}
   */
  void checkPayloads(List<byte[]> payloads) {
    for (byte[] p : payloads) {
      if (Objects.requireNonNull(p, "payload").length > maxFrameSize) {
        throw new IllegalArgumentException("payload of " + p.length + " bytes exceeds maxFrameSize " + maxFrameSize);
      }
    }
  }

  /** Nanoseconds between heartbeats: a quarter of {@code idleTimeout}, at least a millisecond. */
  long heartbeatNanos() {
    return Duration.ofMillis(Math.max(1, idleTimeout.toMillis() / 4)).toNanos();
  }

  /** The settings as {@code toString} lists them, for the configurations' own. */
  String describe() {
    return "tls=" + tls() + ", maxFrameSize=" + maxFrameSize + ", connectTimeout=" + connectTimeout
        + ", handshakeTimeout=" + handshakeTimeout + ", idleTimeout=" + idleTimeout + ", backoff=" + backoffMin
        + ".." + backoffMax;
  }

  @Override
  public String toString() {
    return "TcpLinkSettings[" + describe() + "]";
  }

  private static int checkFrameSize(int bytes) {
    if (bytes < MIN_MAX_FRAME_SIZE || bytes > MAX_MAX_FRAME_SIZE) {
      throw new IllegalArgumentException("maxFrameSize: " + bytes + " is not within [" + MIN_MAX_FRAME_SIZE + ", "
          + MAX_MAX_FRAME_SIZE + "]");
    }
    return bytes;
  }

  private static void checkBackoff(Duration min, Duration max) {
    Checks.positive(min, "backoffMin");
    Checks.positive(max, "backoffMax");
    if (max.compareTo(min) < 0) {
      throw new IllegalArgumentException("backoffMax " + max + " is less than backoffMin " + min);
    }
  }

  /**
   * A copy of secret {@code name}.
   *
   * @throws IllegalArgumentException if shorter than {@value #MIN_SECRET_BYTES} bytes
   */
  static byte[] checkSecret(byte[] secret, String name) {
    Objects.requireNonNull(secret, name);
    if (secret.length < MIN_SECRET_BYTES) {
      throw new IllegalArgumentException(name + ": must be at least " + MIN_SECRET_BYTES + " bytes, got "
          + secret.length);
    }
    return secret.clone();
  }

  /**
   * The setters of the shared settings, for the builders of both configurations; each checks its value. Not thread
   * safe.
   */
  public abstract static class Builder<B extends Builder<B>> {
    private SSLContext sslContext;
    private int maxFrameSize = DEFAULT_MAX_FRAME_SIZE;
    private Duration connectTimeout = Duration.ofSeconds(5);
    private Duration handshakeTimeout = Duration.ofSeconds(5);
    private Duration idleTimeout = Duration.ofSeconds(10);
    private Duration backoffMin = Duration.ofMillis(100);
    private Duration backoffMax = Duration.ofSeconds(5);
    private RandomGenerator random = new SplittableRandom();

    Builder() {}

    abstract B thisBuilder();

    /** TLS on every connection, or null for plain TCP. The HMAC handshake runs inside TLS all the same. */
    public B sslContext(SSLContext sslContext) {
      this.sslContext = sslContext;
      return thisBuilder();
    }

    public B maxFrameSize(int bytes) {
      this.maxFrameSize = checkFrameSize(bytes);
      return thisBuilder();
    }

    public B connectTimeout(Duration d) {
      this.connectTimeout = Checks.positive(d, "connectTimeout");
      return thisBuilder();
    }

    public B handshakeTimeout(Duration d) {
      this.handshakeTimeout = Checks.positive(d, "handshakeTimeout");
      return thisBuilder();
    }

    public B idleTimeout(Duration d) {
      this.idleTimeout = Checks.positive(d, "idleTimeout");
      return thisBuilder();
    }

    /** Reconnection waits start at {@code min}, double per failed attempt up to {@code max}, with jitter. */
    public B backoff(Duration min, Duration max) {
      checkBackoff(min, max);
      this.backoffMin = min;
      this.backoffMax = max;
      return thisBuilder();
    }

    /** The random source for reconnection jitter (seed it for reproducible tests). */
    public B random(RandomGenerator random) {
      this.random = Objects.requireNonNull(random, "random");
      return thisBuilder();
    }

    TcpLinkSettings link() {
      return new TcpLinkSettings(sslContext, maxFrameSize, connectTimeout, handshakeTimeout, idleTimeout, backoffMin,
          backoffMax, random);
    }

    /**
     * Reads the links' parameters from {@code u} (with {@code props}' overrides applied): {@code tls},
     * {@code keyStore}, {@code keyStorePassword}, {@code trustStore}, {@code trustStorePassword} (key stores in any
     * format the JDK detects, PKCS12 or JKS; without a trust store the JDK's default trust applies),
     * {@code maxFrameSize} (bytes, default 1 MiB), {@code connectTimeout} (5s), {@code handshakeTimeout} (5s),
     * {@code idleTimeout} (10s; heartbeats go every quarter of it), {@code backoffMin} (100ms), {@code backoffMax}
     * (5s); and an {@link SSLContext} from {@code props} under {@value #SSL_CONTEXT_PROPERTY}, which implies TLS. A
     * member needs a key store with TLS (it presents a certificate to whoever dials it); a client may go without
     * one ({@code keyStoreRequired} false), since members ask dialers for no certificate: the HMAC handshake
     * authenticates the client.
     *
     * @throws InvalidLockUrlException naming the parameter that is invalid; never quoting a password
     */
    void fromUrl(LockUrl u, Properties props, boolean keyStoreRequired) {
      maxFrameSize(u.integer("maxFrameSize", DEFAULT_MAX_FRAME_SIZE, MIN_MAX_FRAME_SIZE, MAX_MAX_FRAME_SIZE));
      connectTimeout(positive(u, "connectTimeout", connectTimeout));
      handshakeTimeout(positive(u, "handshakeTimeout", handshakeTimeout));
      idleTimeout(positive(u, "idleTimeout", idleTimeout));
      Duration min = positive(u, "backoffMin", backoffMin);
      Duration max = positive(u, "backoffMax", backoffMax);
      if (max.compareTo(min) < 0) {
        throw invalid(u, "backoffMax", max.toMillis() + "ms is less than backoffMin " + min.toMillis() + "ms");
      }
      backoff(min, max);

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
        sslContext(c);
      } else if (tls) {
        sslContext(sslContextFrom(u, keyStoreRequired));
      } else {
        for (String p : List.of("keyStore", "keyStorePassword", "trustStore", "trustStorePassword")) {
          if (u.parameter(p).isPresent()) {
            throw invalid(u, p, "given without tls=true");
          }
        }
      }
    }
  }

  // ---------------------------------------------------------------- reading URLs

  /**
   * Reads secret parameter {@code name}, a {@code byte[]} in {@code props} or else the (overridden) URL parameter as
   * UTF-8, hands it to {@code set} and clears the bytes read. Returns false when it is absent.
   *
   * @throws InvalidLockUrlException naming {@code name} if {@code set} refuses it
   */
  static boolean secretFromUrl(LockUrl u, Properties props, String name, Consumer<byte[]> set) {
    Object raw = props.get(name);
    byte[] bytes = raw instanceof byte[] b ? b.clone()
        : u.parameter(name).map(s -> s.getBytes(StandardCharsets.UTF_8)).orElse(null);
    if (bytes == null) {
      return false;
    }
    try {
      set.accept(bytes);
      return true;
    } catch (IllegalArgumentException e) {
      throw invalid(u, name, e.getMessage());
    } finally {
      Arrays.fill(bytes, (byte) 0);
    }
  }

  private static SSLContext sslContextFrom(LockUrl u, boolean keyStoreRequired) {
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

  private static Duration positive(LockUrl u, String name, Duration defaultValue) {
    Duration d = u.duration(name, defaultValue);
    if (d.isZero()) {
      throw invalid(u, name, "must be greater than zero");
    }
    return d;
  }

  static InvalidLockUrlException invalid(LockUrl u, String param, String reason) {
    return new InvalidLockUrlException("lock URL " + u + ": parameter '" + param + "': " + reason);
  }
}
