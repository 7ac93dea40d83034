package dev.tumbler.peer.sim;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.agent.AgentCore;
import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.AlgorithmSettings;
import dev.tumbler.peer.algorithm.Algorithms;
import dev.tumbler.peer.buckets.BucketsCore;
import dev.tumbler.peer.buckets.BucketsSettings;
import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.composite.Semaphores;
import dev.tumbler.peer.election.ElectionParameters;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Listings of what is held ({@code heldLocks()}) under the simulator's faults, for the algorithms that list: every
 * 50 ms a member in turn is asked, and each answer that says it knows is judged against the book (LI-1: every grant
 * valid from the question to the answer is listed with its node and token, for {@code lease} every such grant made a
 * term before the question, as a lease taken again from its node's cache is heard of at that node's next renewal;
 * another node's transaction claims excepted, which an {@code agent} listing may know only from that node; LI-2: no
 * token listed as a holder's own was granted to another node), besides every check the simulator makes.
 * {@code -Dsim.seeds=N} seeds per row (default {@value #CI_SEEDS}), {@code -Dsim.firstSeed=F} to start elsewhere,
 * {@code -Dsim.seed=S} to replay one, {@code -Dlisting.algorithm=A} and {@code -Dlisting.workload=W} for one row. Each
 * row runs its algorithm with the settings and checks of its own simulation test (BU-2 for buckets, AG-1 for agent).
 */
class ListingSimulationTest {

  static final int CI_SEEDS = 200;
  private static final long MS = 1_000_000L;
  private static final long PEER_TIMEOUT = 500 * MS;

  @ParameterizedTest
  @CsvSource({"lease, LEASE", "bakery, READ_WRITE", "buckets, SEMAPHORE_BUCKETS", "lease, SEMAPHORE", "agent, READ_WRITE",
      "agent, TRANSACTIONS"})
  void listingsNameEveryValidGrant(String algorithmName, Workload workload) {
    String only = System.getProperty("listing.algorithm");
    String onlyWorkload = System.getProperty("listing.workload");
    if (only != null && !only.equals(algorithmName) || onlyWorkload != null && !onlyWorkload.equals(workload.name())) {
      return;
    }
    Algorithm<?> algorithm = Algorithms.byName(algorithmName).orElseThrow();
    SimulationConfig config = SimulationConfig.standard().withWorkload(workload).withOps(2_000 * MS, 10, 50);
    // semaphores beside a lock algorithm: the buckets core answers for them in the same listing
    Semaphores semaphores = workload.semaphores() && !algorithmName.equals("buckets")
        ? new Semaphores(workload.bucketSize(), config.leaseNanos(), ElectionParameters.simulation()) : null;
    // the settings and checks of each algorithm's own simulation test: buckets of the workload's size and BU-2 on every
    // semaphore server, AG-1 on every agent lock table
    AlgorithmSettings settings = algorithmName.equals("buckets")
        ? new BucketsSettings(ElectionParameters.simulation(), workload.bucketSize()) : algorithm.defaults();
    Simulation<Envelope> sim = Simulation.of(config, algorithm, settings, PEER_TIMEOUT, semaphores, node -> {
      if (node.core(Channel.BUCKETS) instanceof BucketsCore b) {
        b.reportBuckets = true;
      }
      if (node.core(Channel.LOCK) instanceof BucketsCore b) {
        b.reportBuckets = true;
      }
      if (node.core(Channel.LOCK) instanceof AgentCore a) {
        a.checkTable = true;
      }
    }).withListings(50 * MS, algorithmName.equals("lease") ? config.leaseNanos() : 0);
    String label = "listings, " + algorithmName + ", " + workload;
    Simulation.Totals t = sim.runAll(label, Simulation.seeds(CI_SEEDS), seed -> "mvn -B -pl lock-sim -am test "
        + "-Dtest=ListingSimulationTest -Dlisting.algorithm=" + algorithmName + " -Dlisting.workload=" + workload
        + " -Dsim.seed=" + seed
        + " -Dsurefire.failIfNoSpecifiedTests=false");
    System.out.println(t.summary(label));
    assertTrue(t.grants() > 0, "no grants in " + label);
  }
}
