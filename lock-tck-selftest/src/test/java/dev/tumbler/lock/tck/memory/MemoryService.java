package dev.tumbler.lock.tck.memory;

import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockTransaction;
import dev.tumbler.lock.ReadWriteLock;
import dev.tumbler.lock.Semaphore;
import dev.tumbler.lock.ServiceInfo;
import dev.tumbler.lock.TransactionOptions;
import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.AbstractLock;
import dev.tumbler.lock.spi.AbstractLockService;
import dev.tumbler.lock.spi.AbstractSemaphore;
import dev.tumbler.lock.spi.Deadline;
import dev.tumbler.lock.spi.JavaLockAdapter;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.lock.spi.LockElection;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.lock.spi.SimpleReadWriteLock;
import dev.tumbler.lock.spi.Ticker;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/** One client of a {@link MemoryServer}. Thread safe. */
final class MemoryService extends AbstractLockService {
  private static final AtomicLong CLIENTS = new AtomicLong();

  private final MemoryServer server;
  private final String client = "client-" + CLIENTS.incrementAndGet();
  private final AtomicLong candidates = new AtomicLong();
  private final java.util.Set<LockTransaction> transactions = java.util.concurrent.ConcurrentHashMap.newKeySet();

  MemoryService(LockUrl url, LeaseSettings settings, MemoryServer server) {
    super(new ServiceInfo(MemoryProvider.SCHEME, "test", infoUrl(url, server.defect()), MemoryProvider.CAPABILITIES),
        settings, Ticker.system());
    this.server = server;
  }

  /** The redacted URL; with {@link Defect#INFO_URL_SHOWS_PROPERTIES_SECRET}, rebuilt from its parts, password and all. */
  private static String infoUrl(LockUrl url, Defect defect) {
    if (defect != Defect.INFO_URL_SHOWS_PROPERTIES_SECRET || url.password().isEmpty()) {
      return url.toString();
    }
    return "lock:" + url.scheme() + ":" + url.opaque() + ";password=" + url.password().get();
  }

  /**
   * The server key of {@code kind} and {@code name} in this service's namespace. The namespace goes in
   * behind its length, so no (namespace, name) pair meets another; {@link Defect#NAMESPACE_JOINED} joins
   * them with {@code /} instead.
   */
  private String key(String kind, String name) {
    String ns = settings().namespace();
    if (server.defect() == Defect.NAMESPACE_JOINED) {
      return kind + ":" + (ns.isEmpty() ? name : ns + "/" + name);
    }
    return ns.length() + ":" + ns + "|" + kind + ":" + name;
  }

  String client() {
    return client;
  }

  MemoryServer server() {
    return server;
  }

  @Override
  protected Lock createLock(String name) {
    return broken(new MemoryLock(this, name, key("lock", name), MemoryServer.Mode.WRITE, client));
  }

  @Override
  protected ReadWriteLock createReadWriteLock(String name) {
    return new SimpleReadWriteLock(name,
        broken(new MemoryLock(this, name, rwKey(name), MemoryServer.Mode.READ, client)),
        broken(new MemoryLock(this, name, rwKey(name), MemoryServer.Mode.WRITE, client)));
  }

  private String rwKey(String name) {
    return key("rw", server.defect() == Defect.READ_WRITE_NAMES_SHARED ? "shared" : name);
  }

  @Override
  protected Semaphore createSemaphore(String name, int maxPermits) {
    return new MemorySemaphore(this, name, key("sem", name), maxPermits);
  }

  @Override
  protected LeaderElection createElection(String name) {
    String id = client + "-candidate-" + candidates.incrementAndGet();
    String key = key("elect", name);
    Lock lock = broken(new MemoryLock(this, name, key, MemoryServer.Mode.WRITE, id));
    LeaderElection e = new LockElection(this, name, lock, id, () -> server.holder(client, key));
    return switch (server.defect()) {
      case ELECTION_LOSS_HEARD_LATE, STALE_LEADER -> new BrokenElection(e, server.defect(), settings().leaseTime());
      default -> e;
    };
  }

