package dev.tumbler.lock.spi;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.HeldLock;
import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.LockTransaction;
import dev.tumbler.lock.ReadWriteLock;
import dev.tumbler.lock.Semaphore;
import dev.tumbler.lock.ServiceClosedException;
import dev.tumbler.lock.ServiceInfo;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.TransactionOptions;
import dev.tumbler.lock.UnsupportedCapabilityException;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The parts of a {@link LockService} every provider shares: argument and capability checks, the
 * open → closed life cycle, the leases taken through the service (released on close, their lost
 * listeners fired with {@link LeaseLostEvent.Reason#SERVICE_CLOSED}), waits that {@link #close()} ends
 * with {@link ServiceClosedException}, background renewal through one {@link LeaseRenewer}, and
 * {@link #unwrap}.
 *
 * <p>A provider implements {@link #createLock} and, for the capabilities it declares, the other
 * {@code create*} methods, plus {@link #doClose()}; {@link AbstractLock} and {@link AbstractSemaphore} run
 * their {@code doAcquire} inside this service's wait, which close ends, and register what it grants.
 * Thread safe.
 */
public abstract class AbstractLockService implements LockService {
  private static final System.Logger LOG = System.getLogger(AbstractLockService.class.getName());

  private final ServiceInfo info;
  private final LeaseSettings settings;
  private final Ticker ticker;
  private final LeaseRenewer renewer;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Set<AbstractLease> leases = ConcurrentHashMap.newKeySet();
  private final Set<Waiter> waiters = ConcurrentHashMap.newKeySet();

  /**
   * @param info what the service is (its URL must already be redacted: use {@code LockUrl.toString()})
   * @param settings lease term, safety, renewal mode and namespace
   * @param ticker the monotonic clock for waits and leases
   */
  protected AbstractLockService(ServiceInfo info, LeaseSettings settings, Ticker ticker) {
    this.info = Objects.requireNonNull(info, "info");
    this.settings = Objects.requireNonNull(settings, "settings");
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.renewer = new LeaseRenewer(ticker, "tumbler-" + info.provider() + "-lease");
  }

  // ---- what providers implement

  /** A lock handle; {@code name} is already checked. */
  protected abstract Lock createLock(String name);

  /** A read/write lock handle; called only when {@link Capability#READ_WRITE} is declared. */
  protected ReadWriteLock createReadWriteLock(String name) {
    throw unsupported(Capability.READ_WRITE);
  }

  /** A semaphore handle; called only when {@link Capability#SEMAPHORE} is declared. */
  protected Semaphore createSemaphore(String name, int maxPermits) {
    throw unsupported(Capability.SEMAPHORE);
  }

  /** An election; called only when {@link Capability#LEADER_ELECTION} is declared. */
  protected LeaderElection createElection(String name) {
    throw unsupported(Capability.LEADER_ELECTION);
  }

  /** A transaction; called only when {@link Capability#TRANSACTIONS} is declared. */
  protected LockTransaction createTransaction(TransactionOptions options) {
    throw unsupported(Capability.TRANSACTIONS);
  }

  /**
   * Closes the backend connection. Called once, after every lease was released and every wait ended.
   */
  protected abstract void doClose();

  /** A provider object for {@link #unwrap}, or null. */
  protected Object unwrapProvider(Class<?> type) {
    return null;
  }

  /**
   * The grants under this service's namespace, for {@link #heldLocks()} (called while the service is
   * open); empty if the backend cannot say. The default cannot.
   */
  protected Optional<List<HeldLock>> listHeldLocks() {
    return Optional.empty();
  }

  // ---- LockService

  @Override
  public final Lock lock(String name) {
    checkOpen();
    return createLock(Checks.name(name));
  }

  @Override
  public final ReadWriteLock readWriteLock(String name) {
    checkOpen();
    Checks.name(name);
    requireCapability(Capability.READ_WRITE);
    return createReadWriteLock(name);
  }

  @Override
  public final Semaphore semaphore(String name, int maxPermits) {
    checkOpen();
    Checks.name(name);
    Checks.maxPermits(maxPermits);
    requireCapability(Capability.SEMAPHORE);
    return createSemaphore(name, maxPermits);
  }

  @Override
  public final LeaderElection election(String name) {
    checkOpen();
    Checks.name(name);
    requireCapability(Capability.LEADER_ELECTION);
    return createElection(name);
  }

  @Override
  public final LockTransaction beginTransaction(TransactionOptions options) {
    checkOpen();
    Objects.requireNonNull(options, "options");
    requireCapability(Capability.TRANSACTIONS);
    return createTransaction(options);
  }

  @Override
  public final Optional<List<HeldLock>> heldLocks() {
    checkOpen();
    return listHeldLocks();
  }

  @Override
  public final ServiceInfo info() {
    return info;
  }

  @Override
  public final boolean supports(Capability capability) {
    return info.capabilities().contains(Objects.requireNonNull(capability, "capability"));
  }

  @Override
  public final <T> T unwrap(Class<T> type) {
    Objects.requireNonNull(type, "type");
    if (type.isInstance(this)) {
      return type.cast(this);
    }
    if (type == LeaseRenewer.class) {
      return type.cast(renewer);
    }
    Object o = unwrapProvider(type);
    if (o != null) {
      return type.cast(o);
    }
    throw new LockException("the " + info.provider() + " service does not wrap a " + type.getName());
  }

  @Override
  public final boolean isClosed() {
    return closed.get();
  }

  @Override
  public final void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    for (Waiter w : waiters) {
      w.interruptForClose();
    }
    for (AbstractLease lease : leases) {
      lease.markLost(LeaseLostEvent.Reason.SERVICE_CLOSED, "the service was closed", null);
      lease.release();
    }
    renewer.close();
    try {
      doClose();
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "closing the " + info.provider() + " service failed", e);
    }
  }

  // ---- helpers for providers

  /** The lease settings from the URL. */
  public final LeaseSettings settings() {
    return settings;
  }

  /** The clock of this service. */
  public final Ticker ticker() {
    return ticker;
  }

  /** The renewer of this service's leases. */
  public final LeaseRenewer renewer() {
    return renewer;
  }

  /** Leases taken through this service and not yet ended. */
  public final int openLeases() {
    return leases.size();
  }

  /** @throws ServiceClosedException if the service is closed */
  public final void checkOpen() {
    if (closed.get()) {
      throw closedException();
    }
  }

  /** @throws UnsupportedCapabilityException if the service does not declare {@code c} */
  public final void requireCapability(Capability c) {
    if (!supports(c)) {
      throw unsupported(c);
    }
  }

  /** The exception for a missing capability, naming the provider. */
  public final UnsupportedCapabilityException unsupported(Capability c) {
    return new UnsupportedCapabilityException(c, "the " + info.provider() + " service " + info.url()
        + " does not support " + c);
  }

  /** The exception for use after close. */
  public final ServiceClosedException closedException() {
    return new ServiceClosedException("the " + info.provider() + " service " + info.url() + " is closed");
  }

  /** A blocking backend call. */
  @FunctionalInterface
  interface BlockingCall<T> {
    T call() throws InterruptedException;
  }

  /**
   * Runs a blocking wait so that {@link #close()} ends it: close interrupts the waiting thread, and the
   * interrupt becomes {@link ServiceClosedException} (the thread's interrupt status is left clear). An
   * interrupt from anyone else stays an {@link InterruptedException}.
   */
  final <T> T blocking(BlockingCall<T> call) throws InterruptedException {
    checkOpen();
    Waiter w = new Waiter(Thread.currentThread());
    waiters.add(w);
    boolean reported = false;
    try {
      if (closed.get()) {
        throw closedException();
      }
      return call.call();
    } catch (InterruptedException e) {
      if (w.finish()) {
        reported = true;
        throw closedException();
      }
      // whoever throws InterruptedException leaves the status clear; a backend client that re-asserts it
      // (Curator does) would otherwise make the caller's next wait, such as asJavaLock().lock()'s retry,
      // fail at once, over and over
      Thread.interrupted();
      throw e;
    } catch (RuntimeException e) {
      if (closed.get() && !(e instanceof ServiceClosedException)) {
        // the backend connection was torn down under the wait by close()
        ServiceClosedException c = closedException();
        c.initCause(e);
        throw c;
      }
      throw e;
    } finally {
      waiters.remove(w);
      if (w.finish() && !reported) {
        // close() interrupted us after the wait had ended: that interrupt is ours, not the caller's
        Thread.interrupted();
      }
    }
  }

  /**
   * How long past its deadline a timed acquire waits for the backend's answer to the attempt in flight:
   * {@value #ANSWER_GRACE_MILLIS} ms. A backend that has stopped answering (an unresponsive server, a
   * connection that hangs until a socket or session time-out) then costs a caller its {@code maxWait} plus
   * this, not the client library's time-outs.
   */
  public static final long ANSWER_GRACE_MILLIS = 2000;

  /** Attempts abandoned unanswered that may still be waiting for the backend before new ones fail at once. */
  static final int MAX_ABANDONED = 128;

  private final java.util.concurrent.atomic.AtomicInteger abandoned = new java.util.concurrent.atomic.AtomicInteger();

  /**
   * The acquire of every lock and semaphore: runs {@code attempt} inside {@link #blocking} until it returns
   * a lease or {@code deadline} has passed — a provider that gives up before the deadline is asked again
   * (after a millisecond's pause), because callers are promised the full wait; with an expired deadline,
   * exactly one attempt is made — then {@linkplain #register registers} the lease.
   *
   * <p>A timed acquire runs the attempts on a virtual thread and waits for them until the deadline plus
   * {@link #ANSWER_GRACE_MILLIS}. If the backend has not answered by then, the attempt is abandoned: its
   * thread is interrupted (the provider leaves nothing held, as for any interrupt), a lease it yields anyway
   * is released at once, and the caller gets {@link #unanswered()}'s exception or, if there is none, an
   * empty result (the lock was not granted within its wait). When the caller is interrupted, its attempt is
   * interrupted and the caller's {@link InterruptedException} comes once the attempt has ended (so nothing
   * of it is still queued at the backend), or after {@link #ANSWER_GRACE_MILLIS} with it abandoned.
   *
   * @return the registered lease, or empty when the deadline passed
   * @throws ServiceClosedException if the service is or gets closed
   */
  final Optional<Lease> acquire(Deadline deadline, BlockingCall<AbstractLease> attempt) throws InterruptedException {
    return acquire(deadline, attempt, false);
  }

  /**
   * As {@link #acquire(Deadline, BlockingCall)}; when {@code boundsItsOwnWait} (see
   * {@link AbstractLock#boundsItsOwnWait()}), a timed acquire runs its attempts on the caller's thread, as an
   * acquire without deadline does, since the attempt itself ends within the deadline plus the grace.
   */
  final Optional<Lease> acquire(Deadline deadline, BlockingCall<AbstractLease> attempt, boolean boundsItsOwnWait)
      throws InterruptedException {
    checkOpen();
    AbstractLease lease = deadline.isNone() || boundsItsOwnWait ? blocking(() -> attemptUntil(deadline, attempt))
        : bounded(deadline, attempt);
    return lease == null ? Optional.empty() : Optional.of(register(lease));
  }

  private AbstractLease attemptUntil(Deadline deadline, BlockingCall<AbstractLease> attempt) throws InterruptedException {
    AbstractLease l = arrived(attempt.call());
    while (l == null && !deadline.isExpired()) {
      java.util.concurrent.locks.LockSupport.parkNanos(Math.min(deadline.remainingNanos(), 1_000_000L));
      if (Thread.interrupted()) { // also one that ended the pause: no attempt is made after an interrupt
        throw new InterruptedException();
      }
      l = arrived(attempt.call());
    }
    return l;
  }

  private AbstractLease bounded(Deadline deadline, BlockingCall<AbstractLease> attempt) throws InterruptedException {
    int stuck = abandoned.get();
    if (stuck >= MAX_ABANDONED) {
      throw unansweredOr(new ServiceUnavailableException("the " + info.provider() + " backend has left " + stuck
          + " acquire attempts unanswered past their wait; not sending more (" + info.url() + ")"));
    }
    CompletableFuture<AbstractLease> answer = new CompletableFuture<>();
    Thread worker = Thread.ofVirtual().name("tumbler-" + info.provider() + "-acquire").unstarted(() -> {
      AbstractLease l;
      try {
        l = blocking(() -> attemptUntil(deadline, attempt));
      } catch (Throwable t) {
        answer.completeExceptionally(t);
        return;
      }
      if (!answer.complete(l) && l != null) {
        l.release(); // the caller stopped waiting: a late grant is given back, never leaked
      }
    });
    worker.start();
    long graceEnd = 0;
    try {
      while (true) {
        long wait;
        if (!deadline.isExpired()) {
          wait = deadline.remainingNanos();
        } else {
          if (graceEnd == 0) {
            graceEnd = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ANSWER_GRACE_MILLIS);
          }
          wait = graceEnd - System.nanoTime();
          if (wait <= 0) {
            return afterGrace(answer, worker);
          }
        }
        try {
          return answer.get(wait, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
          // look at the deadline again
        }
      }
    } catch (InterruptedException e) {
      if (answer.cancel(false)) {
        // the attempt ends before the caller hears of its interrupt, so that nothing of it stays queued at the
        // backend (ahead of others in a fair queue) or is granted afterwards; a backend that does not let it
        // end within the grace leaves it abandoned, as after a deadline
        worker.interrupt();
        if (!endsWithin(worker, ANSWER_GRACE_MILLIS)) {
          abandon(worker);
        }
      } else if (!answer.isCompletedExceptionally()) {
        AbstractLease l = answer.join(); // granted as the interrupt came: nothing is held after an interrupt
        if (l != null) {
          l.release();
        }
      }
      throw e;
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof InterruptedException ie) {
        throw ie;
      }
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(cause);
    }
  }

  /**
   * Ends a timed acquire whose grace has run out. An answer that arrived between the last look and now is
   * the caller's (a lease is returned and registered, never dropped); otherwise the attempt is abandoned.
   */
  final AbstractLease afterGrace(CompletableFuture<AbstractLease> answer, Thread worker)
      throws InterruptedException, ExecutionException {
    if (!answer.cancel(false)) {
      return answer.get(); // answered just now: already complete, so this does not wait
    }
    abandon(worker);
    RuntimeException e = unanswered();
    if (e != null) {
      throw e;
    }
    return null;
  }

  /** Whether {@code t} ends within {@code millis}; interrupts meanwhile do not shorten the wait. */
  private static boolean endsWithin(Thread t, long millis) {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    while (true) {
      try {
        return t.join(java.time.Duration.ofNanos(Math.max(0, end - System.nanoTime())));
      } catch (InterruptedException again) {
        // the caller is already being answered with an InterruptedException
      }
    }
  }

  private void abandon(Thread worker) {
    abandoned.incrementAndGet();
    worker.interrupt();
    Thread.ofVirtual().name("tumbler-" + info.provider() + "-abandoned").start(() -> {
      try {
        worker.join();
      } catch (InterruptedException e) {
        // not interrupted by anyone: it is ours
      } finally {
        abandoned.decrementAndGet();
      }
    });
  }

  private RuntimeException unansweredOr(RuntimeException otherwise) {
    RuntimeException e = unanswered();
    return e != null ? e : otherwise;
  }

  /**
   * What a timed acquire throws when the backend left its attempt unanswered past the deadline plus
   * {@link #ANSWER_GRACE_MILLIS}: a provider that knows its backend is unreachable (a client that is not
   * connected) returns a {@link dev.tumbler.lock.ServiceUnavailableException} saying so. The default,
   * null, makes the acquire return empty: the lock was not granted within the wait.
   */
  protected RuntimeException unanswered() {
    return null;
  }

  /**
   * A lease whose trusted window had already closed when it arrived (stamped with the send time of a
   * request that waited longer than {@code T × safety}) cannot be handed to a caller: it is given back
   * and the attempt counts as failed.
   */
  private AbstractLease arrived(AbstractLease lease) {
    if (lease == null || !lease.settings().expires() || ticker.read() - lease.validUntilNanos() < 0) {
      return lease;
    }
    LOG.log(System.Logger.Level.WARNING, "the " + info.provider() + " provider granted '" + lease.name()
        + "' with a lease already past its trusted window; giving it back and trying again (the provider should"
        + " stamp a lease with the send time of the request that was granted)");
    lease.release();
    return null;
  }

  /**
   * Takes a granted lease into the service: it is released when the service closes, and watched by the
   * renewer when its settings give it a term. If the service was closed meanwhile, the lease is released
   * and {@link ServiceClosedException} is thrown.
   *
   * @return {@code lease}
   */
  final <L extends AbstractLease> L register(L lease) {
    lease.attach(this);
    leases.add(lease);
    if (closed.get()) {
      leases.remove(lease);
      lease.release();
      throw closedException();
    }
    renewer.watch(lease);
    return lease;
  }

  final void forget(AbstractLease lease) {
    leases.remove(lease);
    renewer.unwatch(lease);
  }

  final void leaseLost(AbstractLease lease) {
    renewer.unwatch(lease);
  }

  private static final class Waiter {
    private final Thread thread;
    private boolean done;
    private boolean interrupted;

    Waiter(Thread thread) {
      this.thread = thread;
    }

    synchronized void interruptForClose() {
      if (!done) {
        interrupted = true;
        thread.interrupt();
      }
    }

    /** Ends the wait; returns whether close() interrupted it. */
    synchronized boolean finish() {
      done = true;
      return interrupted;
    }
  }
}
