package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;

/**
 * The TCK against {@code agent} (seed 000's lock agents: transactions over hierarchical names, distributed deadlock
 * resolution, plain locks as majority claims) on a 3-node in-memory cluster, with the minority faults of the
 * {@code FaultTolerance} group: a node crashed and restarted, or cut off and healed.
 */
class NativeAgentMemoryTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.memory("agent");
  }
}
