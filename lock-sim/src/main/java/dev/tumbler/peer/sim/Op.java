package dev.tumbler.peer.sim;

import dev.tumbler.lock.TransactionOptions.Quorum;
import dev.tumbler.peer.core.Claim;
import java.util.List;
import java.util.Objects;

/**
 * One scheduled client operation or fault of a {@link Simulation}, at a real (simulation) time in
 * nanoseconds. A run is its seed plus its list of ops, which is what the shrinker cuts down.
 */
public sealed interface Op {

  /** When it happens, in simulation nanoseconds. */
  long at();

  /**
   * A client of {@code node}'s session slot {@code session} asks for {@code claim}; it holds a grant for
   * {@code holdNanos} and gives up after {@code waitNanos} ({@code -1}: never; the core's peer timeout
   * still ends it). {@code attempt} asks for a single attempt. A holder that {@code renews} has a leased
   * grant renewed as the SPI's renewer does (every T/3); one that does not loses it when its window closes.
   */
  record Acquire(long at, int node, int session, Claim claim, long holdNanos, long waitNanos, boolean attempt,
      boolean renews) implements Op {
    public Acquire {
      Objects.requireNonNull(claim, "claim");
    }

    @Override
    public String toString() {
      return "Acquire[at=" + at + ", node=" + node + ", session=" + session + ", " + claim.mode()
          + (claim.writer() == Claim.Writer.HARD ? "" : "/" + claim.writer()) + " "
          + claim.name() + ", hold=" + holdNanos + ", wait=" + waitNanos + (attempt ? ", attempt" : "")
          + (renews ? "" : ", never renews") + "]";
    }
  }

  /**
   * A client of {@code node}'s session slot {@code session} begins a transaction whose claims each need
   * {@code quorum} ({@code MAJORITY}, NATIVE-ALGORITHMS F-10, or {@code ALL}) of every member, or of node {@code on}
   * alone when it is not -1, and asks for
   * {@code claims} in order, claim {@code i} {@code gaps[i]} after the one before (staggered, so that transactions
   * interleave and wait for each other in cycles); it waits without a timeout, holds everything for
   * {@code holdNanos} once all are held, then ends the transaction. With {@code abortOnDeadlock} it prefers to abort
   * when chosen to break a deadlock.
   */
  record Transaction(long at, int node, int session, List<Claim> claims, List<Long> gaps, long holdNanos,
      boolean abortOnDeadlock, boolean renews, Quorum quorum, int on) implements Op {
    public Transaction {
      claims = List.copyOf(claims);
      gaps = List.copyOf(gaps);
      if (claims.isEmpty() || claims.size() != gaps.size()) {
        throw new IllegalArgumentException("a transaction has claims, each with its gap: " + claims + " " + gaps);
      }
      if (quorum != Quorum.ALL && quorum != Quorum.MAJORITY) {
        // ANY grants on both sides of a partition: no claim-level exclusion for the checks to hold it to
        throw new IllegalArgumentException("quorum ALL or MAJORITY, not " + quorum);
      }
    }

    @Override
    public String toString() {
      StringBuilder b = new StringBuilder("Transaction[at=" + at + ", node=" + node + ", session=" + session + ",");
      for (int i = 0; i < claims.size(); i++) {
        b.append(" +").append(gaps.get(i) / 1_000_000).append("ms ").append(claims.get(i).mode()).append(' ')
            .append(claims.get(i).name());
      }
      return b + ", hold=" + holdNanos + ", " + quorum + (on < 0 ? "" : " of n" + on)
          + (abortOnDeadlock ? ", abortOnDeadlock" : "")
          + (renews ? "" : ", never renews") + "]";
    }
  }

  /** The session closes: its grants are released and its waits end. */
  record CloseSession(long at, int node, int session) implements Op {}

  /**
   * The node stops handling anything for {@code nanos} (a GC pause): messages, timers and its clients'
   * calls wait and are handled in order when it ends; its clock runs on.
   */
  record Pause(long at, int node, long nanos) implements Op {}

  /** The node crashes: state, timers, sessions and links gone. Skipped for the last live node. */
  record Crash(long at, int node) implements Op {}

  /**
   * A member stops on purpose (its daemon got SIGTERM): it is told {@code Input.Leave}, and crashes once what that
   * sent has arrived. Drawn only among the ops of thin clients' runs.
   */
  record Leave(long at, int node) implements Op {}

  /** A crashed node starts again with empty state. */
  record Restart(long at, int node) implements Op {}

  /** The link between {@code a} and {@code b} breaks (both directions). */
  record Cut(long at, int a, int b) implements Op {}

  /**
   * The link between {@code a} and {@code b} breaks and comes back {@code downNanos} later: a flap short
   * enough that nodes act on stale link state around it.
   */
  record Flap(long at, int a, int b, long downNanos) implements Op {}

  /**
   * Only the direction {@code from → to} breaks, for {@code downNanos}: messages on it are lost and only
   * {@code from} is told (down, then up); {@code to} sees nothing, as when a TCP peer replaces its broken
   * outbound connection with a new one. In runs without TCP-like link reports it is an ordinary
   * {@link Flap}.
   */
  record OneWayFlap(long at, int from, int to, long downNanos) implements Op {}

  /** The link between {@code a} and {@code b} may come back (unless partitioned or a node is down). */
  record Heal(long at, int a, int b) implements Op {}

  /** Nodes whose bit is set in {@code side} are separated from the others. */
  record Partition(long at, int side) implements Op {}

  /** Every cut and partition ends. */
  record HealAll(long at) implements Op {}
}
