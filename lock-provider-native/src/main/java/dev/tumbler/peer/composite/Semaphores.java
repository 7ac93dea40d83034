package dev.tumbler.peer.composite;

import dev.tumbler.peer.election.ElectionParameters;
import java.util.Objects;

/**
 * How a node serves semaphores when its lock algorithm does not ({@link Hosting}): the bucket size, the term of a
 * session's lease, and, for a lock algorithm that elects no leaders, the election of the semaphore server.
 *
 * @param bucketSize the permits of a bucket; 0 for one bucket as large as each handle's {@code maxPermits}
 * @param leaseNanos the term of a session's lease
 * @param election the semaphore server's election when the lock algorithm has none of its own
 */
public record Semaphores(int bucketSize, long leaseNanos, ElectionParameters election) {
  public Semaphores {
    if (bucketSize < 0) {
      throw new IllegalArgumentException("bucketSize must be 0 (none) or positive: " + bucketSize);
    }
    if (leaseNanos <= 0) {
      throw new IllegalArgumentException("a semaphore's permits have a term: leaseNanos " + leaseNanos);
    }
    Objects.requireNonNull(election, "election");
  }
}
