package dev.tumbler.peer.election;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.peer.algorithm.CoreContext;
import java.time.Duration;
import java.util.List;

/**
 * The URL parameters of a node's election (NATIVE-ALGORITHMS Appendix A), read and checked in one place for every
 * algorithm that elects: {@code priority}, {@code electionDelay} and {@code leaderLease}. An invalid value is an
 * error naming its parameter, never replaced by a default. Immutable.
 *
 * @param priority this node's election priority, 1 (most eager) to 15 (never leads while others can)
 * @param electionDelayNanos how long a conductor waits for more members before it proposes (≥ 0)
 * @param leaderLeaseNanos a leader's lease (> 0); the heartbeat is a quarter of it, the leader timeout 1.5 times
 */
public record ElectionParameters(int priority, long electionDelayNanos, long leaderLeaseNanos) {

  /** The parameter names, in the order {@link #describe()} lists them. */
  public static final List<String> NAMES = List.of("priority", "electionDelay", "leaderLease");

  /** The longest duration a setting may have. */
  static final Duration MAX_DURATION = Duration.ofDays(1);

  public ElectionParameters {
    if (priority < ElectionSettings.MIN_PRIORITY || priority > ElectionSettings.NEVER_LEADS) {
      throw new IllegalArgumentException("priority must be 1 to 15: " + priority);
    }
    if (electionDelayNanos < 0 || electionDelayNanos > MAX_DURATION.toNanos()) {
      throw new IllegalArgumentException("electionDelay must be 0 to 1 day: " + electionDelayNanos + " ns");
    }
    if (leaderLeaseNanos < 1 || leaderLeaseNanos > MAX_DURATION.toNanos()) {
      throw new IllegalArgumentException("leaderLease must be 1 ns to 1 day: " + leaderLeaseNanos + " ns");
    }
  }

  /** The simulator's defaults (Appendix A): priority 14, an election delay of 20 ms, a leader lease of 30 ms. */
  public static ElectionParameters simulation() {
    return new ElectionParameters(ElectionSettings.DEFAULT_PRIORITY, Duration.ofMillis(20).toNanos(),
        Duration.ofMillis(30).toNanos());
  }

  /**
   * The parameters in {@code url}, with Appendix A's defaults for those it does not give.
   *
   * @throws InvalidLockUrlException naming the parameter that is wrong
   */
  public static ElectionParameters from(LockUrl url) {
    int priority = url.integer("priority", ElectionSettings.DEFAULT_PRIORITY, ElectionSettings.MIN_PRIORITY,
        ElectionSettings.NEVER_LEADS);
    Duration delay = url.duration("electionDelay", ElectionSettings.DEFAULT_ELECTION_DELAY);
    Duration lease = url.duration("leaderLease", ElectionSettings.DEFAULT_LEADER_LEASE);
    if (delay.isNegative() || delay.compareTo(MAX_DURATION) > 0) {
      throw invalid(url, "electionDelay", "must be 0 to 1 day, not " + delay);
    }
    if (lease.isZero() || lease.isNegative() || lease.compareTo(MAX_DURATION) > 0) {
      throw invalid(url, "leaderLease", "must be above 0 and at most 1 day, not " + lease);
    }
    return new ElectionParameters(priority, delay.toNanos(), lease.toNanos());
  }

  /** The error for {@code parameter} of {@code url}, naming the parameter and why it is wrong. */
  public static InvalidLockUrlException invalid(LockUrl url, String parameter, String reason) {
    return new InvalidLockUrlException("lock URL " + url + ": parameter '" + parameter + "': " + reason);
  }

  /** How long a leader may stay silent before it is replaced: 1.5 × {@code leaderLease} (Appendix A). */
  public long leaderTimeoutNanos() {
    return leaderLeaseNanos + leaderLeaseNanos / 2;
  }

  /**
   * The election settings of a node with these parameters and {@code leaderCount} leaders per view, whose wall
   * clock read {@code wallMicros} when it started (0 in the simulator).
   */
  public ElectionSettings settings(int leaderCount, long wallMicros) {
    return settingsFrom(leaderCount, initialTerm(wallMicros));
  }

  /**
   * The election settings of a core made from {@code context} with {@code leaderCount} leaders per view: its first
   * term is above the wall clock's floor ({@link #initialTerm}) and above the context's {@code termFloor}.
   */
  public ElectionSettings settings(int leaderCount, CoreContext context) {
    return settingsFrom(leaderCount, Math.max(initialTerm(context.wallMicros()), context.termFloor()));
  }

  private ElectionSettings settingsFrom(int leaderCount, long initialTerm) {
    return ElectionSettings.of(leaderCount, priority, Duration.ofNanos(electionDelayNanos),
        Duration.ofNanos(leaderLeaseNanos), initialTerm);
  }

  /**
   * Appendix C's floor for the terms of a cluster that starts with no informed member: 16-second units since
   * 2024-01-01, from the wall clock; 0 when {@code wallMicros} is 0 (the simulator).
   */
  public static long initialTerm(long wallMicros) {
    if (wallMicros <= 0) {
      return 0;
    }
    return Math.max(0, (wallMicros / 1_000_000 - TERM_EPOCH_SECONDS) / 16);
  }

  /** Seconds since the epoch of 2024-01-01T00:00:00Z, where the wall-clock term floor starts (Appendix C). */
  static final long TERM_EPOCH_SECONDS = 1_704_067_200L;

  /** The parameters as a URL query fragment, for messages. */
  public String describe() {
    return "priority=" + priority + "&electionDelay=" + Duration.ofNanos(electionDelayNanos) + "&leaderLease="
        + Duration.ofNanos(leaderLeaseNanos);
  }
}
