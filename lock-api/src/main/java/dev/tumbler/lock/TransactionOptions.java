package dev.tumbler.lock;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * How a {@link LockTransaction} behaves.
 *
 * @param abortOnDeadlock when this transaction is chosen to break a deadlock on a lock it was already
 *     told it holds: {@code true} aborts it ({@link DeadlockException} from {@link LockTransaction#await},
 *     everything released); {@code false} surrenders that lock and requeues for it, so {@code await}
 *     goes on waiting
 * @param quorum how many of {@code nodes} must grant each lock
 * @param nodes the nodes to lock on, for providers with several lock servers; empty means the provider's
 *     default
 * @param leaseTime the lease term of the transaction's locks; {@code null} means the service's
 */
public record TransactionOptions(boolean abortOnDeadlock, Quorum quorum, List<String> nodes, Duration leaseTime) {

  /** How many of the nodes asked must grant a lock for the transaction to hold it. */
  public enum Quorum {
    /** Every node. */
    ALL,
    /** At least one node. */
    ANY,
    /** More than half of the nodes. */
    MAJORITY
  }

  public TransactionOptions {
    Objects.requireNonNull(quorum, "quorum");
    nodes = List.copyOf(Objects.requireNonNull(nodes, "nodes"));
    for (String node : nodes) {
      if (node.isBlank()) {
        throw new IllegalArgumentException("nodes: a node name is blank");
      }
    }
    if (leaseTime != null && (leaseTime.isNegative() || leaseTime.isZero())) {
      throw new IllegalArgumentException("leaseTime must be positive: " + leaseTime);
    }
  }

  /** Surrender on deadlock, quorum {@link Quorum#ALL}, the provider's default nodes and lease time. */
  public static TransactionOptions defaults() {
    return new TransactionOptions(false, Quorum.ALL, List.of(), null);
  }

  public TransactionOptions withAbortOnDeadlock(boolean abort) {
    return new TransactionOptions(abort, quorum, nodes, leaseTime);
  }

  public TransactionOptions withQuorum(Quorum q) {
    return new TransactionOptions(abortOnDeadlock, q, nodes, leaseTime);
  }

  public TransactionOptions withNodes(List<String> n) {
    return new TransactionOptions(abortOnDeadlock, quorum, n, leaseTime);
  }

  public TransactionOptions withLeaseTime(Duration t) {
    return new TransactionOptions(abortOnDeadlock, quorum, nodes, t);
  }
}
