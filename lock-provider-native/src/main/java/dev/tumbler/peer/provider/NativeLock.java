package dev.tumbler.peer.provider;

import dev.tumbler.lock.ServiceClosedException;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.AbstractLock;
import dev.tumbler.lock.spi.Deadline;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.node.PeerNode;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A lock handle on a native node: a plain lock, or one side of a read/write lock, as its claim says.
 *
 * <ul>
 *   <li><b>Timeout:</b> when the wait ends, the request is cancelled on the node; a grant that won the
 *       race is used (so a wait may end slightly after {@code maxWait} with a lease, never before it
 *       empty). If a peer was unreachable when the wait ended, the wait fails with
 *       {@link ServiceUnavailableException} naming the peers instead of returning empty.
 *   <li><b>No deadline</b> ({@code acquire()}): waits while every peer is reachable; once a peer has been
 *       unreachable for {@code peerTimeout}, fails with {@link ServiceUnavailableException} naming it.
 *   <li><b>Zero wait:</b> one round with the peers; empty if the lock is taken, or
 *       {@link ServiceUnavailableException} at once if a peer is unreachable.
 *   <li><b>Interrupt:</b> the request is cancelled, a grant that raced it released, and
 *       {@link InterruptedException} thrown; nothing stays held.
 * </ul>
 * Thread safe.
 */
final class NativeLock extends AbstractLock {

  private final NativeLockService service;
  /** What the core is asked for: the name it sees (namespace included), computed once. */
  private final Claim claim;

  /**
   * @param name the lock's name, as the user gave it
   * @param claim what the core is asked for (its name qualified with the namespace)
   */
  NativeLock(NativeLockService service, String name, Claim claim) {
    super(service, name);
    this.service = service;
    this.claim = claim;
  }

  @Override
  protected AbstractLease doAcquire(Deadline deadline) throws InterruptedException {
    PeerNode<?> node = service.node();
    boolean attempt = !deadline.isNone() && deadline.isExpired();
    long sent = service.ticker().read();
    PeerNode.Pending p = node.acquire(service.session(), claim, attempt);
    PeerNode.Outcome outcome;
    try {
      outcome = deadline.isNone() || attempt ? await(p, -1) : await(p, deadline.remainingNanos());
      if (outcome == null) {
        node.cancel(p.requestId());
        outcome = settle(p);
      }
    } catch (InterruptedException e) {
      node.cancel(p.requestId());
      PeerNode.Outcome late = settleQuietly(p);
      if (late != null && late.granted()) {
        node.release(p.requestId());
      }
      throw e;
    }
    if (outcome.granted()) {
      // a grant with a term is trusted from the request it answers (the echo rule), which may be a
      // keep-alive sent long after the first request of a wait
      NativeLease lease = new NativeLease(name(), outcome.fencingToken(), service, p.requestId(),
          outcome.validUntil() == Long.MAX_VALUE ? sent : outcome.sentAt());
      lease.bindLoss();
      return lease;
    }
    return switch (outcome.failure()) {
      case CONTENDED, TIMED_OUT -> null;
      case CANCELLED -> {
        if (!outcome.missingPeers().isEmpty()) {
          throw unavailable(outcome, "when the wait of " + deadline.total().toMillis() + "ms ended");
        }
        yield null;
      }
      case UNAVAILABLE, DEADLOCK -> throw unavailable(outcome, attempt ? "at the attempt"
          : "for longer than peerTimeout " + service.nativeSettings().peerTimeout().toMillis() + "ms");
    };
  }

  private ServiceUnavailableException unavailable(PeerNode.Outcome outcome, String when) {
    Set<String> missing = outcome.missingPeers();
    String peers = missing.isEmpty() ? "" : ": peer" + (missing.size() == 1 ? " " : "s ") + missing + " unreachable "
        + when;
    String detail = outcome.detail().isEmpty() ? "" : (peers.isEmpty() ? ": " : "; ") + outcome.detail();
    return new ServiceUnavailableException("lock '" + name() + "' on " + service.info().url() + peers + detail
        + (peers.isEmpty() && detail.isEmpty() ? ": " + outcome.failure() + " " + when : ""));
  }

  /** The outcome, or null when {@code nanos} (not negative) passed first. */
  private PeerNode.Outcome await(PeerNode.Pending p, long nanos) throws InterruptedException {
    try {
      return nanos < 0 ? p.outcome().get() : p.outcome().get(nanos, TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      return null;
    } catch (ExecutionException | CancellationException e) {
      throw closed(e);
    }
  }

  /** After a cancel: the node answers at once (failure, or the grant that won the race). */
  private PeerNode.Outcome settle(PeerNode.Pending p) throws InterruptedException {
    try {
      return p.outcome().get(30, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new ServiceUnavailableException("lock '" + name() + "' on " + service.info().url()
          + ": the node did not answer a cancel within 30s");
    } catch (ExecutionException | CancellationException e) {
      throw closed(e);
    }
  }

  private PeerNode.Outcome settleQuietly(PeerNode.Pending p) {
    boolean interrupted = false;
    try {
      long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (true) {
        try {
          return p.outcome().get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (TimeoutException | ExecutionException | CancellationException e) {
          return null;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private RuntimeException closed(Exception e) {
    Throwable cause = e.getCause() == null ? e : e.getCause();
    if (service.isClosed() || cause instanceof PeerNode.NodeClosedException) {
      ServiceClosedException c = service.closedException();
      c.initCause(cause);
      return c;
    }
    return new ServiceUnavailableException("lock '" + name() + "' on " + service.info().url() + ": " + cause,
        cause);
  }
}
