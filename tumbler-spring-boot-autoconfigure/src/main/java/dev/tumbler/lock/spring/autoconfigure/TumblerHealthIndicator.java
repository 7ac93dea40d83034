package dev.tumbler.lock.spring.autoconfigure;

import dev.tumbler.lock.LockService;
import java.util.Objects;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * UP when the lock service answers: one {@code tryAcquire(Duration.ZERO)} of a lock of its own, released at
 * once. A lock held by another instance's check is UP too ({@code probe: held}): the backend answered. DOWN
 * when the service is closed or the attempt fails (an unreachable backend, a quorum out of reach), with
 * the exception. Details: the provider, its redacted URL and the probe's outcome and time.
 *
 * <p>Give it the service that is not metered, so that health checks do not count as the application's
 * acquires. Spring Boot 4's health API; on Boot 3.5, {@link TumblerBoot3HealthIndicator} does the same.
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
    TumblerHealthProbe.Outcome o = TumblerHealthProbe.probe(locks, lockName);
    o.details().forEach(builder::withDetail);
    if (o.up()) {
      builder.up();
    } else {
      builder.down();
    }
  }
}
