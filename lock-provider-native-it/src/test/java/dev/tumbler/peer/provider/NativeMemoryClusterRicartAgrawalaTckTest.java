package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;

/**
 * The TCK against a 3-node Ricart–Agrawala cluster on the in-memory transport, services spread over the nodes
 * (with {@link NativeMemoryClusterTckTest} and the two TCP classes, both algorithms on both transports).
 */
class NativeMemoryClusterRicartAgrawalaTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.memory("ricart-agrawala");
  }
}
