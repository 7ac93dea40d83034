package dev.tumbler.peer.provider;

import dev.tumbler.lock.CredentialsRefusedException;
import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.client.ClientCore;
import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.composite.Hosting;
import dev.tumbler.peer.election.ElectionParameters;
import dev.tumbler.peer.runtime.PeerNode;
import dev.tumbler.peer.transport.InMemoryNetwork;
import dev.tumbler.peer.transport.Transport;
import dev.tumbler.peer.transport.tcp.TcpClientTransport;
import dev.tumbler.peer.transport.tcp.TcpTransport;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The nodes running in this JVM, shared by every service opened on the same node URL and closed when the
 * last of those services closes. Thread safe.
 */
final class NodeRegistry {

  private static final Logger LOG = LoggerFactory.getLogger(NodeRegistry.class);

  private static final Map<String, Shared> NODES = new HashMap<>();

  /**
   * The highest term a node of this JVM started above or reached (under {@link #NODES}): the elections of the next
   * node start above it ({@link CoreContext#termFloor()}). A node keeps nothing on disk and takes its first term from
   * the wall clock in 16-second units, so a node stopped and started again within those 16 s (a
   * {@code lock:native:local} service closed and opened again, a cluster of this JVM restarted) began a term it had
   * used, and its first tokens repeated earlier ones. Nodes started faster than one per 16 s run their terms ahead of
   * the wall clock by up to that many units, which a restart of the whole process must then outwait (README).
   */
  private static long highestTerm;

  /** A running node and the services using it. */
  static final class Shared {
    final String key;
    final NativeSettings settings;
    final PeerNode<?> node;
    int users;

    Shared(String key, NativeSettings settings, PeerNode<?> node) {
      this.key = key;
      this.settings = settings;
      this.node = node;
    }
  }

  private NodeRegistry() {}

  /** The node for {@code settings}, started if it is not running yet; each call must be matched by {@link #release}. */
  static Shared acquire(NativeSettings settings, String redactedUrl) {
    synchronized (NODES) {
      String key = settings.nodeKey();
      Shared s = NODES.get(key);
      if (s != null && s.node.isClosed()) {
        // closed under its services (a crash, in tests): a new service starts a new node, as after a restart
        NODES.remove(key);
        highestTerm = Math.max(highestTerm, s.node.highestTerm());
        s = null;
      }
      if (s != null) {
        java.util.Optional<String> mismatch = s.settings.mismatch(settings);
        if (mismatch.isPresent()) {
          throw new InvalidLockUrlException("lock URL " + redactedUrl + ": node " + settings.self()
              + " already runs in this JVM with " + mismatch.get() + "; a second service on it must ask for the"
              + " same algorithm, settings and peers");
        }
        s.users++;
        return s;
      }
      s = new Shared(key, settings, start(settings, redactedUrl));
      s.users = 1;
      NODES.put(key, s);
      return s;
    }
  }

  /** One service stopped using {@code s}; the last one closes the node. */
  static void release(Shared s) {
    boolean close;
    synchronized (NODES) {
      s.users--;
      close = s.users == 0;
      if (close) {
        NODES.remove(s.key, s);
        // now, not only once closed: a node started on this key while this one closes starts above its terms
        highestTerm = Math.max(highestTerm, s.node.highestTerm());
      }
    }
    if (close) {
      if (s.settings.thinClient()) {
        s.node.leave(); // Bye: its member ends the session now, rather than a term later
      }
      s.node.close();
      synchronized (NODES) {
        highestTerm = Math.max(highestTerm, s.node.highestTerm());
      }
    }
  }

