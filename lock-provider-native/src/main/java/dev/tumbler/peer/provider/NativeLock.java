package dev.tumbler.peer.provider;

import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.AbstractLock;
import dev.tumbler.lock.spi.AbstractLockService;
import dev.tumbler.lock.spi.Deadline;
import dev.tumbler.peer.core.Claim;

/**
 * A lock handle on a native node: a plain lock, or one side of a read/write lock, as its claim says. How a wait
 * ends (timeout, zero wait, no deadline, interrupt) is {@link NativeAcquire}'s: every timed wait ends within its
 * deadline plus {@link AbstractLockService#ANSWER_GRACE_MILLIS}, so the lock {@linkplain #boundsItsOwnWait() bounds
 * its own wait} and a timed acquire runs on the caller's thread. Thread safe.
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
  protected boolean boundsItsOwnWait() {
    return true;
  }

  @Override
  protected AbstractLease doAcquire(Deadline deadline) throws InterruptedException {
    return new NativeAcquire(service, "lock", name(), claim, service.settings()).acquire(deadline);
  }
}
