package dev.tumbler.lock.jdbc;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Waiters of one service, by lock key, and the releases that wake them: those of services in this JVM on
 * the same database and table ({@link #local}), and, on PostgreSQL, those every client publishes with
 * {@code pg_notify} ({@link Notifications}). A waiter that hears nothing still looks again within its
 * bound, so a lost wake-up costs time, never a grant. Thread safe.
 */
final class Wakeups {
  /** Every open service's wakeups, by database identity (dialect, JDBC URL or DataSource, table). */
  private static final Map<String, Set<Wakeups>> LOCAL = new ConcurrentHashMap<>();

  private final String database;
  private final Map<String, Set<Waiter>> waiters = new ConcurrentHashMap<>();

  Wakeups(String database) {
    this.database = database;
    LOCAL.computeIfAbsent(database, d -> ConcurrentHashMap.newKeySet()).add(this);
  }

  /** Wakes the waiters of {@code key} in every service of this JVM on the same database. */
  void local(String key) {
    Set<Wakeups> all = LOCAL.get(database);
    if (all != null) {
      for (Wakeups w : all) {
        w.wake(key);
      }
    }
  }

  /** Wakes this service's waiters of {@code key}. */
  void wake(String key) {
    Set<Waiter> s = waiters.get(key);
    if (s != null) {
      for (Waiter w : s) {
        w.signal();
      }
    }
  }

  /** Wakes every waiter of this service (notifications may have been missed). */
  void wakeAll() {
    for (Set<Waiter> s : waiters.values()) {
      for (Waiter w : s) {
        w.signal();
      }
    }
  }

  Waiter register(String key) {
    Waiter w = new Waiter();
    // added inside compute: a set taken out of the map (computeIfAbsent, then add) could meanwhile be emptied and
    // dropped by the unregister of the key's last other waiter, and a waiter added to it was never woken
    waiters.compute(key, (k, s) -> {
      Set<Waiter> set = s == null ? ConcurrentHashMap.newKeySet() : s;
      set.add(w);
      return set;
    });
    return w;
  }

  void unregister(String key, Waiter w) {
    waiters.computeIfPresent(key, (k, s) -> {
      s.remove(w);
      return s.isEmpty() ? null : s;
    });
  }

  boolean hasWaiters() {
    return !waiters.isEmpty();
  }

  /** How many of this service's waiters are asleep in {@link Waiter#awaitChange} (for tests and metrics). */
  int asleep() {
    int n = 0;
    for (Set<Waiter> s : waiters.values()) {
      for (Waiter w : s) {
        if (w.asleep()) {
          n++;
        }
      }
    }
    return n;
  }

  void close() {
    Set<Wakeups> all = LOCAL.get(database);
    if (all != null) {
      all.remove(this);
      LOCAL.computeIfPresent(database, (d, s) -> s.isEmpty() ? null : s);
    }
    wakeAll();
  }

  /** One waiting acquire: a version that every wake-up increments. */
  static final class Waiter {
    private long version;
    private boolean asleep;

    synchronized boolean asleep() {
      return asleep;
    }

    synchronized long version() {
      return version;
    }

    synchronized void signal() {
      version++;
      notifyAll();
    }

    /** Waits until the version differs from {@code seen} or {@code nanos} have passed. */
    synchronized void awaitChange(long seen, long nanos) throws InterruptedException {
      long end = System.nanoTime() + nanos;
      asleep = true;
      try {
        while (version == seen) {
          long left = end - System.nanoTime();
          if (left <= 0) {
            return;
          }
          wait(Math.max(1, left / 1_000_000), 0);
        }
      } finally {
        asleep = false;
      }
    }
  }
}
