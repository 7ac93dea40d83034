package dev.tumbler.cli;

import dev.tumbler.lock.spi.LockUrl;
import java.time.Duration;
import picocli.CommandLine;

/** Reads {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}, {@code 1d} or ISO-8601, like lock URLs do. */
final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
  @Override
  public Duration convert(String value) {
    try {
      return LockUrl.parseDuration(value);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.TypeConversionException(e.getMessage());
    }
  }
}
