package dev.tumbler.lock;

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
