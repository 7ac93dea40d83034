package dev.tumbler.lock.spi;

/**
 * A monotonic clock in nanoseconds, injected into every component that waits or measures a lease, so
 * tests can replace it. Only differences between two readings mean anything.
 */
@FunctionalInterface
public interface Ticker {

  /** Nanoseconds since an arbitrary origin; never goes backwards. */
  long read();

  /** {@link System#nanoTime()}. */
  static Ticker system() {
    return System::nanoTime;
  }
}
