package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.FaultInjector;
import dev.tumbler.lock.tck.TckTarget;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * The TCK's view of the JDBC provider on an in-memory H2 database of this JVM: every service opens its own
 * pool on it. Faults: paused renewals (an in-memory database has no connection to cut, and no server to crash).
 */
final class H2Target implements TckTarget, FaultInjector {
  private final String url;
  private final Duration leaseTime;

  H2Target(Duration leaseTime) {
    this.leaseTime = leaseTime;
    this.url = "lock:jdbc:h2:mem:tck-" + UUID.randomUUID().toString().substring(0, 8)
        + ";DB_CLOSE_DELAY=-1?createSchema=true&timeout=1s&leaseTime=" + leaseTime.toMillis() + "ms";
  }

  @Override
  public LockService open() {
    return LockProviders.connect(url);
  }

  @Override
  public Duration leaseTime() {
    return leaseTime;
  }

  @Override
  public Optional<String> url() {
    return Optional.of(url);
  }

  @Override
  public Optional<FaultInjector> faults() {
    return Optional.of(this);
  }

  @Override
  public Set<Fault> supported() {
    return Set.of(Fault.PAUSE_RENEWALS);
  }
}
