package dev.tumbler.lock.redis;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;
import java.time.Duration;
import java.util.List;

/**
 * The TCK against Redlock over five independent Redis masters, one of which is down for the whole run:
 * every group must pass on the remaining four, and the fault-tolerance group crashes or partitions one
 * more (three of five are still a majority).
 */
class RedlockTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return new RedisTarget(List.of(EmbeddedRedis.start(), EmbeddedRedis.start(), EmbeddedRedis.start(),
        EmbeddedRedis.start(), EmbeddedRedis.start()), 1, Duration.ofMillis(1500), "");
  }
}
