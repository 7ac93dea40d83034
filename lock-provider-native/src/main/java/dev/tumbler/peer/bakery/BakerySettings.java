package dev.tumbler.peer.bakery;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.election.ElectedSettings;
import dev.tumbler.peer.election.ElectionParameters;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The URL settings of {@code bakery} (NATIVE-ALGORITHMS Appendix A), checked when made: an invalid value is
 * an error naming its parameter, never replaced by a default. Immutable; two services may share a node only
 * if their settings are equal.
 *
 * @param priority this node's election priority, 1 (most eager) to 15 (never leads while others can)
 * @param electionDelayNanos how long a conductor waits for more members before it proposes (≥ 0)
 * @param leaderLeaseNanos a leader's lease (> 0); the heartbeat is a quarter of it, the leader timeout 1.5 times
 * @param writerMode how write claims of the read/write locks wait among readers
 * @param quietNanos with {@link Claim.Writer#TIMED_SOFT}, how long no reader may have been granted before a
 *     writer is; 0 with the other modes
 */
public record BakerySettings(int priority, long electionDelayNanos, long leaderLeaseNanos, Claim.Writer writerMode,
    long quietNanos) implements ElectedSettings {

  /** The URL parameters, in the order {@link #describe()} lists them. */
  public static final List<String> PARAMETERS = List.of("priority", "electionDelay", "leaderLease", "writerMode",
      "quietPeriod");

  /** The default quiet period of a timed-soft writer (Appendix A). */
  public static final Duration DEFAULT_QUIET_PERIOD = Duration.ofMinutes(10);

  /** The longest duration a setting may have (as the election's). */
  static final Duration MAX_DURATION = Duration.ofDays(1);

  private static final List<String> WRITER_MODES = List.of("hard", "soft", "timed-soft");

  public BakerySettings {
    Objects.requireNonNull(writerMode, "writerMode");
    new ElectionParameters(priority, electionDelayNanos, leaderLeaseNanos); // checks them
    if ((writerMode == Claim.Writer.TIMED_SOFT) != (quietNanos > 0) || quietNanos > MAX_DURATION.toNanos()) {
      throw new IllegalArgumentException("quietPeriod (" + quietNanos + " ns) goes with writerMode=timed-soft only, "
          + "and is then 1 ns to 1 day");
    }
  }

  /** The simulator's defaults (Appendix A): priority 14, election delay 20 ms, leader lease 30 ms, hard writers. */
  public static BakerySettings simulation() {
    ElectionParameters e = ElectionParameters.simulation();
    return new BakerySettings(e.priority(), e.electionDelayNanos(), e.leaderLeaseNanos(), Claim.Writer.HARD, 0);
  }

  /**
   * The settings in {@code url}, with Appendix A's defaults for those it does not give.
   *
   * @throws InvalidLockUrlException naming the parameter that is wrong
   */
  public static BakerySettings from(LockUrl url) {
    ElectionParameters election = ElectionParameters.from(url);
    String mode = url.oneOf("writerMode", WRITER_MODES, "hard");
    Claim.Writer writer = Claim.Writer.valueOf(mode.replace('-', '_').toUpperCase(Locale.ROOT));
    long quiet = 0;
    if (url.parameter("quietPeriod").isPresent()) {
      if (writer != Claim.Writer.TIMED_SOFT) {
        throw ElectionParameters.invalid(url, "quietPeriod", "applies only with writerMode=timed-soft, not " + mode);
      }
      Duration q = url.duration("quietPeriod", DEFAULT_QUIET_PERIOD);
      if (q.isZero() || q.isNegative() || q.compareTo(MAX_DURATION) > 0) {
        throw ElectionParameters.invalid(url, "quietPeriod", "must be above 0 and at most 1 day, not " + q);
      }
      quiet = q.toNanos();
    } else if (writer == Claim.Writer.TIMED_SOFT) {
      quiet = DEFAULT_QUIET_PERIOD.toNanos();
    }
    return new BakerySettings(election.priority(), election.electionDelayNanos(), election.leaderLeaseNanos(), writer,
        quiet);
  }

  /** The election's parameters of these settings. */
  public ElectionParameters election() {
    return new ElectionParameters(priority, electionDelayNanos, leaderLeaseNanos);
  }

  /** How long a leader may stay silent before it is replaced: 1.5 × {@code leaderLease} (Appendix A). */
  public long leaderTimeoutNanos() {
    return election().leaderTimeoutNanos();
  }

  /** These settings for a node of priority {@code priority}. */
  public BakerySettings withPriority(int priority) {
    return new BakerySettings(priority, electionDelayNanos, leaderLeaseNanos, writerMode, quietNanos);
  }

  @Override
  public String describe() {
    StringBuilder b = new StringBuilder(election().describe())
        .append("&writerMode=").append(writerMode.name().toLowerCase(Locale.ROOT).replace('_', '-'));
    if (quietNanos > 0) {
      b.append("&quietPeriod=").append(Duration.ofNanos(quietNanos));
    }
    return b.toString();
  }
}
