package dev.tumbler.peer.sim;

import java.util.ArrayList;
import java.util.List;

/**
 * The trace of one run, each line stamped with the real time: kept only when the run is traced (a failure's shrunk
 * replay, a test that reads it), since most runs pass and nobody reads theirs.
 */
final class Trace {

  private final Scheduler scheduler;
  private final List<String> lines;

  Trace(Scheduler scheduler, boolean on) {
    this.scheduler = scheduler;
    this.lines = on ? new ArrayList<>() : null;
  }

  /** Whether lines are kept: a caller builds a costly line only then. */
  boolean on() {
    return lines != null;
  }

  void log(String line) {
    if (lines != null) {
      lines.add(String.format("%9.3fms %s", scheduler.now() / 1e6, line));
    }
  }

  /** The lines so far; empty for an untraced run. */
  List<String> lines() {
    return lines == null ? List.of() : List.copyOf(lines);
  }
}
