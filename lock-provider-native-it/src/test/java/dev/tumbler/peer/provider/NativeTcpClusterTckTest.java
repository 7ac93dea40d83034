package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;

/**
 * The TCK against a 3-node cluster over real TCP on loopback, running Ricart–Agrawala; services are spread
 * over the nodes. Lamport runs on TCP in {@link NativeTcpClusterLamportTckTest}.
 */
class NativeTcpClusterTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.tcp("ricart-agrawala");
  }
}
