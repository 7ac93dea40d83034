package dev.tumbler.lock.jdbc;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Waiters of one service, by lock key, and the releases that wake them: those of services in this JVM on
 * the same database and table ({@link #local}), and, on PostgreSQL, those every client publishes with
 * {@code pg_notify} ({@link Notifications}). A release that names the first waiter in line (an exclusive
 * one: nobody behind it can be granted before it) wakes that waiter only, and tells it so: it tries at once,
 * without first looking at the line; the others sleep on, since they could only see that they are still
 * behind it. A waiter that hears nothing still looks again within its bound, so a lost wake-up costs time,
 * never a grant. Thread safe.
 */
final class Wakeups {
  /** Every open service's wakeups, by database identity (dialect, JDBC URL or DataSource, table). */
  private static final Map<String, Set<Wakeups>> LOCAL = new ConcurrentHashMap<>();

  /** A random id per database identity, shared by this JVM's services on it ({@link #localId}). */
  private static final Map<String, String> LOCAL_IDS = new ConcurrentHashMap<>();

  private final String database;
  private final String localId;
  private final Map<String, Set<Waiter>> waiters = new ConcurrentHashMap<>();

  Wakeups(String database) {
    this.database = database;
    this.localId = LOCAL_IDS.computeIfAbsent(database, d -> JdbcLockService.randomId() + ".");
    // (added inside compute, as register does: the set of the database's last other service, closing, may go)
    LOCAL.compute(database, (d, s) -> {
      Set<Wakeups> all = s == null ? ConcurrentHashMap.newKeySet() : s;
      all.add(this);
      return all;
    });
  }

  /**
   * What the ids of the places in line of this JVM's waits on this database start with: a release that names one of
   * them wakes it in this JVM, and publishes nothing ({@link Dialect#release}). Letters, digits, '-', '_' and '.'.
   */
  String localId() {
    return localId;
  }

  /**
   * Wakes the waiters of {@code key} in every service of this JVM on the same database: the waiter {@code first}
   * only, when a release names the first in line, else all of them.
   */
  void local(String key, String first) {
    Set<Wakeups> all = LOCAL.get(database);
    if (all != null) {
      for (Wakeups w : all) {
        w.wake(key, first);
      }
    }
  }

  /** Wakes this service's waiters of {@code key}: only the one whose id is {@code first}, unless that is null. */
  void wake(String key, String first) {
    Set<Waiter> s = waiters.get(key);
    if (s != null) {
      for (Waiter w : s) {
        if (first == null) {
          w.signal(false);
        } else if (w.id.equals(first)) {
          w.signal(true);
        }
      }
    }
  }

  /**
   * Wakes the waiters a notification's payload names: {@code key} wakes every waiter of the key,
   * {@code >waiter key} only that waiter ({@link Dialect#release}).
   */
  void notified(String payload) {
    if (payload.startsWith(">")) {
      int space = payload.indexOf(' ');
      if (space > 1) {
        wake(payload.substring(space + 1), payload.substring(1, space));
        return;
      }
    }
    wake(payload, null);
  }

  /** Wakes every waiter of this service (notifications may have been missed). */
  void wakeAll() {
    for (Set<Waiter> s : waiters.values()) {
      for (Waiter w : s) {
        w.signal(false);
      }
    }
  }

  /** A waiter of {@code key} whose place in line is {@code id} (null: it takes none). */
  Waiter register(String key, String id) {
    Waiter w = new Waiter(id == null ? "" : id);
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
    private final String id;
    private long version;
    private boolean asleep;
    /** Whether a release named it the first in line since it last looked ({@link #takeFirst}). */
    private boolean first;

    private Waiter(String id) {
      this.id = id;
    }

    synchronized boolean asleep() {
      return asleep;
    }

    synchronized long version() {
      return version;
    }

    synchronized void signal(boolean first) {
      version++;
      this.first |= first;
      notifyAll();
    }

    /** Whether a release named it the first in line since the last call; clears that. */
    synchronized boolean takeFirst() {
      boolean was = first;
      first = false;
      return was;
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
