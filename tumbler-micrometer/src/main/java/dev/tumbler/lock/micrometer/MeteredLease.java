package dev.tumbler.lock.micrometer;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A granted lease that records its hold once, when it is released or lost (whichever comes first), and
 * counts itself in the {@code active} gauge meanwhile. Everything else is the provider's lease.
 */
final class MeteredLease implements Lease {
  private final Lease delegate;
  private final LockMetrics metrics;
  private final Tags tags;
  private final AtomicInteger active;
  private final long grantedAt;
  private final AtomicBoolean ended = new AtomicBoolean();

  MeteredLease(Lease delegate, LockMetrics metrics, Tags tags, AtomicInteger active) {
    this.delegate = delegate;
    this.metrics = metrics;
    this.tags = tags;
    this.active = active;
    this.grantedAt = metrics.now();
    active.incrementAndGet();
    // registered after the count went up: a lease already lost runs this at once and counts itself down
    delegate.onLost(this::lost);
  }

  private void lost(LeaseLostEvent event) {
    end(event);
  }

  private void end(LeaseLostEvent lost) {
    if (ended.compareAndSet(false, true)) {
      active.decrementAndGet();
      metrics.held(tags, grantedAt, lost);
    }
  }

  @Override
  public String name() {
    return delegate.name();
  }

  @Override
  public long fencingToken() {
    return delegate.fencingToken();
  }

  @Override
  public int permits() {
    return delegate.permits();
  }

  @Override
  public boolean isValid() {
    return delegate.isValid();
  }

  @Override
  public Duration remaining() {
    return delegate.remaining();
  }

  @Override
  public void renew() {
    delegate.renew();
  }

  @Override
  public Lease onLost(Consumer<LeaseLostEvent> listener) {
    delegate.onLost(listener);
    return this;
  }

  @Override
  public void release() {
    try {
      delegate.release();
    } finally {
      end(null);
    }
  }

  @Override
  public void close() {
    release();
  }

  @Override
  public String toString() {
    return delegate.toString();
  }
}
