package dev.tumbler.peer.core;

import dev.tumbler.lock.TransactionOptions.Quorum;
import java.util.List;
import java.util.Objects;

/**
 * How a transaction claims ({@link Input.Begin}): the core's form of the API's {@code TransactionOptions},
 * with the lease term in nanoseconds.
 *
 * @param abortOnDeadlock when it is chosen to break a deadlock on a claim it was already told it holds: abort
 *     ({@link Output.TxAborted}) rather than surrender that claim and wait for it again
 * @param quorum how many of {@code nodes} must grant each claim
 * @param nodes the members to claim on, sorted and without repeats; empty for every member
 * @param leaseNanos the term of its claims at the lock servers; 0 for the service's
 */
public record TxOptions(boolean abortOnDeadlock, Quorum quorum, List<String> nodes, long leaseNanos) {

  public TxOptions {
    Objects.requireNonNull(quorum, "quorum");
    nodes = List.copyOf(new java.util.TreeSet<>(nodes));
    if (leaseNanos < 0) {
      throw new IllegalArgumentException("a transaction's lease term is not negative: " + leaseNanos);
    }
  }

  /** What a plain lock handle of a transaction-serving core claims with (design F-10): a majority of every member. */
  public static TxOptions plainLock() {
    return new TxOptions(false, Quorum.MAJORITY, List.of(), 0);
  }
}
