package dev.tumbler.peer.leaderlock;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.sim.Simulation;
import dev.tumbler.peer.sim.Workload;
import org.junit.jupiter.api.Test;

/**
 * The test-only elected, leased lock under the simulator, read/write workload: {@value LeaderLockRunner#CI_SEEDS}
 * seeds in CI with every lease and view check on, {@code -Dsim.seeds=N} for more, {@code -Dsim.seed=S} to replay
 * one. The runs must really exercise leases: renewals answered, grants lost, failovers.
 */
class LeaderLockSimulationTest {

  @Test
  void seedsKeepEveryInvariant() {
    Simulation<Envelope> sim = LeaderLockRunner.simulation(LeaderLockRunner.config(Workload.READ_WRITE), c -> { });
    long grants = 0;
    long requests = 0;
    long events = 0;
    long renewals = 0;
    long[] seeds = Simulation.seeds(LeaderLockRunner.CI_SEEDS);
    for (long seed : seeds) {
      Simulation.Result r = sim.run(seed);
      if (!r.ok()) {
        fail(sim.report(r, LeaderLockRunner.replay("LeaderLockSimulationTest", seed)));
      }
      grants += r.grants();
      requests += r.requests();
      events += r.events();
      renewals += r.messagesByType().getOrDefault("lock/Renewed", 0L);
    }
    System.out.printf("%s: %d seeds, 0 violations, %d requests, %d grants, %d renewals answered over the network, "
        + "%d events%n", LeaderLockAlgorithm.INSTANCE.name(), seeds.length, requests, grants, renewals, events);
    if (seeds.length > 1) {
      assertTrue(grants > requests / 3, grants + " grants of " + requests + " requests");
      assertTrue(renewals > 0, "no renewal was ever answered over the network");
    }
  }
}
