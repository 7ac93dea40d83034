package dev.tumbler.peer.leaderlock;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.election.ElectionMutations;
import dev.tumbler.peer.sim.MutationHunt;
import dev.tumbler.peer.sim.Simulation;
import dev.tumbler.peer.sim.Workload;
import java.util.Optional;
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
    caught("election leaves a Hello unanswered", MutationHunt.LIVENESS, LeaderLockRunner.electionTweaked(
        LeaderLockRunner.config(Workload.READ_WRITE), ElectionMutations::helloUnanswered));
  }

  private static void caught(String mutation, String rule, Consumer<LeaderLockCore> tweak) {
    caught(mutation, rule, LeaderLockRunner.simulation(LeaderLockRunner.config(Workload.READ_WRITE), tweak));
  }

  private static void caught(String mutation, String rule, Simulation<Envelope> sim) {
    Optional<MutationHunt.Caught> c = MutationHunt.hunt(mutation, rule, sim, BUDGET,
        seed -> LeaderLockRunner.replay("LeaderLockMutationTest", seed));
    assertTrue(c.isPresent(), "the mutation (" + mutation + ") broke no " + (rule == null ? "" : rule + " ")
        + "rule in its seeds (default " + BUDGET + ", or -Dsim.seeds)");
    assertTrue(MutationHunt.named(rule, c.get().violation()), c.get().violation());
  }

}
