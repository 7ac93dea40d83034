package dev.tumbler.peer.sim;

import dev.tumbler.peer.core.Observation;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * BU-2 (NATIVE-ALGORITHMS §6.4), judged over the counters a semaphore server publishes ({@link Observation.Buckets}):
 * the counters have the shape full buckets, at most one partial bucket, then empty ones; none holds more than the
 * bucket size; they sum to the permits out; and the highest bucket made active never goes down on one server and
 * covers every bucket in use, while that server serves one term. Not thread safe.
 */
final class BucketChecks {

  /** The highest bucket each server (a node's incarnation) published for each name. */
  private final Map<String, Integer> highest = new HashMap<>();

  /** {@code server} serves a new term: what it serves now starts from what the holders restate. */
  void serving(String server) {
    highest.keySet().removeIf(k -> k.startsWith(server + "/"));
  }

  /**
   * Judges the counters {@code server} just published.
   *
   * @return what breaks BU-2, starting with {@code BU-2:}, or null
   */
  String published(String server, Observation.Buckets b) {
    List<Integer> counts = b.counts();
    long sum = 0;
    int used = 0;
    boolean notFull = false;
    for (int j = 0; j < counts.size(); j++) {
      int c = counts.get(j);
      if (c < 0 || c > b.bucketSize()) {
        return "BU-2: bucket " + (j + 1) + " of " + b.name() + " on " + b.server() + " holds " + c + " of "
            + b.bucketSize() + ": " + counts;
      }
      if (c > 0 && notFull) {
        return "BU-2: bucket " + (j + 1) + " of " + b.name() + " on " + b.server() + " holds " + c
            + " above a bucket that is not full: " + counts;
      }
      notFull |= c < b.bucketSize();
      sum += c;
      if (c > 0) {
        used = j + 1;
      }
    }
    if (sum != b.total()) {
      return "BU-2: the buckets of " + b.name() + " on " + b.server() + " hold " + sum + " permits, " + b.total()
          + " are out: " + counts;
    }
    if (b.highest() < used || b.highest() != counts.size()) {
      return "BU-2: the highest bucket of " + b.name() + " on " + b.server() + " is " + b.highest() + " with "
          + counts;
    }
    String key = server + "/" + b.name();
    Integer before = highest.get(key);
    if (before != null && b.highest() < before && b.total() > 0) {
      return "BU-2: the highest bucket of " + b.name() + " on " + b.server() + " went down from " + before + " to "
          + b.highest();
    }
    highest.put(key, b.total() == 0 ? 0 : Math.max(b.highest(), before == null ? 0 : before));
    return null;
  }
}
