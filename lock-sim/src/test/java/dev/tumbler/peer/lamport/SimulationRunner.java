package dev.tumbler.peer.lamport;

import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.sim.Simulation;
import dev.tumbler.peer.sim.SimulationConfig;
import java.util.function.Consumer;

/** Runs the CI seeds of one variant and fails with the simulator's report on the first violation. */
final class SimulationRunner {

  /** Seeds per algorithm in CI; {@code -Dsim.seeds=N} runs more, {@code -Dsim.seed=S} one. */
  static final int CI_SEEDS = 10_000;

  /** Virtual peer timeout in the simulations. */
  static final long PEER_TIMEOUT = 500_000_000L;

  private SimulationRunner() {}

  static Simulation<Envelope> simulation(LamportAlgorithm algorithm, SimulationConfig config,
      Consumer<LamportCore> tweak) {
    return Simulation.of(config, algorithm, PEER_TIMEOUT, node -> tweak.accept((LamportCore) node.core(Channel.LOCK)));
  }

  static String replay(String testClass, long seed) {
    return "mvn -B -pl lock-sim -am test -Dtest=" + testClass + " -Dsim.seed=" + seed
        + " -Dsurefire.failIfNoSpecifiedTests=false";
  }

  static void assertEverySeedKeepsTheInvariants(LamportAlgorithm variant, String testClass) {
    Simulation<Envelope> sim = simulation(variant, SimulationConfig.standard(), c -> { });
    Simulation.Totals t = sim.runAll(variant.name(), Simulation.seeds(CI_SEEDS), seed -> replay(testClass, seed));
    System.out.println(t.summary(variant.name()));
  }
}
