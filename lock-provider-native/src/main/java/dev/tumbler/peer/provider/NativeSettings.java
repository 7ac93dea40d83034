package dev.tumbler.peer.provider;

import dev.tumbler.lock.Capability;
import dev.tumbler.peer.buckets.BucketsSettings;
import dev.tumbler.peer.composite.Semaphores;
import dev.tumbler.peer.election.ElectionParameters;
import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.AlgorithmSettings;
import dev.tumbler.peer.algorithm.Algorithms;
import dev.tumbler.peer.transport.tcp.TcpClientConfig;
import dev.tumbler.peer.transport.tcp.TcpTransportConfig;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;

/**
 * What a {@code lock:native:} URL asks for: where the node runs (in this JVM alone, in an in-memory
 * cluster, or as a TCP peer), the algorithm and its settings, the peer timeout and the namespace.
 * Immutable.
 *
 * @param kind where the node runs
 * @param cluster the in-memory cluster's name ({@code local} for {@code lock:native:local})
 * @param self this node's id
 * @param peers the other members' ids
 * @param algorithm the lock algorithm
 * @param algorithmSettings its own settings
 * @param peerTimeout how long a request waits with a peer unreachable before it fails (Lamport, Ricart–Agrawala), or
 *     with fewer members connected than a quorum needs (the fault-tolerant algorithms)
 * @param lease the grants' term and renewal mode when the algorithm's grants have a term
 *     ({@code leaseTime}, {@code renew}); unbounded otherwise. Its namespace is the service's
 * @param tcp the TCP transport's settings, for {@link Kind#TCP}
 * @param bucketSize the permits of a semaphore bucket ({@code bucketSize}); 0 for one bucket per name as large as
 *     its handles' {@code maxPermits}
 * @param election the node's election ({@code priority}, {@code electionDelay}, {@code leaderLease}): its lock
 *     algorithm's leaders, or its semaphore server when the lock algorithm elects none
 */
