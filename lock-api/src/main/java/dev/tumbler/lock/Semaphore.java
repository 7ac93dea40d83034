package dev.tumbler.lock;

import java.time.Duration;
import java.util.Optional;

/**
 * A counting semaphore: at most {@link #maxPermits()} permits are out at once, over every client of the
 * backend. Each successful acquire returns a {@link Lease} holding the permits; releasing it (or its
 * expiry, or closing its service) gives them back. Capability {@link Capability#SEMAPHORE}. Thread safe.
 *
 * <p>Every handle of one name must agree on {@code maxPermits}; what happens when they do not is the
 * provider's to document.
 */
public interface Semaphore {
  String name();

  /** The most permits that can be out at once. */
  int maxPermits();

  /** Permits not out right now, as last known; may be stale the moment it returns. */
  int availablePermits();

  /**
   * Waits until {@code permits} are granted together.
   *
   * @throws IllegalArgumentException if {@code permits < 1} or {@code permits > maxPermits()}
   * @throws InterruptedException if interrupted while waiting; nothing is held then
   */
  Lease acquire(int permits) throws InterruptedException;

  /**
   * Waits at most {@code maxWait} for {@code permits}; {@link Duration#ZERO} tries once.
   *
   * @throws IllegalArgumentException if {@code permits < 1}, {@code permits > maxPermits()} or
   *     {@code maxWait} is negative
   * @throws InterruptedException if interrupted while waiting; nothing is held then
   */
  Optional<Lease> tryAcquire(int permits, Duration maxWait) throws InterruptedException;
}
