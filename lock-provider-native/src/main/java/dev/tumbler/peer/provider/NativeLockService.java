package dev.tumbler.peer.provider;

import dev.tumbler.lock.Lock;
import dev.tumbler.lock.ServiceInfo;
import dev.tumbler.lock.spi.AbstractLockService;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.peer.node.NodeStats;
import dev.tumbler.peer.node.PeerNode;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One client session on a native node. Several services may share a node (same node URL in one JVM);
 * each has its own session, and closing it releases its grants and ends its waits without touching the
 * others'. {@code unwrap(NodeStats.class)} gives the node's counters. Thread safe.
 */
final class NativeLockService extends AbstractLockService {

  private static final AtomicLong SESSIONS = new AtomicLong();

  private final NativeSettings settings;
  private final NodeRegistry.Shared shared;
  private final String session;

  NativeLockService(String redactedUrl, NativeSettings settings) {
    super(new ServiceInfo("native", NativeLockProvider.VERSION, redactedUrl, settings.algorithm().capabilities()),
        LeaseSettings.unbounded(settings.namespace()), Ticker.system());
    this.settings = settings;
    this.shared = NodeRegistry.acquire(settings, redactedUrl);
    this.session = shared.node.nodeId() + "#" + SESSIONS.incrementAndGet();
  }

  @Override
  protected Lock createLock(String name) {
    return new NativeLock(this, name);
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
