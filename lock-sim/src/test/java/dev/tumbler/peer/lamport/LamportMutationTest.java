package dev.tumbler.peer.lamport;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.sim.Simulation;
import dev.tumbler.peer.sim.SimulationConfig;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The simulator's teeth: a core that grants without waiting for a later-stamped message from every peer
 * (dropping half of Lamport's fifth rule) must be caught within the CI seed budget — both by some
 * invariant and by the exclusion invariant itself; so must a Ricart–Agrawala core that grants before
 * every peer replied, and a Lamport core that loses the releases it holds back.
 */
class LamportMutationTest {

  @Test
  void simulatorCatchesGrantWithoutLaterMessages() {
    Simulation<Envelope> sim = SimulationRunner.simulation(LamportAlgorithm.LAMPORT,
        SimulationConfig.standard(), core -> core.mutationSkipLaterMessageCheck = true);
    Simulation.Result first = null;
    Simulation.Result firstExclusion = null;
    long firstAt = 0;
    long exclusionAt = 0;
    long[] seeds = Simulation.seeds(SimulationRunner.CI_SEEDS); // -Dsim.seed=S replays one
    boolean replay = seeds.length == 1;
    for (int i = 0; i < seeds.length && firstExclusion == null; i++) {
      long seed = seeds[i];
      Simulation.Result r = sim.run(seed);
      if (!r.ok() && first == null) {
        first = r;
        firstAt = seed;
      }
      if (!r.ok() && r.violation().startsWith("exclusion")) {
        firstExclusion = r;
        exclusionAt = seed;
      }
    }
    assertTrue(first != null, "the mutated core passed " + SimulationRunner.CI_SEEDS + " seeds: no teeth");
    if (replay) {
      System.out.println(sim.report(first, SimulationRunner.replay("LamportMutationTest", first.seed())));
      return;
    }
    assertTrue(firstExclusion != null, "the mutated core never broke exclusion in " + SimulationRunner.CI_SEEDS
        + " seeds");
    System.out.println("mutation (grant without later messages): first violation at seed " + firstAt + " ("
        + first.violation() + "); first exclusion violation at seed " + exclusionAt);
    System.out.println(sim.report(firstExclusion, SimulationRunner.replay("LamportMutationTest",
        firstExclusion.seed())));
  }

  @Test
  void simulatorCatchesRicartAgrawalaGrantWithoutReplies() {
    assertCaught(LamportAlgorithm.RICART_AGRAWALA, core -> core.mutationSkipReplies = true,
        "Ricart-Agrawala grant without every reply");
  }

  @Test
  void simulatorCatchesALostHeldBackRelease() {
    assertCaught(LamportAlgorithm.LAMPORT, core -> core.mutationLoseHeldBackReleases = true,
        "Lamport loses the releases it holds back");
  }

  /** Runs the CI seeds on a core with {@code mutation} until one fails, and prints the seed; fails if none does. */
  private static void assertCaught(LamportAlgorithm algorithm, Consumer<LamportCore> mutation, String what) {
    Simulation<Envelope> sim = SimulationRunner.simulation(algorithm, SimulationConfig.standard(), mutation);
    long[] seeds = Simulation.seeds(SimulationRunner.CI_SEEDS);
    for (long seed : seeds) {
      Simulation.Result r = sim.run(seed);
      if (!r.ok()) {
        System.out.println("mutation (" + what + "): caught at seed " + seed + ": " + r.violation());
        return;
      }
    }
    assertTrue(false, "the mutated core (" + what + ") passed " + seeds.length + " seeds: no teeth");
  }
}
