package dev.tumbler.lock;

import java.time.Duration;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Leader election among the candidates that joined an election of one name. At most one candidate is
 * leader at a time; leadership is a {@link Lease} with a fencing token, so a deposed leader that has
 * not noticed yet can be fenced off. Capability {@link Capability#LEADER_ELECTION}. Thread safe.
 *
 * <pre>{@code
 * try (LeaderElection election = service.election("scheduler").join()) {
 *   if (election.awaitLeadership(Duration.ofMinutes(1))) {
 *     Lease term = election.leadership().orElseThrow();
 *     runWhile(term::isValid);
 *   }
 * }
 * }</pre>
 */
public interface LeaderElection extends AutoCloseable {

  /** The election's name. */
  String name();

  /** This candidate's id: unique among the candidates of this election. */
  String candidateId();

  /**
   * Becomes a candidate. Returns at once; leadership arrives in the background. Idempotent. After losing
   * leadership (its lease lost), the candidate stays in the election and may be elected again.
   *
   * @return this election, for chaining
   * @throws ServiceClosedException if the service is closed
   */
  LeaderElection join();

  /** Whether this candidate is leader now, by its lease's safe view. */
  boolean isLeader();

  /**
   * Waits at most {@code maxWait} until this candidate is leader.
   *
   * @return true if it is leader when this returns
   * @throws IllegalStateException if the candidate has not joined
   * @throws InterruptedException if interrupted while waiting
   */
  boolean awaitLeadership(Duration maxWait) throws InterruptedException;

  /** The current term's lease while this candidate is leader; empty otherwise. */
  Optional<Lease> leadership();

  /** The leader's candidate id as last known to this client, if any; may be stale. */
  Optional<String> leader();

  /**
   * Adds a listener called with {@code true} each time this candidate becomes leader and {@code false}
   * each time it stops being leader (resigned, lost its lease, closed). Called on a background thread.
   *
   * @return this election, for chaining
   */
  LeaderElection onLeadershipChange(Consumer<Boolean> listener);

  /** Gives up leadership, if held, and leaves the election. Idempotent. */
  void resign();

  /** Same as {@link #resign()}. */
  @Override
  void close();
}
