package dev.tumbler.lock.redis;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;
import dev.tumbler.torture.backend.RedisSentinels;
import java.time.Duration;

/**
 * The TCK against a real sentinel set-up ({@code mode=sentinel}: a primary, a replica, three sentinels),
 * with paused renewals. Failover is {@link RedisFailoverTest}'s.
 */
class RedisSentinelTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return ReplicatedTarget.sentinel(RedisSentinels.start(), Duration.ofMillis(1500));
  }
}