record NativeSettings(Kind kind, String cluster, String self, List<String> peers, Algorithm<?> algorithm,
    AlgorithmSettings algorithmSettings, Duration peerTimeout, LeaseSettings lease, TcpTransportConfig tcp,
    int bucketSize, ElectionParameters election, TcpClientConfig client) {

  /**
   * Where the node runs: alone in this JVM, in an in-memory cluster, as a TCP member, or as a thin client of a TCP
   * cluster (CLIENTS.md: not a member; a session with one member, which runs its requests).
   */
  enum Kind { LOCAL, MEMORY, TCP, CLIENT }

  /** A service of every kind but {@link Kind#CLIENT}. */
  NativeSettings(Kind kind, String cluster, String self, List<String> peers, Algorithm<?> algorithm,
      AlgorithmSettings algorithmSettings, Duration peerTimeout, LeaseSettings lease, TcpTransportConfig tcp,
      int bucketSize, ElectionParameters election) {
    this(kind, cluster, self, peers, algorithm, algorithmSettings, peerTimeout, lease, tcp, bucketSize, election,
        null);
  }

  /** Distinguishes the thin clients opened in this JVM: each service on a client URL is a client of its own. */
  private static final java.util.concurrent.atomic.AtomicLong CLIENTS = new java.util.concurrent.atomic.AtomicLong();

  static final Duration DEFAULT_PEER_TIMEOUT = Duration.ofSeconds(10);

  /**
   * Parameters of every native URL: every node serves semaphores ({@code bucketSize}) on a server the nodes elect
   * ({@code priority}, {@code electionDelay}, {@code leaderLease}).
   */
  static final Set<String> COMMON = Set.of("algorithm", "peerTimeout", "namespace", "bucketSize", "priority",
      "electionDelay", "leaderLease");

  /** Extra parameters of {@code lock:native:mem/<cluster>}. */
  static final Set<String> MEMORY = Set.of("node", "peers");

  /** Extra parameters of a URL whose algorithm's grants have a term ({@link Algorithm#leased()}). */
  static final Set<String> LEASED = Set.of("leaseTime", "renew");

  static NativeSettings fromUrl(LockUrl url, Properties info) {
    Duration peerTimeout = url.duration("peerTimeout", DEFAULT_PEER_TIMEOUT);
    if (peerTimeout.isZero()) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'peerTimeout' must be positive");
    }
    Algorithm<?> algorithm = Algorithms.byName(url.oneOf("algorithm", Algorithms.names(),
        Algorithms.defaultAlgorithm().name())).orElseThrow();
    AlgorithmSettings algorithmSettings = algorithm.settings(url);
    int bucketSize = BucketsSettings.bucketSize(url);
    ElectionParameters election = ElectionParameters.from(url);
    Set<String> common = new HashSet<>(COMMON);
    common.addAll(algorithm.parameters());
    if (algorithm.leased()) {
      common.addAll(LEASED);
    } else {
      for (String p : LEASED) {
        if (url.parameter(p).isPresent()) {
          throw new InvalidLockUrlException("lock URL " + url + ": parameter '" + p + "' does not apply to algorithm "
              + algorithm.name() + ": its grants hold until released; leased algorithms: " + leasedNames());
        }
      }
    }
    LeaseSettings lease = algorithm.leased() ? LeaseSettings.fromUrl(url)
        : LeaseSettings.unbounded(LeaseSettings.namespace(url));
    if (url.isHierarchical() && isClient(url, info)) {
      return client(url, info, algorithm, algorithmSettings, peerTimeout, lease, bucketSize, election, common);
    }
    if (url.isHierarchical()) {
      if (url.hosts().size() > 1) {
        throw new InvalidLockUrlException("lock URL " + url + ": several hosts name the members a thin client "
            + "connects to, and a client gives 'clientSecret' (the clients' credential), neither 'secret' (the "
            + "members' own) nor 'peers'; a member names one host, its own listen address, and its 'peers'");
      }
      Set<String> accepted = new HashSet<>(common);
      accepted.addAll(TcpTransportConfig.PARAMETERS);
      url.requireKnownParameters(accepted);
      TcpTransportConfig tcp = TcpTransportConfig.fromUrl(url, info);
      if (tcp.clientListen().isPresent() && !algorithm.leased()) {
        // CLIENTS.md D3: such a member refuses clients; refused here, before the node waits a term it has not got
        throw new InvalidLockUrlException("lock URL " + url + ": parameter 'clientListen': " + notForClients(algorithm));
      }
      checkSize(url, algorithm, tcp.peers().size());
      if (tcp.self().endsWith(":0") && !tcp.peers().isEmpty()) {
        // a peer's id is where its peers dial it: an ephemeral port is known to nobody else, and the id
        // would change at every restart, so the cluster could never agree on its members
        throw new InvalidLockUrlException("lock URL " + url + ": port 0 (an ephemeral port) cannot be used with "
            + "'peers': this node's id " + tcp.self() + " must be the address its peers dial; give the real "
            + "listen port, as in lock:native://127.0.0.1:7701?peers=127.0.0.1:7702,127.0.0.1:7703");
      }
      return new NativeSettings(Kind.TCP, "", tcp.self(), tcp.peers(), algorithm, algorithmSettings, peerTimeout,
          lease, tcp, bucketSize, election);
    }
    String opaque = url.opaque();
    if (opaque.equals("local")) {
      url.requireKnownParameters(common);
      return new NativeSettings(Kind.LOCAL, "local", "local", List.of(), algorithm, algorithmSettings, peerTimeout,
          lease, null, bucketSize, election);
    }
    if (opaque.startsWith("mem/") && opaque.length() > 4) {
      Set<String> accepted = new HashSet<>(common);
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
      checkSize(url, algorithm, peers.size());
      return new NativeSettings(Kind.MEMORY, cluster, self, List.copyOf(peers), algorithm, algorithmSettings,
          peerTimeout, lease, null, bucketSize, election);
    }
    throw new InvalidLockUrlException("lock URL " + url + ": expected lock:native:local, lock:native:mem/<cluster>"
        + "?node=<id>&peers=<id>,<id> or lock:native://host:port?peers=host:port,...&secret=...");
  }

  /**
   * Whether a hierarchical URL opens a thin client (CLIENTS.md D8): it names no {@code peers}, gives no members'
   * {@code secret}, and gives a {@code clientSecret} (in the URL or in {@code info}). A member that takes clients
   * gives both secrets and its {@code clientListen}.
   */
  private static boolean isClient(LockUrl url, Properties info) {
    boolean secret = url.parameter("secret").isPresent() || info != null && info.get("secret") != null;
    boolean clientSecret = url.parameter("clientSecret").isPresent() || info != null
        && info.get("clientSecret") != null;
    return clientSecret && !secret && url.parameter("peers").isEmpty() && url.parameter("clientListen").isEmpty();
  }

  private static NativeSettings client(LockUrl url, Properties info, Algorithm<?> algorithm,
      AlgorithmSettings algorithmSettings, Duration peerTimeout, LeaseSettings lease, int bucketSize,
      ElectionParameters election, Set<String> common) {
    Set<String> accepted = new HashSet<>(common);
    accepted.addAll(TcpClientConfig.PARAMETERS);
    url.requireKnownParameters(accepted);
    if (!algorithm.leased()) {
      throw new InvalidLockUrlException("lock URL " + url + ": " + notForClients(algorithm));
    }
    TcpClientConfig client = TcpClientConfig.fromUrl(url, info);
    return new NativeSettings(Kind.CLIENT, "", "client#" + CLIENTS.incrementAndGet(), client.members(), algorithm,
        algorithmSettings, peerTimeout, lease, null, bucketSize, election, client);
  }

  /** Why a member or a client of {@code algorithm}, whose grants hold until released, cannot have thin clients. */
  private static String notForClients(Algorithm<?> algorithm) {
    return "algorithm " + algorithm.name() + " cannot serve thin clients: its grants hold until released, so a client "
        + "that died would hold its locks for ever and one cut off could not know it lost them; members take clients "
        + "with " + leasedNames();
  }

  private static String leasedNames() {
    List<String> names = new java.util.ArrayList<>();
    for (Algorithm<?> a : Algorithms.all()) {
      if (a.leased()) {
        names.add(a.name());
      }
    }
    return names.isEmpty() ? "none yet" : String.join(", ", names);
  }

  private static void checkSize(LockUrl url, Algorithm<?> algorithm, int peers) {
    if (peers + 1 > algorithm.maxNodes()) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'peers': at most "
          + (algorithm.maxNodes() - 1) + " peers with algorithm " + algorithm.name() + " ("
          + algorithm.maxNodesReason() + ")");
    }
  }

  /**
   * Why a node running with {@code this} cannot serve a service that asks for {@code other}, or empty
   * when it can: every setting that shapes the node must be the same.
   */
  java.util.Optional<String> mismatch(NativeSettings other) {
    if (algorithm != other.algorithm) {
      return java.util.Optional.of("algorithm " + algorithm.name() + ", not " + other.algorithm.name());
    }
    // peers are distinct (checked when the URL is read), so the same members in any order are equal sets
    if (!Set.copyOf(peers).equals(Set.copyOf(other.peers))) {
      return java.util.Optional.of("peers " + peers + ", not " + other.peers);
    }
    if (!algorithmSettings.equals(other.algorithmSettings)) {
      return java.util.Optional.of("'" + algorithmSettings.describe() + "', not '"
          + other.algorithmSettings.describe() + "'");
    }
    if (!java.util.Objects.equals(lease.leaseTime(), other.lease.leaseTime())) {
      return java.util.Optional.of("leaseTime " + lease.leaseTime().toMillis() + "ms, not "
          + other.lease.leaseTime().toMillis() + "ms");
    }
    if (!election.equals(other.election)) {
      return java.util.Optional.of("'" + election.describe() + "', not '" + other.election.describe() + "'");
    }
    if (bucketSize != other.bucketSize) {
      return java.util.Optional.of("bucketSize " + bucketSize + ", not " + other.bucketSize);
    }
    if (!peerTimeout.equals(other.peerTimeout)) {
      return java.util.Optional.of("peerTimeout " + peerTimeout.toMillis() + "ms, not "
          + other.peerTimeout.toMillis() + "ms");
    }
    return java.util.Optional.empty();
  }

  /**
   * The term and renewal of semaphore permits: the service's {@code leaseTime} and {@code renew} when its lock
   * algorithm's grants have a term; else {@link LeaseSettings#DEFAULT_LEASE_TIME}, renewed in the background.
   */
  LeaseSettings semaphoreLease() {
    return lease.expires() ? lease : new LeaseSettings(LeaseSettings.DEFAULT_LEASE_TIME, LeaseSettings.DEFAULT_SAFETY,
        LeaseSettings.Renew.AUTO, lease.namespace());
  }

  /**
   * How the node serves semaphores beside its lock algorithm: this bucket size, the semaphores' term, and the URL's
   * election for a lock algorithm that elects no leaders of its own.
   */
  Semaphores semaphores() {
    return new Semaphores(bucketSize, semaphoreLease().leaseTime().toNanos(), election);
  }

  /** Whether the service is a thin client rather than a member. */
  boolean thinClient() {
    return kind == Kind.CLIENT;
  }

  /** Whether this member takes thin clients (a TCP member with a {@code clientListen}). */
  boolean takesClients() {
    return kind == Kind.TCP && tcp.clientListen().isPresent();
  }

  /** What a service keeps: its lock algorithm's capabilities, and semaphores, which every node serves. */
  Set<Capability> capabilities() {
    Set<Capability> all = java.util.EnumSet.noneOf(Capability.class);
    all.addAll(algorithm.capabilities());
    all.add(Capability.SEMAPHORE);
    return Set.copyOf(all);
  }

  /** The key under which nodes are shared within this JVM. */
  String nodeKey() {
    return switch (kind) {
      case LOCAL -> "local";
      case MEMORY -> "mem/" + cluster + "/" + self;
      case TCP -> "tcp/" + self;
      case CLIENT -> "client/" + self; // one client per service: self is unique in this JVM
    };
  }

  /** The prefix of every lock name, possibly empty. */
  String namespace() {
    return lease.namespace();
  }

  /** The grants' term in nanoseconds, for the core; 0 when grants hold until released. */
  long leaseNanos() {
    return lease.expires() ? lease.leaseTime().toNanos() : 0;
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
    return namespace().length() + ":" + namespace() + "/" + name;
  }
}
