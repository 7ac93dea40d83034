package dev.tumbler.peer.election;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Test;

/**
 * The election under random faults ({@link ElectionSimulation}): {@value #SEEDS} seeds by default,
 * {@code -Delection.seeds=N} for more, {@code -Delection.seed=S} to replay one and print its trace.
 */
class ElectionSimulationTest {

  static final int SEEDS = 1_000;

  @Test
  void everySeedKeepsTheInvariantsAndSettlesAfterTheHeal() {
    ElectionSimulation sim = new ElectionSimulation(core -> { });
    long[] seeds = ElectionSimulation.seeds(SEEDS);
    boolean replay = seeds.length == 1;
    long started = System.nanoTime();
    long messages = 0;
    long terms = 0;
    long slowest = 0;
    long slowestSeed = 0;
    for (long seed : seeds) {
      ElectionSimulation.Result r = sim.run(seed, replay);
      if (replay) {
        r.trace().forEach(System.out::println);
        System.out.println("seed " + seed + " (" + r.setup() + "): " + (r.ok() ? "ok" : r.violation()));
      }
      if (!r.ok()) {
        fail("seed " + seed + " (" + r.setup() + "): " + r.violation() + "\nreplay it with its trace: "
            + ElectionSimulation.replay("ElectionSimulationTest", seed));
      }
      messages += r.messages();
      terms += r.terms();
      if (r.convergedNanos() > slowest) {
        slowest = r.convergedNanos();
        slowestSeed = seed;
      }
    }
    System.out.printf("election simulation: %d seeds, 0 violations, %d messages, %d terms established, slowest "
        + "settling %s after the heal (seed %d), %.1f s%n", seeds.length, messages, terms,
        ElectionSimulation.ms(slowest), slowestSeed, (System.nanoTime() - started) / 1e9);
  }
}
