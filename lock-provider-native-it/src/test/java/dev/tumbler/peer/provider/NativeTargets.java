package dev.tumbler.peer.provider;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.FaultInjector;
import dev.tumbler.lock.tck.LoopbackPorts;
import dev.tumbler.lock.tck.TckTarget;
import dev.tumbler.lock.tck.TcpProxy;
import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.Algorithms;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.node.NodeStats;
import dev.tumbler.peer.transport.InMemoryNetwork;
import dev.tumbler.peer.transport.Transport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * TCK targets for the native provider: the local node, and 3-node clusters in memory and over TCP, both with
 * a fault injector that cuts a node off.
 */
final class NativeTargets {

  static final String SECRET = "tck-shared-secret-0123456789";

  private NativeTargets() {}

  /** {@code lock:native:local}: every open() is a new session on the one local node. */
  static TckTarget local() {
    return local(Algorithms.defaultAlgorithm().name());
  }

  /**
   * {@code lock:native:local} running {@code algorithm}: every open() is a new session on the one local
   * node, which takes no fault (it has no peer to lose).
   */
  static TckTarget local(String algorithm) {
    Algorithm<?> a = algorithm(algorithm);
    String url = "lock:native:local" + (a == Algorithms.defaultAlgorithm() ? ""
        : "?algorithm=" + a.name() + parameters(a));
    return new TckTarget() {
      @Override
      public LockService open() {
        return LockProviders.connect(url);
      }

      @Override
      public Duration leaseTime() {
        return a.leased() ? LEASE_TIME : Duration.ofSeconds(2);
      }

      @Override
      public Optional<String> url() {
        return Optional.of(url);
      }

      /** A leased algorithm's renewals can be paused (the SPI's renewer): its leases then expire. */
      @Override
      public Optional<FaultInjector> faults() {
        return a.leased() ? Optional.of(() -> Set.of(FaultInjector.Fault.PAUSE_RENEWALS)) : Optional.empty();
      }
    };
  }

  /** How a TCP cluster cuts a node off. */
  enum Cut {
    /** The node's links stay open but every byte is dropped (a partition): found by the idle timeout. */
    PARTITION,
    /** The node's connections are reset and new ones refused (a crashed link): found at once. */
    RESET
  }

  /**
   * A cluster whose nodes are kept up by one anchor service each; open() goes round the nodes.
   *
   * <p>Faults: the in-memory cluster cuts a node's links in its {@link InMemoryNetwork}. The TCP cluster has
   * one {@link TcpProxy} on every directed link — node {@code i} dials peer {@code j} at the proxy
   * {@code i→j} (its {@code dialAddresses}), while ids stay the listen addresses — and cuts a node off by
   * blackholing (or resetting) the proxies of every link to and from it: real sockets, no switch inside the
   * transport.
   */
  static final class Cluster implements TckTarget, FaultInjector {
    final List<String> urls;
    final List<String> ids;
    final InMemoryNetwork network; // null for TCP
    /** TCP: the proxy node {@code i} dials node {@code j} through, under key {@code i + ">" + j}. */
    private final Map<String, TcpProxy> proxies;
    private final List<LockService> anchors = new ArrayList<>();
    private final AtomicInteger next = new AtomicInteger();
    private final Set<Fault> supported;
    /** Whether the algorithm elects leaders, whose view a started or repaired cluster is waited for. */
    private final boolean elected;
    private final Duration leaseTime;
    /** The node a minority fault stopped or cut off, or -1. */
    private int minority = -1;
    volatile Cut cut = Cut.PARTITION;