  /** An election with one of the election defects; everything else goes to the real one. */
  record BrokenElection(LeaderElection election, Defect defect, Duration late) implements LeaderElection {
    private static final java.util.Map<LeaderElection, String> FIRST_SEEN =
        java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());

    @Override
    public String name() {
      return election.name();
    }

    @Override
    public String candidateId() {
      return election.candidateId();
    }

    @Override
    public LeaderElection join() {
      election.join();
      return this;
    }

    @Override
    public boolean isLeader() {
      return election.isLeader();
    }

    @Override
    public boolean awaitLeadership(Duration maxWait) throws InterruptedException {
      return election.awaitLeadership(maxWait);
    }

    @Override
    public Optional<Lease> leadership() {
      return election.leadership();
    }

    @Override
    public Optional<String> leader() {
      Optional<String> now = election.leader();
      if (defect != Defect.STALE_LEADER) {
        return now;
      }
      String first = now.isEmpty() ? FIRST_SEEN.get(election) : FIRST_SEEN.computeIfAbsent(election, k -> now.get());
      return Optional.ofNullable(first);
    }

    @Override
    public LeaderElection onLeadershipChange(Consumer<Boolean> listener) {
      if (defect != Defect.ELECTION_LOSS_HEARD_LATE) {
        election.onLeadershipChange(listener);
        return this;
      }
      election.onLeadershipChange(leads -> {
        if (leads) {
          listener.accept(true);
        } else {
          Thread.ofVirtual().start(() -> {
            try {
              Thread.sleep(late);
            } catch (InterruptedException e) {
              return;
            }
            listener.accept(false);
          });
        }
      });
      return this;
    }

    @Override
    public void resign() {
      election.resign();
    }

