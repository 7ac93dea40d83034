package dev.tumbler.lock.micrometer;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.LockTransaction;
import dev.tumbler.lock.ReadWriteLock;
import dev.tumbler.lock.Semaphore;
import dev.tumbler.lock.ServiceInfo;
import dev.tumbler.lock.TransactionOptions;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import java.util.Objects;

/**
 * A {@link LockService} that records what happens to its locks in a Micrometer {@link MeterRegistry},
 * and otherwise does exactly what the service it wraps does.
 *
 * <pre>{@code
 * LockService locks = MeteredLockService.of(LockProviders.connect("lock:redis://h:6379"), registry);
 * }</pre>
 *
 * <h2>Meters</h2>
 *
 * <table>
 *   <caption>meters and their tags</caption>
 *   <tr><th>name</th><th>type</th><th>tags besides {@code provider}, {@code kind}</th><th>what</th></tr>
 *   <tr><td>{@value #ACQUIRE}</td><td>counter</td><td>{@code outcome}</td>
 *       <td>acquire calls, by outcome: {@code acquired}, {@code timeout} (an empty {@code tryAcquire} or a
 *       {@code LockTimeoutException}), {@code interrupted} (also a cancelled {@code acquireAsync}), {@code error}
 *       (any other exception)</td></tr>
 *   <tr><td>{@value #WAIT}</td><td>timer</td><td>{@code outcome}</td><td>from the call to its outcome</td></tr>
 *   <tr><td>{@value #HELD}</td><td>timer</td><td>{@code end} = {@code released} | {@code lost}</td>
 *       <td>from the grant to its release or loss, whichever came first</td></tr>
 *   <tr><td>{@value #LOST}</td><td>counter</td><td>{@code reason}</td><td>leases lost, by
 *       {@link dev.tumbler.lock.LeaseLostEvent.Reason} in lower case ({@code expired}, {@code connection_lost},
 *       {@code revoked}, {@code service_closed}, {@code deadlock})</td></tr>
 *   <tr><td>{@value #ACTIVE}</td><td>gauge</td><td></td><td>leases held through this service now</td></tr>
 * </table>
 *
 * {@code provider} is the provider's scheme ({@link ServiceInfo#provider()}: {@code native}, {@code redis}, ...),
 * {@code kind} the primitive: {@code lock}, {@code read}, {@code write}, {@code semaphore}, {@code election}
 * (leadership terms: {@code active} and {@code held} only). Both have a handful of values, so the meters stay
 * few whatever the application locks. The lock's name becomes the tag {@code name} only when
 * {@link Builder#tagLockNames(boolean)} asks for it: <b>Warning:</b> an application that builds names from
 * data (one lock per order) then makes a time series per name, which is what monitoring systems bill and
 * choke on.
 *
 * <p>Handles returned by this service are metered wrappers; leases they grant are wrappers that record their
 * hold when released or lost. Transactions ({@link #beginTransaction}) are the provider's, not metered.
 * {@link #unwrap} answers this class, then asks the wrapped service. Thread safe.
 */
public final class MeteredLockService implements LockService {
  /** Counter of acquire calls, tagged {@value #TAG_OUTCOME}. */
  public static final String ACQUIRE = "tumbler.lock.acquire";
  /** Timer of the wait of acquire calls, tagged {@value #TAG_OUTCOME}. */
  public static final String WAIT = "tumbler.lock.wait";
  /** Timer of holds, from grant to release or loss, tagged {@value #TAG_END}. */
  public static final String HELD = "tumbler.lock.held";
  /** Counter of lost leases, tagged {@value #TAG_REASON}. */
  public static final String LOST = "tumbler.lock.lost";
  /** Gauge of the leases held now. */
  public static final String ACTIVE = "tumbler.lock.active";

  public static final String TAG_PROVIDER = "provider";
  public static final String TAG_KIND = "kind";
  public static final String TAG_NAME = "name";
  public static final String TAG_OUTCOME = "outcome";
  public static final String TAG_END = "end";
  public static final String TAG_REASON = "reason";

