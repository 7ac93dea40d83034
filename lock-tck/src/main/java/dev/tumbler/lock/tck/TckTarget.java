package dev.tumbler.lock.tck;

import dev.tumbler.lock.LockService;
import java.time.Duration;
import java.util.Optional;

/**
 * How the TCK reaches a provider: the one thing a provider author writes. {@link #open()} must return a
 * fresh, independent client each call (a new connection, session or node client), so that several
 * services can contend; every service the TCK opens it also closes.
 */
public interface TckTarget extends AutoCloseable {

  /** A new, independent service on the backend under test. */
  LockService open();

  /**
   * The lease term the services from {@link #open()} use. Keep it short (1 to 3 s) so the lease groups
   * finish quickly; the TCK waits multiples of it.
   */
  Duration leaseTime();

  /** The URL the services are opened with, for the registry group; empty when opened by a factory. */
  default Optional<String> url() {
    return Optional.empty();
  }

  /** Faults the TCK may inject; empty skips the fault groups with that reason. */
  default Optional<FaultInjector> faults() {
    return Optional.empty();
  }

  /** Stops whatever {@link #open()} needs (servers, clusters). Called once, after the last test. */
  @Override
  default void close() {}
}
