package dev.tumbler.peer.transport.tcp;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * Rate-limits a family of warnings that anyone who can open a connection can cause (connections closed
 * before or during their handshake): at most {@code burst} lines per window; the rest are counted by reason
 * and summed up in one line when the next window opens, or at {@link #flush()}. So a flood of hostile
 * connections costs a few lines every window, not one line each. Thread safe.
 */
final class LogLimiter {
  private final Logger log;
  private final String self;
  private final long windowNanos;
  private final int burst;
  private final String what;
  // guarded by this
  private long windowStart;
  private int lines;
  private final Map<String, Integer> suppressed = new TreeMap<>();

  /** {@code what} names what the summary line counts (plural, as in "connections closed ..."). */
  LogLimiter(Logger log, String self, long window, TimeUnit unit, int burst, String what) {
    this.what = what;
    this.log = log;
    this.self = self;
    this.windowNanos = unit.toNanos(window);
    this.burst = burst;
    this.windowStart = System.nanoTime();
  }

  /** Whether a line for {@code reason} may be logged now; if not, it is counted for the summary. */
  synchronized boolean allow(String reason) {
    long now = System.nanoTime();
    if (now - windowStart >= windowNanos) {
      flushLocked();
      windowStart = now;
      lines = 0;
    }
    if (lines < burst) {
      lines++;
      return true;
    }
    suppressed.merge(reason, 1, Integer::sum);
    return false;
  }

  /** Logs the summary of what was suppressed so far, if anything. */
  synchronized void flush() {
    flushLocked();
  }

  private void flushLocked() {
    if (suppressed.isEmpty()) {
      return;
    }
    int total = suppressed.values().stream().mapToInt(Integer::intValue).sum();
    log.warn("{}: {} more {} were not logged one by one (within {} s; by reason: {})", self, total, what,
        TimeUnit.NANOSECONDS.toSeconds(windowNanos), suppressed);
    suppressed.clear();
  }
}
