package dev.tumbler.peer.sim;

/**
 * The shape of the random runs of a {@link Simulation}. Times are simulation nanoseconds.
 *
 * @param minNodes fewest nodes in a run
 * @param maxNodes most nodes in a run
 * @param names how many lock names the clients contend on (at most)
 * @param sessionsPerNode client session slots per node
 * @param minOps fewest ops in a run
 * @param maxOps most ops in a run
 * @param faultPhaseNanos ops happen within {@code [0, faultPhase]}; then everything heals
 * @param settleNanos how long after the fault phase every request must have ended
 * @param maxDelayNanos largest network delay of one message
 * @param maxDrift largest relative rate error of a node's clock (0.001 = 1 ms per second)
 * @param faults whether crashes, cuts and partitions happen
 * @param timeouts whether clients give up waiting (and make single attempts)
 * @param closes whether sessions close
 * @param maxEvents events after which a run counts as not quiescing
 * @param maxPauseNanos longest process pause (a node handles nothing meanwhile, as in a GC pause; its
 *     clock runs); 0 for no pauses
 */
public record SimulationConfig(int minNodes, int maxNodes, int names, int sessionsPerNode, int minOps, int maxOps,
    long faultPhaseNanos, long settleNanos, long maxDelayNanos, double maxDrift, boolean faults, boolean timeouts,
    boolean closes, int maxEvents, long maxPauseNanos) {

  private static final long MS = 1_000_000L;

  /** Everything on: 1 to 4 nodes, faults, timeouts, attempts, closes, pauses of up to 50 ms. */
  public static SimulationConfig standard() {
    return new SimulationConfig(1, 4, 3, 2, 10, 60, 3_000 * MS, 60_000 * MS, 5 * MS, 0.001, true, true, true,
        500_000, 50 * MS);
  }

  /** No faults, no timeouts, no closes: for counting messages per entry. */
  public static SimulationConfig faultFree(int nodes) {
    return new SimulationConfig(nodes, nodes, 2, 2, 40, 40, 3_000 * MS, 60_000 * MS, 5 * MS, 0.001, false, false,
        false, 500_000, 0);
  }

  /** This config with another node range. */
  public SimulationConfig withNodes(int min, int max) {
    return new SimulationConfig(min, max, names, sessionsPerNode, minOps, maxOps, faultPhaseNanos, settleNanos,
        maxDelayNanos, maxDrift, faults, timeouts, closes, maxEvents, maxPauseNanos);
  }
}
