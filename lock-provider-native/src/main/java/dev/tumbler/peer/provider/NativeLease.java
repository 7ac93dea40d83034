package dev.tumbler.peer.provider;

import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.runtime.PeerNode;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A grant of a native lock.
 *
 * <ul>
 *   <li><b>Algorithms whose grants hold until released</b> (Lamport, Ricart–Agrawala): unbounded; lost only
 *       when its service closes.
 *   <li><b>Leased algorithms</b>: valid from the moment the request the grant answers was sent (the echo
 *       rule, {@link Output.Granted#sentAt()}) for {@code leaseTime × 3/4}. A renewal asks the node, which asks
 *       the deciding nodes; the lease is then trusted from the renewal's echoed request on. When the node
 *       says the grant is lost (its term ran out, the deciding nodes no longer know it), the lease is marked
 *       lost with the node's reason, on a thread of its own.
 * </ul>
 * Release tells the node, which tells the peers. Thread safe.
 */
final class NativeLease extends AbstractLease implements PeerNode.LostListener {

  private final NativeLockService service;
  private final long requestId;

  /**
   * A lease of {@code permits} (1 for a lock) with {@code settings}: the service's for its locks, the semaphores'
   * for permits, a transaction's term for a transaction's claim.
   */
  NativeLease(String name, long fencingToken, int permits, NativeLockService service, long requestId, long sentNanos,
      LeaseSettings settings) {
    super(name, fencingToken, permits, settings, service.ticker(), sentNanos);
    this.service = service;
    this.requestId = requestId;
  }

  /** Marks this lease lost when the node says its grant is. Called once, right after the grant. */
  void bindLoss() {
    if (settings().expires()) {
      service.node().onLost(requestId, this); // the lease itself listens: no object more per lease
    }
  }

  /** The node says the grant is lost. */
  @Override
  public void lost(Output.LostReason reason, String detail) {
    markLost(reason(reason), detail.isEmpty() ? "native node " + service.node().nodeId() + ": " + reason : detail,
        null);
  }

  /**
   * {@inheritDoc} Waits for the node's answer at most until the lease's deadline: an answer after it could
   * not extend the lease anyway.
   */
  @Override
  protected boolean doRenew() {
    if (!settings().expires()) {
      return true; // nothing to renew: the grant holds until released
    }
    long wait = Math.max(1, validUntilNanos() - service.ticker().read());
    PeerNode.Renewal r;
    try {
      r = service.node().renew(requestId).get(wait, TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServiceUnavailableException("renewal of lock '" + name() + "' interrupted", e);
    } catch (TimeoutException e) {
      throw new ServiceUnavailableException("lock '" + name() + "' on " + service.info().url()
          + ": no answer to the renewal before the lease's deadline");
    } catch (ExecutionException | CancellationException e) {
      throw new ServiceUnavailableException("lock '" + name() + "' on " + service.info().url() + ": renewal failed: "
          + (e.getCause() == null ? e : e.getCause()), e);
    }
    if (r.renewed()) {
      extend(r.sentAt());
      return true;
    }
    if (r.lost() != Output.LostReason.REVOKED) {
      // the node's reason, not the SPI's generic revocation
      markLost(reason(r.lost()), r.detail().isEmpty() ? "native node " + service.node().nodeId() + ": " + r.lost()
          : r.detail(), null);
    }
    return false;
  }

  @Override
  protected void doRelease() {
    service.node().release(requestId);
  }

  private static LeaseLostEvent.Reason reason(Output.LostReason r) {
    return switch (r) {
      case EXPIRED -> LeaseLostEvent.Reason.EXPIRED;
      case REVOKED -> LeaseLostEvent.Reason.REVOKED;
      case DEADLOCK -> LeaseLostEvent.Reason.DEADLOCK;
      case CONNECTION_LOST -> LeaseLostEvent.Reason.CONNECTION_LOST;
    };
  }
}
