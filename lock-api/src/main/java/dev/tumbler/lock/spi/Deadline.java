package dev.tumbler.lock.spi;

import java.time.Duration;

/**
 * The end of a wait on a {@link Ticker}; {@link #none()} never ends. Immutable. Overflow-safe: a wait of
 * {@code Duration.ofDays(100_000)} is treated as no deadline.
 */
public final class Deadline {
  private static final long FOREVER = Long.MAX_VALUE;
  private static final Deadline NONE = new Deadline(null, 0, FOREVER);

  private final Ticker ticker;
  private final long start;
  private final long waitNanos;

  private Deadline(Ticker ticker, long start, long waitNanos) {
    this.ticker = ticker;
    this.start = start;
    this.waitNanos = waitNanos;
  }

  /** A deadline {@code wait} from now on {@code ticker}. */
  public static Deadline after(Duration wait, Ticker ticker) {
    Checks.nonNegative(wait, "maxWait");
    long nanos;
    try {
      nanos = wait.toNanos();
    } catch (ArithmeticException e) {
      return NONE;
    }
    return new Deadline(ticker, ticker.read(), nanos);
  }

  /** A deadline that never comes. */
  public static Deadline none() {
    return NONE;
  }

  /** Whether this deadline never comes. */
  public boolean isNone() {
    return waitNanos == FOREVER;
  }

  /** Nanoseconds left, at least 0; {@link Long#MAX_VALUE} for {@link #none()}. */
  public long remainingNanos() {
    if (waitNanos == FOREVER) {
      return FOREVER;
    }
    return Math.max(0, waitNanos - (ticker.read() - start));
  }

  /** Whether no time is left. */
  public boolean isExpired() {
    return remainingNanos() == 0;
  }

  /** The whole wait this deadline was made with. */
  public Duration total() {
    return isNone() ? Duration.ofNanos(FOREVER) : Duration.ofNanos(waitNanos);
  }

  @Override
  public String toString() {
    return isNone() ? "Deadline[none]" : "Deadline[" + Duration.ofNanos(remainingNanos()) + " left]";
  }
}
