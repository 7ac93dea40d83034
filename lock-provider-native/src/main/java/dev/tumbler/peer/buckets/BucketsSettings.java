package dev.tumbler.peer.buckets;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.peer.election.ElectedSettings;
import dev.tumbler.peer.election.ElectionParameters;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The URL settings of {@code algorithm=buckets} (NATIVE-ALGORITHMS Appendix A): its server's election and the
 * semaphores' bucket size. Checked when made: an invalid value is an error naming its parameter. Immutable; two
 * services may share a node only if their settings are equal.
 *
 * @param election the election of the server
 * @param bucketSize the permits of a bucket (every node of the cluster must agree); 0 when the URL gives none: a
 *     name's one bucket is as large as its handles' {@code maxPermits}, on which they must then agree
 */
public record BucketsSettings(ElectionParameters election, int bucketSize) implements ElectedSettings {

  /** The URL parameters, in the order {@link #describe()} lists them. */
  public static final List<String> PARAMETERS;

  static {
    List<String> p = new ArrayList<>(ElectionParameters.NAMES);
    p.add("bucketSize");
    PARAMETERS = List.copyOf(p);
  }

  public BucketsSettings {
    Objects.requireNonNull(election, "election");
    if (bucketSize < 0) {
      throw new IllegalArgumentException("bucketSize must be 0 (none) or positive: " + bucketSize);
    }
  }

  /** The simulator's defaults (Appendix A's election timings) with no bucket size. */
  public static BucketsSettings simulation() {
    return new BucketsSettings(ElectionParameters.simulation(), 0);
  }

  /**
   * The settings in {@code url}, with Appendix A's defaults for those it does not give.
   *
   * @throws InvalidLockUrlException naming the parameter that is wrong
   */
  public static BucketsSettings from(LockUrl url) {
    return new BucketsSettings(ElectionParameters.from(url), bucketSize(url));
  }

  /**
   * The {@code bucketSize} of {@code url}: 0 when it gives none, else 1 to {@link Integer#MAX_VALUE}.
   *
   * @throws InvalidLockUrlException naming the parameter when it is not such a number
   */
  public static int bucketSize(LockUrl url) {
    if (url.parameter("bucketSize").isEmpty()) {
      return 0;
    }
    return url.integer("bucketSize", 1, 1, Integer.MAX_VALUE);
  }

  @Override
  public String describe() {
    return election.describe() + (bucketSize > 0 ? "&bucketSize=" + bucketSize : "");
  }
}
