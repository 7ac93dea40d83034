package dev.tumbler.peer.lease;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.peer.election.ElectedSettings;
import dev.tumbler.peer.election.ElectionParameters;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The URL settings of {@code algorithm=lease} (NATIVE-ALGORITHMS Appendix A): its server's election, whether released
 * locks stay cached on their node ({@code cache}, default true), and how often a holder is recalled while someone
 * waits ({@code recallInterval}, default 1 s). Checked when made: an invalid value is an error naming its parameter.
 * Immutable; two services may share a node only if their settings are equal.
 *
 * @param election the election of the server
 * @param cache whether a released lock stays on its node until recalled
 * @param recallIntervalNanos how often the holder of a lock someone waits for is recalled (> 0)
 */
public record LeaseAlgorithmSettings(ElectionParameters election, boolean cache, long recallIntervalNanos)
    implements ElectedSettings {

  /** The URL parameters, in the order {@link #describe()} lists them. */
  public static final List<String> PARAMETERS;

  /** The default recall interval (Appendix A). */
  public static final Duration DEFAULT_RECALL_INTERVAL = Duration.ofSeconds(1);

  /** The longest recall interval. */
  static final Duration MAX_RECALL_INTERVAL = Duration.ofHours(1);

  static {
    List<String> p = new ArrayList<>(ElectionParameters.NAMES);
    p.add("cache");
    p.add("recallInterval");
    PARAMETERS = List.copyOf(p);
  }

  public LeaseAlgorithmSettings {
    Objects.requireNonNull(election, "election");
    if (recallIntervalNanos < 1 || recallIntervalNanos > MAX_RECALL_INTERVAL.toNanos()) {
      throw new IllegalArgumentException("recallInterval must be 1 ns to 1 hour: " + recallIntervalNanos + " ns");
    }
  }

  /** The simulator's defaults (Appendix A): its election timings, caching on, a recall every 15 ms. */
  public static LeaseAlgorithmSettings simulation() {
    return new LeaseAlgorithmSettings(ElectionParameters.simulation(), true, Duration.ofMillis(15).toNanos());
  }

  /**
   * The settings in {@code url}, with Appendix A's defaults for those it does not give.
   *
   * @throws InvalidLockUrlException naming the parameter that is wrong
   */
  public static LeaseAlgorithmSettings from(LockUrl url) {
    ElectionParameters election = ElectionParameters.from(url);
    boolean cache = url.bool("cache", true);
    Duration recall = url.duration("recallInterval", DEFAULT_RECALL_INTERVAL);
    if (recall.isZero() || recall.isNegative() || recall.compareTo(MAX_RECALL_INTERVAL) > 0) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'recallInterval': must be above 0 and at "
          + "most 1 hour, not " + recall);
    }
    return new LeaseAlgorithmSettings(election, cache, recall.toNanos());
  }

  @Override
  public String describe() {
    return election.describe() + "&cache=" + cache + "&recallInterval=" + Duration.ofNanos(recallIntervalNanos);
  }
}
