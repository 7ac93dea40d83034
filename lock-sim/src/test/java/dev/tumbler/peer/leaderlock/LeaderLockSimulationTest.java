package dev.tumbler.peer.leaderlock;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.sim.Simulation;
import dev.tumbler.peer.sim.Workload;
import org.junit.jupiter.api.Test;

/**
 * The test-only elected, leased lock under the simulator with every lease and view check on:
 * {@value LeaderLockRunner#CI_SEEDS} seeds of the read/write workload and a quarter as many of plain locks in
 * CI, {@code -Dsim.seeds=N} for more, {@code -Dsim.seed=S} to replay one. The read/write runs must really
 * exercise leases: most requests granted, renewals answered over the network.
 */
class LeaderLockSimulationTest {

  @Test
  void seedsKeepEveryInvariant() {
    long[] seeds = Simulation.seeds(LeaderLockRunner.CI_SEEDS);
    Simulation.Totals t = run(Workload.READ_WRITE, seeds);
    if (seeds.length > 1) {
      assertTrue(t.grants() > t.requests() / 3, t.grants() + " grants of " + t.requests() + " requests");
      assertTrue(t.renewals() > 0, "no renewal was ever answered over the network");
    }
  }

  @Test
  void plainLocksKeepEveryInvariant() {
    run(Workload.MUTEX, Simulation.seeds(LeaderLockRunner.CI_SEEDS / 4));
  }

  private static Simulation.Totals run(Workload workload, long[] seeds) {
    Simulation<Envelope> sim = LeaderLockRunner.simulation(LeaderLockRunner.config(workload), c -> { });
    String label = LeaderLockAlgorithm.INSTANCE.name() + ", " + workload;
    Simulation.Totals t = sim.runAll(label, seeds, seed -> LeaderLockRunner.replay("LeaderLockSimulationTest", seed));
    System.out.println(t.summary(label));
    return t;
  }
}
