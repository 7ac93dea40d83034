package dev.tumbler.peer.sim;

import java.util.Optional;
import java.util.function.LongFunction;

/**
 * Runs a mutated algorithm under the simulator until a seed breaks the rule the mutation targets: the shared
 * loop of the simulator's mutation tests, which assert on what it returns. Prints the first seed that broke it
 * and the replay command (the shrunk report when one seed is replayed with {@code -Dsim.seed=S}: a mutated
 * core's traces are large).
 */
public final class MutationHunt {

  /**
   * Not a rule of its own: a request or transaction that never ended after the heal, a probe never granted, or a
   * livelock (a run or a step that never came to rest).
   */
  public static final String LIVENESS = "liveness";

  private MutationHunt() {}

  /** The first seed whose violation named the rule, and that violation. */
  public record Caught(long seed, String violation) {}

  /**
   * Runs seeds until one breaks {@code rule}; prints it and its replay command.
   *
   * @param mutation what was changed, for the messages
   * @param rule the prefix of the violations that count ({@code "exclusion"}, {@code "fencing"}, ...),
   *     {@link #LIVENESS}, or null for any violation
   * @param budget seeds the mutation may take to be caught
   * @param replay the replay command of a seed
   * @return the seed that caught it, empty when no seed of the budget did (the caller asserts)
   */
  public static Optional<Caught> hunt(String mutation, String rule, Simulation<?> sim, int budget,
      LongFunction<String> replay) {
    long[] seeds = Simulation.seeds(budget);
    String first = null;
    for (long seed : seeds) {
      Simulation.Result r = sim.run(seed);
      if (r.ok()) {
        continue;
      }
      if (first == null) {
        first = "seed " + seed + ": " + r.violation();
      }
      if (named(rule, r.violation())) {
        System.out.println("mutation (" + mutation + "): first violation at " + first + "; first "
            + (rule == null ? "" : rule + " ") + "violation at seed " + seed);
        System.out.println(seeds.length == 1 ? sim.report(r, replay.apply(seed)) : "replay: " + replay.apply(seed));
        return Optional.of(new Caught(seed, r.violation()));
      }
    }
    System.out.println("mutation (" + mutation + "): broke no " + (rule == null ? "" : rule + " ") + "rule in "
        + seeds.length + " seeds" + (first == null ? "" : "; first other violation at " + first));
    return Optional.empty();
  }

  /** Whether {@code violation} breaks {@code rule} (null: any). */
  public static boolean named(String rule, String violation) {
    if (rule == null) {
      return true;
    }
    return rule.equals(LIVENESS) ? violation.startsWith("request ") || violation.startsWith("probe ")
        || violation.startsWith("transaction ") || violation.startsWith("livelock") || violation.startsWith("no quiescence")
        : violation.startsWith(rule + ":");
  }
}
