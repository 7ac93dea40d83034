package dev.tumbler.lock.redis;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;
import java.time.Duration;

/**
 * The TCK through an application's own Jedis client: every service runs on a {@link redis.clients.jedis.JedisPooled}
 * the target built (through the service's own proxy, so cut-offs reach it), passed under
 * {@link RedisLockProvider#JEDIS} with a URL that names no hosts; the same faults as {@link RedisTckTest}.
 */
class RedisAppClientTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return RedisTarget.applicationClients(EmbeddedRedis.start(), Duration.ofMillis(1500));
  }
}
