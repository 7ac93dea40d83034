package dev.tumbler.peer.sim;

import java.util.Objects;

/**
 * The shape of the random runs of a {@link Simulation}. Times are simulation nanoseconds.
 *
 * @param minNodes fewest nodes in a run
 * @param maxNodes most nodes in a run
 * @param names how many lock names the clients contend on (at most)
 * @param sessionsPerNode client session slots per node
 * @param minOps fewest ops in a run
 * @param maxOps most ops in a run
 * @param faultPhaseNanos ops happen within {@code [workloadStart, faultPhase]}; then everything heals
 * @param settleNanos how long after the fault phase every request must have ended
 * @param maxDelayNanos largest network delay of one message
 * @param maxDrift largest relative rate error of a node's clock (0.001 = 1 ms per second)
 * @param faults whether crashes, cuts and partitions happen
 * @param timeouts whether clients give up waiting (and make single attempts)
 * @param closes whether sessions close
 * @param maxEvents events after which a run counts as not quiescing
 * @param maxPauseNanos longest process pause (a node handles nothing meanwhile, as in a GC pause; its
 *     clock runs); 0 for no pauses
 * @param workload what the clients ask for
 * @param leaseNanos the lease term {@code T} given to the cores of a leased algorithm
 *     ({@code CoreContext.leaseNanos}); other algorithms get 0 whatever this says
 * @param probeDelayNanos how long after the fault phase the end-of-run probes ask; for an elected algorithm
 *     at least {@code electionDelay + 2·leaderTimeout + T + leaderTimeout}, time for an election and a
 *     server's grace
 * @param workloadStartNanos no op before this: for counting messages with a view that is already stable
 */
