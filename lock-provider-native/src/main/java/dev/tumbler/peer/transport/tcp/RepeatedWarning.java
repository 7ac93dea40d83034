package dev.tumbler.peer.transport.tcp;

import java.util.concurrent.TimeUnit;

/**
 * One dialer's refusals, logged once rather than at every retry: a warning is due when its text differs from the
 * last one logged, or when {@value #REPEAT_MINUTES} minute has passed since; the repeats in between are counted and
 * the next warning says how many. A peer or member whose secret differs is redialled for ever, with back-off, and
 * would otherwise log a line at every attempt. Not thread safe: each dialer thread has its own.
 */
final class RepeatedWarning {
  static final int REPEAT_MINUTES = 1;
  private static final long REPEAT_NANOS = TimeUnit.MINUTES.toNanos(REPEAT_MINUTES);

  private String last;
  private long lastAt;
  private int repeats;

  /**
   * Whether {@code message} is due now; if so, the text to log (with the repeats since the last one, if any), else
   * null (and it is counted).
   */
  String due(String message) {
    long now = System.nanoTime();
    if (message.equals(last) && now - lastAt < REPEAT_NANOS) {
      repeats++;
      return null;
    }
    String text = repeats == 0 ? message : message + " (refused " + repeats + " more time" + (repeats == 1 ? "" : "s")
        + " since the last warning)";
    last = message;
    lastAt = now;
    repeats = 0;
    return text;
  }

  /** The link came up: the next refusal is news. */
  void reset() {
    last = null;
    repeats = 0;
  }
}
