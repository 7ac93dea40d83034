package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;

/** The TCK against a 3-node Lamport cluster on the in-memory transport, services spread over the nodes. */
class NativeMemoryClusterTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.memory("lamport");
  }
}
