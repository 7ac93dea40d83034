package dev.tumbler.peer.lamport;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.sim.Simulation;
import dev.tumbler.peer.sim.SimulationConfig;
import org.junit.jupiter.api.Test;

/**
 * The simulator's teeth: a core that grants without waiting for a later-stamped message from every peer
 * (dropping half of Lamport's fifth rule) must be caught within the CI seed budget.
 */
class LamportMutationTest {

  @Test
  void simulatorCatchesGrantWithoutLaterMessages() {
    Simulation<LamportMessage> sim = SimulationRunner.simulation(LamportCore.Variant.LAMPORT,
        SimulationConfig.standard(), core -> core.mutationSkipLaterMessageCheck = true);
    int tried = 0;
    Simulation.Result found = null;
    for (long seed = 1; seed <= SimulationRunner.CI_SEEDS && found == null; seed++) {
      tried++;
      Simulation.Result r = sim.run(seed);
      if (!r.ok()) {
        found = r;
      }
    }
    assertTrue(found != null, "the mutated core passed " + tried + " seeds: the simulator has no teeth");
    System.out.println("mutation (grant without later messages) caught after " + tried + " seed(s): "
        + found.violation());
    System.out.println(sim.report(found, SimulationRunner.replay("LamportMutationTest", found.seed())));
  }
}
