package dev.tumbler.peer.agent;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.sim.MutationHunt;
import dev.tumbler.peer.sim.Simulation;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The simulator's teeth for {@code agent} (NATIVE-ALGORITHMS §4.8): each test-only mutation breaks one rule, and the
 * simulator must catch it, naming that rule, within {@value #BUDGET} seeds of the transaction workload. Each test
 * prints the first seed that caught it; {@code -Dsim.seed=S} replays one seed and prints its shrunk report. Run with
 * {@code mvn -B -pl lock-sim -am test -Dtest=AgentMutationSimulationTest -Dsim.mutations=true
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@EnabledIfSystemProperty(named = "sim.mutations", matches = "true",
    disabledReason = "a hunt of minutes, not for every build: -Dsim.mutations=true runs it")
class AgentMutationSimulationTest {

  /** Seeds a mutation may take to be caught. */
  static final int BUDGET = 2_000;

  @Test
  @Disabled("not caught in 2,000 seeds: the workload's claims are MAJORITY over several nodes, told only after a "
      + "Stamp round in which each server checks its own table, so a stale queue an agent stores costs a refused "
      + "round, not exclusion. ALL and ANY claims (no stamp round for a write) would need a workload of their own")
  void storingStaleQueuesBreaksExclusion() {
    caught("ignore versions", "exclusion", c -> c.mutationIgnoreVersions = true);
  }

  @Test
  void takingQueuesBeforeTheSurrenderIsAcknowledgedBreaksExclusion() {
    caught("no surrender acknowledgement", "exclusion", c -> c.mutationNoSurrenderAck = true);
  }

  @Test
  void theSmallestSurrenderingLeavesADeadlock() {
    caught("smallest surrenders", MutationHunt.LIVENESS, c -> c.mutationSmallestSurrenders = true);
  }

  @Test
  void ignoringDescendantsBreaksExclusion() {
    caught("ancestors only", "AG-1", c -> c.table.mutationAncestorsOnly = true);
  }

  @Test
  void upgradingBesideOtherReadersBreaksExclusion() {
    caught("upgrade with others", "AG-1", c -> c.table.mutationUpgradeWithOthers = true);
  }

  @Test
  void abortingForAnUntoldLockIsCaught() {
    caught("abort untold", "AG-4", c -> c.mutationAbortUntold = true);
  }

  private static void caught(String mutation, String rule, Consumer<AgentCore> tweak) {
    Simulation<Envelope> sim = AgentTransactionSimulationTest.simulation(AgentTransactionSimulationTest.config(),
        tweak);
    Optional<MutationHunt.Caught> c = MutationHunt.hunt(mutation, rule, sim, BUDGET,
        seed -> AgentSimulationTest.replay("AgentMutationSimulationTest", seed) + " -Dsim.mutations=true");
    assertTrue(c.isPresent(), "the mutation (" + mutation + ") broke no " + rule + " rule in its seeds (default "
        + BUDGET + ", or -Dsim.seeds)");
    assertTrue(MutationHunt.named(rule, c.get().violation()), c.get().violation());
  }
}
