package dev.tumbler.peer.leaderlock;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

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
    Totals t = run(Workload.READ_WRITE, seeds);
    if (seeds.length > 1) {
      assertTrue(t.grants > t.requests / 3, t.grants + " grants of " + t.requests + " requests");
      assertTrue(t.renewals > 0, "no renewal was ever answered over the network");
    }
  }

  @Test
  void plainLocksKeepEveryInvariant() {
    run(Workload.MUTEX, Simulation.seeds(LeaderLockRunner.CI_SEEDS / 4));
  }

  private record Totals(long requests, long grants, long renewals) {}

  private static Totals run(Workload workload, long[] seeds) {
    Simulation<Envelope> sim = LeaderLockRunner.simulation(LeaderLockRunner.config(workload), c -> { });
    long grants = 0;
    long requests = 0;
    long events = 0;
    long renewals = 0;
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
    System.out.printf("%s, %s: %d seeds, 0 violations, %d requests, %d grants, %d renewals answered over the "
        + "network, %d events%n", LeaderLockAlgorithm.INSTANCE.name(), workload, seeds.length, requests, grants,
        renewals, events);
    return new Totals(requests, grants, renewals);
  }
}
