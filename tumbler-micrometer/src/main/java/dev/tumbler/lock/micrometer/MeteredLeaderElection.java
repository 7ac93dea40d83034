package dev.tumbler.lock.micrometer;

import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.Lease;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * An election whose terms of leadership are metered: the {@code active} gauge (kind {@code election})
 * counts this candidate while it leads, and {@code held} records each term when it ends
 * ({@code end=released}: the election reports a change of leadership, not why). Candidacy itself is not an
 * acquire and is not counted in {@code acquire} or {@code wait}. The leadership lease is the provider's.
 */
final class MeteredLeaderElection implements LeaderElection {
  private final LeaderElection delegate;
  private final LockMetrics metrics;
  private final Tags tags;
  private final AtomicInteger active;
  private long leadingSince = -1; // guarded by this

  MeteredLeaderElection(LeaderElection delegate, LockMetrics metrics) {
    this.delegate = delegate;
    this.metrics = metrics;
    this.tags = metrics.tags(MeteredLockService.KIND_ELECTION, delegate.name());
    this.active = metrics.activeCount(tags);
    delegate.onLeadershipChange(this::changed);
  }

  private synchronized void changed(boolean leading) {
    if (leading && leadingSince < 0) {
      leadingSince = metrics.now();
      active.incrementAndGet();
    } else if (!leading && leadingSince >= 0) {
      active.decrementAndGet();
      metrics.held(tags, leadingSince, null);
      leadingSince = -1;
    }
  }

  @Override
  public String name() {
    return delegate.name();
  }

  @Override
  public String candidateId() {
    return delegate.candidateId();
  }

  @Override
  public LeaderElection join() {
    delegate.join();
    return this;
  }

  @Override
  public boolean isLeader() {
    return delegate.isLeader();
  }

  @Override
  public boolean awaitLeadership(Duration maxWait) throws InterruptedException {
    return delegate.awaitLeadership(maxWait);
  }

  @Override
  public Optional<Lease> leadership() {
    return delegate.leadership();
  }

  @Override
  public Optional<String> leader() {
    return delegate.leader();
  }

  @Override
  public LeaderElection onLeadershipChange(Consumer<Boolean> listener) {
    delegate.onLeadershipChange(listener);
    return this;
  }

  @Override
  public void resign() {
    delegate.resign();
  }

  @Override
  public void close() {
    delegate.close();
  }

  @Override
  public String toString() {
    return delegate.toString();
  }
}
