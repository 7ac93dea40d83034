package dev.tumbler.peer.leaderlock;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.election.ElectionMutations;
import dev.tumbler.peer.sim.Simulation;
import dev.tumbler.peer.sim.Workload;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The simulator's teeth for leases and views: each mutation of the test-only leader lock, or of the election
 * core under it, breaks one rule, and the simulator must catch it, naming that rule, within {@value #BUDGET}
 * seeds. Each test prints the first seed that caught it and the shrunk report; {@code -Dsim.seed=S} replays
 * one seed with its trace.
 */
class LeaderLockMutationTest {

  /** Seeds a mutation may take to be caught. */
  static final int BUDGET = 500;

  @Test
  void aNewServerThatGrantsWithoutItsGraceBreaksExclusion() {
    caught("no grace", "exclusion", c -> c.mutationNoGrace = true);
  }

  @Test
  void aClientThatTrustsAGrantFromItsReceiptBreaksExclusion() {
    caught("trust from receipt", "exclusion", c -> c.mutationTrustFromReceipt = true);
  }

  @Test
  void aClientThatNeverReportsALossBreaksTimelyLoss() {
    caught("never lost", "timely loss", c -> c.mutationNeverLost = true);
  }

  @Test
  void anElectionThatVotesOutALiveLeaderBreaksV2() {
    caught("election votes without lease", "V-2", LeaderLockRunner.electionTweaked(
        LeaderLockRunner.config(Workload.READ_WRITE), ElectionMutations::voteWithoutLease));
  }

  /**
   * With TCP-like link reports one end of a link may be told of a break and a new link that the other end
   * never hears of; an election core that does not answer the Hello of such a link ignores its peer for good,
   * and requests never end after the heal, or the probes are never granted.
   */
  @Test
  void anElectionThatLeavesAHelloUnansweredStalls() {
    caught("election leaves a Hello unanswered", LIVENESS, LeaderLockRunner.electionTweaked(
        LeaderLockRunner.config(Workload.READ_WRITE), ElectionMutations::helloUnanswered));
  }

  private static void caught(String mutation, String rule, Consumer<LeaderLockCore> tweak) {
    caught(mutation, rule, LeaderLockRunner.simulation(LeaderLockRunner.config(Workload.READ_WRITE), tweak));
  }

  /** Not a rule of its own: a request that never ended after the heal, or a probe never granted. */
  private static final String LIVENESS = "liveness";

  private static void caught(String mutation, String rule, Simulation<Envelope> sim) {
    long[] seeds = Simulation.seeds(BUDGET);
    String first = null;
    for (long seed : seeds) {
      Simulation.Result r = sim.run(seed);
      if (r.ok()) {
        continue;
      }
      if (first == null) {
        first = "seed " + seed + ": " + r.violation();
      }
      boolean named = rule.equals(LIVENESS)
          ? r.violation().startsWith("request ") || r.violation().startsWith("probe ")
          : r.violation().startsWith(rule + ":");
      if (named || seeds.length == 1) {
        System.out.println("mutation (" + mutation + "): first violation at " + first + "; first " + rule
            + " violation at seed " + seed);
        System.out.println(sim.report(r, LeaderLockRunner.replay("LeaderLockMutationTest", seed)));
        return;
      }
    }
    assertTrue(seeds.length == 1, "the mutation (" + mutation + ") broke no " + rule + " rule in " + seeds.length
        + " seeds" + (first == null ? "" : "; first other violation at " + first));
  }
}
