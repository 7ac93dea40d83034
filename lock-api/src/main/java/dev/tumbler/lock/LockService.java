package dev.tumbler.lock;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An open connection to a lock backend, like {@link java.sql.Connection}: obtained from
 * {@link LockProviders#connect(String)}, closed when done. Thread safe: share one service per backend
 * across an application.
 *
 * <p>Handles ({@link Lock}, {@link Semaphore}, ...) are cheap and hold nothing until acquired. Closing the
 * service releases every lease taken through it (their lost listeners fire with
 * {@link LeaseLostEvent.Reason#SERVICE_CLOSED}), ends waits in progress with
 * {@link ServiceClosedException}, and makes every later call of a factory ({@link #lock}, ...) or of a
 * handle's acquire throw it; {@link #info()}, {@link #supports}, {@link #unwrap}, {@link #isClosed()} and
 * {@link #close()} still answer, and leases taken before can still be released.
 *
 * <p>Names: 1 to {@value dev.tumbler.lock.spi.Checks#MAX_NAME_LENGTH} characters, not blank, no ISO
 * control characters. Any other string is a distinct name: {@code "a/b"}, {@code "a.b"} and
 * {@code "a:b"} are three locks on every provider.
 */
public interface LockService extends AutoCloseable {

  /** An exclusive lock. */
  Lock lock(String name);

  /**
   * A read/write lock.
   *
   * @throws UnsupportedCapabilityException without {@link Capability#READ_WRITE}
   */
  ReadWriteLock readWriteLock(String name);

  /**
   * A counting semaphore.
   *
   * @throws IllegalArgumentException if {@code maxPermits < 1}
   * @throws UnsupportedCapabilityException without {@link Capability#SEMAPHORE}
   */
  Semaphore semaphore(String name, int maxPermits);

  /**
   * A leader election; call {@link LeaderElection#join()} to take part.
   *
   * @throws UnsupportedCapabilityException without {@link Capability#LEADER_ELECTION}
   */
  LeaderElection election(String name);

  /**
   * Starts a lock transaction.
   *
   * @throws UnsupportedCapabilityException without {@link Capability#TRANSACTIONS}
   */
  LockTransaction beginTransaction(TransactionOptions options);

  /**
   * Runs {@code task} while holding the exclusive lock {@code name}, waiting at most {@code maxWait} for
   * it, and returns what the task returns. The lease is released when the task returns or throws; an
   * exception of the task reaches the caller unchanged (a failed release is logged by the provider and
   * never hides it). The task runs on the calling thread.
   *
   * <pre>{@code
   * Receipt r = locks.withLock("orders/42", Duration.ofSeconds(5),
   *     lease -> store.write(order, lease.fencingToken()));
   * }</pre>
   *
   * <p><b>Warning:</b> the lease can be lost while the task runs (its term ended without a renewal, the
   * backend went away); this method does not stop the task then. A task that writes a shared resource
   * should pass {@link Lease#fencingToken()} to it, or check {@link Lease#isValid()} before each step.
   *
   * @throws LockTimeoutException if the lock was not granted within {@code maxWait}; its message names the
   *     lock, the provider and the time waited; the task did not run
   * @throws InterruptedException if the thread is interrupted while waiting for the lock; nothing is held
   *     and the task did not run (an interrupt during the task is the task's business)
   * @throws X what the task throws
   * @throws IllegalArgumentException if {@code maxWait} is negative, or for a bad name
   * @throws ServiceUnavailableException if the backend cannot be reached
   * @throws ServiceClosedException if the service is closed
   */
  default <T, X extends Exception> T withLock(String name, Duration maxWait, LeaseTask<T, X> task)
      throws X, InterruptedException {
    Objects.requireNonNull(maxWait, "maxWait");
    Objects.requireNonNull(task, "task");
    Optional<Lease> lease = lock(name).tryAcquire(maxWait);
    if (lease.isEmpty()) {
      throw new LockTimeoutException("lock '" + name + "' on " + info().provider() + " was not granted within "
          + maxWait.toMillis() + "ms");
    }
    try (Lease held = lease.get()) {
      return task.run(held);
    }
  }

  /**
   * Runs {@code task} only if the exclusive lock {@code name} is free: one attempt, no wait (for a
   * scheduled job that several instances start and one should run). Returns the task's value, or empty if
   * the lock was held elsewhere and the task did not run. The lease is released when the task returns or
   * throws. A task that returns {@code null} also gives empty; use {@link #runIfFree} for a job with no
   * result.
   *
   * @throws InterruptedException if the thread is interrupted during the attempt; the task did not run
   * @throws X what the task throws
   * @see #withLock(String, Duration, LeaseTask) for the warning about a lease lost while the task runs
   */
  default <T, X extends Exception> Optional<T> tryWithLock(String name, LeaseTask<T, X> task)
      throws X, InterruptedException {
    return tryWithLock(name, Duration.ZERO, task);
  }

  /**
   * Like {@link #tryWithLock(String, LeaseTask)}, waiting at most {@code maxWait} for the lock; empty,
   * and the task not run, when the wait ended first.
   *
   * @throws IllegalArgumentException if {@code maxWait} is negative
   */
  default <T, X extends Exception> Optional<T> tryWithLock(String name, Duration maxWait, LeaseTask<T, X> task)
      throws X, InterruptedException {
    Objects.requireNonNull(maxWait, "maxWait");
    Objects.requireNonNull(task, "task");
    Optional<Lease> lease = lock(name).tryAcquire(maxWait);
    if (lease.isEmpty()) {
      return Optional.empty();
    }
    try (Lease held = lease.get()) {
      return Optional.ofNullable(task.run(held));
    }
  }

  /**
   * Runs {@code task} only if the exclusive lock {@code name} is free (one attempt, no wait), and says
   * whether it ran. The lease is released when the task returns or throws.
   *
   * @return true if the task ran, false if the lock was held elsewhere
   * @throws InterruptedException if the thread is interrupted during the attempt; the task did not run
   * @throws X what the task throws
   */
  default <X extends Exception> boolean runIfFree(String name, LeaseAction<X> task) throws X, InterruptedException {
    Objects.requireNonNull(task, "task");
    Optional<Lease> lease = lock(name).tryAcquire(Duration.ZERO);
    if (lease.isEmpty()) {
      return false;
    }
    try (Lease held = lease.get()) {
      task.run(held);
      return true;
    }
  }

  /**
   * The grants the backend holds under this service's namespace, by any client: names, holders, tokens
   * and remaining terms, for operators ({@code tumbler locks}). Empty when the provider cannot list them
   * (a peer-to-peer backend with no central table, say): that is not an error, and the caller should say
   * "not supported", not "nothing held". A list answers for one moment, read without locking anything:
   * grants may have ended or begun by the time it returns, and it must never decide who may write.
   *
   * <p>The default answers empty; each provider's page says what its listing covers.
   *
   * @throws ServiceUnavailableException if the backend cannot be reached
   * @throws ServiceClosedException if the service is closed
   */
  default Optional<List<HeldLock>> heldLocks() {
    return Optional.empty();
  }

  /** The provider, its version, the redacted URL and this service's capabilities. */
  ServiceInfo info();

  /** Whether this service keeps {@code capability}. */
  boolean supports(Capability capability);

  /**
   * The provider's own object of {@code type}, for vendor extensions (the ZooKeeper provider unwraps to
   * its {@code CuratorFramework}, for example), like {@link java.sql.Wrapper#unwrap}.
   *
   * @throws LockException if the service has no object of that type
   */
  <T> T unwrap(Class<T> type);

  /** Whether this service was closed: its factories and handles then throw {@link ServiceClosedException}. */
  boolean isClosed();

  /** Releases every lease taken through this service and closes it. Idempotent. */
  @Override
  void close();
}
