package dev.tumbler.lock.spring.autoconfigure;

import dev.tumbler.lock.LockService;
import java.util.Objects;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * {@link TumblerHealthIndicator} for Spring Boot 3.5's health API ({@code org.springframework.boot.actuate.health}):
 * the same check ({@link TumblerHealthProbe}), the same details.
 */
public class TumblerBoot3HealthIndicator extends AbstractHealthIndicator {
  private final LockService locks;
  private final String lockName;

  public TumblerBoot3HealthIndicator(LockService locks, String lockName) {
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
