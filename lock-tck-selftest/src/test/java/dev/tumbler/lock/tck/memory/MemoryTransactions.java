package dev.tumbler.lock.tck.memory;

import dev.tumbler.lock.DeadlockException;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LockMode;
import dev.tumbler.lock.LockTransaction;
import dev.tumbler.lock.TransactionOptions;
import dev.tumbler.lock.spi.Checks;
import dev.tumbler.lock.spi.Deadline;
import dev.tumbler.lock.spi.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Lock transactions for the reference provider, kept by one central manager per server: hierarchical
 * paths (a path conflicts with its ancestors and descendants unless both sides read), and deadlock
 * detection on the wait-for graph after every change. On a cycle, the transaction with the largest id on
 * it surrenders the locks the cycle waits for (requeued behind the others) or, with
 * {@link TransactionOptions#abortOnDeadlock()}, aborts. Grants go to the oldest transaction first, so a
 * surrendered lock reaches the transaction waiting for it. Transaction locks do not expire; they end
 * when the transaction or its service closes. Thread safe.
 */
final class MemoryTransactions {
  private final ReentrantLock mu = new ReentrantLock();
  private final Condition changed = mu.newCondition();
  // by id: the oldest transaction is served first
  private final Map<Long, Tx> open = new TreeMap<>();
  private final Defect defect;
  private long nextId = 1;
  private long nextToken = 1;

  MemoryTransactions(Defect defect) {
    this.defect = defect;
  }

  LockTransaction begin(TransactionOptions options, Ticker ticker, Runnable checkOpen) {
    mu.lock();
    try {
      Tx t = new Tx(nextId++, options.abortOnDeadlock(), ticker, checkOpen);
      open.put(t.id, t);
      return t;
    } finally {
      mu.unlock();
    }
  }

  private static boolean overlap(List<String> a, List<String> b, boolean hierarchical) {
    if (!hierarchical) {
      return a.equals(b);
    }
    int n = Math.min(a.size(), b.size());
    return a.subList(0, n).equals(b.subList(0, n));
  }

  /** Whether {@code t} may hold {@code path} in {@code mode} now. */
  private Optional<Tx> blocker(Tx t, List<String> path, LockMode mode) {
    for (Tx o : open.values()) {
      if (o == t) {
        continue;
      }
      for (Map.Entry<List<String>, LockMode> h : o.heldModes.entrySet()) {
        if (overlap(path, h.getKey(), defect != Defect.HIERARCHY_IGNORED)
            && (mode == LockMode.WRITE || h.getValue() == LockMode.WRITE)) {
          return Optional.of(o);
        }
      }
    }
    return Optional.empty();
  }

  /** Grants what can be granted, then breaks deadlocks, until nothing changes. Under mu. */
  private void settle() {
    boolean progress = true;
    while (progress) {
      progress = false;
      for (Tx t : open.values()) {
        for (Map.Entry<List<String>, LockMode> w : new ArrayList<>(t.wanted.entrySet())) {
          if (blocker(t, w.getKey(), w.getValue()).isEmpty()) {
            t.wanted.remove(w.getKey());
            LockMode had = t.heldModes.put(w.getKey(), w.getValue());
            if (had == LockMode.READ && defect == Defect.UPGRADE_IGNORED) {
              t.heldModes.put(w.getKey(), LockMode.READ);
            }
            if (had == null) {
              t.tokens.put(w.getKey(), nextToken++);
            }
            progress = true;
          }
        }
      }
      if (!progress && defect != Defect.DEADLOCK_UNDETECTED) {
        progress = breakCycle();
      }
    }
    changed.signalAll();
  }

  /** Finds one cycle in the wait-for graph and breaks it; false if there is none. */
  private boolean breakCycle() {
    for (Tx start : open.values()) {
      List<Tx> path = new ArrayList<>();
      Set<Tx> seen = new HashSet<>();
      Tx cur = start;
      while (cur != null && seen.add(cur)) {
        path.add(cur);
        cur = waitsFor(cur);
      }
      if (cur == null) {
        continue;
      }
      List<Tx> cycle = path.subList(path.indexOf(cur), path.size());
      Tx victim = cycle.stream().max((a, b) -> Long.compare(a.id, b.id)).orElseThrow();
      Tx waiter = cycle.get((cycle.indexOf(victim) - 1 + cycle.size()) % cycle.size());
      if (victim.abortOnDeadlock) {
        victim.abort("deadlock with transaction " + waiter.id);
      } else {
        // surrender what the waiter waits for, and ask for it again
        for (List<String> held : new ArrayList<>(victim.heldModes.keySet())) {
          boolean needed = waiter.wanted.entrySet().stream().anyMatch(w -> overlap(w.getKey(), held, true)
              && (w.getValue() == LockMode.WRITE || victim.heldModes.get(held) == LockMode.WRITE));
          if (needed) {
            LockMode m = victim.heldModes.remove(held);
            long token = victim.tokens.remove(held);
            victim.wanted.put(held, m);
            victim.fire(new LeaseLostEvent(String.join("/", held), token, LeaseLostEvent.Reason.DEADLOCK,
                "surrendered to transaction " + waiter.id + " to break a deadlock", Optional.empty()));
          }
        }
      }
      return true;
    }
    return false;
  }

  /** A transaction that blocks one of {@code t}'s wanted locks, if any. */
  private Tx waitsFor(Tx t) {
    for (Map.Entry<List<String>, LockMode> w : t.wanted.entrySet()) {
      Optional<Tx> b = blocker(t, w.getKey(), w.getValue());
      if (b.isPresent()) {
        return b.get();
      }
    }
    return null;
  }

  final class Tx implements LockTransaction {
    final long id;
    final boolean abortOnDeadlock;
    final Ticker ticker;
    final Runnable checkOpen;
    final Map<List<String>, LockMode> wanted = new LinkedHashMap<>();
    final Map<List<String>, LockMode> heldModes = new LinkedHashMap<>();
    final Map<List<String>, Long> tokens = new LinkedHashMap<>();
    final List<Consumer<LeaseLostEvent>> listeners = new CopyOnWriteArrayList<>();
    String abortReason;
    boolean closed;

    Tx(long id, boolean abortOnDeadlock, Ticker ticker, Runnable checkOpen) {
      this.id = id;
      this.abortOnDeadlock = abortOnDeadlock;
      this.ticker = ticker;
      this.checkOpen = checkOpen;
    }

    @Override
    public LockTransaction lock(LockMode mode, String... path) {
      Objects.requireNonNull(path, "path");
      return lock(mode, List.of(path));
    }

    @Override
    public LockTransaction lock(LockMode mode, List<String> path) {
      Objects.requireNonNull(mode, "mode");
      List<String> p = Checks.path(path);
      checkOpen.run();
      mu.lock();
      try {
        if (closed || abortReason != null) {
          throw new IllegalStateException("transaction " + id + " is " + (closed ? "closed" : "aborted"));
        }
        LockMode held = heldModes.get(p);
        if (held == LockMode.WRITE || held == mode) {
          return this;
        }
        LockMode before = wanted.get(p);
        wanted.put(p, before == LockMode.WRITE ? LockMode.WRITE : mode);
        settle();
        return this;
      } finally {
        mu.unlock();
      }
    }

    @Override
    public boolean await(Duration maxWait) throws InterruptedException {
      Deadline deadline = Deadline.after(Checks.maxWait(maxWait), ticker);
      mu.lock();
      try {
        while (true) {
          if (abortReason != null) {
            throw new DeadlockException("transaction " + id + " was aborted: " + abortReason
                + "; every lock it held was released");
          }
          if (closed) {
            throw new IllegalStateException("transaction " + id + " is closed");
          }
          if (wanted.isEmpty()) {
            return true;
          }
          long left = deadline.remainingNanos();
          if (left <= 0) {
            return false;
          }
          changed.awaitNanos(Math.min(left, 50_000_000L));
        }
      } finally {
        mu.unlock();
      }
    }

    @Override
    public Map<List<String>, Long> fencingTokens() {
      mu.lock();
      try {
        return Map.copyOf(tokens);
      } finally {
        mu.unlock();
      }
    }

    @Override
    public LockTransaction onLost(Consumer<LeaseLostEvent> listener) {
      listeners.add(Objects.requireNonNull(listener, "listener"));
      return this;
    }

    void abort(String why) {
      abortReason = why;
      for (Map.Entry<List<String>, Long> e : tokens.entrySet()) {
        fire(new LeaseLostEvent(String.join("/", e.getKey()), e.getValue(), LeaseLostEvent.Reason.DEADLOCK, why,
            Optional.empty()));
      }
      open.remove(id);
      wanted.clear();
      heldModes.clear();
      tokens.clear();
    }

    void fire(LeaseLostEvent e) {
      for (Consumer<LeaseLostEvent> l : listeners) {
        try {
          l.accept(e);
        } catch (RuntimeException ignored) {
          // a listener's failure is its own
        }
      }
    }

    @Override
    public void close() {
      mu.lock();
      try {
        if (closed) {
          return;
        }
        closed = true;
        open.remove(id);
        wanted.clear();
        heldModes.clear();
        tokens.clear();
        settle();
      } finally {
        mu.unlock();
      }
    }
  }
}
