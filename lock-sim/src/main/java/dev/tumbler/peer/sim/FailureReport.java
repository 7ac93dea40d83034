package dev.tumbler.peer.sim;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What a failed run tells its reader: its ops shrunk by delta debugging to a few that still fail the same way, the
 * tail of the shrunk run's trace (the whole of it in {@code -Dsim.traceFile}), and the command that replays the seed.
 * Shrinking reruns the simulation many times; only failures pay for it.
 */
final class FailureReport {

  /** Lines of the trace a report shows: the end of the run, where the violation is. */
  private static final int TRACE_TAIL = 400;

  /** Runs a shrink may take. */
  private static final int SHRINK_BUDGET = 3000;

  private FailureReport() {}

  /** The report of {@code failed}, a run of {@code sim}: shrinks it first. */
  static String of(Simulation<?> sim, Simulation.Result failed, String replayCommand) {
    List<Op> shrunk = shrink(sim, failed.seed(), failed.ops(), SHRINK_BUDGET);
    Simulation.Result traced = sim.run(failed.seed(), shrunk, true);
    StringBuilder sb = new StringBuilder();
    sb.append("simulation violation, seed ").append(failed.seed()).append(" (").append(sim.nodesFor(failed.seed()))
        .append(" nodes): ").append(failed.violation()).append('\n');
    sb.append("shrunk to ").append(shrunk.size()).append(" of ").append(failed.ops().size()).append(" ops: ")
        .append(traced.ok() ? "(the shrunk run passed; showing it anyway)" : traced.violation()).append('\n');
    for (Op op : shrunk) {
      sb.append("  ").append(op).append('\n');
    }
    List<String> t = traced.trace();
    int from = Math.max(0, t.size() - TRACE_TAIL);
    sb.append("trace of the shrunk run (").append(t.size() - from).append(" of ").append(t.size())
        .append(" lines):\n");
    for (String line : t.subList(from, t.size())) {
      sb.append("  ").append(line).append('\n');
    }
    String file = System.getProperty("sim.traceFile");
    if (file != null) {
      try {
        Files.write(Path.of(file), t);
        sb.append("full trace: ").append(file).append('\n');
      } catch (IOException e) {
        sb.append("full trace not written to ").append(file).append(": ").append(e).append('\n');
      }
    }
    sb.append("replay: ").append(replayCommand).append('\n');
    return sb.toString();
  }

  /** Delta debugging (ddmin) of {@code ops}: a smaller list on which the run of {@code seed} still fails. */
  static List<Op> shrink(Simulation<?> sim, long seed, List<Op> ops, int budget) {
    String kind = kind(sim.run(seed, ops, false).violation());
    List<Op> current = ops;
    int n = 2;
    int runs = 0;
    while (current.size() >= 2 && runs < budget) {
      int chunk = (current.size() + n - 1) / n;
      boolean reduced = false;
      for (int start = 0; start < current.size() && runs < budget; start += chunk) {
        List<Op> complement = new ArrayList<>(current.subList(0, start));
        complement.addAll(current.subList(Math.min(current.size(), start + chunk), current.size()));
        runs++;
        if (!complement.isEmpty() && failsAlike(sim.run(seed, complement, false), kind)) {
          current = complement;
          n = Math.max(n - 1, 2);
          reduced = true;
          break;
        }
      }
      if (!reduced) {
        if (n >= current.size()) {
          break;
        }
        n = Math.min(current.size(), n * 2);
      }
    }
    // then one op at a time, from the end, until no single op can go
    for (int i = current.size() - 1; i >= 0 && current.size() > 1 && runs < budget; i--) {
      List<Op> without = new ArrayList<>(current);
      without.remove(i);
      runs++;
      if (failsAlike(sim.run(seed, without, false), kind)) {
        current = without;
      }
    }
    return List.copyOf(current);
  }

  /**
   * Whether {@code r} fails with a violation of {@code kind}: a shrink keeps the kind it started with, so a
   * safety violation is not traded for a liveness one that smaller runs find more easily.
   */
  private static boolean failsAlike(Simulation.Result r, String kind) {
    return !r.ok() && (kind == null || kind.equals(kind(r.violation())));
  }

  /** A violation's kind: "liveness" for a request or probe that never ended, else the text before ':'. */
  static String kind(String violation) {
    if (violation == null) {
      return null;
    }
    if (violation.contains(" never ended") || violation.contains(" never granted")) {
      return "liveness";
    }
    int colon = violation.indexOf(':');
    return colon < 0 ? violation : violation.substring(0, colon);
  }
}
