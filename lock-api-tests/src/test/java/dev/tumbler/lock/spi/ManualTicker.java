package dev.tumbler.lock.spi;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A ticker that moves only when told. */
final class ManualTicker implements Ticker {
  private final AtomicLong now = new AtomicLong(1_000_000_000L);

  @Override
  public long read() {
    return now.get();
  }

  void advance(Duration d) {
    now.addAndGet(d.toNanos());
  }
}