  public static final String OUTCOME_ACQUIRED = "acquired";
  public static final String OUTCOME_TIMEOUT = "timeout";
  public static final String OUTCOME_INTERRUPTED = "interrupted";
  public static final String OUTCOME_ERROR = "error";
  public static final String END_RELEASED = "released";
  public static final String END_LOST = "lost";

  public static final String KIND_LOCK = "lock";
  public static final String KIND_READ = "read";
  public static final String KIND_WRITE = "write";
  public static final String KIND_SEMAPHORE = "semaphore";
  public static final String KIND_ELECTION = "election";

  private final LockService delegate;
  private final LockMetrics metrics;

  private MeteredLockService(LockService delegate, LockMetrics metrics) {
    this.delegate = delegate;
    this.metrics = metrics;
  }

  /** {@code delegate} metered in {@code registry} with the default settings (no lock names as tags). */
  public static MeteredLockService of(LockService delegate, MeterRegistry registry) {
    return builder(delegate, registry).build();
  }

  public static Builder builder(LockService delegate, MeterRegistry registry) {
    return new Builder(delegate, registry);
  }

  /** Settings of a {@link MeteredLockService}; not thread safe, used once. */
  public static final class Builder {
    private final LockService delegate;
    private final MeterRegistry registry;
    private boolean tagLockNames;
    private Tags tags = Tags.empty();

    private Builder(LockService delegate, MeterRegistry registry) {
      this.delegate = Objects.requireNonNull(delegate, "delegate");
      this.registry = Objects.requireNonNull(registry, "registry");
      if (delegate instanceof MeteredLockService) {
        throw new IllegalArgumentException("delegate: already a MeteredLockService; metering it twice would count "
            + "every acquire twice");
      }
    }

    /** Whether every meter also carries the lock's name as the tag {@code name} (default false; see the class's warning). */
    public Builder tagLockNames(boolean tagLockNames) {
      this.tagLockNames = tagLockNames;
      return this;
    }

    /** Tags added to every meter (an application or a service name, say). */
    public Builder tags(Iterable<Tag> tags) {
      Objects.requireNonNull(tags, "tags");
      for (Tag t : tags) {
        String k = t.getKey();
        if (k.equals(TAG_PROVIDER) || k.equals(TAG_KIND) || k.equals(TAG_NAME) || k.equals(TAG_OUTCOME)
            || k.equals(TAG_END) || k.equals(TAG_REASON)) {
          throw new IllegalArgumentException("tags: '" + k + "' is a tag this service sets itself");
        }
      }
      this.tags = this.tags.and(tags);
      return this;
    }

    public MeteredLockService build() {
      Tags common = tags.and(TAG_PROVIDER, delegate.info().provider());
      return new MeteredLockService(delegate, new LockMetrics(registry, common, tagLockNames));
    }
  }

  /** The service this one meters. */
  public LockService delegate() {
    return delegate;
  }

  @Override
  public Lock lock(String name) {
    return new MeteredLock(delegate.lock(name), metrics, KIND_LOCK);
  }

  @Override
  public ReadWriteLock readWriteLock(String name) {
    return new MeteredReadWriteLock(delegate.readWriteLock(name), metrics);
  }

  @Override
  public Semaphore semaphore(String name, int maxPermits) {
    return new MeteredSemaphore(delegate.semaphore(name, maxPermits), metrics);
  }

  @Override
  public LeaderElection election(String name) {
    return new MeteredLeaderElection(delegate.election(name), metrics);
  }

  @Override
  public LockTransaction beginTransaction(TransactionOptions options) {
    return delegate.beginTransaction(options);
  }

  @Override
  public ServiceInfo info() {
    return delegate.info();
  }

  @Override
  public boolean supports(Capability capability) {
    return delegate.supports(capability);
  }

  @Override
  public <T> T unwrap(Class<T> type) {
    if (type.isInstance(this)) {
      return type.cast(this);
    }
    return delegate.unwrap(type);
  }

  @Override
  public boolean isClosed() {
    return delegate.isClosed();
  }

  /** Closes the wrapped service; the leases it then reports lost are counted with {@code reason=service_closed}. */
  @Override
  public void close() {
    delegate.close();
  }

  @Override
  public String toString() {
    return "MeteredLockService[" + delegate + "]";
  }
}
