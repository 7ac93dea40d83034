package dev.tumbler.lock.tck;

import java.util.ArrayList;
import java.util.List;

/**
 * A resource protected by fencing tokens, as in Kleppmann's "How to do distributed locking": it
 * accepts a write only if its token is at least the highest token it has seen, and counts the writes
 * it rejected. Put one behind a lock to prove that a holder that lost its lease (paused, cut off) cannot
 * overwrite the work of the holder that came after it. Thread safe; reusable outside the TCK.
 *
 * <p>Equal tokens are accepted: one holder writes several times with its one token.
 *
 * @param <T> the value written
 */
public final class FencedResource<T> {
  private long highest = Long.MIN_VALUE;
  private T value;
  private long accepted;
  private long stale;
  private final List<Long> acceptedTokens = new ArrayList<>();

  /**
   * Writes {@code newValue} if {@code token} is not lower than the highest token seen.
   *
   * @return true if written; false if rejected as stale (and counted)
   */
  public synchronized boolean write(long token, T newValue) {
    if (token < highest) {
      stale++;
      return false;
    }
    highest = token;
    value = newValue;
    accepted++;
    acceptedTokens.add(token);
    return true;
  }

  /** The last value written, or null. */
  public synchronized T value() {
    return value;
  }

  /** The highest token seen; {@link Long#MIN_VALUE} before the first write. */
  public synchronized long highestToken() {
    return highest;
  }

  /** How many writes were rejected as stale. */
  public synchronized long staleWrites() {
    return stale;
  }

  /** How many writes were accepted. */
  public synchronized long acceptedWrites() {
    return accepted;
  }

  /** The tokens of the accepted writes, in order. */
  public synchronized List<Long> acceptedTokens() {
    return List.copyOf(acceptedTokens);
  }

  @Override
  public synchronized String toString() {
    return "FencedResource[highest=" + highest + ", accepted=" + accepted + ", stale=" + stale + "]";
  }
}
