package dev.tumbler.lock.tck;

import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Per group: how long its tests took one after another (the sum) and from the first start to the last end (the span,
 * shorter when they ran side by side). Printed after a target's last test, slowest first: where a target's run
 * spends its time. Thread safe.
 */
final class GroupTimings {
  private record Span(long first, long last, long sum, int tests) {}

  private final Map<String, Span> groups = new LinkedHashMap<>();

  synchronized void record(Class<?> group, long startNanos, long endNanos) {
    String name = group.getSimpleName();
    Span s = groups.get(name);
    groups.put(name, s == null ? new Span(startNanos, endNanos, endNanos - startNanos, 1)
        : new Span(Math.min(s.first(), startNanos), Math.max(s.last(), endNanos), s.sum() + endNanos - startNanos,
            s.tests() + 1));
  }

  synchronized void print(String target) {
    if (groups.isEmpty()) {
      return;
    }
    long first = groups.values().stream().mapToLong(Span::first).min().orElse(0);
    long last = groups.values().stream().mapToLong(Span::last).max().orElse(0);
    String each = groups.entrySet().stream()
        .sorted(Comparator.comparingLong((Map.Entry<String, Span> e) -> e.getValue().last() - e.getValue().first())
            .reversed())
        .map(e -> String.format("%s %.1f s (%d tests, %.1f s one after another)", e.getKey(),
            seconds(e.getValue().last() - e.getValue().first()), e.getValue().tests(), seconds(e.getValue().sum())))
        .collect(Collectors.joining(", "));
    TckReport.line(String.format("[tck timings] %s: %.1f s from the first test to the last; %s", target,
        seconds(last - first), each));
  }

  private static double seconds(long nanos) {
    return nanos / (double) TimeUnit.SECONDS.toNanos(1);
  }
}
