package dev.tumbler.cli;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ProviderInfo;
import dev.tumbler.lock.ServiceInfo;
import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.AbstractLock;
import dev.tumbler.lock.spi.AbstractLockService;
import dev.tumbler.lock.spi.Deadline;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.lock.spi.LockProvider;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.lock.spi.Ticker;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * {@code lock:clitest:mem}: locks in this JVM, for the CLI's tests, with a hook to make a lease lost (which
 * a real backend does on expiry or revocation). A test class gets it registered for its tests with
 * {@code @ExtendWith(InMemoryTestProvider.Registered.class)}.
 */
final class InMemoryTestProvider implements LockProvider {
  /** Registers a provider before the first test of the class and deregisters it after the last. */
  static final class Registered implements BeforeAllCallback, AfterAllCallback {
    private final InMemoryTestProvider provider = new InMemoryTestProvider();

    @Override
    public void beforeAll(ExtensionContext context) {
      LockProviders.register(provider);
    }

    @Override
    public void afterAll(ExtensionContext context) {
      LockProviders.deregister(provider);
    }
  }

  static final ConcurrentHashMap<String, Semaphore> LOCKS = new ConcurrentHashMap<>();
  static final Set<Lease> HELD = ConcurrentHashMap.newKeySet();
  static final AtomicLong TOKENS = new AtomicLong();
  /** The last secret the provider was given, to check how the CLI passes it. */
  static volatile String lastSecret;

  @Override
  public String scheme() {
    return "clitest";
  }

  @Override
  public ProviderInfo info() {
    return new ProviderInfo("clitest", "CLI test provider", "0", "in-memory locks for tests", Set.of(Capability.MUTEX));
  }

  @Override
  public LockService connect(LockUrl url, Properties info) {
    url.requireKnownParameters(Set.of("secret", "leaseTime"));
    lastSecret = url.parameter("secret").orElse(null);
    return new Service(url);
  }

  /** Marks every held lease of {@code name} lost. */
  static void loseAll(String name) {
    for (Lease l : HELD) {
      if (l.name().equals(name)) {
        l.markLost(dev.tumbler.lock.LeaseLostEvent.Reason.REVOKED, "revoked by the test", null);
      }
    }
  }

  static boolean isHeld(String name) {
    Semaphore s = LOCKS.get(name);
    return s != null && s.availablePermits() == 0;
  }

  private static final class Service extends AbstractLockService {
    Service(LockUrl url) {
      super(new ServiceInfo("clitest", "0", url.toString(), Set.of(Capability.MUTEX)), LeaseSettings.unbounded(""),
          Ticker.system());
    }

    @Override
    protected Lock createLock(String name) {
      return new AbstractLock(this, name) {
        @Override
        protected AbstractLease doAcquire(Deadline deadline) throws InterruptedException {
          Semaphore s = LOCKS.computeIfAbsent(name, k -> new Semaphore(1));
          long sent = ticker().read();
          boolean ok = deadline.isNone() ? Service.take(s) : s.tryAcquire(deadline.remainingNanos(), TimeUnit.NANOSECONDS);
          if (!ok) {
            return null;
          }
          Lease l = new Lease(name, TOKENS.incrementAndGet(), settings(), ticker(), sent, s);
          HELD.add(l);
          return l;
        }
      };
    }

    static boolean take(Semaphore s) throws InterruptedException {
      s.acquire();
      return true;
    }

    @Override
    protected void doClose() {}
  }

  static final class Lease extends AbstractLease {
    private final Semaphore semaphore;

    Lease(String name, long token, LeaseSettings settings, Ticker ticker, long sent, Semaphore semaphore) {
      super(name, token, 1, settings, ticker, sent);
      this.semaphore = semaphore;
    }

    @Override
    protected boolean doRenew() {
      return true;
    }

    @Override
    protected void doRelease() {
      HELD.remove(this);
      semaphore.release();
    }
  }
}
