package dev.tumbler.lock.spi;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The parts of a {@link Lock} every provider shares: argument checks, use-after-close checks, the
 * never-early wait, {@link #acquireAsync} through {@link AsyncAcquire}, {@link #asJavaLock()} through
 * {@link JavaLockAdapter}, and registration of granted leases with the service. A provider writes
 * {@link #doAcquire}. Thread safe.
 */
public abstract class AbstractLock implements Lock {
  private final AbstractLockService service;
  private final String name;
  private volatile JavaLockAdapter javaLock;

  protected AbstractLock(AbstractLockService service, String name) {
    this.service = Objects.requireNonNull(service, "service");
    this.name = Checks.name(name);
  }

  /**
   * Tries to take the lock until {@code deadline}: one attempt when it has already expired, otherwise
   * waiting (ideally without polling) until granted or the deadline passes. Runs inside
   * {@link AbstractLockService#blocking}, so {@link AbstractLockService#close()} interrupts it.
   *
   * @return the granted lease, not yet registered; or null when the deadline passed
   * @throws InterruptedException if interrupted; the provider must leave nothing held on the backend
   */
  protected abstract AbstractLease doAcquire(Deadline deadline) throws InterruptedException;

  /**
   * Whether {@link #doAcquire} bounds its own waits, so that a timed acquire may run it on the caller's
   * thread. A provider answers true only if, for every deadline, {@code doAcquire} returns or throws within
   * the deadline plus {@link AbstractLockService#ANSWER_GRACE_MILLIS} even when the backend stops answering,
   * and leaves nothing held on the backend when it returns empty, throws or is interrupted (a grant that
   * arrives after it gave up is given back). A timed acquire then skips the worker thread it otherwise
   * runs the attempt on, and the two thread hand-offs around it; the service's other guarantees (close
   * ends the wait, an interrupt stays an {@link InterruptedException}) hold as for an acquire without
   * deadline, which always runs on the caller's thread.
   *
   * @return false by default: the service bounds the wait (and abandons an attempt the backend leaves
   *     unanswered)
   */
  protected boolean boundsItsOwnWait() {
    return false;
  }

  /** The service this handle belongs to. */
  protected final AbstractLockService service() {
    return service;
  }

  @Override
  public final String name() {
    return name;
  }

  @Override
  public final Lease acquire() throws InterruptedException {
    return acquire(Deadline.none()).orElseThrow(() -> new IllegalStateException(
        "provider " + service.info().provider() + " returned no lease from an acquire without deadline"));
  }

  @Override
  public final Optional<Lease> tryAcquire(Duration maxWait) throws InterruptedException {
    Checks.maxWait(maxWait);
    return acquire(Deadline.after(maxWait, service.ticker()));
  }

  private Optional<Lease> acquire(Deadline deadline) throws InterruptedException {
    return service.acquire(deadline, () -> doAcquire(deadline), boundsItsOwnWait());
  }

  @Override
  public final CompletableFuture<Lease> acquireAsync(Duration maxWait) {
    Checks.maxWait(maxWait);
    service.checkOpen();
    return AsyncAcquire.start(this, maxWait, service.info().provider());
  }

  @Override
  public final java.util.concurrent.locks.Lock asJavaLock() {
    JavaLockAdapter a = javaLock;
    if (a == null) {
      synchronized (this) {
        a = javaLock;
        if (a == null) {
          a = new JavaLockAdapter(this);
          javaLock = a;
        }
      }
    }
    return a;
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + "[" + name + " on " + service.info().url() + "]";
  }
}
