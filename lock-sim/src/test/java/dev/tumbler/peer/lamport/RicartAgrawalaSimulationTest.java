package dev.tumbler.peer.lamport;

import org.junit.jupiter.api.Test;

/**
 * Ricart–Agrawala under the simulator: {@value SimulationRunner#CI_SEEDS} seeds in CI,
 * {@code -Dsim.seeds=N} for more, {@code -Dsim.seed=S} to replay one.
 */
class RicartAgrawalaSimulationTest {

  @Test
  void seedsKeepEveryInvariant() {
    SimulationRunner.assertEverySeedKeepsTheInvariants(LamportAlgorithm.RICART_AGRAWALA, "RicartAgrawalaSimulationTest");
  }
}
