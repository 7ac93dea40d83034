package dev.tumbler.peer.provider;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.peer.lamport.LamportCore;
import dev.tumbler.peer.transport.tcp.TcpTransportConfig;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;

/**
 * What a {@code lock:native:} URL asks for: where the node runs (in this JVM alone, in an in-memory
 * cluster, or as a TCP peer), the algorithm, the peer timeout and the namespace. Immutable.
 *
 * @param kind where the node runs
 * @param cluster the in-memory cluster's name ({@code local} for {@code lock:native:local})
 * @param self this node's id
 * @param peers the other members' ids
 * @param variant the algorithm
 * @param peerTimeout how long a request waits with a peer unreachable before it fails
 * @param namespace prefix of every lock name, possibly empty
 * @param tcp the TCP transport's settings, for {@link Kind#TCP}
 */
record NativeSettings(Kind kind, String cluster, String self, List<String> peers, LamportCore.Variant variant,
    Duration peerTimeout, String namespace, TcpTransportConfig tcp) {

  enum Kind { LOCAL, MEMORY, TCP }

  static final Duration DEFAULT_PEER_TIMEOUT = Duration.ofSeconds(10);

  /** Parameters of every native URL. */
  static final Set<String> COMMON = Set.of("algorithm", "peerTimeout", "namespace");

  /** Extra parameters of {@code lock:native:mem/<cluster>}. */
  static final Set<String> MEMORY = Set.of("node", "peers");

  static NativeSettings fromUrl(LockUrl url, Properties info) {
    String namespace = LeaseSettings.namespace(url);
    Duration peerTimeout = url.duration("peerTimeout", DEFAULT_PEER_TIMEOUT);
    if (peerTimeout.isZero()) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'peerTimeout' must be positive");
    }
    LamportCore.Variant variant = url.enumValue("algorithm", LamportCore.Variant.class,
        LamportCore.Variant.LAMPORT);
    if (url.isHierarchical()) {
      Set<String> accepted = new HashSet<>(COMMON);
      accepted.addAll(TcpTransportConfig.PARAMETERS);
      url.requireKnownParameters(accepted);
      TcpTransportConfig tcp = TcpTransportConfig.fromUrl(url, info);
      checkSize(url, tcp.peers().size());
      if (tcp.self().endsWith(":0") && !tcp.peers().isEmpty()) {
        // a peer's id is where its peers dial it: an ephemeral port is known to nobody else, and the id
        // would change at every restart, so the cluster could never agree on its members
        throw new InvalidLockUrlException("lock URL " + url + ": port 0 (an ephemeral port) cannot be used with "
            + "'peers': this node's id " + tcp.self() + " must be the address its peers dial; give the real "
            + "listen port, as in lock:native://127.0.0.1:7701?peers=127.0.0.1:7702,127.0.0.1:7703");
      }
      return new NativeSettings(Kind.TCP, "", tcp.self(), tcp.peers(), variant, peerTimeout, namespace, tcp);
    }
    String opaque = url.opaque();
    if (opaque.equals("local")) {
      url.requireKnownParameters(COMMON);
      return new NativeSettings(Kind.LOCAL, "local", "local", List.of(), variant, peerTimeout, namespace, null);
    }
    if (opaque.startsWith("mem/") && opaque.length() > 4) {
      Set<String> accepted = new HashSet<>(COMMON);
      accepted.addAll(MEMORY);
      url.requireKnownParameters(accepted);
      String cluster = opaque.substring(4);
      String self = url.parameter("node").map(String::trim).filter(s -> !s.isEmpty()).orElseThrow(
          () -> new InvalidLockUrlException("lock URL " + url + ": parameter 'node' (this node's id in cluster '"
              + cluster + "') is required, as in lock:native:mem/" + cluster + "?node=a&peers=b,c"));
      Set<String> peers = new LinkedHashSet<>();
      for (String p : url.string("peers", "").split(",", -1)) {
        String id = p.trim();
        if (id.isEmpty()) {
          continue;
        }
        if (id.equals(self)) {
          throw new InvalidLockUrlException("lock URL " + url + ": parameter 'peers' lists this node ('" + self
              + "') itself");
        }
        if (!peers.add(id)) {
          throw new InvalidLockUrlException("lock URL " + url + ": parameter 'peers' lists '" + id + "' twice");
        }
      }
      checkSize(url, peers.size());
      return new NativeSettings(Kind.MEMORY, cluster, self, List.copyOf(peers), variant, peerTimeout, namespace,
          null);
    }
    throw new InvalidLockUrlException("lock URL " + url + ": expected lock:native:local, lock:native:mem/<cluster>"
        + "?node=<id>&peers=<id>,<id> or lock:native://host:port?peers=host:port,...&secret=...");
  }

  private static void checkSize(LockUrl url, int peers) {
    if (peers + 1 > LamportCore.MAX_NODES) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'peers': at most "
          + (LamportCore.MAX_NODES - 1) + " peers (fencing tokens hold a 10-bit node index)");
    }
  }

  /** The key under which nodes are shared within this JVM. */
  String nodeKey() {
    return switch (kind) {
      case LOCAL -> "local";
      case MEMORY -> "mem/" + cluster + "/" + self;
      case TCP -> "tcp/" + self;
    };
  }

  /**
   * The lock name the core sees: the namespace's length, a colon, the namespace, a slash, then the name
   * ({@code 1:a/b/c} for namespace {@code a} and name {@code b/c}; {@code 0:/a/b/c} for no namespace and
   * {@code a/b/c}). The length prefix makes it injective: the namespace may itself contain {@code /} or
   * {@code :}, and namespace {@code a} with name {@code b/c}, namespace {@code a/b} with {@code c} and no
   * namespace with {@code a/b/c} stay three different locks. At most 517 characters, the longest name
   * the Lamport codec carries.
   */
  String qualify(String name) {
    return namespace.length() + ":" + namespace + "/" + name;
  }
}
