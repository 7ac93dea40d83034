package dev.tumbler.peer.agent;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.sim.Simulation;
import dev.tumbler.peer.sim.SimulationConfig;
import dev.tumbler.peer.sim.Workload;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * {@code agent}'s plain locks and read/write locks (majority claims over every member) under the simulator with
 * every check on (exclusion by validity windows with read/write compatibility, fencing F1–F3, lease windows and
 * renewals, timely loss, and at the end every request ended and every probe granted): {@code -Dsim.seeds=N} seeds
 * (default {@value #CI_SEEDS}), {@code -Dagent.workload=MUTEX} for plain locks, {@code -Dsim.seed=S} to replay
 * one, {@code -Dsim.traceFile=F} to write a failure's whole trace.
 */
class AgentSimulationTest {

  /** Seeds in CI. */
  static final int CI_SEEDS = 5_000;

  static final long PEER_TIMEOUT = 500_000_000L;

  private static final long MS = 1_000_000L;

  static SimulationConfig config() {
    return SimulationConfig.standard()
        .withWorkload(Workload.valueOf(System.getProperty("agent.workload", "READ_WRITE")))
        .withOps(2_000 * MS, 10, 50);
  }

  static Simulation<Envelope> simulation(SimulationConfig config, Consumer<AgentCore> tweak) {
    return Simulation.of(config, AgentAlgorithm.AGENT, PEER_TIMEOUT,
        node -> tweak.accept((AgentCore) node.core(Channel.LOCK)));
  }

  static String replay(String testClass, long seed) {
    return "mvn -B -pl lock-sim -am test -Dtest=" + testClass + " -Dsim.seed=" + seed
        + " -Dsurefire.failIfNoSpecifiedTests=false";
  }

  @Test
  void seedsKeepEveryInvariant() {
    SimulationConfig config = config();
    Simulation<Envelope> sim = simulation(config, c -> { });
    long[] seeds = Simulation.seeds(CI_SEEDS);
    String label = "agent, " + config.workload();
    Simulation.Totals t = sim.runAll(label, seeds, seed -> replay("AgentSimulationTest", seed));
    System.out.println(t.summary(label));
    if (seeds.length > 1) {
      assertTrue(t.grants() > t.requests() / 3, t.grants() + " grants of " + t.requests() + " requests");
    }
  }
}
