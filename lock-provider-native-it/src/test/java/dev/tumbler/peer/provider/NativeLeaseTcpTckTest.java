package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;

/**
 * The TCK against {@code lease} (seed 001's lease server, elected, with locks cached on their nodes and recalled)
 * on a 3-node cluster over real TCP on loopback, a proxy on every link, with the minority faults of the {@code FaultTolerance} group: a node crashed and restarted, or
 * cut off and healed, the server among them.
 */
class NativeLeaseTcpTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.tcp("lease");
  }
}
