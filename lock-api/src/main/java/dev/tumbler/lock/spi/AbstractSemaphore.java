package dev.tumbler.lock.spi;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Semaphore;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The parts of a {@link Semaphore} every provider shares: argument and close checks, the never-early
 * wait, lease registration. A provider writes {@link #doAcquire} and {@link #availablePermits()}.
 * Thread safe.
 */
public abstract class AbstractSemaphore implements Semaphore {
  private final AbstractLockService service;
  private final String name;
  private final int maxPermits;

  protected AbstractSemaphore(AbstractLockService service, String name, int maxPermits) {
    this.service = Objects.requireNonNull(service, "service");
    this.name = Checks.name(name);
    this.maxPermits = Checks.maxPermits(maxPermits);
  }

  /**
   * Tries to take {@code permits} together until {@code deadline} (one attempt if it has expired).
   *
   * @return the lease holding them, not yet registered; or null when the deadline passed
   * @throws InterruptedException if interrupted; nothing may be left held on the backend
   */
  protected abstract AbstractLease doAcquire(int permits, Deadline deadline) throws InterruptedException;

  /** The service this handle belongs to. */
  protected final AbstractLockService service() {
    return service;
  }

  @Override
  public final String name() {
    return name;
  }

  @Override
  public final int maxPermits() {
    return maxPermits;
  }

  @Override
  public final Lease acquire(int permits) throws InterruptedException {
    Checks.permits(permits, maxPermits);
    return acquire(permits, Deadline.none()).orElseThrow(() -> new IllegalStateException(
        "provider " + service.info().provider() + " returned no lease from an acquire without deadline"));
  }

  @Override
  public final Optional<Lease> tryAcquire(int permits, Duration maxWait) throws InterruptedException {
    Checks.permits(permits, maxPermits);
    Checks.maxWait(maxWait);
    return acquire(permits, Deadline.after(maxWait, service.ticker()));
  }

  private Optional<Lease> acquire(int permits, Deadline deadline) throws InterruptedException {
    return service.acquire(deadline, () -> doAcquire(permits, deadline));
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + "[" + name + ", max " + maxPermits + " on " + service.info().url() + "]";
  }
}
