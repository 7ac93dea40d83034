package dev.tumbler.peer.provider;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;

/**
 * The TCK against {@code buckets} (seed 002's bucketed counters on an elected server, locks as one-permit semaphores)
 * on a 3-node cluster over real TCP on loopback, a proxy on every link, with the minority faults of the {@code FaultTolerance} group.
 */
class NativeBucketsTcpTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return NativeTargets.tcp("buckets");
  }
}
