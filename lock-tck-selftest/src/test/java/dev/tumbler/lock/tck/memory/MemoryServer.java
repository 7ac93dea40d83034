package dev.tumbler.lock.tck.memory;

import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.Deadline;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The "backend" of the reference provider: an in-memory lock server shared by every client (service)
 * opened on the same URL in this JVM. It keeps, per resource, the grants (each with a lease that ends
 * {@code leaseTime} after the last acquire or renew the server received) and a FIFO queue of waiting
 * requests; it grants from the head of the queue while the head is compatible, so it is fair.
 * Fencing tokens come from one counter, so they strictly increase over every grant.
 *
 * <p>Faults: a client can be cut off (every call from it fails with {@link ServiceUnavailableException},
 * as a partition would) and healed. The server stands for a replicated backend of three replicas: one of
 * them can crash or be partitioned away ({@link #minorityFault}); the other two are a majority, so it
 * goes on serving as if nothing happened. All state is guarded by one lock; waits poll every few ms so that
 * expiries are noticed without a timer thread. Thread safe.
 */
final class MemoryServer {
  private static final Map<String, MemoryServer> SERVERS = new ConcurrentHashMap<>();
  private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
  private static final long SEED_TRIP_NANOS = TimeUnit.MICROSECONDS.toNanos(200);
  private static final long LATE_RELEASE_NANOS = TimeUnit.SECONDS.toNanos(2);

  enum Mode { READ, WRITE }

  /**
   * A grant the server made; {@code grantedAt} is the server's {@link System#nanoTime()} when it made it
   * (the same clock as the clients', since they share the JVM).
   */
  record Grant(long id, String client, String label, Mode mode, int permits, long token, long grantedAt) {}

  private static final class Held {
    final Grant grant;
    long expiresAt;

    Held(Grant grant, long expiresAt) {
      this.grant = grant;
      this.expiresAt = expiresAt;
    }
  }

  private static final class Request {
    final String client;
    final String label;
    final Mode mode;
    final int permits;
    Grant granted;

    Request(String client, String label, Mode mode, int permits) {
      this.client = client;
      this.label = label;
      this.mode = mode;
      this.permits = permits;
    }
  }

  private static final class Resource {
    final int capacity;
    final List<Held> held = new ArrayList<>();
    final Deque<Request> queue = new ArrayDeque<>();

    Resource(int capacity) {
      this.capacity = capacity;
    }
  }

  private final String name;
  private final long leaseNanos;
  private final Defect defect;
  private final ReentrantLock mu = new ReentrantLock();
  private final Condition changed = mu.newCondition();
  private final Map<String, Resource> resources = new HashMap<>();
  private final Set<String> cutOff = ConcurrentHashMap.newKeySet();
  private final MemoryTransactions transactions;
  private long nextToken = 1;
  private long lastReleasedToken = -1;
  private long nextId = 1;

  private MemoryServer(String name, long leaseNanos, Defect defect) {
    this.name = name;
    this.leaseNanos = leaseNanos;
    this.defect = defect;
    this.transactions = new MemoryTransactions(defect);
  }

  MemoryTransactions transactions() {
    return transactions;
  }

  /** The server of {@code name}, started on first use. */
  static MemoryServer get(String name, long leaseNanos, Defect defect) {
    return SERVERS.computeIfAbsent(name, n -> new MemoryServer(n, leaseNanos, defect));
  }

  /** The running server of {@code name}. */
  static MemoryServer get(String name) {
    MemoryServer s = SERVERS.get(name);
    if (s == null) {
      throw new IllegalStateException("no tck-memory server '" + name + "' is running");
    }
    return s;
  }

  /** Forgets the server of {@code name}. */
  static void stop(String name) {
    SERVERS.remove(name);
  }

  Defect defect() {
    return defect;
  }

  void cutOff(String client) {
    cutOff.add(client);
    signal();
  }

  void heal(String client) {
    cutOff.remove(client);
  }

  /**
   * One of the three replicas fails ({@code true}: crashed or partitioned away) or comes back. The two
   * others keep every grant. With {@link Defect#MINORITY_FAULT_DROPS_GRANTS} the server forgets every grant
   * when a replica fails, as a backend that keeps its grants on one replica would.
   */
  void minorityFault(boolean failed) {
    mu.lock();
    try {
      if (failed && defect == Defect.MINORITY_FAULT_DROPS_GRANTS) {
        for (Resource r : resources.values()) {
          r.held.clear();
        }
        changed.signalAll();
      }
    } finally {
      mu.unlock();
    }
  }

  private void reachable(String client) {
    if (cutOff.contains(client)) {
      throw new ServiceUnavailableException("tck-memory server '" + name + "' does not answer client " + client
          + " (cut off)");
    }
  }

  /**
   * Asks for {@code permits} of {@code key} (capacity {@code capacity}) in {@code mode}, waiting until
   * {@code deadline}.
   *
   * @return the grant, or null when the deadline passed
   * @throws InterruptedException if interrupted; the request is withdrawn and nothing stays held
   */
  Grant acquire(String client, String label, String key, int capacity, Mode mode, int permits, Deadline deadline)
      throws InterruptedException {
    reachable(client);
    String k0 = mapped(key);
    mu.lock();
    try {
      Resource r = resources.computeIfAbsent(k0, k -> new Resource(capacity));
      Request req = new Request(client, label, mode, permits);
      if (defect == Defect.UNFAIR) {
        r.queue.addFirst(req);
      } else {
        r.queue.addLast(req);
      }
      try {
        while (true) {
          expire(r);
          grant(r);
          if (req.granted != null) {
            if (defect == Defect.TOKEN_COUNTER_RESTARTS) {
              // the "second round trip" that would seed a new counter: the caller may go away before it
              changed.awaitNanos(SEED_TRIP_NANOS);
            }
            if (defect == Defect.GRANT_AT_DEADLINE_FREED && !deadline.isNone() && deadline.total().isPositive()
                && deadline.isExpired()) {
              removeGrant(r, req.granted.id());
              changed.signalAll();
            }
            return req.granted;
          }
          if (cutOff.contains(client)) {
            r.queue.remove(req);
            reachable(client);
          }
          long left = deadline.remainingNanos();
          if (left <= 0) {
            r.queue.remove(req);
            changed.signalAll();
            return null;
          }
          changed.awaitNanos(Math.min(left, POLL_NANOS));
        }
      } catch (InterruptedException | RuntimeException e) {
        r.queue.remove(req);
        if (req.granted != null) {
          if (defect == Defect.TOKEN_COUNTER_RESTARTS) {
            nextToken = 1;
          }
          removeGrant(r, req.granted.id());
        }
        changed.signalAll();
        throw e;
      }
    } finally {
      mu.unlock();
    }
  }

  /** Extends a grant by a full term; false if it is no longer held. */
  boolean renew(String client, String key, long grantId) {
    return read(client, key, false, r -> {
      for (Held h : r.held) {
        if (h.grant.id() == grantId) {
          if (defect != Defect.RENEW_DOES_NOTHING) {
            h.expiresAt = System.nanoTime() + leaseNanos;
          }
          return true;
        }
      }
      return false;
    });
  }

  /** Ends a grant if it is still held. */
  void release(String client, String key, long grantId) {
    reachable(client);
    if (defect == Defect.RELEASE_FREES_LATE) {
      Thread.ofVirtual().start(() -> {
        java.util.concurrent.locks.LockSupport.parkNanos(LATE_RELEASE_NANOS);
        releaseNow(key, grantId);
      });
      return;
    }
    releaseNow(key, grantId);
  }

  /** Ends every grant {@code client} holds on {@code key}: {@link Defect#RELEASE_BY_CLIENT}. */
  void releaseAllOf(String client, String key) {
    reachable(client);
    String k = mapped(key);
    mu.lock();
    try {
      Resource r = resources.get(k);
      if (r != null) {
        for (Held h : List.copyOf(r.held)) {
          if (h.grant.client().equals(client)) {
            removeGrant(r, h.grant.id());
          }
        }
        grant(r);
        changed.signalAll();
      }
    } finally {
      mu.unlock();
    }
  }

  private void releaseNow(String key, long grantId) {
    key = mapped(key);
    mu.lock();
    try {
      Resource r = resources.get(key);
      if (r != null) {
        removeGrant(r, grantId);
        grant(r);
        changed.signalAll();
      }
    } finally {
      mu.unlock();
    }
  }

  /** The label of a holder of {@code key}, if any (the leader of an election). */
  Optional<String> holder(String client, String key) {
    return read(client, key, Optional.empty(),
        r -> r.held.isEmpty() ? Optional.empty() : Optional.of(r.held.get(0).grant.label()));
  }

  /** Permits not held on {@code key}. */
  int available(String client, String key, int capacity) {
    return read(client, key, capacity, r -> r.capacity - r.held.stream().mapToInt(h -> h.grant.permits()).sum());
  }

  /**
   * Applies {@code action} under the lock to the resource of {@code key}, its expired grants dropped first;
   * {@code absent} if the resource was never used.
   */
  private <T> T read(String client, String key, T absent, Function<Resource, T> action) {
    reachable(client);
    String k = mapped(key);
    mu.lock();
    try {
      Resource r = resources.get(k);
      if (r == null) {
        return absent;
      }
      expire(r);
      return action.apply(r);
    } finally {
      mu.unlock();
    }
  }

  private String mapped(String key) {
    return defect == Defect.NAME_COLLISION ? key.replaceAll("[^\\p{Alnum}]", "_") : key;
  }

  private void signal() {
    mu.lock();
    try {
      changed.signalAll();
    } finally {
      mu.unlock();
    }
  }

  private void removeGrant(Resource r, long grantId) {
    for (Iterator<Held> it = r.held.iterator(); it.hasNext(); ) {
      Held h = it.next();
      if (h.grant.id() == grantId || defect == Defect.STALE_RELEASE_FREES_OTHERS && r.capacity == 1) {
        it.remove();
        lastReleasedToken = h.grant.token();
      }
    }
  }

  private void expire(Resource r) {
    if (defect == Defect.LEASE_NEVER_EXPIRES || defect == Defect.PERMITS_NEVER_EXPIRE && r.capacity > 1) {
      return;
    }
    long now = System.nanoTime();
    if (r.held.removeIf(h -> now - h.expiresAt >= 0)) {
      changed.signalAll();
    }
  }

  /** Grants from the head of the queue while the head fits. */
  private void grant(Resource r) {
    boolean any = false;
    while (!r.queue.isEmpty()) {
      Request head = r.queue.peekFirst();
      if (!fits(r, head)) {
        break;
      }
      r.queue.pollFirst();
      long token;
      if (defect == Defect.REPEATED_TOKEN && lastReleasedToken > 0) {
        token = lastReleasedToken;
        lastReleasedToken = -1;
      } else {
        token = nextToken++;
      }
      long now = System.nanoTime();
      head.granted = new Grant(nextId++, head.client, head.label, head.mode, head.permits, token, now);
      r.held.add(new Held(head.granted, now + leaseNanos));
      any = true;
    }
    if (any) {
      changed.signalAll();
    }
  }

  private boolean fits(Resource r, Request q) {
    int used = 0;
    boolean writer = false;
    for (Held h : r.held) {
      used += h.grant.permits();
      writer |= h.grant.mode() == Mode.WRITE;
    }
    if (q.mode == Mode.READ) {
      return !writer || defect == Defect.READER_BESIDE_WRITER;
    }
    if (r.capacity == 1 && defect == Defect.NO_EXCLUSION) {
      return true;
    }
    if (r.capacity > 1) {
      // a semaphore: permits
      return used + q.permits <= r.capacity + (defect == Defect.PERMIT_OVERCOUNT ? 1 : 0);
    }
    return r.held.isEmpty();
  }
}
