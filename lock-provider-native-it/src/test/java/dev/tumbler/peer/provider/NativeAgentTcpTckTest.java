package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;

/**
 * The TCK against {@code agent} on a 3-node cluster over real TCP on loopback, a proxy on every link, with the same
 * minority faults.
 */
class NativeAgentTcpTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.tcp("agent");
  }
}
