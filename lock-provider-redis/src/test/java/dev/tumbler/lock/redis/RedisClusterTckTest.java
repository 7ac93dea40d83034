package dev.tumbler.lock.redis;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;
import dev.tumbler.torture.backend.RedisCluster;
import java.time.Duration;

/** The TCK against a real three-master Redis Cluster ({@code mode=cluster}), with paused renewals and cluster crashes. */
class RedisClusterTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return ReplicatedTarget.cluster(RedisCluster.start(3), Duration.ofMillis(1500));
  }
}
