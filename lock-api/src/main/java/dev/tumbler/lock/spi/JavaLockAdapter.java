package dev.tumbler.lock.spi;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostException;
import dev.tumbler.lock.Lock;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.WeakHashMap;
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
 *   <li>If the lease is lost while held and another thread of this JVM is then granted the lock (the lease
 *       expired, as leases may), the new owner proceeds and the old owner is displaced: its next call on
 *       this adapter throws {@link LeaseLostException}. Its later {@code unlock()} calls count its remaining
 *       holds down without throwing, so that nested {@code finally} blocks do not hide that exception; until
 *       they have, its {@code lock()} and {@code tryLock()} calls throw {@link LeaseLostException} again.
 *       A grant while the owner's lease is still valid would mean the backend broke exclusion: that throws
 *       {@link IllegalStateException}.
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
  private final Map<Thread, Displaced> displaced = new WeakHashMap<>();

  /** An owner whose lost lease passed to another thread: the holds it has not unlocked yet. */
  private static final class Displaced {
    final long fencingToken;
    int holds;
    boolean told;

    Displaced(long fencingToken, int holds) {
      this.fencingToken = fencingToken;
      this.holds = holds;
    }
  }

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
        Displaced d = displaced.get(Thread.currentThread());
        if (d != null) {
          if (--d.holds == 0) {
            displaced.remove(Thread.currentThread());
          }
          if (!d.told) {
            d.told = true;
            throw displacedException(d);
          }
          return;
        }
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

  /**
   * True if the calling thread owns the adapter and counted one more hold; false if it must acquire.
   *
   * @throws LeaseLostException if the calling thread was displaced and has not unlocked its lost holds
   */
  private boolean reenter() {
    synchronized (monitor) {
      if (owner == Thread.currentThread()) {
        if (holds == Integer.MAX_VALUE) {
          throw new Error("maximum lock count exceeded");
        }
        holds++;
        return true;
      }
      Displaced d = displaced.get(Thread.currentThread());
      if (d != null) {
        d.told = true;
        throw displacedException(d);
      }
      return false;
    }
  }

  private LeaseLostException displacedException(Displaced d) {
    return new LeaseLostException("lock '" + lock.name() + "' was lost while thread "
        + Thread.currentThread().getName() + " held it (fencing token " + d.fencingToken + ") and is now owned by "
        + (owner == null ? "no thread" : "thread " + owner.getName()) + "; " + d.holds
        + " hold(s) of the lost critical section remain to be unlocked");
  }

  private void own(Lease l) {
    while (true) {
      Lease current;
      synchronized (monitor) {
        if (owner == null) {
          owner = Thread.currentThread();
          holds = 1;
          lease = l;
          return;
        }
        current = lease;
      }
      // outside the monitor: isValid() may notice the expiry and run lost listeners, which may call here
      boolean ownerValid = current.isValid();
      Thread previous;
      Thread holder;
      synchronized (monitor) {
        holder = owner;
        if (lease != current) {
          continue; // the owner changed meanwhile: look again
        }
        if (ownerValid) {
          previous = null;
        } else {
          // the owner's lease expired and the backend rightly granted it again: the new owner proceeds
          previous = owner;
          displaced.put(previous, new Displaced(current.fencingToken(), holds));
          owner = Thread.currentThread();
          holds = 1;
          lease = l;
        }
      }
      if (previous == null) {
        // a grant while the owner's lease is still valid: the backend broke exclusion; do not hide it
        l.release();
        throw new IllegalStateException("lock '" + lock.name() + "': the backend granted a lease (fencing token "
            + l.fencingToken() + ") to thread " + Thread.currentThread().getName() + " while thread "
            + holder.getName() + " holds a valid one (fencing token " + current.fencingToken() + ")");
      }
      current.release(); // lost: it gives nothing back on the backend, but the service forgets it
      return;
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
