package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;

/**
 * The TCK against a 3-node cluster over real TCP on loopback, running Ricart–Agrawala (the in-memory
 * cluster runs Lamport, so the TCK sees both). Services are spread over the nodes.
 */
class NativeTcpClusterTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.tcp("ricart-agrawala");
  }
}
