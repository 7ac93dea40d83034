package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;
import java.util.Map;

/** The TCK against a 3-node Lamport cluster on the in-memory transport, services spread over the nodes. */
class NativeMemoryClusterTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.memory("lamport");
  }

  @Override
  protected Map<String, String> excludedTests() {
    return NativeTargets.NOT_FAULT_TOLERANT;
  }
}
