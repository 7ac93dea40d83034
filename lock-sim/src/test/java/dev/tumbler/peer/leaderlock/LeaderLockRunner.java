package dev.tumbler.peer.leaderlock;

import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.election.ElectionCore;
import dev.tumbler.peer.sim.Simulation;
import dev.tumbler.peer.sim.SimulationConfig;
import dev.tumbler.peer.sim.Workload;
import java.util.function.Consumer;

/** Simulations of {@link LeaderLockAlgorithm}, and the command that replays one of their seeds. */
final class LeaderLockRunner {

  /** Seeds in CI; {@code -Dsim.seeds=N} runs more, {@code -Dsim.seed=S} one. */
  static final int CI_SEEDS = 2_000;

  /** Virtual peer timeout (Appendix A). */
  static final long PEER_TIMEOUT = 500_000_000L;

  private static final long MS = 1_000_000L;

  private LeaderLockRunner() {}

  /**
   * The standard world (1–4 nodes, every fault) with {@code workload}, a fault phase of 2 s, the Appendix A
   * lease term of 120 ms, and process pauses of up to 100 ms rather than 50: with network delays of at most
   * 5 ms, only a pause can hold a grant back for longer than a quarter of the term on its way to its client,
   * which is what trusting a grant from its receipt gets wrong.
   */
  static SimulationConfig config(Workload workload) {
    return SimulationConfig.standard().withWorkload(workload).withOps(2_000 * MS, 10, 50).withPauses(100 * MS);
  }

  static Simulation<Envelope> simulation(SimulationConfig config, Consumer<LeaderLockCore> tweak) {
    return Simulation.of(config, LeaderLockAlgorithm.INSTANCE, PEER_TIMEOUT,
        node -> tweak.accept((LeaderLockCore) node.core(Channel.LOCK)));
  }

  /** A simulation whose nodes' election cores {@code tweak} sees (to switch on one of its mutations). */
  static Simulation<Envelope> electionTweaked(SimulationConfig config, Consumer<ElectionCore> tweak) {
    return Simulation.of(config, LeaderLockAlgorithm.INSTANCE, PEER_TIMEOUT,
        node -> tweak.accept((ElectionCore) node.core(Channel.ELECTION)));
  }

  static String replay(String testClass, long seed) {
    return "mvn -B -pl lock-sim -am test -Dtest=" + testClass + " -Dsim.seed=" + seed
        + " -Dsurefire.failIfNoSpecifiedTests=false";
  }
}
