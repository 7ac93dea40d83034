package dev.tumbler.lock.micrometer;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Semaphore;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.util.Optional;

/** A semaphore whose acquires and leases are metered (one lease per block of permits, whatever its size). */
final class MeteredSemaphore implements Semaphore {
  private final Semaphore delegate;
  private final LockMetrics metrics;
  private final Tags tags;

  MeteredSemaphore(Semaphore delegate, LockMetrics metrics) {
    this.delegate = delegate;
    this.metrics = metrics;
    this.tags = metrics.tags(MeteredLockService.KIND_SEMAPHORE, delegate.name());
  }

  @Override
  public String name() {
    return delegate.name();
  }

  @Override
  public int maxPermits() {
    return delegate.maxPermits();
  }

  @Override
  public int availablePermits() {
    return delegate.availablePermits();
  }

  @Override
  public Lease acquire(int permits) throws InterruptedException {
    return metrics.acquire(tags, () -> delegate.acquire(permits));
  }

  @Override
  public Optional<Lease> tryAcquire(int permits, Duration maxWait) throws InterruptedException {
    return metrics.tryAcquire(tags, () -> delegate.tryAcquire(permits, maxWait));
  }

  @Override
  public String toString() {
    return delegate.toString();
  }
}
