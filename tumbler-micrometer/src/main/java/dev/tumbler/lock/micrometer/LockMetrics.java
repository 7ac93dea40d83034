package dev.tumbler.lock.micrometer;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LockTimeoutException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The meters of one {@link MeteredLockService}: every acquire of every handle goes through
 * {@link #acquire} or {@link #tryAcquire}, every granted lease is wrapped by {@link #granted}.
 *
 * <p>Time comes from the registry's clock ({@code registry.config().clock()}), so a test can drive it with a
 * {@code MockClock}. Meters are looked up by the registry on each use (a map lookup): a lock's latency is
 * network round trips, and this keeps no per-name cache that would grow with the names an application uses.
 * The only per-tag state kept here is the counter behind each {@code active} gauge. Thread safe.
 */
final class LockMetrics {
  private final MeterRegistry registry;
  private final Tags common;
  private final boolean tagLockNames;
  private final ConcurrentMap<Tags, AtomicInteger> active = new ConcurrentHashMap<>();

  LockMetrics(MeterRegistry registry, Tags common, boolean tagLockNames) {
    this.registry = registry;
    this.common = common;
    this.tagLockNames = tagLockNames;
  }

  /** The tags of one handle: the common ones, the primitive's kind and, when asked for, its name. */
  Tags tags(String kind, String name) {
    Tags t = common.and(MeteredLockService.TAG_KIND, kind);
    return tagLockNames ? t.and(MeteredLockService.TAG_NAME, name) : t;
  }

  long now() {
    return registry.config().clock().monotonicTime();
  }

  /** A blocking or bounded acquire call, as the handles make it. */
  interface Attempt<T> {
    T run() throws InterruptedException;
  }

  Lease acquire(Tags tags, Attempt<Lease> attempt) throws InterruptedException {
    long start = now();
    Lease lease;
    try {
      lease = attempt.run();
    } catch (InterruptedException e) {
      failed(tags, start, e);
      throw e;
    } catch (RuntimeException | Error e) {
      failed(tags, start, e);
      throw e;
    }
    return granted(tags, start, lease);
  }

  Optional<Lease> tryAcquire(Tags tags, Attempt<Optional<Lease>> attempt) throws InterruptedException {
    long start = now();
    Optional<Lease> lease;
    try {
      lease = attempt.run();
    } catch (InterruptedException e) {
      failed(tags, start, e);
      throw e;
    } catch (RuntimeException | Error e) {
      failed(tags, start, e);
      throw e;
    }
    if (lease.isEmpty()) {
      attempted(tags, start, MeteredLockService.OUTCOME_TIMEOUT);
      return lease;
    }
    return Optional.of(granted(tags, start, lease.get()));
  }

  /** Records a grant that waited since {@code start} and returns the lease that will record its hold. */
  Lease granted(Tags tags, long start, Lease lease) {
    attempted(tags, start, MeteredLockService.OUTCOME_ACQUIRED);
    return new MeteredLease(lease, this, tags, activeCount(tags));
  }

  /** Records an acquire that ended with {@code failure} (the cause, for a failed future). */
  void failed(Tags tags, long start, Throwable failure) {
    attempted(tags, start, outcomeOf(failure));
  }

  static String outcomeOf(Throwable failure) {
    Throwable t = failure;
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof LockTimeoutException) {
      return MeteredLockService.OUTCOME_TIMEOUT;
    }
    if (t instanceof InterruptedException || t instanceof CancellationException) {
      return MeteredLockService.OUTCOME_INTERRUPTED;
    }
    return MeteredLockService.OUTCOME_ERROR;
  }

  private void attempted(Tags tags, long start, String outcome) {
    long waited = now() - start;
    Tags t = tags.and(MeteredLockService.TAG_OUTCOME, outcome);
    Counter.builder(MeteredLockService.ACQUIRE).description("lock acquire attempts by outcome").tags(t)
        .register(registry).increment();
    Timer.builder(MeteredLockService.WAIT).description("time from an acquire call to its grant, timeout or failure")
        .tags(t).register(registry).record(waited, TimeUnit.NANOSECONDS);
  }

  /** The hold of a lease ended: released by the application ({@code lost == null}) or lost. */
  void held(Tags tags, long grantedAt, LeaseLostEvent lost) {
    long held = now() - grantedAt;
    String end = lost == null ? MeteredLockService.END_RELEASED : MeteredLockService.END_LOST;
    Timer.builder(MeteredLockService.HELD).description("time from a grant to its release or loss")
        .tags(tags.and(MeteredLockService.TAG_END, end)).register(registry).record(held, TimeUnit.NANOSECONDS);
    if (lost != null) {
      Counter.builder(MeteredLockService.LOST).description("leases lost, by the reason the provider gave")
          .tags(tags.and(MeteredLockService.TAG_REASON, reasonTag(lost.reason()))).register(registry).increment();
    }
  }

  static String reasonTag(LeaseLostEvent.Reason reason) {
    return reason.name().toLowerCase(Locale.ROOT);
  }

  /** The counter behind the {@code active} gauge of these tags; the gauge is registered on first use. */
  AtomicInteger activeCount(Tags tags) {
    return active.computeIfAbsent(tags, t -> {
      AtomicInteger n = new AtomicInteger();
      Gauge.builder(MeteredLockService.ACTIVE, n, AtomicInteger::get).description("leases held through this service")
          .tags(t).strongReference(true).register(registry);
      return n;
    });
  }
}
