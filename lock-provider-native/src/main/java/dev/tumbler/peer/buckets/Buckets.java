package dev.tumbler.peer.buckets;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The counters of one semaphore name on the server (seed 002): buckets of {@code size} permits each, numbered from
 * 1, and the highest bucket ever made active. A request of a handle with {@code r} resources ({@code maxPermits /
 * size}) may use buckets 1 to {@code r}: it takes its permits from bucket 1 upward, each bucket up to its size, and
 * fits only when they all find room there. A release gives permits back from the highest non-empty bucket down.
 *
 * <p>The seed keeps the counters in a shared table that callers update one at a time with atomic increments, and
 * so needs a "full" marker, put-back loops and a decrement that may over-allocate under a livelock (002:111-119).
 * Here one server applies every change in one step, so the counters always have the shape <em>full buckets, at most
 * one partial bucket, empty buckets</em>, and a request with {@code r} resources fits exactly when
 * {@code total + k ≤ r·size}: the seed's rule, with nothing lost or over-granted.
 *
 * <p>Not thread safe: owned by the server's core.
 */
final class Buckets {

  /**
   * The most buckets a handle may span ({@code maxPermits / bucketSize}): each is a counter on the server, and a
   * request looks through its buckets.
   */
  static final int MAX_BUCKETS = 1 << 16;

  /** Test-only mutation: a release gives permits back from bucket 1 upward (against 002:163-168). */
  boolean mutationReleaseLowestFirst;
  /** Test-only mutation: a bucket takes one permit more than its size (the seed's "full" marker taken for one). */
  boolean mutationCeilingOffByOne;

  private final int size;
  private int[] counts = new int[0];
  private int highest;
  private long total;

  Buckets(int size) {
    if (size < 1) {
      throw new IllegalArgumentException("a bucket holds at least one permit: " + size);
    }
    this.size = size;
  }

  /** The permits a bucket holds. */
  int size() {
    return size;
  }

  /** The permits out. */
  long total() {
    return total;
  }

  /** The highest bucket ever made active: it never goes down. */
  int highest() {
    return highest;
  }

  /** The counters of buckets 1 to {@link #highest()}. */
  List<Integer> counts() {
    List<Integer> c = new ArrayList<>(highest);
    for (int i = 0; i < highest; i++) {
      c.add(counts[i]);
    }
    return c;
  }

  private int ceiling() {
    return mutationCeilingOffByOne ? size + 1 : size;
  }

  /** Whether {@code permits} find room in buckets 1 to {@code resources}. */
  boolean fits(int permits, int resources) {
    checkResources(resources);
    long room = 0;
    for (int j = 0; j < resources && room < permits; j++) {
      room += ceiling() - (j < counts.length ? counts[j] : 0);
    }
    return room >= permits;
  }

  /**
   * Takes {@code permits} into buckets 1 to {@code resources}, lowest first.
   *
   * @throws IllegalStateException if they do not fit ({@link #fits} first)
   */
  void take(int permits, int resources) {
    if (!fits(permits, resources)) {
      throw new IllegalStateException(permits + " permits do not fit in " + resources + " buckets of " + size + ": "
          + counts());
    }
    int left = permits;
    for (int j = 0; left > 0; j++) {
      grow(j + 1);
      int add = Math.min(ceiling() - counts[j], left);
      if (add > 0) {
        counts[j] += add;
        left -= add;
        highest = Math.max(highest, j + 1);
      }
    }
    total += permits;
  }

  /**
   * Gives {@code permits} back from the highest non-empty bucket down.
   *
   * @throws IllegalStateException if fewer are out
   */
  void give(int permits) {
    if (permits > total) {
      throw new IllegalStateException("giving back " + permits + " permits with " + total + " out");
    }
    int left = permits;
    if (mutationReleaseLowestFirst) {
      for (int j = 0; left > 0; j++) {
        int sub = Math.min(counts[j], left);
        counts[j] -= sub;
        left -= sub;
      }
    } else {
      for (int j = highest - 1; left > 0; j--) {
        int sub = Math.min(counts[j], left);
        counts[j] -= sub;
        left -= sub;
      }
    }
    total -= permits;
  }

  private void grow(int buckets) {
    if (counts.length < buckets) {
      counts = Arrays.copyOf(counts, Math.max(buckets, Math.min(MAX_BUCKETS, Math.max(4, counts.length * 2))));
    }
  }

  private static void checkResources(int resources) {
    if (resources < 1 || resources > MAX_BUCKETS) {
      throw new IllegalArgumentException("a handle spans 1 to " + MAX_BUCKETS + " buckets: " + resources);
    }
  }

  @Override
  public String toString() {
    return counts() + " of " + size + " (highest " + highest + ", " + total + " out)";
  }
}
