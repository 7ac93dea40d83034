package dev.tumbler.peer.provider;

import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.LeaseSettings;

/**
 * A grant of a native lock. It has no term: it holds until released ({@link LeaseSettings#unbounded}),
 * since no Lamport node may free another's grant. It is lost only when its service closes. Release tells
 * the node, which tells the peers (Lamport) or answers the deferred requests (Ricart–Agrawala). Thread
 * safe.
 */
final class NativeLease extends AbstractLease {

  private final NativeLockService service;
  private final long requestId;

  NativeLease(String name, long fencingToken, NativeLockService service, long requestId, long sentNanos) {
    super(name, fencingToken, 1, service.settings(), service.ticker(), sentNanos);
    this.service = service;
    this.requestId = requestId;
  }

  @Override
  protected boolean doRenew() {
    return true; // nothing to renew: the grant holds until released
  }

  @Override
  protected void doRelease() {
    service.node().release(requestId);
  }
}
