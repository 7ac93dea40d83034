package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;

/**
 * The TCK against the bakery (snaplock's quorum bakery among elected leaders) on a 3-node cluster over real TCP
 * on loopback, a proxy on every link, with the same minority faults.
 */
class NativeBakeryTcpTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.tcp("bakery");
  }
}
