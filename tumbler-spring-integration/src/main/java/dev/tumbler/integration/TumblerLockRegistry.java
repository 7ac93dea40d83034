package dev.tumbler.integration;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.spi.JavaLockAdapter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration {@link org.springframework.integration.support.locks.LockRegistry} over any Tumbler
 * {@link LockService}: an aggregator's, an idempotent receiver's or a
 * {@link org.springframework.integration.support.leader.LockRegistryLeaderInitiator}'s locks on whichever backend the
 * service's URL names.
 *
 * <pre>{@code
 * @Bean
 * TumblerLockRegistry lockRegistry(LockService locks) {
 *   return new TumblerLockRegistry(locks);
 * }
 * }</pre>
 *
 * <h2>What a lock is</h2>
 * {@link #obtain(Object)} gives the lock of the key's name ({@code key.toString()}, checked by the service: a name it
 * refuses is an {@link IllegalArgumentException} that says why), the same object for the same key until it is
 * {@linkplain #expireUnusedOlderThan expired}, which never forgets one that is held or waited for. It behaves as
 * Tumbler's {@link JavaLockAdapter}: owned by the thread that locked it ({@code unlock()} from another thread throws {@link IllegalMonitorStateException}), reentrant, and held
 * on the backend as a {@link Lease}. Other threads of this JVM wait on the backend like other processes.
 *
 * <h2>Time</h2>
 * A held lock's lease is renewed by the service in the background (with the URL's default {@code renew=auto}) for as
 * long as its holder's process lives; a process that dies or is cut off loses it after the service's lease term
 * ({@code leaseTime} in the URL). So, unlike a registry whose lock is a key with a time to live, a lock is never taken
 * from a live holder because its work took longer than a guess. When the lease is lost anyway (a partition longer
 * than the term), the holder's {@code unlock()} throws {@link dev.tumbler.lock.LeaseLostException} (its critical
 * section may have overlapped another's), and its {@link Lease} said so before ({@link #lease(Object)}: {@code isValid()},
 * {@code onLost}, the fencing token to hand to the resource it writes).
 *
 * <p>{@link #renewLock(Object)} renews the lease at once (for a service with {@code renew=manual}, the only renewal);
 * the lease term is the service's, so {@link #renewLock(Object, Duration)} renews for that term whatever the
 * duration given (which must be positive). Thread safe.
 */
public final class TumblerLockRegistry implements ExpirableLockRegistry<Lock>, RenewableLockRegistry<Lock> {
  private final LockService service;
  private final Map<String, Entry> locks = new ConcurrentHashMap<>();

  /**
   * The lock {@link #obtain} gives: Tumbler's adapter, counting the holds and waits on it so that
   * {@link #expireUnusedOlderThan} never forgets one that a thread holds or waits for.
   */
  private static final class Entry implements Lock {
    final JavaLockAdapter lock;
    /** Holds and waits in progress. */
    final AtomicInteger users = new AtomicInteger();
    /** When it was last obtained (System.nanoTime), under the map's compute of its key. */
    long lastObtained;

    Entry(JavaLockAdapter lock) {
      this.lock = lock;
    }

    @Override
    public void lock() {
      users.incrementAndGet();
      boolean held = false;
      try {
        lock.lock();
        held = true;
      } finally {
        if (!held) {
          users.decrementAndGet();
        }
      }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
      users.incrementAndGet();
      boolean held = false;
      try {
        lock.lockInterruptibly();
        held = true;
      } finally {
        if (!held) {
          users.decrementAndGet();
        }
      }
    }

    @Override
    public boolean tryLock() {
      users.incrementAndGet();
      boolean held = false;
      try {
        held = lock.tryLock();
        return held;
      } finally {
        if (!held) {
          users.decrementAndGet();
        }
      }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
      users.incrementAndGet();
      boolean held = false;
      try {
        held = lock.tryLock(time, unit);
        return held;
      } finally {
        if (!held) {
          users.decrementAndGet();
        }
      }
    }

    /** As the adapter's; a hold ends even when it throws {@link dev.tumbler.lock.LeaseLostException}. */
    @Override
    public void unlock() {
      boolean released = false;
      try {
        lock.unlock();
        released = true;
      } catch (IllegalMonitorStateException notTheHolder) {
        throw notTheHolder; // nothing was released
      } catch (RuntimeException lost) {
        released = true;
        throw lost;
      } finally {
        if (released) {
          users.decrementAndGet();
        }
      }
    }

    @Override
    public java.util.concurrent.locks.Condition newCondition() {
      return lock.newCondition();
    }

    @Override
    public String toString() {
      return lock.toString();
    }
  }

  /** A registry of {@code service}'s locks; the service stays the caller's to close. */
  public TumblerLockRegistry(LockService service) {
    this.service = Objects.requireNonNull(service, "service");
  }

  /**
   * The lock of {@code lockKey}'s name: the same object for the same key until it is expired.
   *
   * @throws IllegalArgumentException if the service refuses the name
   * @throws dev.tumbler.lock.ServiceClosedException if the service is closed
   */
  @Override
  public Lock obtain(Object lockKey) {
    String name = name(lockKey);
    return locks.compute(name, (n, e) -> {
      Entry entry = e != null ? e : new Entry(new JavaLockAdapter(service.lock(n)));
      entry.lastObtained = System.nanoTime();
      return entry;
    });
  }

  /**
   * Forgets the locks that nobody holds or waits for and that were last obtained more than {@code age} milliseconds
   * ago (a later {@link #obtain} makes a new one). A lock held, or waited for, is kept.
   */
  @Override
  public void expireUnusedOlderThan(long age) {
    long ageNanos = Duration.ofMillis(age).toNanos();
    for (String name : List.copyOf(locks.keySet())) {
      locks.computeIfPresent(name, (n, e) ->
          e.users.get() == 0 && System.nanoTime() - e.lastObtained > ageNanos ? null : e);
    }
  }

  /**
   * Renews the lease of {@code lockKey}'s lock, which the calling thread holds, for the service's lease term.
   *
   * @throws IllegalStateException if the calling thread does not hold the lock
   * @throws dev.tumbler.lock.LeaseLostException if the lease was lost
   */
  @Override
  public void renewLock(Object lockKey) {
    String name = name(lockKey);
    Entry e = locks.get(name);
    if (e == null || !e.lock.isHeldByCurrentThread()) {
      throw new IllegalStateException("lock '" + name + "' is not held by the calling thread ("
          + Thread.currentThread().getName() + "): only its holder renews it");
    }
    Lease lease = e.lock.lease().orElseThrow(() -> new IllegalStateException("lock '" + name + "' has no lease"));
    lease.renew(); // LeaseLostException if it was lost
  }

  /**
   * As {@link #renewLock(Object)}: Tumbler's lease term is the service's ({@code leaseTime}), not one per renewal.
   *
   * @throws IllegalArgumentException if {@code ttl} is null, zero or negative
   */
  @Override
  public void renewLock(Object lockKey, Duration ttl) {
    if (ttl == null || ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be positive: " + ttl);
    }
    renewLock(lockKey);
  }

  /** The lease the calling thread holds on {@code lockKey}'s lock (its fencing token, validity, lost listeners). */
  public java.util.Optional<Lease> lease(Object lockKey) {
    Entry e = locks.get(name(lockKey));
    return e == null || !e.lock.isHeldByCurrentThread() ? java.util.Optional.empty() : e.lock.lease();
  }

  /** The service the locks are on. */
  public LockService service() {
    return service;
  }

  private static String name(Object lockKey) {
    Objects.requireNonNull(lockKey, "lockKey");
    return lockKey.toString();
  }

  @Override
  public String toString() {
    return "TumblerLockRegistry[" + service.info().url() + ", " + locks.size() + " locks]";
  }
}
