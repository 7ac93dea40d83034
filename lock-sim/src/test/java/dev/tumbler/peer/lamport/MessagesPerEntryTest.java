package dev.tumbler.peer.lamport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.sim.Simulation;
import dev.tumbler.peer.sim.SimulationConfig;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Without faults, timeouts or closes, every entry costs exactly 3(N−1) messages under Lamport and 2(N−1)
 * under Ricart–Agrawala, contention or not (the one {@code Sync} per link at start-up aside).
 */
class MessagesPerEntryTest {

  @ParameterizedTest
  @ValueSource(ints = {2, 3, 5})
  void lamportCostsThreeTimesNMinusOne(int nodes) {
    check(LamportAlgorithm.LAMPORT, nodes, 3);
  }

  @ParameterizedTest
  @ValueSource(ints = {2, 3, 5})
  void ricartAgrawalaCostsTwiceNMinusOne(int nodes) {
    check(LamportAlgorithm.RICART_AGRAWALA, nodes, 2);
  }

  private static void check(LamportAlgorithm variant, int nodes, int factor) {
    // the descriptor's figure (which the demo prints as the expected cost) is the one checked here
    assertEquals(factor * (nodes - 1), variant.messagesPerEntry(nodes).getAsInt(), variant.name());
    Simulation<Envelope> sim = SimulationRunner.simulation(variant, SimulationConfig.faultFree(nodes), c -> { });
    for (long s = 1; s <= 20; s++) {
      long seed = s;
      Simulation.Result r = sim.run(seed);
      assertTrue(r.ok(), () -> sim.report(r, SimulationRunner.replay("MessagesPerEntryTest", seed)));
      assertEquals(r.requests(), r.grants(), "every request is granted without faults");
      long protocol = r.messages() - r.messagesByType().getOrDefault("lock/Sync", 0L);
      assertEquals((long) factor * (nodes - 1) * r.grants(), protocol,
          variant + " with " + nodes + " nodes, seed " + seed + ": " + r.messagesByType() + " for " + r.grants()
              + " grants");
      // one Sync per direction when the link comes up, and an answer unless the peer's came in first
      long syncs = r.messagesByType().getOrDefault("lock/Sync", 0L);
      assertTrue(syncs >= (long) nodes * (nodes - 1) && syncs <= 2L * nodes * (nodes - 1), syncs + " Syncs");
    }
  }
}
