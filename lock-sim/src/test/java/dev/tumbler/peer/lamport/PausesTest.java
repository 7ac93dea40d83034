package dev.tumbler.peer.lamport;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.sim.Op;
import dev.tumbler.peer.sim.Simulation;
import dev.tumbler.peer.sim.SimulationConfig;
import org.junit.jupiter.api.Test;

/**
 * The standard runs include process pauses, and a paused node really does catch up afterwards: its
 * deferred inputs are handled in order, and the run keeps every invariant.
 */
class PausesTest {

  @Test
  void pausedNodesCatchUp() {
    Simulation<Envelope> sim = SimulationRunner.simulation(LamportAlgorithm.LAMPORT, SimulationConfig.standard(),
        c -> { });
    int withPauses = 0;
    boolean caughtUp = false;
    for (long seed = 1; seed <= 300 && !caughtUp; seed++) {
      if (sim.opsFor(seed).stream().noneMatch(o -> o instanceof Op.Pause)) {
        continue;
      }
      withPauses++;
      Simulation.Result r = sim.run(seed, sim.opsFor(seed), true);
      assertTrue(r.ok(), r.violation());
      caughtUp = r.trace().stream().anyMatch(l -> l.contains("PAUSE over") && !l.contains(" 0 inputs waited"));
    }
    assertTrue(withPauses > 0, "no run of the first 300 seeds pauses a node");
    assertTrue(caughtUp, "no paused node had inputs waiting when its pause ended");
  }
}
