package dev.tumbler.peer.provider;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.FaultInjector;
import dev.tumbler.lock.tck.TckTarget;
import dev.tumbler.peer.node.NodeStats;
import dev.tumbler.peer.transport.InMemoryNetwork;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

/** TCK targets for the native provider: the local node, and 3-node clusters in memory and over TCP. */
final class NativeTargets {

  /** Lamport cannot free a cut-off holder's lock, nor grant anyone while a peer is cut off: by design. */
  static final Map<String, String> NOT_FAULT_TOLERANT = Map.of(
      "Leases.lockFreedAfterHolderCutOff",
      "Lamport has no lease expiry (LEASE_EXPIRY not declared): a cut-off holder keeps its lock until it "
          + "releases it; NativeFaultTest checks that nobody else is granted meanwhile",
      "Faults.cutOffAndHeal",
      "Lamport needs every peer up (FAULT_TOLERANT not declared): while one node is cut off, acquires on every "
          + "node fail with ServiceUnavailableException; NativeFaultTest checks exactly that, and the heal");

  static final String SECRET = "tck-shared-secret-0123456789";

  private NativeTargets() {}

  /** {@code lock:native:local}: every open() is a new session on the one local node. */
  static TckTarget local() {
    return new TckTarget() {
      @Override
      public LockService open() {
        return LockProviders.connect("lock:native:local");
      }

      @Override
      public Duration leaseTime() {
        return Duration.ofSeconds(2);
      }

      @Override
      public Optional<String> url() {
        return Optional.of("lock:native:local");
      }
    };
  }

  /** A cluster whose nodes are kept up by one anchor service each; open() goes round the nodes. */
  static final class Cluster implements TckTarget, FaultInjector {
    final List<String> urls;
    final List<String> ids;
    final InMemoryNetwork network; // null for TCP
    private final List<LockService> anchors = new ArrayList<>();
    private final AtomicInteger next = new AtomicInteger();

    /** @param memoryCluster the in-memory cluster's name, or null for TCP */
    Cluster(List<String> ids, List<String> urls, String memoryCluster) {
      this.ids = ids;
      this.urls = urls;
      for (String url : urls) {
        anchors.add(LockProviders.connect(url));
      }
      // the anchors started the nodes, which made the network: this is a handle on it
      this.network = memoryCluster == null ? null : InMemoryNetwork.named(memoryCluster, Set.copyOf(ids));
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
      return Duration.ofSeconds(2);
    }

    @Override
    public Optional<String> url() {
      return Optional.of(urls.get(0));
    }

    @Override
    public Optional<FaultInjector> faults() {
      return network == null ? Optional.empty() : Optional.of(this);
    }

    @Override
    public Set<Fault> supported() {
      return Set.of(Fault.CUT_OFF_CLIENT);
    }

    /** Cuts the client's whole node off from the other nodes. */
    @Override
    public void cutOff(LockService client) {
      network.isolate(client.unwrap(NodeStats.class).nodeId());
    }

    @Override
    public void heal(LockService client) {
      network.rejoin(client.unwrap(NodeStats.class).nodeId());
    }

    /** Closes node {@code i}'s anchor, which stops the node if nothing else uses it. */
    void stopNode(int i) {
      anchors.get(i).close();
    }

    /** Starts node {@code i} again (a fresh node, empty state). */
    void startNode(int i) {
      anchors.set(i, LockProviders.connect(urls.get(i)));
    }

    @Override
    public void close() {
      for (LockService s : anchors) {
        s.close();
      }
    }
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
          + algorithm + "&peerTimeout=5s");
    }
    return new Cluster(ids, urls, cluster);
  }

  /** Three peers on loopback over TCP. */
  static Cluster tcp(String algorithm) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      ids.add("127.0.0.1:" + freePort());
    }
    List<String> urls = new ArrayList<>();
    for (String id : ids) {
      List<String> peers = new ArrayList<>(ids);
      peers.remove(id);
      urls.add("lock:native://" + id + "?peers=" + String.join(",", peers) + "&algorithm=" + algorithm
          + "&peerTimeout=5s&secret=" + SECRET);
    }
    return new Cluster(ids, urls, null);
  }

  static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
