package dev.tumbler.peer.bakery;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.election.ElectionCore;
import dev.tumbler.peer.election.ElectionMutations;
import dev.tumbler.peer.sim.MutationHunt;
import dev.tumbler.peer.sim.Simulation;
import dev.tumbler.peer.sim.SimulationConfig;
import dev.tumbler.peer.sim.Workload;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The simulator's teeth for the bakery (§3.8): each test-only mutation breaks one rule, and the simulator must
 * catch it, naming that rule, within {@value #BUDGET} seeds of the mutex workload. Each test prints the first
 * seed that caught it; {@code -Dsim.seed=S} replays one seed and prints its shrunk report.
 */
class BakeryMutationSimulationTest {

  /** Seeds a mutation may take to be caught. */
  static final int BUDGET = 1_000;

  @Test
  void anOwnerThatGrantsOnItsOwnTableBreaksExclusion() {
    caught("activate on own table", "exclusion", c -> c.mutations.activateOnOwnTable = true);
  }

  @Test
  void numbersFromLiveTicketsBreakFencing() {
    caught("number from live tickets", "fencing", c -> c.mutations.numberFromLiveTickets = true);
  }

  @Test
  void aQuorumOneShortBreaksExclusion() {
    caught("quorum off by one", "exclusion", c -> c.mutations.quorumOffByOne = true);
  }

  @Test
  void aTicketAddedBelowAnActivatedKeyBreaksFencing() {
    caught("add below an activated key", "fencing", c -> c.mutations.addBelowActivated = true);
  }

  @Test
  void anElectionThatVotesOutALiveLeaderIsCaught() {
    caught("election votes without lease", null, Simulation.of(config(), BakeryAlgorithm.BAKERY,
        BakerySimulationTest.PEER_TIMEOUT,
        node -> ElectionMutations.voteWithoutLease((ElectionCore) node.core(Channel.ELECTION))));
  }

  /** LI-1: one leader's tables may lack a grant that a quorum without it activated. */
  @Test
  void aListingFromOneLeaderLeavesGrantsOut() {
    caught("list from one leader", "LI-1", BakerySimulationTest.simulation(BakerySimulationTest.config(),
        c -> c.mutations.listFromOneLeader = true).withListings(50_000_000L, 0));
  }

  static SimulationConfig config() {
    return BakerySimulationTest.config().withWorkload(Workload.MUTEX);
  }

  private static void caught(String mutation, String rule, Consumer<BakeryCore> tweak) {
    caught(mutation, rule, BakerySimulationTest.simulation(config(), tweak));
  }

  private static void caught(String mutation, String rule, Simulation<Envelope> sim) {
    Optional<MutationHunt.Caught> c = MutationHunt.hunt(mutation, rule, sim, BUDGET,
        seed -> BakerySimulationTest.replay("BakeryMutationSimulationTest", seed));
    assertTrue(c.isPresent(), "the mutation (" + mutation + ") broke no " + (rule == null ? "" : rule + " ")
        + "rule in its seeds (default " + BUDGET + ", or -Dsim.seeds)");
    assertTrue(MutationHunt.named(rule, c.get().violation()), c.get().violation());
  }

}
