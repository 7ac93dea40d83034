package dev.tumbler.peer.leaderlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.sim.Simulation;
import dev.tumbler.peer.sim.SimulationConfig;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Without faults, once the view is stable (the workload starts after {@code electionDelay + 2·leaderTimeout}
 * and the server's grace {@code T + leaderTimeout}), an entry of a client on another node than the server costs
 * exactly three messages (Acquire, Grant, Release) and one on the server's node none; everything else is
 * background (the election's messages, Waiting, renewals), which {@link Simulation.Result#entryMessages()}
 * leaves out.
 */
class LeaderLockMessagesTest {

  private static final long MS = 1_000_000L;

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3, 5})
  void anEntryCostsAcquireGrantAndReleaseOverTheNetwork(int nodes) {
    long stable = LeaderLockAlgorithm.ELECTION.electionDelayNanos() + 3 * LeaderLockAlgorithm.ELECTION
        .leaderTimeoutNanos() + SimulationConfig.LEASE_NANOS;
    SimulationConfig config = SimulationConfig.faultFree(nodes).withOps(1_500 * MS, 40, 40)
        .withWorkloadStart(stable + 25 * MS);
    Simulation<Envelope> sim = LeaderLockRunner.simulation(config, c -> { });
    long remote = 0;
    for (long s = 1; s <= 10; s++) {
      long seed = s;
      Simulation.Result r = sim.run(seed);
      assertTrue(r.ok(), () -> sim.report(r, LeaderLockRunner.replay("LeaderLockMessagesTest", seed)));
      assertEquals(r.requests(), r.grants(), "every request is granted without faults");
      Map<String, Long> m = r.messagesByType();
      long grants = m.getOrDefault("lock/Grant", 0L);
      assertEquals(grants, m.getOrDefault("lock/Acquire", 0L), m.toString());
      assertEquals(grants, m.getOrDefault("lock/Release", 0L), m.toString());
      assertEquals(3 * grants, r.entryMessages(), "only Acquire, Grant and Release serve entries: " + m);
      assertTrue(grants <= r.grants(), m + " for " + r.grants() + " grants");
      remote += grants;
      assertTrue(nodes == 1 || r.messages() > r.entryMessages(), "no background: " + m);
    }
    if (nodes == 1) {
      assertEquals(0, remote, "a one-node cluster sends no lock message");
    } else {
      assertTrue(remote > 0, "no entry of a client on another node than the server");
    }
  }
}
