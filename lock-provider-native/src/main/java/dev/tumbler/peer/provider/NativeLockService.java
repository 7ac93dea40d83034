package dev.tumbler.peer.provider;

import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.ReadWriteLock;
import dev.tumbler.lock.ServiceInfo;
import dev.tumbler.lock.spi.AbstractLockService;
import dev.tumbler.lock.spi.LockElection;
import dev.tumbler.lock.spi.SimpleReadWriteLock;
import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.node.NodeStats;
import dev.tumbler.peer.node.PeerNode;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One client session on a native node. Several services may share a node (same node URL in one JVM);
 * each has its own session, and closing it releases its grants and ends its waits without touching the
 * others'. It keeps what its algorithm keeps ({@code Algorithm.capabilities()}): read/write locks and
 * elections only where the algorithm serves them. {@code unwrap(NodeStats.class)} gives the node's counters.
 * Thread safe.
 */
final class NativeLockService extends AbstractLockService {

  private static final AtomicLong SESSIONS = new AtomicLong();
  private static final AtomicLong CANDIDATES = new AtomicLong();
  /** Starts the name an election's lock has in the core: no qualified lock name starts with a letter. */
  private static final String ELECTION_PREFIX = "e";

  private final NativeSettings settings;
  private final NodeRegistry.Shared shared;
  private final String session;

  NativeLockService(String redactedUrl, NativeSettings settings) {
    super(new ServiceInfo("native", NativeLockProvider.VERSION, redactedUrl, settings.algorithm().capabilities()),
        settings.lease(), Ticker.system());
    this.settings = settings;
    this.shared = NodeRegistry.acquire(settings, redactedUrl);
    this.session = shared.node.nodeId() + "#" + SESSIONS.incrementAndGet();
  }

  @Override
  protected Lock createLock(String name) {
    return new NativeLock(this, name, Claim.exclusive(settings.qualify(name)));
  }

  @Override
  protected ReadWriteLock createReadWriteLock(String name) {
    String q = settings.qualify(name);
    return new SimpleReadWriteLock(name, new NativeLock(this, name, Claim.read(q)),
        new NativeLock(this, name, settings.algorithm().writeClaim(q, settings.algorithmSettings())));
  }

  /**
   * {@inheritDoc} Leadership is holding a lock of the election's own (never one of the locks), so the
   * election is as fair and as fault tolerant as the algorithm's locks. Who leads is known only to the
   * leader.
   */
  @Override
  protected LeaderElection createElection(String name) {
    Lock lock = new NativeLock(this, name, Claim.exclusive(ELECTION_PREFIX + settings.qualify(name)));
    return new LockElection(this, name, lock, session + "." + CANDIDATES.incrementAndGet(), Optional::empty);
  }

  @Override
  protected void doClose() {
    shared.node.closeSession(session);
    NodeRegistry.release(shared);
  }

  @Override
  protected Object unwrapProvider(Class<?> type) {
    if (type == NodeStats.class || type == PeerNode.class) {
      return shared.node;
    }
    return null;
  }

  NativeSettings nativeSettings() {
    return settings;
  }

  PeerNode<?> node() {
    return shared.node;
  }

  String session() {
    return session;
  }
}