  private static PeerNode<?> start(NativeSettings settings, String redactedUrl) {
    if (settings.thinClient()) {
      return startClient(settings, redactedUrl);
    }
    if (settings.takesClients()) {
      joinLater(settings);
    }
    Transport transport = switch (settings.kind()) {
      case LOCAL -> InMemoryNetwork.named("@local", Set.of("local")).transport("local");
      case MEMORY -> {
        Set<String> members = new LinkedHashSet<>(settings.peers());
        members.add(settings.self());
        try {
          yield InMemoryNetwork.named(settings.cluster(), members).transport(settings.self());
        } catch (IllegalArgumentException e) {
          throw new InvalidLockUrlException("lock URL " + redactedUrl + ": " + e.getMessage());
        }
      }
      case CLIENT -> throw new IllegalStateException("a thin client is not a member");
      case TCP -> {
        try {
          yield TcpTransport.open(settings.tcp());
        } catch (RuntimeException e) {
          throw new ServiceUnavailableException("native node " + settings.self() + " cannot listen: "
              + e.getMessage(), e);
        }
      }
    };
    long micros = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    long termFloor = highestTerm; // (under NODES: see acquire)
    highestTerm = Math.max(highestTerm, Math.max(ElectionParameters.initialTerm(micros), termFloor) + 1);
    // the transport's id, not the configured one: a TCP node on port 0 (allowed only without peers) is
    // known by the port it bound
    CoreContext context = new CoreContext(transport.self(), settings.peers(), settings.peerTimeout().toNanos(),
        settings.leaseNanos(), micros, new SplittableRandom(), settings.algorithmSettings(), termFloor);
    PeerNode<Envelope> node = new PeerNode<>(Hosting.core(settings.algorithm(), context, settings.semaphores()),
        Hosting.codec(settings.algorithm(), settings.semaphores()), transport, Ticker.system());
    try {
      node.start();
    } catch (RuntimeException e) {
      node.close();
      throw e;
    }
    if (settings.peers().isEmpty()) { // every node elects: its semaphore server, if not its lock algorithm's leaders
      awaitFirstView(node, settings.peerTimeout().toNanos());
    }
    return node;
  }

  /**
   * A member that takes thin clients joins its cluster a lease term after it starts (CLIENTS.md D11): if it is a
   * restart, the clients of its earlier life may still trust grants it made for them, for up to three quarters of a
   * term after it died, and its new incarnation's restatement would free those grants at once. A process cannot
   * tell a restart from a first start (a node keeps nothing on disk), so it always waits; meanwhile it has no link
   * and no listener, and its peers and clients see it down.
   */
  private static void joinLater(NativeSettings settings) {
    Duration wait = settings.lease().leaseTime();
    LOG.info("native node {} takes thin clients: it joins its cluster in {} ms, one lease term after it started, "
        + "so that no client of an earlier life of it still trusts a grant it made", settings.self(), wait.toMillis());
    try {
      Thread.sleep(wait);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServiceUnavailableException("native node " + settings.self() + " was interrupted while it waited "
          + wait.toMillis() + " ms to join its cluster", e);
    }
  }

  /**
   * A thin client (CLIENTS.md): a {@link ClientCore} behind the client transport, which dials every member's client
   * listener; the service runs on it as on a member's core.
   *
   * @throws CredentialsRefusedException if the members refuse its {@code clientSecret} (a configuration error: told
   *     at once, not after {@code peerTimeout} as if no member were up)
   */
  private static PeerNode<?> startClient(NativeSettings settings, String redactedUrl) {
    TcpClientTransport transport = TcpClientTransport.open(settings.client());
    ClientCore core = new ClientCore(transport.self(), List.copyOf(transport.peers()), settings.algorithm().name(),
        settings.leaseNanos(), settings.peerTimeout().toNanos(), new SplittableRandom());
    PeerNode<Envelope> node = new PeerNode<>(core, Hosting.clientCodec(), transport, Ticker.system());
    try {
      node.start();
    } catch (RuntimeException e) {
      node.close();
      throw e;
    }
    // like a JDBC connection, a client service is ready when it returns: linked to a member (at most peerTimeout;
    // with none reachable it returns anyway, and its requests wait or fail as they would a moment later)
    long end = System.nanoTime() + settings.peerTimeout().toNanos();
    while (!node.inspect(c -> ((ClientCore) c).linked()) && System.nanoTime() - end < 0) {
      Optional<String> refused = transport.credentialRefused();
      if (refused.isPresent()) {
        node.close();
        throw new CredentialsRefusedException("lock URL " + redactedUrl + ": the members refused this thin client's "
            + "credential: parameter 'clientSecret' is not the clientSecret the members were given (" + refused.get()
            + ")");
      }
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    return node;
  }

  /**
   * A node alone in its cluster elects itself at once, but not within the call that starts it: wait for that
   * view (at most {@code maxNanos}), so that the first request on a new {@code lock:native:local} node is not
   * refused for want of a leader. A cluster with peers is not waited for: they may not be up yet, and its
   * requests wait for a view themselves (an attempt fails at once, naming the unreachable leaders).
   */
  private static void awaitFirstView(PeerNode<?> node, long maxNanos) {
    long end = System.nanoTime() + maxNanos;
    while (node.view().map(v -> v.leaders().isEmpty() || v.activeUntil() == Long.MIN_VALUE).orElse(true)
        && System.nanoTime() - end < 0) {
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
