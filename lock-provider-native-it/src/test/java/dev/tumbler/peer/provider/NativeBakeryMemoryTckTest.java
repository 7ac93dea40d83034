package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;

/**
 * The TCK against the bakery (snaplock's quorum bakery among elected leaders) on a 3-node in-memory cluster
 * (all three lead), with the minority faults of the {@code FaultTolerance} group: a leader crashed and
 * restarted, or cut off and healed.
 */
class NativeBakeryMemoryTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.memory("bakery");
  }
}
