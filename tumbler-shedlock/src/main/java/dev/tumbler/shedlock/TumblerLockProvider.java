package dev.tumbler.shedlock;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockService;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ShedLock's {@code LockProvider} over any Tumbler {@link LockService}: a scheduled task runs on one instance at a
 * time, on whatever backend the service was opened on ({@code lock:redis://…}, {@code lock:zookeeper://…},
 * {@code lock:jdbc:…}, {@code lock:native:…}).
 *
 * <pre>{@code
 * @Bean LockProvider lockProvider(LockService locks) { return new TumblerLockProvider(locks); }
 * }</pre>
 *
 * <h2>ShedLock's settings, on a lease</h2>
 * <ul>
 *   <li><b>lock</b>: one try that does not wait ({@code tryAcquire(Duration.ZERO)}) of the Tumbler lock named
 *       {@code prefix + lockConfiguration.getName()}; empty, so ShedLock skips the run, when another instance
 *       holds it.
 *   <li><b>{@code lockAtMostFor}</b> bounds how long the lock of an instance that died while running stays held.
 *       Here that lock ends with its lease: at most the service's lease term {@code T} ({@code leaseTime}, 30 s by
 *       default) after the instance stopped renewing. With {@code T ≤ lockAtMostFor} it is free sooner than
 *       ShedLock's storage would free it, never later. A {@code lockAtMostFor} shorter than {@code T} cannot be
 *       kept for a dead instance: the provider says so once per name in the log (warning), and the lock stays
 *       held up to {@code T}; open the service with a shorter {@code leaseTime} to bound it.
 *   <li><b>A run longer than {@code lockAtMostFor} on a live instance</b>: ShedLock's storage lets the lock
 *       expire and another instance may start the same task while the first still runs. Here the lease is
 *       renewed for as long as the instance lives and the run lasts, so two runs never overlap; a run that hangs
 *       keeps the lock until it ends or its process dies. If the lease is lost anyway (the backend unreachable
 *       past the term), the task hears of it through {@link #currentLease()}: {@link Lease#isValid()} turns
 *       false and the {@link Lease#onLost} listeners run before another instance can be granted the lock.
 *   <li><b>{@code lockAtLeastFor}</b>: an unlock earlier than {@code lockAtLeastFor} after the grant keeps the
 *       lease, renewed, until then, and gives it back then (measured on this JVM's monotonic clock). Should the
 *       instance die meanwhile, the lock is free after {@code T}, which may be before {@code lockAtLeastFor}.
 *   <li><b>{@code extend}</b> (ShedLock's {@code LockExtender}, {@code KeepAliveLockProvider}): renews the lease
 *       at once and returns a lock with the new settings. Not needed for a long run, since the lease renews
 *       itself, but supported. A lease that is no longer valid, or cannot be renewed, is given back and the
 *       extension comes back empty, as ShedLock's contract says.
 * </ul>
 *
 * <h2>What the task gets that ShedLock cannot give</h2>
 * {@link #currentLease()}, on the thread that runs the task, is the run's {@link Lease}: its
 * {@link Lease#fencingToken() fencing token} (larger than every earlier grant of the name when the backend
 * declares {@code FENCING}: pass it to what the task writes) and its {@link Lease#onLost lost notification}.
 *
 * <p>The provider owns nothing: closing the service is the application's business (a lock still held then is
 * released by the close). Thread safe.
 */
public final class TumblerLockProvider implements ExtensibleLockProvider {
  private static final Logger LOG = LoggerFactory.getLogger(TumblerLockProvider.class);

  /** The leases of the ShedLock runs on this thread, the innermost first. */
  private static final ThreadLocal<Deque<Lease>> RUNS = new ThreadLocal<>();

  /** What {@link Lease#remaining()} of a provider without expiry is near (a century is enough to tell). */
  private static final Duration NO_EXPIRY = Duration.ofDays(36_500);

  private final LockService service;
  private final String prefix;
  private final Set<String> warned = ConcurrentHashMap.newKeySet();

  /** A provider whose Tumbler lock names are ShedLock's names as they are. */
  public TumblerLockProvider(LockService service) {
    this(service, "");
  }

  /**
   * A provider whose Tumbler lock names are {@code prefix} followed by ShedLock's name (to keep the scheduled
   * tasks apart from the application's other locks on a shared service).
   *
   * @throws NullPointerException if an argument is null
   */
  public TumblerLockProvider(LockService service, String prefix) {
    this.service = Objects.requireNonNull(service, "service");
    this.prefix = Objects.requireNonNull(prefix, "prefix");
  }

  /**
   * The lease of the innermost ShedLock run on this thread (the task a {@code @SchedulerLock} method or
   * ShedLock's {@code LockingTaskExecutor} runs), or empty outside one.
   */
  public static Optional<Lease> currentLease() {
    Deque<Lease> runs = RUNS.get();
    return runs == null ? Optional.empty() : Optional.ofNullable(runs.peekFirst());
  }

  /**
   * One try, without waiting, for the lock of {@code configuration.getName()}.
   *
   * @return the lock, or empty when another instance (or another run on this one) holds it, or when this thread
   *     was interrupted (its interrupt stays set)
   * @throws IllegalArgumentException if the name is not a valid Tumbler lock name (the message says why)
   * @throws LockException as the service throws it: unreachable backend, closed service
   */
  @Override
  public Optional<SimpleLock> lock(LockConfiguration configuration) {
    String name = prefix + configuration.getName();
    if (Thread.currentThread().isInterrupted()) {
      return Optional.empty(); // a scheduler shutting down: no new run (a try without waiting need not see it)
    }
    Optional<Lease> lease;
    try {
      lease = service.lock(name).tryAcquire(Duration.ZERO);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
    if (lease.isEmpty()) {
      return Optional.empty();
    }
    warnIfUnbounded(name, configuration.getLockAtMostFor(), lease.get());
    Deque<Lease> runs = RUNS.get();
    if (runs == null) {
      runs = new ArrayDeque<>(2);
      RUNS.set(runs);
    }
    runs.addFirst(lease.get());
    return Optional.of(new Run(lease.get(), configuration, System.nanoTime()));
  }

  /**
   * A lease valid for longer than {@code lockAtMostFor} without renewal has a term longer still: a dead instance
   * would hold the lock past {@code lockAtMostFor}. (Leases of providers without expiry end with the connection.)
   */
  private void warnIfUnbounded(String name, Duration lockAtMostFor, Lease lease) {
    Duration valid = lease.remaining();
    if (valid.compareTo(lockAtMostFor) > 0 && valid.compareTo(NO_EXPIRY) < 0 && warned.add(name)) {
      LOG.warn("lockAtMostFor {} of '{}' is shorter than the service's lease term (a lease is valid for {} at a "
          + "grant): an instance that dies while running holds the lock up to the term; open the service with a "
          + "leaseTime of {} ms or less to keep lockAtMostFor", lockAtMostFor, name, valid, lockAtMostFor.toMillis());
    }
  }

  private static void ended(Lease lease) {
    Deque<Lease> runs = RUNS.get();
    if (runs != null) {
      runs.removeFirstOccurrence(lease);
      if (runs.isEmpty()) {
        RUNS.remove();
      }
    }
  }

  /** One granted run: the lease and ShedLock's settings for it. */
  private static final class Run implements SimpleLock {
    private final Lease lease;
    private final LockConfiguration configuration;
    private final long grantedAt;
    /** Unlocked or extended: ShedLock allows neither twice. */
    private boolean done;

    Run(Lease lease, LockConfiguration configuration, long grantedAt) {
      this.lease = lease;
      this.configuration = configuration;
      this.grantedAt = grantedAt;
    }

    @Override
    public synchronized void unlock() {
      if (done) {
        throw new IllegalStateException("the lock of '" + lease.name() + "' was already unlocked or extended");
      }
      done = true;
      ended(lease);
      long keep = configuration.getLockAtLeastFor().toNanos() - (System.nanoTime() - grantedAt);
      if (keep <= 0 || !lease.isValid()) {
        lease.release();
        return;
      }
      // lockAtLeastFor: the lease stays held (and renewed) until then
      Thread.ofVirtual().name("tumbler-shedlock-hold-" + lease.name()).start(() -> {
        try {
          TimeUnit.NANOSECONDS.sleep(keep);
        } catch (InterruptedException e) {
          // released below
        } finally {
          lease.release();
        }
      });
    }

    @Override
    public synchronized Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
      Objects.requireNonNull(lockAtMostFor, "lockAtMostFor");
      Objects.requireNonNull(lockAtLeastFor, "lockAtLeastFor");
      if (done) {
        throw new IllegalStateException("the lock of '" + lease.name() + "' was already unlocked or extended");
      }
      done = true;
      try {
        if (lease.isValid()) {
          lease.renew();
          if (lease.isValid()) {
            LockConfiguration next = new LockConfiguration(net.javacrumbs.shedlock.core.ClockProvider.now(),
                configuration.getName(), lockAtMostFor, lockAtLeastFor);
            return Optional.of(new Run(lease, next, System.nanoTime()));
          }
        }
      } catch (LockException e) { // lost (LeaseLostException), unreachable, closed
        LOG.debug("cannot extend the lock of '{}': {}", lease.name(), e.toString());
      }
      // ShedLock's contract: an extension that failed leaves no lock to unlock; nothing may stay held
      ended(lease);
      lease.release();
      return Optional.empty();
    }

    @Override
    public String toString() {
      return "TumblerLockProvider.Run[" + lease.name() + ", token " + lease.fencingToken() + "]";
    }
  }

  @Override
  public String toString() {
    return "TumblerLockProvider[" + service.info().url() + (prefix.isEmpty() ? "" : ", prefix '" + prefix + "'") + "]";
  }
}
