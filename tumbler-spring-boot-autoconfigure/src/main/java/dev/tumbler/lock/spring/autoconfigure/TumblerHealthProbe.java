package dev.tumbler.lock.spring.autoconfigure;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ServiceInfo;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The health check of both Spring Boot generations' indicators ({@link TumblerHealthIndicator} on Boot 4,
 * {@link TumblerBoot3HealthIndicator} on Boot 3.5): one {@code tryAcquire(Duration.ZERO)} of a lock of its own,
 * released at once.
 */
final class TumblerHealthProbe {
  private TumblerHealthProbe() {}

  /** UP or DOWN, and the details, in order. */
  record Outcome(boolean up, Map<String, Object> details) {}

  /**
   * Probes {@code locks}: DOWN with {@code state: closed} when the service is closed; UP with the probe's outcome
   * ({@code acquired}, or {@code held} by another instance's check: the backend answered) and time. An attempt that
   * fails throws, which the indicators report as DOWN with the exception.
   */
  static Outcome probe(LockService locks, String lockName) throws InterruptedException {
    Map<String, Object> details = new LinkedHashMap<>();
    ServiceInfo info = locks.info();
    details.put("provider", info.provider());
    details.put("url", info.url());
    if (locks.isClosed()) {
      details.put("state", "closed");
      return new Outcome(false, details);
    }
    long start = System.nanoTime();
    Optional<Lease> lease = locks.lock(lockName).tryAcquire(Duration.ZERO);
    lease.ifPresent(Lease::release);
    details.put("probe", lease.isPresent() ? "acquired" : "held");
    details.put("probeMillis", Duration.ofNanos(System.nanoTime() - start).toMillis());
    return new Outcome(true, details);
  }
}
