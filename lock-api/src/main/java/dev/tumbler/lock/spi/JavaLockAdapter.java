package dev.tumbler.lock.spi;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostException;
import dev.tumbler.lock.Lock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

/**
 * A {@link Lock} as a thread-owned, reentrant {@link java.util.concurrent.locks.Lock}.
 *
 * <ul>
 *   <li>The thread that locked it owns it; nested {@code lock()} calls by the owner count up, and the
 *       lease is released when the count falls back to zero.
 *   <li>{@code unlock()} by a thread that does not own it throws {@link IllegalMonitorStateException}.
 *   <li>{@code lock()} waits uninterruptibly (an interrupt during the wait is kept and re-asserted once
 *       the lock is held); {@code lockInterruptibly()} and {@code tryLock(time, unit)} throw
 *       {@link InterruptedException}.
 *   <li>If the lease is lost while held, the final {@code unlock()} still frees the adapter for the next
 *       owner, and then throws {@link LeaseLostException}: the critical section may have overlapped with
 *       another holder's, and the owner should know.
 *   <li>{@code newCondition()} throws {@link UnsupportedOperationException}.
 * </ul>
 *
 * Other threads of the same JVM wait on the backend like any other client. Thread safe.
 */
public final class JavaLockAdapter implements java.util.concurrent.locks.Lock {
  private final Lock lock;
  private final Object monitor = new Object();
  // guarded by monitor
  private Thread owner;
  private int holds;
  private Lease lease;

  public JavaLockAdapter(Lock lock) {
    this.lock = Objects.requireNonNull(lock, "lock");
  }

  @Override
  public void lock() {
    if (reenter()) {
      return;
    }
    boolean interrupted = false;
    try {
      while (true) {
        try {
          own(lock.acquire());
          return;
        } catch (InterruptedException e) {
          interrupted = true;
          Thread.interrupted(); // in case the lock re-asserted it: the retry must wait, not fail at once
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void lockInterruptibly() throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    if (reenter()) {
      return;
    }
    own(lock.acquire());
  }

  @Override
  public boolean tryLock() {
    if (reenter()) {
      return true;
    }
    boolean interrupted = Thread.interrupted();
    try {
      Optional<Lease> l = lock.tryAcquire(Duration.ZERO);
      l.ifPresent(this::own);
      return l.isPresent();
    } catch (InterruptedException e) {
      interrupted = true;
      return false;
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
    Objects.requireNonNull(unit, "unit");
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    if (reenter()) {
      return true;
    }
    Optional<Lease> l = lock.tryAcquire(Duration.ofNanos(Math.max(0, unit.toNanos(time))));
    l.ifPresent(this::own);
    return l.isPresent();
  }

  @Override
  public void unlock() {
    Lease toRelease;
    synchronized (monitor) {
      if (owner != Thread.currentThread()) {
        throw new IllegalMonitorStateException("lock '" + lock.name() + "' is not held by thread "
            + Thread.currentThread().getName() + (owner == null ? "" : "; its owner is " + owner.getName()));
      }
      if (--holds > 0) {
        return;
      }
      toRelease = lease;
      owner = null;
      lease = null;
    }
    boolean wasValid = toRelease.isValid();
    toRelease.release();
    if (!wasValid) {
      throw new LeaseLostException("lock '" + lock.name() + "' was lost while held (fencing token "
          + toRelease.fencingToken() + "); the critical section may have overlapped another holder's");
    }
  }

  /** Not supported: a distributed lock has no condition variables. */
  @Override
  public Condition newCondition() {
    throw new UnsupportedOperationException("lock '" + lock.name()
        + "': conditions are not supported by distributed locks; use a LeaderElection or a Semaphore");
  }

  /** Holds of the calling thread: 0 if it does not own the lock. */
  public int getHoldCount() {
    synchronized (monitor) {
      return owner == Thread.currentThread() ? holds : 0;
    }
  }

  /** Whether the calling thread owns the lock. */
  public boolean isHeldByCurrentThread() {
    return getHoldCount() > 0;
  }

  /** The lease of the current owner, if any. */
  public Optional<Lease> lease() {
    synchronized (monitor) {
      return Optional.ofNullable(lease);
    }
  }

  private boolean reenter() {
    synchronized (monitor) {
      if (owner == Thread.currentThread()) {
        if (holds == Integer.MAX_VALUE) {
          throw new Error("maximum lock count exceeded");
        }
        holds++;
        return true;
      }
      return false;
    }
  }

  private void own(Lease l) {
    synchronized (monitor) {
      if (owner != null) {
        // the backend granted a lease while another thread of this JVM owns the adapter: the backend
        // broke exclusion; do not hide it
        l.release();
        throw new IllegalStateException("lock '" + lock.name() + "' granted to " + Thread.currentThread().getName()
            + " while owned by " + owner.getName());
      }
      owner = Thread.currentThread();
      holds = 1;
      lease = l;
    }
  }

  @Override
  public String toString() {
    synchronized (monitor) {
      return "JavaLockAdapter[" + lock.name() + (owner == null ? ", unlocked" : ", owner=" + owner.getName()
          + ", holds=" + holds) + "]";
    }
  }
}
