package dev.tumbler.lock.spi;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.ProviderInfo;
import dev.tumbler.lock.ServiceInfo;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A tiny in-JVM lock backend for testing the SPI helpers: one fair semaphore per name, a global fencing
 * counter, and counters of backend calls. Leases never expire on this backend; renewal succeeds unless
 * {@link #renewOutcome} says otherwise.
 */
public final class TestBackend {
  final Map<String, Semaphore> locks = new ConcurrentHashMap<>();
  final AtomicLong fencing = new AtomicLong();
  final AtomicInteger renewCalls = new AtomicInteger();
  final AtomicInteger releaseCalls = new AtomicInteger();
  volatile Boolean renewOutcome = Boolean.TRUE; // null: throw
  volatile java.util.concurrent.CountDownLatch renewGate; // non-null: renewals hang until it opens
  /** Non-null: acquires hang until it opens, deaf to interrupts and deadlines (a socket read that hangs). */
  volatile java.util.concurrent.CountDownLatch acquireGate;

  Semaphore sem(String name) {
    return locks.computeIfAbsent(name, n -> new Semaphore(1, true));
  }

  TestService open(LeaseSettings settings, Ticker ticker) {
    ServiceInfo info = new ServiceInfo("test", "1", "lock:test:mem",
        EnumSet.of(Capability.MUTEX, Capability.FENCING, Capability.LEADER_ELECTION));
    return new TestService(info, settings, ticker);
  }

  final class TestService extends AbstractLockService {
    volatile boolean doCloseCalled;

    TestService(ServiceInfo info, LeaseSettings settings, Ticker ticker) {
      super(info, settings, ticker);
    }

    @Override
    protected Lock createLock(String name) {
      return new TestLock(this, name);
    }

    @Override
    protected LeaderElection createElection(String name) {
      return new LockElection(this, name, createLock("election/" + name), "candidate-" + System.identityHashCode(this),
          Optional::empty);
    }

    @Override
    protected void doClose() {
      doCloseCalled = true;
    }

    @Override
    protected Object unwrapProvider(Class<?> type) {
      return type == TestBackend.class ? TestBackend.this : null;
    }
  }

  final class TestLock extends AbstractLock {
    TestLock(AbstractLockService service, String name) {
      super(service, name);
    }

    @Override
    protected AbstractLease doAcquire(Deadline deadline) throws InterruptedException {
      long sent = service().ticker().read();
      Semaphore s = sem(name());
      java.util.concurrent.CountDownLatch gate = acquireGate;
      if (gate != null) {
        boolean interrupted = false;
        while (true) {
          try {
            gate.await();
            break;
          } catch (InterruptedException e) {
            interrupted = true;
          }
        }
        // the answer arrives late: granted if free, whoever still waits for it
        boolean ok = s.tryAcquire();
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
        return ok ? new TestLease(name(), fencing.incrementAndGet(), service().settings(), service().ticker(), sent, s) : null;
      }
      boolean ok = deadline.isNone() ? acquire(s) : s.tryAcquire(deadline.remainingNanos(), TimeUnit.NANOSECONDS);
      return ok ? new TestLease(name(), fencing.incrementAndGet(), service().settings(), service().ticker(), sent, s) : null;
    }

    private boolean acquire(Semaphore s) throws InterruptedException {
      s.acquire();
      return true;
    }
  }

  final class TestLease extends AbstractLease {
    private final Semaphore sem;
    private final java.util.concurrent.atomic.AtomicBoolean freed = new java.util.concurrent.atomic.AtomicBoolean();

    TestLease(String name, long token, LeaseSettings settings, Ticker ticker, long sent, Semaphore sem) {
      super(name, token, 1, settings, ticker, sent);
      this.sem = sem;
    }

    @Override
    protected boolean doRenew() {
      renewCalls.incrementAndGet();
      java.util.concurrent.CountDownLatch gate = renewGate;
      if (gate != null) {
        try {
          gate.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted");
        }
      }
      Boolean outcome = renewOutcome;
      if (outcome == null) {
        throw new IllegalStateException("backend unreachable");
      }
      return outcome;
    }

    @Override
    protected void doRelease() {
      releaseCalls.incrementAndGet();
      free();
    }

    /** Ends the lease on the backend, as a TTL would: frees the name for others and tells the holder. */
    void expireOnBackend() {
      free();
      markLost(dev.tumbler.lock.LeaseLostEvent.Reason.EXPIRED, "expired on the test backend", null);
    }

    private void free() {
      if (freed.compareAndSet(false, true)) {
        sem.release(); // once: releasing an expired lease must not free the next holder's grant
      }
    }
  }

  /** Registered through META-INF/services of the test class path, scheme {@code test}. */
  public static final class Provider implements LockProvider {
    static final TestBackend SHARED = new TestBackend();
    static volatile Properties lastInfo;
    static volatile LockUrl lastUrl;

    @Override
    public String scheme() {
      return "test";
    }

    @Override
    public ProviderInfo info() {
      return new ProviderInfo("test", "SPI test provider", "1", "in-JVM semaphores", EnumSet.of(Capability.MUTEX));
    }

    @Override
    public dev.tumbler.lock.LockService connect(LockUrl url, Properties info) {
      url.requireKnownParameters(LeaseSettings.PARAMETERS);
      lastUrl = url;
      lastInfo = info;
      return SHARED.open(LeaseSettings.fromUrl(url), Ticker.system());
    }
  }
}
