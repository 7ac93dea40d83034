package dev.tumbler.lock.spi;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * Argument checks shared by every provider, so that bad input fails the same way everywhere: a
 * {@link NullPointerException} or {@link IllegalArgumentException} whose message names the argument.
 */
public final class Checks {

  /** The longest lock name, in characters (UTF-16 code units). */
  public static final int MAX_NAME_LENGTH = 256;

  private Checks() {}

  /**
   * A lock, semaphore or election name: not null, 1 to {@value #MAX_NAME_LENGTH} characters, not blank,
   * no ISO control character, no unpaired surrogate.
   *
   * @return {@code name}
   */
  public static String name(String name) {
    return name(name, "name");
  }

  /** {@link #name(String)} for an argument called {@code argument}. */
  public static String name(String name, String argument) {
    Objects.requireNonNull(name, argument);
    if (name.isEmpty() || name.isBlank()) {
      throw new IllegalArgumentException(argument + " is blank");
    }
    if (name.length() > MAX_NAME_LENGTH) {
      throw new IllegalArgumentException(argument + " is " + name.length() + " characters long; the limit is "
          + MAX_NAME_LENGTH);
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (Character.isISOControl(c)) {
        throw new IllegalArgumentException(argument + " has a control character (U+"
            + String.format("%04X", (int) c) + ") at index " + i);
      }
      if (Character.isHighSurrogate(c) && (i + 1 == name.length() || !Character.isLowSurrogate(name.charAt(i + 1)))
          || Character.isLowSurrogate(c) && (i == 0 || !Character.isHighSurrogate(name.charAt(i - 1)))) {
        throw new IllegalArgumentException(argument + " has an unpaired surrogate at index " + i);
      }
    }
    return name;
  }

  /** A hierarchical name: at least one element, each a valid {@link #name(String)}. */
  public static List<String> path(List<String> path) {
    Objects.requireNonNull(path, "path");
    if (path.isEmpty()) {
      throw new IllegalArgumentException("path is empty");
    }
    for (int i = 0; i < path.size(); i++) {
      name(path.get(i), "path[" + i + "]");
    }
    return List.copyOf(path);
  }

  /**
   * A wait: not null, not negative.
   *
   * @return {@code maxWait}
   */
  public static Duration maxWait(Duration maxWait) {
    return nonNegative(maxWait, "maxWait");
  }

  /** A duration argument called {@code argument}: not null, not negative. */
  public static Duration nonNegative(Duration d, String argument) {
    Objects.requireNonNull(d, argument);
    if (d.isNegative()) {
      throw new IllegalArgumentException(argument + " is negative: " + d);
    }
    return d;
  }

  /** A duration argument called {@code argument}: not null, greater than zero. */
  public static Duration positive(Duration d, String argument) {
    Objects.requireNonNull(d, argument);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(argument + " must be positive: " + d);
    }
    return d;
  }

  /** A semaphore size: at least 1. */
  public static int maxPermits(int maxPermits) {
    if (maxPermits < 1) {
      throw new IllegalArgumentException("maxPermits must be at least 1: " + maxPermits);
    }
    return maxPermits;
  }

  /** A number of permits to take: within {@code [1, maxPermits]}. */
  public static int permits(int permits, int maxPermits) {
    if (permits < 1 || permits > maxPermits) {
      throw new IllegalArgumentException("permits must be within [1, " + maxPermits + "]: " + permits);
    }
    return permits;
  }
}
