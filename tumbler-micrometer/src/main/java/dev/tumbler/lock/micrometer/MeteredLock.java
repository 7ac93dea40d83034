package dev.tumbler.lock.micrometer;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.spi.JavaLockAdapter;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/** A lock (exclusive, or one side of a read/write lock) whose acquires and leases are metered. */
final class MeteredLock implements Lock {
  private final Lock delegate;
  private final LockMetrics metrics;
  private final Tags tags;
  private volatile JavaLockAdapter javaLock;

  MeteredLock(Lock delegate, LockMetrics metrics, String kind) {
    this.delegate = delegate;
    this.metrics = metrics;
    this.tags = metrics.tags(kind, delegate.name());
  }

  @Override
  public String name() {
    return delegate.name();
  }

  @Override
  public Lease acquire() throws InterruptedException {
    return metrics.acquire(tags, delegate::acquire);
  }

  @Override
  public Optional<Lease> tryAcquire(Duration maxWait) throws InterruptedException {
    return metrics.tryAcquire(tags, () -> delegate.tryAcquire(maxWait));
  }

  /**
   * The provider's asynchronous acquire, metered when it completes. Cancelling the returned future
   * cancels the provider's; a lease granted after that is released at once.
   */
  @Override
  public CompletableFuture<Lease> acquireAsync(Duration maxWait) {
    long start = metrics.now();
    CompletableFuture<Lease> source = delegate.acquireAsync(maxWait);
    CompletableFuture<Lease> out = new CompletableFuture<>();
    source.whenComplete((lease, failure) -> {
      if (failure == null) {
        Lease metered = metrics.granted(tags, start, lease);
        if (!out.complete(metered)) {
          metered.release();
        }
      } else {
        metrics.failed(tags, start, failure);
        out.completeExceptionally(failure instanceof CompletionException && failure.getCause() != null
            ? failure.getCause() : failure);
      }
    });
    out.whenComplete((lease, failure) -> {
      if (out.isCancelled()) {
        source.cancel(true);
      }
    });
    return out;
  }

  /** The SPI's thread-owned adapter over this metered lock (one per handle), so that its grants are counted too. */
  @Override
  public java.util.concurrent.locks.Lock asJavaLock() {
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
    return delegate.toString();
  }
}
