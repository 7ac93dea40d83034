package dev.tumbler.lock;

/**
 * Work with no result done while a lock is held, for {@link LockService#runIfFree}; the lease is released
 * when it returns or throws.
 *
 * @param <X> the checked exception it may throw ({@link RuntimeException} when none)
 */
@FunctionalInterface
public interface LeaseAction<X extends Exception> {

  /** Runs with the lock held. */
  void run(Lease lease) throws X;
}
