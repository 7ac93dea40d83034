package dev.tumbler.lock.spring.autoconfigure;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ServiceInfo;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * UP when the lock service answers: one {@code tryAcquire(Duration.ZERO)} of a lock of its own, released at
 * once. A lock held by another instance's check is UP too ({@code probe: held}): the backend answered. DOWN
 * when the service is closed or the attempt fails (an unreachable backend, a quorum out of reach), with
 * the exception. Details: the provider, its redacted URL and the probe's outcome and time.
 *
 * <p>Give it the service that is not metered, so that health checks do not count as the application's
 * acquires.
 */
public class TumblerHealthIndicator extends AbstractHealthIndicator {
  private final LockService locks;
  private final String lockName;

  public TumblerHealthIndicator(LockService locks, String lockName) {
    super("lock service health check failed");
    this.locks = Objects.requireNonNull(locks, "locks");
    this.lockName = Objects.requireNonNull(lockName, "lockName");
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) throws Exception {
    ServiceInfo info = locks.info();
    builder.withDetail("provider", info.provider()).withDetail("url", info.url());
    if (locks.isClosed()) {
      builder.down().withDetail("state", "closed");
      return;
    }
    long start = System.nanoTime();
    Optional<Lease> lease = locks.lock(lockName).tryAcquire(Duration.ZERO);
    lease.ifPresent(Lease::release);
    builder.up()
        .withDetail("probe", lease.isPresent() ? "acquired" : "held")
        .withDetail("probeMillis", Duration.ofNanos(System.nanoTime() - start).toMillis());
  }
}
