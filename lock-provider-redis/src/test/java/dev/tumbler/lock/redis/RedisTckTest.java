package dev.tumbler.lock.redis;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;
import java.time.Duration;
import java.util.List;

/** The TCK against one real Redis server, with client cut-offs, paused renewals and server crashes. */
class RedisTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return new RedisTarget(List.of(EmbeddedRedis.start()), 0, Duration.ofMillis(1500), "");
  }
}
