package dev.tumbler.lock.redis;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One thread's wait for a release: {@link WakeupHub}s bump its version when a release is published on
 * the channel it watches (or when a hub reconnects and messages may have been lost), and count the hubs
 * that confirmed its subscription. The waiter reads {@link #version()} <em>before</em> each attempt and
 * then waits for a newer one: a release between the attempt and the wait is never missed once the
 * subscription is confirmed. Thread safe.
 */
final class Waiter {
  /** How a fair release announces a hand-off: {@code grant <owner> <token>}. */
  static final String GRANT = "grant ";

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final String owner;
  private long version;
  private int confirmations;
  private String lastEvent;
  private long handedToken = -1;

  /** @param owner the owner value this waiter asks with: a hand-off to it is a grant, to anyone else no news */
  Waiter(String owner) {
    this.owner = owner;
  }

  /** A release (or a possible loss of one) happened. */
  void signal() {
    signal(null);
  }

  /**
   * A release was published; {@code event} names it (the releaser's owner value), so that the same
   * release heard from several Redlock masters wakes the waiter once per look: a copy heard after the waiter
   * looked again ({@link #version()}) wakes it again, since that look may have run before the release reached a
   * majority of the masters (it was then refused, by the masters still listing the releaser, and a copy dropped as
   * already heard left it asleep until {@code recheck}). Null always wakes.
   */
  void signal(String event) {
    long token = -1;
    if (event != null && event.startsWith(GRANT)) {
      // the lock went from one holder to the next: news only for that next one
      int space = event.lastIndexOf(' ');
      if (space <= GRANT.length() || !event.regionMatches(GRANT.length(), owner, 0, owner.length())
          || space != GRANT.length() + owner.length()) {
        return;
      }
      try {
        token = Long.parseLong(event, space + 1, event.length(), 10);
      } catch (NumberFormatException e) {
        return;
      }
    }
    lock.lock();
    try {
      if (token >= 0) {
        handedToken = token;
      } else if (event != null && event.equals(lastEvent)) {
        return;
      }
      lastEvent = event;
      version++;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * A hub confirmed the subscription this waiter needs. It also wakes the waiter: a hub that reconnects wakes its
   * waiters when the old connection ends, and they look again before the new subscription is active; a release
   * published in between reached nobody, so they look once more now that they would hear one.
   */
  void confirmed() {
    lock.lock();
    try {
      confirmations++;
      version++;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * The token of the last grant a release handed to this waiter since the last call, or -1. The caller decides
   * whether it is still good: a hand-off's message can arrive after its grant ended.
   */
  long takeHandedToken() {
    lock.lock();
    try {
      long token = handedToken;
      handedToken = -1;
      return token;
    } finally {
      lock.unlock();
    }
  }

  /** The version to wait past, read before an attempt: from now on a copy of the last release heard wakes again. */
  long version() {
    lock.lock();
    try {
      lastEvent = null;
      return version;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until {@code hubs} hubs confirmed the subscription, at most {@code nanos} (the caller looks
   * again either way; an unconfirmed subscription only costs it the bounded re-check).
   */
  void awaitConfirmed(int hubs, long nanos) throws InterruptedException {
    lock.lock();
    try {
      long left = nanos;
      while (confirmations < hubs && left > 0) {
        left = changed.awaitNanos(left);
      }
    } finally {
      lock.unlock();
    }
  }

  /** Waits at most {@code nanos} for a version newer than {@code seen}. */
  void awaitChange(long seen, long nanos) throws InterruptedException {
    lock.lock();
    try {
      long left = nanos;
      while (version == seen && left > 0) {
        left = changed.awaitNanos(left);
      }
    } finally {
      lock.unlock();
    }
  }
}
