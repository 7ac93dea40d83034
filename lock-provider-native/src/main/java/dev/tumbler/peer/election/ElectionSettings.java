package dev.tumbler.peer.election;

import java.time.Duration;

/**
 * The settings of one node's {@link ElectionCore} (NATIVE-ALGORITHMS §2.4 and Appendix A), validated when
 * made: an invalid value is an {@link IllegalArgumentException} naming the parameter, never replaced by a
 * default. Every member must use the same timings; the priority is the node's own. Immutable.
 *
 * <p>The leader lease is safe when clocks run at rates within {@value #MAX_RATE_ERROR_PERCENT}% of each other
 * (ρ): a leader that is dropped from a view must have stopped acting before the view exists, which holds when
 * {@code leaderTimeout ≥ leaderLease·(1+ρ)/(1−ρ) + heartbeat} (E7). Settings that break this are rejected.
 *
 * @param leaderCount how many leaders a view has when enough candidates are connected (L*): 3 for
 *     {@code bakery}, 1 for the single-server algorithms; 1 to {@value #MAX_LEADER_COUNT}
 * @param priority this node's priority, {@value #MIN_PRIORITY} (most eager) to {@value #NEVER_LEADS}; a node
 *     of priority {@value #NEVER_LEADS} leads only when fewer than {@code min(leaderCount, n)} other
 *     candidates are connected
 * @param electionDelayNanos how long a conductor waits, once a quorum is connected, for more members before it
 *     proposes (cut short when every member is connected); a failed proposal backs off for a random quarter to
 *     half of it. At least 0
 * @param leaderLeaseNanos how long after a beat that a majority acked its leader may act as one; positive
 * @param heartbeatNanos how often a leader beats; positive and below {@code leaderLease}
 * @param leaderTimeoutNanos how long a leader may stay silent before it is replaced, and how long a node
 *     that acked a leader's beat refuses to vote that leader out
 * @param initialTerm the term above which a cluster that starts with no informed member counts its terms (the
 *     wall-clock floor of Appendix C; 0 in the simulator); at least 0
 */
public record ElectionSettings(int leaderCount, int priority, long electionDelayNanos, long leaderLeaseNanos,
    long heartbeatNanos, long leaderTimeoutNanos, long initialTerm) {

  /** The most leaders a view may have. */
  public static final int MAX_LEADER_COUNT = 16;

  /** The most eager priority. */
  public static final int MIN_PRIORITY = 1;

  /** The priority of a node that leads only when too few other candidates are connected. */
  public static final int NEVER_LEADS = 15;

  /** The default priority (snaplock's). */
  public static final int DEFAULT_PRIORITY = 14;

  /** The default election delay (the seed's 10 seconds). */
  public static final Duration DEFAULT_ELECTION_DELAY = Duration.ofSeconds(10);

  /** The default leader lease. */
  public static final Duration DEFAULT_LEADER_LEASE = Duration.ofSeconds(2);

  /** The bound ρ on the relative clock-rate error between two nodes that the settings are checked against. */
  public static final int MAX_RATE_ERROR_PERCENT = 5;

  /** The longest duration a setting may have, so that deadlines never overflow. */
  static final long MAX_NANOS = Duration.ofDays(1).toNanos();

  /** The largest initial term. */
  static final long MAX_INITIAL_TERM = 1L << 62;

  public ElectionSettings {
    if (leaderCount < 1 || leaderCount > MAX_LEADER_COUNT) {
      throw new IllegalArgumentException("leaderCount must be 1 to " + MAX_LEADER_COUNT + ": " + leaderCount);
    }
    if (priority < MIN_PRIORITY || priority > NEVER_LEADS) {
      throw new IllegalArgumentException("priority must be " + MIN_PRIORITY + " to " + NEVER_LEADS + ": " + priority);
    }
    requireDuration("electionDelay", electionDelayNanos, 0);
    requireDuration("leaderLease", leaderLeaseNanos, 1);
    requireDuration("heartbeat", heartbeatNanos, 1);
    requireDuration("leaderTimeout", leaderTimeoutNanos, 1);
    if (heartbeatNanos >= leaderLeaseNanos) {
      throw new IllegalArgumentException("heartbeat (" + heartbeatNanos + " ns) must be shorter than leaderLease ("
          + leaderLeaseNanos + " ns), or a leader's lease lapses between its beats");
    }
    long least = minLeaderTimeout(leaderLeaseNanos, heartbeatNanos);
    if (leaderTimeoutNanos < least) {
      throw new IllegalArgumentException("leaderTimeout (" + leaderTimeoutNanos + " ns) must be at least "
          + "leaderLease·(1+ρ)/(1−ρ) + heartbeat = " + least + " ns with ρ = " + MAX_RATE_ERROR_PERCENT
          + "% (leaderLease " + leaderLeaseNanos + " ns, heartbeat " + heartbeatNanos + " ns): a dropped leader "
          + "could still act when its successor's view is established");
    }
    if (initialTerm < 0 || initialTerm > MAX_INITIAL_TERM) {
      throw new IllegalArgumentException("initialTerm must be 0 to 2^62: " + initialTerm);
    }
  }

  /**
   * The settings of Appendix A: {@code heartbeat = leaderLease/4}, {@code leaderTimeout = 1.5 × leaderLease}.
   *
   * @throws IllegalArgumentException naming the parameter that is out of range
   */
  public static ElectionSettings of(int leaderCount, int priority, Duration electionDelay, Duration leaderLease,
      long initialTerm) {
    long lease = nanos("leaderLease", leaderLease);
    return new ElectionSettings(leaderCount, priority, nanos("electionDelay", electionDelay), lease, lease / 4,
        lease + lease / 2, initialTerm);
  }

  /** Appendix A's defaults: priority {@value #DEFAULT_PRIORITY}, an election delay of 10 s, a leader lease of 2 s. */
  public static ElectionSettings defaults(int leaderCount, long initialTerm) {
    return of(leaderCount, DEFAULT_PRIORITY, DEFAULT_ELECTION_DELAY, DEFAULT_LEADER_LEASE, initialTerm);
  }

  /** These settings for a node of priority {@code priority}. */
  public ElectionSettings withPriority(int priority) {
    return new ElectionSettings(leaderCount, priority, electionDelayNanos, leaderLeaseNanos, heartbeatNanos,
        leaderTimeoutNanos, initialTerm);
  }

  /** {@code leaderLease·(1+ρ)/(1−ρ) + heartbeat}, rounded up: the shortest safe leader timeout (E7). */
  static long minLeaderTimeout(long leaderLeaseNanos, long heartbeatNanos) {
    long scaled = Math.ceilDiv(leaderLeaseNanos * (100 + MAX_RATE_ERROR_PERCENT), 100 - MAX_RATE_ERROR_PERCENT);
    return scaled + heartbeatNanos;
  }

  private static void requireDuration(String name, long nanos, long least) {
    if (nanos < least || nanos > MAX_NANOS) {
      throw new IllegalArgumentException(name + " must be " + (least == 0 ? "0" : "1 ns") + " to 1 day: " + nanos
          + " ns");
    }
  }

  private static long nanos(String name, Duration d) {
    if (d == null || d.isNegative() || d.compareTo(Duration.ofNanos(MAX_NANOS)) > 0) {
      throw new IllegalArgumentException(name + " must be 0 to 1 day: " + d);
    }
    return d.toNanos();
  }
}
