package dev.tumbler.peer.algorithm;

import java.util.List;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * What a core is made from ({@link Algorithm#newCore}). Nothing in it reads a clock or a global: the
 * simulator passes its own values, the node runtime real ones.
 *
 * @param self this node's id
 * @param peers the other members' ids
 * @param peerTimeoutNanos how long a request waits with a peer it needs unreachable before it fails (Lamport,
 *     Ricart–Agrawala, an agent's claim), or with fewer members connected than a quorum needs (lease, buckets, bakery)
 * @param leaseNanos the term of a grant, for algorithms whose grants have one; 0 otherwise
 * @param wallMicros the wall clock at start, in microseconds since the epoch, for algorithms that start
 *     their logical clocks from it (so that tokens keep increasing over a restart of the whole cluster);
 *     0 in the simulator
 * @param random the core's only source of randomness
 * @param settings the algorithm's own settings
 * @param termFloor a term the elections of the core must start above, whatever the wall clock says: the highest term
 *     of the nodes the same process ran before (a node keeps nothing on disk, so one started again within the wall
 *     clock's 16-second term unit would begin a term it used, and repeat its tokens); 0 for none
 */
public record CoreContext(String self, List<String> peers, long peerTimeoutNanos, long leaseNanos,
    long wallMicros, RandomGenerator random, AlgorithmSettings settings, long termFloor) {

  /** A context with no term floor beyond the wall clock's. */
  public CoreContext(String self, List<String> peers, long peerTimeoutNanos, long leaseNanos, long wallMicros,
      RandomGenerator random, AlgorithmSettings settings) {
    this(self, peers, peerTimeoutNanos, leaseNanos, wallMicros, random, settings, 0);
  }

  public CoreContext {
    Objects.requireNonNull(self, "self");
    peers = List.copyOf(peers);
    Objects.requireNonNull(random, "random");
    Objects.requireNonNull(settings, "settings");
    if (peerTimeoutNanos <= 0) {
      throw new IllegalArgumentException("peerTimeoutNanos must be positive: " + peerTimeoutNanos);
    }
    if (leaseNanos < 0) {
      throw new IllegalArgumentException("leaseNanos must not be negative: " + leaseNanos);
    }
    if (termFloor < 0) {
      throw new IllegalArgumentException("termFloor must not be negative: " + termFloor);
    }
  }
}
