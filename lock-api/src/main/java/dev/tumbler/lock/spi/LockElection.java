package dev.tumbler.lock.spi;

import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.ServiceClosedException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Leader election over any {@link Lock}: a candidate campaigns by acquiring the lock on a virtual thread;
 * holding it is leadership, and its lease is the term (with the lock's fencing token). When the lease is
 * lost, the candidate stops being leader and campaigns again; {@link #resign()} releases it and stops.
 * Fair when the lock is fair. Thread safe.
 *
 * <p>Listeners run on the campaign thread: {@code true} after the grant, then {@code false} once the term
 * ends, before anyone else can lead. On a loss, the lease's lost listener (on the thread that detected it,
 * which the lease contract places before the backend can grant the lock to another candidate) wakes the
 * campaign thread and waits until the listeners have heard {@code false}; on resign the campaign thread tells
 * them before it gives the lease back. A term lost before it was announced is announced neither way.
 *
 * <p>A candidate whose term was lost gives the lease back and waits one lease term before it campaigns
 * again, so that another candidate takes over: a leader whose process keeps pausing does not keep winning
 * leadership back from the others.
 */
public final class LockElection implements LeaderElection {
  private static final System.Logger LOG = System.getLogger(LockElection.class.getName());
  private static final long RETRY_NANOS = Duration.ofMillis(200).toNanos();

  private final AbstractLockService service;
  private final String name;
  private final Lock lock;
  private final String candidateId;
  private final Supplier<Optional<String>> leaderLookup;
  private final List<Consumer<Boolean>> listeners = new CopyOnWriteArrayList<>();
  private final Object monitor = new Object();
  // guarded by monitor
  private boolean joined;
  private Thread campaign;
  private Lease term;

  /**
   * @param service the service the election belongs to
   * @param name the election's name
   * @param lock the lock whose holder is leader
   * @param candidateId this candidate's id
   * @param leaderLookup asks the backend who leads when this candidate does not (may return empty)
   */
  public LockElection(AbstractLockService service, String name, Lock lock, String candidateId,
      Supplier<Optional<String>> leaderLookup) {
    this.service = Objects.requireNonNull(service, "service");
    this.name = Checks.name(name);
    this.lock = Objects.requireNonNull(lock, "lock");
    this.candidateId = Checks.name(candidateId, "candidateId");
    this.leaderLookup = Objects.requireNonNull(leaderLookup, "leaderLookup");
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public String candidateId() {
    return candidateId;
  }

  @Override
  public LeaderElection join() {
    service.checkOpen();
    synchronized (monitor) {
      if (!joined) {
        joined = true;
        campaign = Thread.ofVirtual().name("tumbler-election-" + name).start(this::campaign);
      }
    }
    return this;
  }

  @Override
  public boolean isLeader() {
    Lease t;
    synchronized (monitor) {
      t = term;
    }
    return t != null && t.isValid();
  }

  @Override
  public boolean awaitLeadership(Duration maxWait) throws InterruptedException {
    Deadline deadline = Deadline.after(Checks.maxWait(maxWait), service.ticker());
    synchronized (monitor) {
      if (!joined) {
        throw new IllegalStateException("election '" + name + "': call join() before awaiting leadership");
      }
      while (!(term != null && term.isValid())) {
        long left = deadline.remainingNanos();
        if (left <= 0 || !joined) {
          return false;
        }
        service.checkOpen();
        long ms = Math.max(1, Math.min(left / 1_000_000, 100));
        monitor.wait(ms);
      }
      return true;
    }
  }

  @Override
  public Optional<Lease> leadership() {
    synchronized (monitor) {
      return term != null && term.isValid() ? Optional.of(term) : Optional.empty();
    }
  }

  @Override
  public Optional<String> leader() {
    if (isLeader()) {
      return Optional.of(candidateId);
    }
    try {
      return leaderLookup.get();
    } catch (LockException e) {
      return Optional.empty();
    }
  }

  @Override
  public LeaderElection onLeadershipChange(Consumer<Boolean> listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
    return this;
  }

  @Override
  public void resign() {
    Thread t;
    synchronized (monitor) {
      if (!joined) {
        return;
      }
      joined = false;
      t = campaign;
      monitor.notifyAll();
    }
    if (t != null) {
      t.interrupt();
      try {
        t.join(Duration.ofSeconds(10));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void close() {
    resign();
  }

  private boolean stillJoined() {
    synchronized (monitor) {
      return joined;
    }
  }

  private void campaign() {
    Thread self = Thread.currentThread();
    while (stillJoined() && !service.isClosed()) {
      Lease lease;
      try {
        lease = lock.acquire();
      } catch (InterruptedException e) {
        continue;
      } catch (ServiceClosedException e) {
        break;
      } catch (LockException e) {
        LOG.log(System.Logger.Level.DEBUG, "election '" + name + "': campaign failed, retrying: " + e);
        java.util.concurrent.locks.LockSupport.parkNanos(RETRY_NANOS);
        continue;
      }
      CountDownLatch lost = new CountDownLatch(1);
      CompletableFuture<Void> told = new CompletableFuture<>();
      lease.onLost(e -> {
        lost.countDown();
        if (Thread.currentThread() != self) {
          // the thread that detected the loss waits while this campaign thread tells the listeners, so that
          // the lease is not given back, nor another lost listener run, before they have heard false
          told.join(); // uninterruptible: the loss must not outrun the listeners
        }
      });
      synchronized (monitor) {
        if (!joined) {
          lease.release();
          break;
        }
        term = lease;
        monitor.notifyAll();
      }
      boolean announced = lease.isValid();
      if (announced) {
        fire(true);
      }
      try {
        lost.await();
      } catch (InterruptedException e) {
        // resigned (or the thread was interrupted otherwise; the loop decides)
      }
      synchronized (monitor) {
        term = null;
      }
      if (announced) {
        fire(false);
      }
      told.complete(null);
      if (!service.isClosed()) {
        // close() gives the lease back itself, after its lost listeners and before it closes the backend
        lease.release();
      }
      if (lost.getCount() == 0) {
        standAside();
      }
    }
  }

  /**
   * After a lost term, waits one lease term (or until resigned) before campaigning again: the release
   * above wakes the other candidates, and this one, on the same thread, would otherwise win the lock back
   * before they hear of it — a leader whose process keeps pausing would keep taking leadership back and
   * losing it, and the others would never lead.
   */
  private void standAside() {
    LeaseSettings s = service.settings();
    long nanos = s.expires() ? s.leaseTime().toNanos() : RETRY_NANOS;
    Deadline until = Deadline.after(Duration.ofNanos(nanos), service.ticker());
    synchronized (monitor) {
      while (joined && !until.isExpired() && !service.isClosed()) {
        try {
          monitor.wait(Math.max(1, Math.min(until.remainingNanos() / 1_000_000, 100)));
        } catch (InterruptedException e) {
          // resigned (the loop looks at joined)
        }
      }
    }
  }

  private void fire(boolean leader) {
    for (Consumer<Boolean> l : listeners) {
      try {
        l.accept(leader);
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "a leadership listener of election '" + name + "' threw", e);
      }
    }
  }

  @Override
  public String toString() {
    return "LockElection[" + name + ", candidate " + candidateId + (isLeader() ? ", leader" : "") + "]";
  }
}
