package dev.tumbler.peer.provider;

import dev.tumbler.lock.ServiceClosedException;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.AbstractLockService;
import dev.tumbler.lock.spi.Deadline;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.runtime.PeerNode;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One wait for a claim on a native node, the same for a lock and a semaphore: the request, its wait, the cancel
 * when the wait ends, and the grant that races the cancel.
 *
 * <ul>
 *   <li><b>Timeout:</b> when the wait ends, the request is cancelled on the node; a grant that won the
 *       race is used (so a wait may end slightly after {@code maxWait} with a lease, never before it
 *       empty). If a peer was unreachable when the wait ended, the wait fails with
 *       {@link ServiceUnavailableException} naming the peers instead of returning empty. It ends before
 *       {@code maxWait} only as {@code acquire()} does (below).
 *   <li><b>No deadline</b> ({@code acquire()}): waits until granted, or until the node's core gives up: Lamport and
 *       Ricart–Agrawala once a peer it needs has been unreachable for {@code peerTimeout}; the fault-tolerant
 *       algorithms not during a failover or an election, only once the node has had fewer members connected than a
 *       quorum needs for {@code peerTimeout}; then {@link ServiceUnavailableException} naming the peers and why.
 *   <li><b>Zero wait:</b> one round; empty if the claim is taken, or {@link ServiceUnavailableException} at once
 *       if a peer it needs is unreachable.
 *   <li><b>Interrupt:</b> the request is cancelled, a grant that raced it released, and
 *       {@link InterruptedException} thrown; nothing stays held.
 *   <li><b>Refused</b> (a semaphore handle that disagrees with its name's bucket size):
 *       {@link IllegalStateException} with the node's reason.
 * </ul>
 * Every timed wait (zero included) ends within its deadline plus {@link AbstractLockService#ANSWER_GRACE_MILLIS}:
 * the node answers a cancel at once (it steps it on the cancelling thread), and should it not, the wait fails with
 * {@link ServiceUnavailableException} and a grant that comes later is given back. Not thread safe: one per wait.
 */
final class NativeAcquire {

  private static final long GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(AbstractLockService.ANSWER_GRACE_MILLIS);

  private final NativeLockService service;
  private final String kind;
  private final String name;
  private final Claim claim;
  private final LeaseSettings settings;

  /**
   * @param kind what is asked for, for messages: {@code lock} or {@code semaphore}
   * @param name its name, as the user gave it
   * @param claim what the core is asked for (its name qualified with the namespace)
   * @param settings the lease's term and renewal
   */
  NativeAcquire(NativeLockService service, String kind, String name, Claim claim, LeaseSettings settings) {
    this.service = service;
    this.kind = kind;
    this.name = name;
    this.claim = claim;
    this.settings = settings;
  }

  /**
   * Asks the node for the claim until {@code deadline} (one attempt if it has passed).
   *
   * @return the lease, bound to the node's losses; null when the claim was not granted in time
   * @throws InterruptedException if interrupted; nothing stays held
   */
  NativeLease acquire(Deadline deadline) throws InterruptedException {
    PeerNode<?> node = service.node();
    boolean attempt = !deadline.isNone() && deadline.isExpired();
    long sent = service.ticker().read();
    // a timed wait, an attempt included, ends by then (the caller's deadline plus the grace for an answer)
    long answerBy = deadline.isNone() ? 0 : System.nanoTime() + Math.max(0, deadline.remainingNanos()) + GRACE_NANOS;
    PeerNode.Pending p = node.acquire(service.session(), claim, attempt);
    PeerNode.Outcome outcome;
    try {
      outcome = deadline.isNone() ? await(p, -1)
          : await(p, attempt ? answerBy - System.nanoTime() : deadline.remainingNanos());
      if (outcome == null) {
        node.cancel(p.requestId());
        outcome = settle(p, answerBy, attempt ? "at the attempt" : "when the wait of "
            + deadline.total().toMillis() + "ms ended");
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
      NativeLease lease = new NativeLease(name, outcome.fencingToken(), outcome.permits(), service, p.requestId(),
          outcome.validUntil() == Long.MAX_VALUE ? sent : outcome.sentAt(), settings);
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
      case REFUSED -> throw new IllegalStateException(kind + " '" + name + "' on " + service.info().url()
          + ": refused: " + outcome.detail());
    };
  }

  private ServiceUnavailableException unavailable(PeerNode.Outcome outcome, String when) {
    Set<String> missing = outcome.missingPeers();
    String peers = missing.isEmpty() ? "" : ": peer" + (missing.size() == 1 ? " " : "s ") + missing + " unreachable "
        + when;
    String detail = outcome.detail().isEmpty() ? "" : (peers.isEmpty() ? ": " : "; ") + outcome.detail();
    return new ServiceUnavailableException(kind + " '" + name + "' on " + service.info().url() + peers + detail
        + (peers.isEmpty() && detail.isEmpty() ? ": " + outcome.failure() + " " + when : ""));
  }

  /** The outcome, or null when {@code nanos} passed first; negative: no limit. */
  private PeerNode.Outcome await(PeerNode.Pending p, long nanos) throws InterruptedException {
    try {
      return nanos < 0 ? p.outcome().get() : p.outcome().get(Math.max(1, nanos), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      return null;
    } catch (ExecutionException | CancellationException e) {
      throw closed(e);
    }
  }

  /**
   * After a cancel: the node answers at once (the failure, stepped on this thread, or the grant that won
   * the race, completed by the thread that stepped it). Waits until {@code answerBy} at most; past it, a
   * grant that still comes is given back and the wait fails.
   */
  private PeerNode.Outcome settle(PeerNode.Pending p, long answerBy, String when) throws InterruptedException {
    try {
      return p.outcome().get(Math.max(0, answerBy - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      releaseWhenGranted(p);
      throw new ServiceUnavailableException(kind + " '" + name + "' on " + service.info().url()
          + ": the native node did not answer " + when + " within the grace of " + GRACE_NANOS / 1_000_000 + "ms");
    } catch (ExecutionException | CancellationException e) {
      throw closed(e);
    }
  }

  /** After an interrupt and a cancel: the outcome if it comes within the grace, else null (see settle). */
  private PeerNode.Outcome settleQuietly(PeerNode.Pending p) {
    boolean interrupted = false;
    try {
      long end = System.nanoTime() + GRACE_NANOS;
      while (true) {
        try {
          return p.outcome().get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (TimeoutException e) {
          releaseWhenGranted(p);
          return null;
        } catch (ExecutionException | CancellationException e) {
          return null;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** A grant that completes {@code p} after its caller gave up waiting is given back. */
  private void releaseWhenGranted(PeerNode.Pending p) {
    PeerNode<?> node = service.node();
    p.outcome().thenAccept(o -> {
      if (o.granted()) {
        node.release(p.requestId());
      }
    });
  }

  private RuntimeException closed(Exception e) {
    Throwable cause = e.getCause() == null ? e : e.getCause();
    if (service.isClosed()) {
      ServiceClosedException c = service.closedException();
      c.initCause(cause);
      return c;
    }
    if (cause instanceof PeerNode.NodeClosedException) {
      // the node stopped under a service nobody closed (it crashed): the service is not closed, it is cut off
      return new ServiceUnavailableException(kind + " '" + name + "' on " + service.info().url() + ": native node "
          + service.node().nodeId() + " stopped", cause);
    }
    return new ServiceUnavailableException(kind + " '" + name + "' on " + service.info().url() + ": " + cause,
        cause);
  }
}
