package dev.tumbler.lock;

/**
 * What a provider keeps. A provider declares a capability only when the TCK passes it; the TCK tests
 * every declared capability and reports the others as not applicable.
 */
public enum Capability {
  /** Exclusive locks: {@link LockService#lock(String)}. Every provider has it. */
  MUTEX,
  /** Shared/exclusive locks: {@link LockService#readWriteLock(String)}. */
  READ_WRITE,
  /** Counting semaphores: {@link LockService#semaphore(String, int)}. */
  SEMAPHORE,
  /** {@link Lease#fencingToken()} strictly increases over the grants of one name. */
  FENCING,
  /** A holder that crashes or is cut off loses its lease after its term; the lock is then free again. */
  LEASE_EXPIRY,
  /** {@link Lease#onLost} listeners fire, and {@link Lease#isValid()} turns false, before another holder can be granted. */
  LOST_NOTIFICATION,
  /** Waiters are granted in the order they asked (first come, first served). */
  FAIR,
  /** {@link LockService#election(String)}. */
  LEADER_ELECTION,
  /** {@link LockService#beginTransaction(TransactionOptions)}, with deadlock detection. */
  TRANSACTIONS,
  /** Names are paths; locking a path conflicts with its ancestors and descendants (transactions). */
  HIERARCHICAL_NAMES,
  /** {@link TransactionOptions.Quorum} other than the default over several nodes. */
  QUORUM,
  /** The service keeps its guarantees while a minority of its servers or peers is down. */
  FAULT_TOLERANT
}