    /**
     * @param algorithm what the nodes run: a fault-tolerant one also takes minority faults, a leased one
     *     paused renewals
     * @param memoryCluster the in-memory cluster's name, or null for TCP
     */
    Cluster(Algorithm<?> algorithm, List<String> ids, List<String> urls, String memoryCluster,
        Map<String, TcpProxy> proxies) {
      this.ids = ids;
      this.urls = urls;
      this.proxies = proxies;
      EnumSet<Fault> faults = EnumSet.of(Fault.CUT_OFF_CLIENT, Fault.CRASH_BACKEND);
      if (algorithm.capabilities().contains(Capability.FAULT_TOLERANT)) {
        faults.add(Fault.CRASH_MINORITY);
        faults.add(Fault.PARTITION_MINORITY);
      }
      if (algorithm.leased()) {
        faults.add(Fault.PAUSE_RENEWALS);
      }
      this.supported = Set.copyOf(faults);
      this.elected = algorithm.elected();
      this.leaseTime = algorithm.leased() ? LEASE_TIME : Duration.ofSeconds(2);
      // in parallel: a member that takes thin clients joins a lease term after it starts
      List<java.util.concurrent.CompletableFuture<LockService>> starting = new ArrayList<>();
      for (String url : urls) {
        starting.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> LockProviders.connect(url),
            java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()));
      }
      RuntimeException failed = null;
      for (java.util.concurrent.CompletableFuture<LockService> f : starting) {
        try {
          anchors.add(f.join());
        } catch (java.util.concurrent.CompletionException e) {
          failed = failed != null ? failed : e.getCause() instanceof RuntimeException r ? r : e;
        }
      }
      if (failed != null) {
        close();
        throw failed;
      }
      // the anchors started the nodes, which made the network: this is a handle on it
      this.network = memoryCluster == null ? null : InMemoryNetwork.named(memoryCluster, Set.copyOf(ids));
      awaitView();
    }

    /**
     * Waits until every node has the same election view, with leaders (at most {@link #LINK_WAIT}): a cluster that
     * has just started or been repaired is handed to a test once it can serve, not while its election still runs (a
     * request waits for the election, and a test's timed wait could end first). Algorithms without an election have
     * no view and are not waited for.
     */
    void awaitView() {
      if (!elected) {
        return;
      }
      long deadline = System.nanoTime() + LINK_WAIT.toNanos();
      while (true) {
        List<Optional<Observation.View>> views = new ArrayList<>();
        for (LockService a : anchors) {
          views.add(NativeNodes.of(a).view());
        }
        Observation.View first = views.get(0).orElse(null);
        if (first != null && !first.leaders().isEmpty() && views.stream().allMatch(v -> v.isPresent()
            && v.get().term() == first.term() && v.get().leaders().equals(first.leaders()))) {
          return;
        }
        if (System.nanoTime() > deadline) {
          throw new AssertionError("the nodes " + ids + " did not agree on a view with leaders within " + LINK_WAIT
              + ": " + views);
        }
        sleep(20);
      }
    }

    @Override
    public LockService open() {
      return LockProviders.connect(urls.get(Math.floorMod(next.getAndIncrement(), urls.size())));
    }

    /** A service on node {@code i}. */
    LockService open(int i) {
      return LockProviders.connect(urls.get(i));
    }

    @Override
    public Duration leaseTime() {
      return leaseTime;
    }

    @Override
    public Optional<String> url() {
      return Optional.of(urls.get(0));
    }

    @Override
    public Optional<FaultInjector> faults() {
      return Optional.of(this);
    }

    @Override
    public Set<Fault> supported() {
      return supported;
    }

    /** Stops a node no spared client runs on, at once and whatever uses it: a crash. */
    @Override
    public synchronized void crashMinority(Collection<LockService> spare) {
      minority = unspared(spare);
      crash(minority);
    }

    /** Stops node {@code k} at once, whatever uses it (a crash); returns once the others see it gone. */
    void crash(int k) {
      if (network != null) {
        // an in-memory transport that closes tells nobody: the network cuts its links, as a crash would
        network.isolate(ids.get(k));
      }
      NativeNodes.of(anchors.get(k)).close();
      awaitSurvivors(k);
    }

    /** Waits until every other node sees its link to the stopped node {@code k} down. */
    private void awaitSurvivors(int k) {
      long deadline = System.nanoTime() + LINK_WAIT.toNanos();
      for (int j = 0; j < ids.size(); j++) {
        Transport tj = j == k ? null : NativeNodes.of(anchors.get(j)).transport();
        while (tj != null && tj.isUp(ids.get(k))) {
          if (System.nanoTime() > deadline) {
            throw new AssertionError(ids.get(j) + " did not see the stopped " + ids.get(k) + " go within " + LINK_WAIT);
          }
          sleep(20);
        }
      }
    }

    /** Starts the crashed node again: a new incarnation with empty state, on its address. */
    @Override
    public synchronized void restartMinority() {
      restart(minority);
      minority = -1;
    }

    /** Starts the crashed node {@code k} again; returns once its links are up. */
    void restart(int k) {
      anchors.get(k).close();
      if (network != null) {
        network.rejoin(ids.get(k));
      }
      startNode(k);
      awaitLinks(k, true);
      awaitView();
    }

    @Override
    public synchronized void partitionMinority(Collection<LockService> spare) {
      minority = unspared(spare);
      cutOff(minority);
    }

    @Override
    public synchronized void healMinority() {
      heal(minority);
      minority = -1;
      awaitView();
    }

    /** The last node that no client of {@code spare} runs on. */
    private int unspared(Collection<LockService> spare) {
      Set<String> used = new HashSet<>();
      for (LockService s : spare) {
        used.add(s.unwrap(NodeStats.class).nodeId());
      }
      for (int k = ids.size() - 1; k >= 0; k--) {
        if (!used.contains(ids.get(k))) {
          return k;
        }
      }
      throw new IllegalStateException("every node runs a spared client: " + used);
    }

    /**
     * A peer-to-peer provider has no backend apart from the peers: its "crash" cuts every node off from every
     * other, so that no node can reach the peers its algorithm needs.
     */
    @Override
    public void crashBackend() {
      for (int k = 0; k < ids.size(); k++) {
        cutOff(k);
      }
    }

    @Override
    public void restartBackend() {
      for (int k = 0; k < ids.size(); k++) {
        heal(k);
      }
      awaitView();
    }

    /** Cuts the client's whole node off from the other nodes; returns once every node has seen it. */
    @Override
    public void cutOff(LockService client) {
      cutOff(ids.indexOf(client.unwrap(NodeStats.class).nodeId()));
    }

    @Override
    public void heal(LockService client) {
      heal(ids.indexOf(client.unwrap(NodeStats.class).nodeId()));
      awaitView();
    }

    /**
     * Cuts node {@code k} off from every other node, both directions. Returns once the transports on both
     * ends of each of its links report the link down (for a {@link Cut#PARTITION}, after the idle timeout),
     * so that the fault is in effect, as {@link FaultInjector} asks.
     */
    void cutOff(int k) {
      if (network != null) {
        // the in-memory transports tell their nodes on threads of their own: wait until they did, or a request
        // made right after the fault may reach a node that has not heard of it
        network.isolate(ids.get(k));
        awaitLinks(k, false);
        return;
      }
      for (TcpProxy p : linksOf(k)) {
        if (cut == Cut.RESET) {
          p.cut();
        } else {
          p.blackhole();
        }
      }
      awaitLinks(k, false);
    }

    /** Heals every link of node {@code k}; returns once both ends of each report it up again. */
    void heal(int k) {
      if (network != null) {
        network.rejoin(ids.get(k));
        awaitLinks(k, true);
        return;
      }
      for (TcpProxy p : linksOf(k)) {
        p.heal();
      }
      awaitLinks(k, true);
    }

    private List<TcpProxy> linksOf(int k) {
      List<TcpProxy> l = new ArrayList<>();
      for (int j = 0; j < ids.size(); j++) {
        if (j != k) {
          l.add(proxies.get(k + ">" + j));
          l.add(proxies.get(j + ">" + k));
        }
      }
      return l;
    }

    private void awaitLinks(int k, boolean up) {
      long deadline = System.nanoTime() + LINK_WAIT.toNanos();
      for (int j = 0; j < ids.size(); j++) {
        if (j == k) {
          continue;
        }
        Transport tk = NativeNodes.of(anchors.get(k)).transport();
        Transport tj = NativeNodes.of(anchors.get(j)).transport();
        while (tk.isUp(ids.get(j)) != up || tj.isUp(ids.get(k)) != up) {
          if (System.nanoTime() > deadline) {
            throw new AssertionError("the links between " + ids.get(k) + " and " + ids.get(j) + " did not go "
                + (up ? "up" : "down") + " within " + LINK_WAIT);
          }
          sleep(20);
        }
      }
    }

    /** Resets the connections node {@code i} dialled to node {@code j} (TCP only), once: {@code i} dials again. */
    void breakLink(int i, int j) {
      TcpProxy p = proxies.get(i + ">" + j);
      p.cut();
      p.heal();
    }

    /** Node {@code i}'s transport. */
    Transport transport(int i) {
      return NativeNodes.of(anchors.get(i)).transport();
    }

    /** Closes node {@code i}'s anchor, which stops the node if nothing else uses it. */
    void stopNode(int i) {
      anchors.get(i).close();
    }

    /** Starts node {@code i} again (a fresh node, empty state), on its address. */
    void startNode(int i) {
      anchors.set(i, LoopbackPorts.retryBind(LINK_WAIT, () -> LockProviders.connect(urls.get(i))));
    }

    @Override
    public void close() {
      for (LockService s : anchors) {
        s.close();
      }
      for (TcpProxy p : proxies.values()) {
        p.close();
      }
    }
  }

  /**
   * The term of a leased algorithm's grants in these clusters: 4 s. A holder keeps its lock through the loss of the
   * server only if the failover (a leader timeout of 450 ms, an election delay of 100 ms, a back-off, a vote, the new
   * server's first beat, the restatement and a renewal: about 700 ms on an idle machine) ends within the rest of its
   * window, which may be as short as {@code 3T/4 - T/3 = 5T/12}. At 2 s that was 830 ms, which a full run on a busy
   * two-core machine took away now and then (a lease holder told its grant expired through a minority partition); at
   * 3 s, 1.25 s, which CI's four test JVMs on two cores still took away once (a lease or buckets holder, in
   * {@code minorityPartitionAndHeal}); at 4 s it is 1.67 s.
   */
  static final Duration LEASE_TIME = Duration.ofSeconds(4);

  /** How long a fault injector waits for the nodes to see a cut or a heal. */
  static final Duration LINK_WAIT = Duration.ofSeconds(30);

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  /**
   * What a cluster's URLs add for {@code algorithm}: the lease term of a leased one, and elections quick
   * enough for tests (an election delay of 100 ms, a leader lease of 300 ms) for one with elected leaders.
   */
  private static String parameters(Algorithm<?> algorithm) {
    // every node elects: its lock algorithm's leaders, or the server of its semaphores
    return (algorithm.leased() ? "&leaseTime=" + LEASE_TIME.toMillis() + "ms" : "") + "&electionDelay=100ms&leaderLease=300ms";
  }

  private static Algorithm<?> algorithm(String name) {
    return Algorithms.byName(name).orElseThrow(() -> new IllegalArgumentException("no algorithm " + name));
  }

  /** Three nodes a, b, c of a fresh in-memory cluster. */
  static Cluster memory(String algorithm) {
    String cluster = "tck-" + UUID.randomUUID().toString().substring(0, 8);
    List<String> ids = List.of("a", "b", "c");
    List<String> urls = new ArrayList<>();
    for (String id : ids) {
      List<String> peers = new ArrayList<>(ids);
      peers.remove(id);
      urls.add("lock:native:mem/" + cluster + "?node=" + id + "&peers=" + String.join(",", peers) + "&algorithm="
          + algorithm + "&peerTimeout=5s" + parameters(algorithm(algorithm)));
    }
    return new Cluster(algorithm(algorithm), ids, urls, cluster, Map.of());
  }

  /** Three peers on loopback over TCP, each link through its own proxy. */
  static Cluster tcp(String algorithm) {
    return tcp(algorithm, Duration.ofSeconds(5));
  }

  /**
   * Three peers on loopback over TCP; node {@code i} dials node {@code j} through proxy {@code i→j}. A 2s
   * idle timeout finds a partition in about 2s; short backoffs reconnect soon after a heal.
   */
  static Cluster tcp(String algorithm, Duration peerTimeout) {
    return tcp(algorithm, peerTimeout, java.util.function.UnaryOperator.identity());
  }

  /** As above, each node's URL passed through {@code tweak} (in node order) to add parameters. */
  static Cluster tcp(String algorithm, Duration peerTimeout, java.util.function.UnaryOperator<String> tweak) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      ids.add("127.0.0.1:" + LoopbackPorts.freePort());
    }
    Map<String, TcpProxy> proxies = new LinkedHashMap<>();
    List<String> urls = new ArrayList<>();
    try {
      for (int i = 0; i < ids.size(); i++) {
        List<String> peers = new ArrayList<>(ids);
        peers.remove(ids.get(i));
        List<String> dial = new ArrayList<>();
        for (int j = 0; j < ids.size(); j++) {
          if (j != i) {
            TcpProxy p = TcpProxy.start("127.0.0.1", Integer.parseInt(ids.get(j).substring(ids.get(j)
                .lastIndexOf(':') + 1)));
            proxies.put(i + ">" + j, p);
            dial.add(ids.get(j) + "=" + p.address());
          }
        }
        urls.add(tweak.apply("lock:native://" + ids.get(i) + "?peers=" + String.join(",", peers) + "&algorithm="
            + algorithm + "&peerTimeout=" + peerTimeout.toMillis() + "ms&idleTimeout=2s&backoffMin=50ms"
            + "&backoffMax=500ms&dialAddresses=" + String.join(",", dial) + "&secret=" + SECRET
            + parameters(algorithm(algorithm))));
      }
    } catch (RuntimeException e) {
      proxies.values().forEach(TcpProxy::close);
      throw e;
    }
    return new Cluster(algorithm(algorithm), ids, urls, null, proxies);
  }
}
