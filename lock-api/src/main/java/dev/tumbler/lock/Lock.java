package dev.tumbler.lock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * An exclusive lock on a name (or the read or write side of a {@link ReadWriteLock}). A {@code Lock}
 * object is a cheap handle: it holds nothing; each successful acquire returns a new {@link Lease}.
 * Handles are thread safe and may be shared.
 *
 * <pre>{@code
 * try (Lease lease = service.lock("orders/42").acquire()) {
 *   store.write(order, lease.fencingToken());
 * }
 * }</pre>
 *
 * <p>Leases of one lock taken through the same {@link LockService} exclude each other exactly as leases
 * taken through different services do: a lock is not reentrant (use {@link #asJavaLock()} for that).
 */
public interface Lock {

  /** The lock's name. */
  String name();

  /**
   * Waits until the lock is granted.
   *
   * @throws InterruptedException if the thread is interrupted while waiting; nothing is held then
   * @throws ServiceUnavailableException if the backend cannot be reached
   * @throws ServiceClosedException if the service is closed, before or during the wait
   */
  Lease acquire() throws InterruptedException;

  /**
   * Waits at most {@code maxWait} for the lock. {@link Duration#ZERO} makes one attempt and does not
   * wait. Never returns empty before {@code maxWait} has passed on the monotonic clock. Returns by
   * {@code maxWait} plus 2 s even when the backend stops answering: an attempt still unanswered then is
   * abandoned (a lease it yields later is released, never leaked), and the call returns empty, or throws
   * {@link ServiceUnavailableException} if the provider knows the backend is unreachable. A grant that
   * arrives as the wait ends is either returned, and then held until released, or given back: never
   * returned and given back.
   *
   * @return the lease, or empty if the wait ended first
   * @throws IllegalArgumentException if {@code maxWait} is negative
   * @throws InterruptedException if the thread is interrupted while waiting; nothing is held then
   * @throws ServiceUnavailableException if the backend cannot be reached
   * @throws ServiceClosedException if the service is closed, before or during the wait
   */
  Optional<Lease> tryAcquire(Duration maxWait) throws InterruptedException;

  /**
   * Acquires without blocking the caller. The future completes with the lease, or exceptionally with
   * {@link LockTimeoutException} when {@code maxWait} passes, or with any exception {@link #acquire()}
   * throws. Cancelling the future stops the wait; a lease granted after cancellation is released, never
   * leaked.
   */
  CompletableFuture<Lease> acquireAsync(Duration maxWait);

  /**
   * This lock as a thread-owned, reentrant {@link java.util.concurrent.locks.Lock}: the thread that
   * locked it must unlock it ({@link IllegalMonitorStateException} otherwise), nested locks count.
   * {@code lock()} waits uninterruptibly, as its contract requires. {@code newCondition()} is not
   * supported. The same adapter is returned on every call for this handle. If the owner's lease is lost,
   * its final {@code unlock()} throws {@link LeaseLostException}; if another thread is granted the lock
   * meanwhile (the lease expired), that thread becomes the owner and the old owner's next call throws
   * {@link LeaseLostException}.
   */
  java.util.concurrent.locks.Lock asJavaLock();
}
