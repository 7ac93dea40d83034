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
    super(new ServiceInfo(MemoryProvider.SCHEME, "test", url.toString(), MemoryProvider.CAPABILITIES), settings,
        Ticker.system());
    this.server = server;
  }

  String client() {
    return client;
  }

  MemoryServer server() {
    return server;
  }

  @Override
  protected Lock createLock(String name) {
    return broken(new MemoryLock(this, name, "lock:" + name, MemoryServer.Mode.WRITE, client));
  }

  @Override
  protected ReadWriteLock createReadWriteLock(String name) {
    return new SimpleReadWriteLock(name,
        broken(new MemoryLock(this, name, "rw:" + name, MemoryServer.Mode.READ, client)),
        broken(new MemoryLock(this, name, "rw:" + name, MemoryServer.Mode.WRITE, client)));
  }

  @Override
  protected Semaphore createSemaphore(String name, int maxPermits) {
    return new MemorySemaphore(this, name, maxPermits);
  }

  @Override
  protected LeaderElection createElection(String name) {
    String id = client + "-candidate-" + candidates.incrementAndGet();
    String key = "elect:" + name;
    Lock lock = broken(new MemoryLock(this, name, key, MemoryServer.Mode.WRITE, id));
    return new LockElection(this, name, lock, id, () -> server.holder(client, key));
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
      case LOST_LISTENER_NEVER_CALLED, WAIT_RETURNS_EARLY, CANCEL_LEAKS_LEASE -> new BrokenLock(lock, server.defect());
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

    MemorySemaphore(MemoryService service, String name, int maxPermits) {
      super(service, name, maxPermits);
      this.service = service;
      this.key = "sem:" + name;
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
      return service.server.available(service.client, key, maxPermits());
    }
  }

  /** The defects that live in the client rather than the server. */
  static final class BrokenLock implements Lock {
    private final MemoryLock lock;
    private final Defect defect;
    private final JavaLockAdapter java;

    BrokenLock(MemoryLock lock, Defect defect) {
      this.lock = lock;
      this.defect = defect;
      this.java = new JavaLockAdapter(this);
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
      return defect == Defect.LOST_LISTENER_NEVER_CALLED ? new Forgetful(l) : l;
    }
  }

  /** A lease that accepts lost listeners and never calls them. */
  record Forgetful(Lease lease) implements Lease {
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
      return lease.isValid();
    }

    @Override
    public Duration remaining() {
      return lease.remaining();
    }

    @Override
    public void renew() {
      lease.renew();
    }

    @Override
    public Lease onLost(Consumer<LeaseLostEvent> listener) {
      java.util.Objects.requireNonNull(listener, "listener");
      return this;
    }

    @Override
    public void release() {
      lease.release();
    }

    @Override
    public void close() {
      lease.release();
    }
  }
}
