package dev.tumbler.lock;

/**
 * Work done while a lock is held, for {@link LockService#withLock} and {@link LockService#tryWithLock}. It
 * gets the {@link Lease}, so it can pass {@link Lease#fencingToken()} to the resource it writes and check
 * {@link Lease#isValid()} between steps.
 *
 * @param <T> what the task returns
 * @param <X> the checked exception it may throw ({@link RuntimeException} when none); it reaches the
 *     caller unchanged
 */
@FunctionalInterface
public interface LeaseTask<T, X extends Exception> {

  /** Runs with the lock held; the lease is released when this returns or throws. */
  T run(Lease lease) throws X;
}
