package dev.tumbler.peer.provider;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.composite.Hosting;
import dev.tumbler.peer.node.PeerNode;
import dev.tumbler.peer.transport.InMemoryNetwork;
import dev.tumbler.peer.transport.Transport;
import dev.tumbler.peer.transport.tcp.TcpTransport;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * The nodes running in this JVM, shared by every service opened on the same node URL and closed when the
 * last of those services closes. Thread safe.
 */
final class NodeRegistry {

  private static final Map<String, Shared> NODES = new HashMap<>();

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
      }
    }
    if (close) {
      s.node.close();
    }
  }

  private static PeerNode<?> start(NativeSettings settings, String redactedUrl) {
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
    // the transport's id, not the configured one: a TCP node on port 0 (allowed only without peers) is
    // known by the port it bound
    CoreContext context = new CoreContext(transport.self(), settings.peers(), settings.peerTimeout().toNanos(),
        settings.leaseNanos(), micros, new SplittableRandom(), settings.algorithmSettings());
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
