package dev.tumbler.peer.election;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The harness's teeth: each test-only mutation of {@link ElectionCore} must break an invariant within
 * the default seed budget of {@link ElectionSimulationTest}. {@code -Delection.seed=S} replays one seed with
 * its trace.
 */
class ElectionMutationTest {

  @Test
  void votesThatIgnoreTheLeaderLeaseAreCaught() {
    caught("mutationVoteWithoutLease", core -> core.mutationVoteWithoutLease = true);
  }

  @Test
  void duplicateVotesCountedAsMajorityAreCaught() {
    caught("mutationCountDuplicateVotes", core -> core.mutationCountDuplicateVotes = true);
  }

  /** With TCP-like link reports, a core that leaves a Hello that starts a link unanswered stalls for good. */
  @Test
  void hellosLeftUnansweredAreCaught() {
    caught("mutationHelloUnanswered", core -> core.mutationHelloUnanswered = true);
  }

  private static void caught(String mutation, Consumer<ElectionCore> mutate) {
    ElectionSimulation sim = new ElectionSimulation(mutate);
    long[] seeds = ElectionSimulation.seeds(ElectionSimulationTest.SEEDS);
    for (long seed : seeds) {
      ElectionSimulation.Result r = sim.run(seed, seeds.length == 1);
      if (seeds.length == 1) {
        r.trace().forEach(System.out::println);
      }
      if (!r.ok()) {
        System.out.println(mutation + ": caught at seed " + seed + " (" + r.setup() + "): " + r.violation()
            + "\n  replay: " + ElectionSimulation.replay("ElectionMutationTest", seed));
        return;
      }
    }
    fail(mutation + " kept every invariant in " + seeds.length + " seeds: the harness cannot see it");
  }
}
