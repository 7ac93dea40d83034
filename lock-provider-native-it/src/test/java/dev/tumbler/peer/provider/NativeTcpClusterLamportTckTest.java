package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;

/**
 * The TCK against a 3-node Lamport cluster over real TCP on loopback, services spread over the nodes (with
 * {@link NativeTcpClusterTckTest} and the two in-memory classes, both algorithms on both transports).
 */
class NativeTcpClusterLamportTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.tcp("lamport");
  }
}
