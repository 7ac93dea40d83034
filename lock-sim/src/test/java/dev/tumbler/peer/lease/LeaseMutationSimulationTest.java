package dev.tumbler.peer.lease;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.sim.MutationHunt;
import dev.tumbler.peer.sim.Simulation;
import dev.tumbler.peer.sim.SimulationConfig;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The simulator's teeth for {@code lease} (NATIVE-ALGORITHMS §5.8): each test-only mutation breaks one rule, and the
 * simulator must catch it, naming that rule, within {@value #BUDGET} seeds of the lease workload. Each test prints
 * the first seed that caught it; {@code -Dsim.seed=S} replays one seed and prints its shrunk report:
 * {@code mvn -B -pl lock-sim -am test -Dtest=LeaseMutationSimulationTest -Dsim.seed=S
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class LeaseMutationSimulationTest {

  /** Seeds a mutation may take to be caught. */
  static final int BUDGET = 2_000;

  /**
   * Caught by the window rule at the first grant (a window is {@code 3T/4} from a time no later than the receipt),
   * before a cut-off holder outlives the server's term and the exclusion check sees two holders.
   */
  @Test
  void trustingAWholeTermFromReceiptOutlivesTheServersTerm() {
    caught("trust from receipt", "lease", c -> c.mutationTrustFromReceipt = true);
  }

  @Test
  void grantingOnTheRecallBreaksExclusion() {
    caught("grant on recall", "exclusion", c -> c.mutationGrantOnRecall = true);
  }

  @Test
  void aNewServerWithoutGraceGivesAwayLocksTheOldOnesHoldersTrust() {
    caught("no grace", "exclusion", c -> c.mutationNoGrace = true);
  }

  @Test
  void aLocalGrantDuringAnInactiveRenewalBreaksExclusion() {
    caught("local grant during inactive renewal", "exclusion", c -> c.mutationLocalGrantDuringInactiveRenew = true);
  }

  @Test
  void servingWithoutTheLeaderLeaseBreaksExclusion() {
    caught("serve without leader lease", "exclusion", c -> c.mutationServeWithoutLeaderLease = true);
  }

  /** LI-1: a listing that says it knows leaves out a grant its server has not been told of yet. */
  @Test
  void aServerThatListsInItsGraceLeavesGrantsOut() {
    caught("list in grace", "LI-1", LeaseSimulationTest.simulation(LeaseSimulationTest.config(),
        c -> c.mutationListInGrace = true).withListings(LISTING_EVERY, SimulationConfig.LEASE_NANOS));
  }

  /** Listings asked every this long, in the mutations that need them. */
  private static final long LISTING_EVERY = 50_000_000L;

  private static void caught(String mutation, String rule, Consumer<LeaseCore> tweak) {
    caught(mutation, rule, LeaseSimulationTest.simulation(LeaseSimulationTest.config(), tweak));
  }

  private static void caught(String mutation, String rule, Simulation<Envelope> sim) {
    Optional<MutationHunt.Caught> c = MutationHunt.hunt(mutation, rule, sim, BUDGET,
        seed -> LeaseSimulationTest.replay("LeaseMutationSimulationTest", seed));
    assertTrue(c.isPresent(), "the mutation (" + mutation + ") broke no " + rule + " rule in its seeds (default "
        + BUDGET + ", or -Dsim.seeds)");
    assertTrue(MutationHunt.named(rule, c.get().violation()), c.get().violation());
  }
}
