package dev.tumbler.peer.provider;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ProviderInfo;
import dev.tumbler.lock.spi.LockProvider;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.lock.spi.TumblerVersion;
import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.Algorithms;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;

/**
 * The native peer-to-peer provider, scheme {@code native}:
 *
 * <ul>
 *   <li>{@code lock:native:local} — one node inside this JVM (the embedded default); every service
 *       opened on this URL in one JVM shares its locks;
 *   <li>{@code lock:native:mem/<cluster>?node=a&peers=b,c} — node {@code a} of an in-memory cluster in
 *       this JVM (for tests and demos);
 *   <li>{@code lock:native://host:port?peers=h:p,h:p&secret=...} — this JVM is the peer listening on
 *       {@code host:port}, talking to the others over TCP.
 * </ul>
 *
 * Parameters: {@code algorithm=} one of {@link Algorithms#names()} (default {@code lamport}), {@code peerTimeout}
 * (default 10s: for Lamport and Ricart–Agrawala, how long a request waits while a peer is unreachable before it fails
 * with {@link dev.tumbler.lock.ServiceUnavailableException}; for the fault-tolerant algorithms and thin clients, how
 * long a node may have fewer members connected than a quorum needs before its waits fail so, a failover ending none),
 * {@code namespace}, and for TCP the transport's parameters ({@code secret}, {@code tls}, ...).
 *
 * <p>Capabilities: a service declares its algorithm's ({@link Algorithm#capabilities()}) and
 * {@link Capability#SEMAPHORE}, which every node serves ({@code buckets}, on a server the nodes elect); the
 * provider's info lists their union. Lamport and Ricart–Agrawala: {@link Capability#MUTEX}, {@link Capability#FENCING},
 * {@link Capability#FAIR} (requests are granted in logical-timestamp order); not
 * {@link Capability#LEASE_EXPIRY} — a grant holds until released; not {@link Capability#FAULT_TOLERANT} —
 * every peer must be up for any grant. Thread safe.
 */
public final class NativeLockProvider implements LockProvider {

  /** The provider's version: this build's, as {@link TumblerVersion} reads it. */
  public static final String VERSION = TumblerVersion.current();

  /** What some native service keeps: the union over the algorithms; a service declares its algorithm's. */
  static final Set<Capability> CAPABILITIES = union();

  private static final ProviderInfo INFO = new ProviderInfo("native", "Tumbler native", VERSION,
      "peer-to-peer locks in this JVM, in memory, or over TCP; algorithm=" + String.join("|", Algorithms.names()),
      CAPABILITIES);

  /** Public no-argument constructor for {@link java.util.ServiceLoader}. */
  public NativeLockProvider() {}

  private static Set<Capability> union() {
    EnumSet<Capability> all = EnumSet.noneOf(Capability.class);
    for (Algorithm<?> a : Algorithms.all()) {
      all.addAll(a.capabilities());
    }
    all.add(Capability.SEMAPHORE);
    return Set.copyOf(all);
  }

  @Override
  public String scheme() {
    return "native";
  }

  @Override
  public ProviderInfo info() {
    return INFO;
  }

  @Override
  public LockService connect(LockUrl url, Properties info) {
    Objects.requireNonNull(url, "url");
    NativeSettings settings = NativeSettings.fromUrl(url, info);
    return new NativeLockService(url.toString(), settings);
  }
}