public record SimulationConfig(int minNodes, int maxNodes, int names, int sessionsPerNode, int minOps, int maxOps,
    long faultPhaseNanos, long settleNanos, long maxDelayNanos, double maxDrift, boolean faults, boolean timeouts,
    boolean closes, int maxEvents, long maxPauseNanos, Workload workload, long leaseNanos, long probeDelayNanos,
    long workloadStartNanos) {

  private static final long MS = 1_000_000L;

  /** The simulation's lease term (Appendix A). */
  public static final long LEASE_NANOS = 120 * MS;

  /** The probes' default delay after the fault phase (Appendix A). */
  public static final long PROBE_DELAY_NANOS = 1_000 * MS;

  public SimulationConfig {
    Objects.requireNonNull(workload, "workload");
    if (minNodes < 1 || maxNodes < minNodes) {
      throw new IllegalArgumentException("nodes must be 1 <= minNodes <= maxNodes: " + minNodes + ", " + maxNodes);
    }
    if (leaseNanos < 0) {
      throw new IllegalArgumentException("leaseNanos must not be negative: " + leaseNanos);
    }
    if (probeDelayNanos < 0 || probeDelayNanos > settleNanos) {
      throw new IllegalArgumentException("probeDelayNanos must be 0 to settleNanos (" + settleNanos + "): "
          + probeDelayNanos);
    }
    if (workloadStartNanos < 0 || workloadStartNanos >= faultPhaseNanos) {
      throw new IllegalArgumentException("workloadStartNanos must be 0 to below faultPhaseNanos (" + faultPhaseNanos
          + "): " + workloadStartNanos);
    }
  }

  /** Everything on: 1 to 4 nodes, faults, timeouts, attempts, closes, pauses of up to 50 ms; plain locks. */
  public static SimulationConfig standard() {
    return new SimulationConfig(1, 4, 3, 2, 10, 60, 3_000 * MS, 60_000 * MS, 5 * MS, 0.001, true, true, true,
        500_000, 50 * MS, Workload.MUTEX, LEASE_NANOS, PROBE_DELAY_NANOS, 0);
  }

  /** No faults, no timeouts, no closes: for counting messages per entry. */
  public static SimulationConfig faultFree(int nodes) {
    return new SimulationConfig(nodes, nodes, 2, 2, 40, 40, 3_000 * MS, 60_000 * MS, 5 * MS, 0.001, false, false,
        false, 500_000, 0, Workload.MUTEX, LEASE_NANOS, PROBE_DELAY_NANOS, 0);
  }

  /** This config with another node range. */
  public SimulationConfig withNodes(int min, int max) {
    return new SimulationConfig(min, max, names, sessionsPerNode, minOps, maxOps, faultPhaseNanos, settleNanos,
        maxDelayNanos, maxDrift, faults, timeouts, closes, maxEvents, maxPauseNanos, workload, leaseNanos,
        probeDelayNanos, workloadStartNanos);
  }

  /** This config with another workload. */
  public SimulationConfig withWorkload(Workload w) {
    return new SimulationConfig(minNodes, maxNodes, names, sessionsPerNode, minOps, maxOps, faultPhaseNanos,
        settleNanos, maxDelayNanos, maxDrift, faults, timeouts, closes, maxEvents, maxPauseNanos, w, leaseNanos,
        probeDelayNanos, workloadStartNanos);
  }

  /** This config with another lease term. */
  public SimulationConfig withLease(long nanos) {
    return new SimulationConfig(minNodes, maxNodes, names, sessionsPerNode, minOps, maxOps, faultPhaseNanos,
        settleNanos, maxDelayNanos, maxDrift, faults, timeouts, closes, maxEvents, maxPauseNanos, workload, nanos,
        probeDelayNanos, workloadStartNanos);
  }

  /** This config with the first op no earlier than {@code nanos} (a stable view before the workload). */
  public SimulationConfig withWorkloadStart(long nanos) {
    return new SimulationConfig(minNodes, maxNodes, names, sessionsPerNode, minOps, maxOps, faultPhaseNanos,
        settleNanos, maxDelayNanos, maxDrift, faults, timeouts, closes, maxEvents, maxPauseNanos, workload,
        leaseNanos, probeDelayNanos, nanos);
  }

  /** This config with process pauses of up to {@code nanos} (0: none). */
  public SimulationConfig withPauses(long nanos) {
    return new SimulationConfig(minNodes, maxNodes, names, sessionsPerNode, minOps, maxOps, faultPhaseNanos,
        settleNanos, maxDelayNanos, maxDrift, faults, timeouts, closes, maxEvents, nanos, workload, leaseNanos,
        probeDelayNanos, workloadStartNanos);
  }

  /** This config with crashes, cuts and partitions on or off (pauses, timeouts and closes as they are). */
  public SimulationConfig withFaults(boolean on) {
    return new SimulationConfig(minNodes, maxNodes, names, sessionsPerNode, minOps, maxOps, faultPhaseNanos,
        settleNanos, maxDelayNanos, maxDrift, on, timeouts, closes, maxEvents, maxPauseNanos, workload, leaseNanos,
        probeDelayNanos, workloadStartNanos);
  }

  /** This config with another fault phase and op count. */
  public SimulationConfig withOps(long faultPhase, int min, int max) {
    return new SimulationConfig(minNodes, maxNodes, names, sessionsPerNode, min, max, faultPhase, settleNanos,
        maxDelayNanos, maxDrift, faults, timeouts, closes, maxEvents, maxPauseNanos, workload, leaseNanos,
        probeDelayNanos, workloadStartNanos);
  }

  /** This config with runs on at most {@code n} names (each run draws how many, from 1 to {@code n}). */
  public SimulationConfig withNames(int n) {
    return new SimulationConfig(minNodes, maxNodes, n, sessionsPerNode, minOps, maxOps, faultPhaseNanos, settleNanos,
        maxDelayNanos, maxDrift, faults, timeouts, closes, maxEvents, maxPauseNanos, workload, leaseNanos,
        probeDelayNanos, workloadStartNanos);
  }
}
