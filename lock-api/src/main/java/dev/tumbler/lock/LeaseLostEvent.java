package dev.tumbler.lock;

import java.util.Objects;
import java.util.Optional;

/**
 * Why and when a {@link Lease} stopped being valid without its holder releasing it.
 *
 * @param name the lock, semaphore or election name
 * @param fencingToken the fencing token of the lost grant
 * @param reason why it was lost
 * @param detail a human-readable explanation (never a secret)
 * @param cause the failure behind it, if any
 */
public record LeaseLostEvent(String name, long fencingToken, Reason reason, String detail, Optional<Throwable> cause) {

  /** Why a lease was lost. */
  public enum Reason {
    /** No renewal succeeded within the client's safe window ({@code sent + term × safety}). */
    EXPIRED,
    /** The client lost its connection or session to the backend and cannot be sure it still holds the lease. */
    CONNECTION_LOST,
    /** The backend says the lease is no longer this client's (taken over, deleted, session expired). */
    REVOKED,
    /** The {@link LockService} the lease was taken through was closed. */
    SERVICE_CLOSED,
    /** A lock transaction aborted or surrendered the lock to resolve a deadlock. */
    DEADLOCK
  }

  public LeaseLostEvent {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(detail, "detail");
    Objects.requireNonNull(cause, "cause");
  }

  /** This event as an exception, for callers that use a lost lease. */
  public LeaseLostException toException() {
    String message = "lease on '" + name + "' (fencing token " + fencingToken + ") was lost: " + reason + ": " + detail;
    return cause.map(c -> new LeaseLostException(message, c)).orElseGet(() -> new LeaseLostException(message));
  }
}