    @Override
    public void close() {
      election.close();
    }
  }

  @Override
  protected LockTransaction createTransaction(TransactionOptions options) {
    LockTransaction t = server.transactions().begin(options, ticker(), this::checkOpen);
    transactions.add(t);
    return t;
  }

  @Override
  protected void doClose() {
    // the server lives as long as its target; this client's transactions end with it
    for (LockTransaction t : transactions) {
      t.close();
    }
  }

  private Lock broken(MemoryLock lock) {
    return switch (server.defect()) {
      case LOST_LISTENER_NEVER_CALLED, WAIT_RETURNS_EARLY, CANCEL_LEAKS_LEASE, THREAD_OWNED_RELEASE, LISTENERS_REVERSED, LISTENERS_ON_OTHER_THREAD,
          THROWING_LISTENER_STOPS_OTHERS, LOST_LISTENER_TWICE, IS_VALID_ASKS_BACKEND, RENEW_HIDES_FAILURE, RENEW_FAILURE_EXPIRES,
          JAVA_LOCK_INTERRUPTIBLE, REMAINING_FROZEN, RELEASE_BY_CLIENT -> new BrokenLock(lock, server.defect());
      default -> lock;
    };
  }

  /** A lease on the server. */
  final class MemoryLease extends AbstractLease {
    private final String key;
    private final long grantId;
    private final boolean permitsLease;

    /**
     * The lease's term counts from the server's grant, not from when the (possibly long) wait began: a
     * grant after a wait of more than the term would otherwise be born expired. Counting from the grant is
     * safe here only because server and client share one clock.
     */
    MemoryLease(String name, String key, MemoryServer.Grant g, boolean permitsLease) {
      super(name, g.token(), g.permits(), MemoryService.this.settings(), MemoryService.this.ticker(), g.grantedAt());
      this.key = key;
      this.grantId = g.id();
      this.permitsLease = permitsLease;
    }

    @Override
    protected boolean doRenew() {
      return server.renew(client, key, grantId);
    }

    @Override
    protected void doRelease() {
      if (permitsLease && isClosed() && server.defect() == Defect.PERMIT_LEAKED_ON_CLOSE) {
        return;
      }
      server.release(client, key, grantId);
    }
  }

  static final class MemoryLock extends AbstractLock {
    private final MemoryService service;
    private final String key;
    private final MemoryServer.Mode mode;
    private final String label;

    MemoryLock(MemoryService service, String name, String key, MemoryServer.Mode mode, String label) {
      super(service, name);
      this.service = service;
      this.key = key;
      this.mode = mode;
      this.label = label;
    }

    @Override
    protected AbstractLease doAcquire(Deadline deadline) throws InterruptedException {
      MemoryServer.Grant g = service.server.acquire(service.client, label, key, 1, mode, 1, deadline);
      return g == null ? null : service.new MemoryLease(name(), key, g, false);
    }
  }

  static final class MemorySemaphore extends AbstractSemaphore {
    private final MemoryService service;
    private final String key;

    MemorySemaphore(MemoryService service, String name, String key, int maxPermits) {
      super(service, name, maxPermits);
      this.service = service;
      this.key = key;
    }

    @Override
    protected AbstractLease doAcquire(int permits, Deadline deadline) throws InterruptedException {
      MemoryServer.Grant g = service.server.acquire(service.client, service.client, key, maxPermits(),
          MemoryServer.Mode.WRITE, permits, deadline);
      return g == null ? null : service.new MemoryLease(name(), key, g, true);
    }

    @Override
    public int availablePermits() {
      service.checkOpen();
      int free = service.server.available(service.client, key, maxPermits());
      return service.server.defect() == Defect.AVAILABLE_PERMITS_WRONG ? maxPermits() : free;
    }
  }

  /** The defects that live in the client rather than the server. */
  static final class BrokenLock implements Lock {
    private final MemoryLock lock;
    private final Defect defect;
    private final java.util.concurrent.locks.Lock java;

    BrokenLock(MemoryLock lock, Defect defect) {
      this.lock = lock;
      this.defect = defect;
      JavaLockAdapter adapter = new JavaLockAdapter(this);
      this.java = defect == Defect.JAVA_LOCK_INTERRUPTIBLE ? new Interruptible(adapter) : adapter;
    }

    @Override
    public String name() {
      return lock.name();
    }

    @Override
    public Lease acquire() throws InterruptedException {
      return wrap(lock.acquire());
    }

    @Override
    public Optional<Lease> tryAcquire(Duration maxWait) throws InterruptedException {
      Duration w = defect == Defect.WAIT_RETURNS_EARLY && maxWait != null ? maxWait.dividedBy(2) : maxWait;
      return lock.tryAcquire(w).map(this::wrap);
    }

    @Override
    public CompletableFuture<Lease> acquireAsync(Duration maxWait) {
      if (defect != Defect.CANCEL_LEAKS_LEASE) {
        return dev.tumbler.lock.spi.AsyncAcquire.start(this, maxWait, MemoryProvider.SCHEME);
      }
      CompletableFuture<Lease> f = new CompletableFuture<>();
      Thread.ofVirtual().start(() -> {
        try {
          Optional<Lease> l = lock.tryAcquire(maxWait);
          l.ifPresent(f::complete); // a cancelled future keeps its lease: the leak
          if (l.isEmpty()) {
            f.completeExceptionally(new dev.tumbler.lock.LockTimeoutException("timed out"));
          }
        } catch (Throwable e) {
          f.completeExceptionally(e);
        }
      });
      return f;
    }

    @Override
    public java.util.concurrent.locks.Lock asJavaLock() {
      return java;
    }

    private Lease wrap(Lease l) {
      return switch (defect) {
        case WAIT_RETURNS_EARLY, CANCEL_LEAKS_LEASE, JAVA_LOCK_INTERRUPTIBLE -> l;
        default -> new BrokenLease((MemoryLease) l, defect, lock.service);
      };
    }
  }

  /** A java lock whose {@code lock()} gives up on interrupt: {@link Defect#JAVA_LOCK_INTERRUPTIBLE}. */
  record Interruptible(JavaLockAdapter adapter) implements java.util.concurrent.locks.Lock {
    @Override
    public void lock() {
      try {
        adapter.lockInterruptibly();
      } catch (InterruptedException e) {
        throw new IllegalStateException("interrupted", e);
      }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
      adapter.lockInterruptibly();
    }

    @Override
    public boolean tryLock() {
      return adapter.tryLock();
    }

    @Override
    public boolean tryLock(long time, java.util.concurrent.TimeUnit unit) throws InterruptedException {
      return adapter.tryLock(time, unit);
    }

    @Override
    public void unlock() {
      adapter.unlock();
    }

    @Override
    public java.util.concurrent.locks.Condition newCondition() {
      return adapter.newCondition();
    }
  }

  /** A lease with one of the client-side lease defects; every other call goes to the real lease. */
  static final class BrokenLease implements Lease {
    private final MemoryLease lease;
    private final Defect defect;
    private final MemoryService service;
    private final Thread owner = Thread.currentThread();
    private final java.util.List<Consumer<LeaseLostEvent>> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();

    BrokenLease(MemoryLease lease, Defect defect, MemoryService service) {
      this.lease = lease;
      this.defect = defect;
      this.service = service;
      if (defect == Defect.LISTENERS_REVERSED || defect == Defect.THROWING_LISTENER_STOPS_OTHERS) {
        lease.onLost(this::fire);
      }
    }

    private void fire(LeaseLostEvent e) {
      java.util.List<Consumer<LeaseLostEvent>> order = new java.util.ArrayList<>(listeners);
      if (defect == Defect.LISTENERS_REVERSED) {
        java.util.Collections.reverse(order);
        order.forEach(l -> {
          try {
            l.accept(e);
          } catch (RuntimeException ignored) {
            // reversed, but a throwing one stops nothing
          }
        });
      } else {
        order.forEach(l -> l.accept(e));
      }
    }

    @Override
    public String name() {
      return lease.name();
    }

    @Override
    public long fencingToken() {
      return lease.fencingToken();
    }

    @Override
    public boolean isValid() {
      if (defect == Defect.IS_VALID_ASKS_BACKEND) {
        return lease.isValid() && service.server.renew(service.client, lease.key, lease.grantId);
      }
      return lease.isValid();
    }

    @Override
    public Duration remaining() {
      return defect == Defect.REMAINING_FROZEN && lease.isValid() ? service.settings().leaseTime() : lease.remaining();
    }

    @Override
    public void renew() {
      try {
        lease.renew();
      } catch (dev.tumbler.lock.ServiceUnavailableException e) {
        if (defect == Defect.RENEW_FAILURE_EXPIRES) {
          lease.markLost(LeaseLostEvent.Reason.EXPIRED, "renewal failed", e);
        }
        if (defect != Defect.RENEW_HIDES_FAILURE) {
          throw e;
        }
      }
    }

    @Override
    public Lease onLost(Consumer<LeaseLostEvent> listener) {
      java.util.Objects.requireNonNull(listener, "listener");
      switch (defect) {
        case LOST_LISTENER_NEVER_CALLED -> { }
        case LISTENERS_REVERSED, THROWING_LISTENER_STOPS_OTHERS -> {
          if (lease.isValid()) {
            listeners.add(listener);
          } else {
            lease.onLost(listener);
          }
        }
        case LOST_LISTENER_TWICE -> lease.onLost(listener).onLost(listener);
        case LISTENERS_ON_OTHER_THREAD -> lease.onLost(e -> Thread.ofVirtual().start(() -> listener.accept(e)));
        default -> lease.onLost(listener);
      }
      return this;
    }

    @Override
    public void release() {
      if (defect == Defect.RELEASE_BY_CLIENT) {
        lease.release();
        service.server.releaseAllOf(service.client, lease.key);
        return;
      }
      if (defect != Defect.THREAD_OWNED_RELEASE || Thread.currentThread() == owner) {
        lease.release();
      }
    }

    @Override
    public void close() {
      release();
    }
  }
}
