package dev.tumbler.lock;

/**
 * A lock with a shared side and an exclusive side: any number of read leases may be held at once, a
 * write lease excludes every other read or write lease of the same name. Capability
 * {@link Capability#READ_WRITE}. Thread safe.
 */
public interface ReadWriteLock {
  String name();

  /** The shared side. */
  Lock readLock();

  /** The exclusive side. */
  Lock writeLock();
}
