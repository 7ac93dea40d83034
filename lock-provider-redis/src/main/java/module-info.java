/**
 * The Redis provider ({@code lock:redis://…}), on Jedis. It exports nothing: applications reach it through
 * {@code dev.tumbler.lock} and the URL, and {@code unwrap} hands out Jedis' own types.
 */
module dev.tumbler.lock.redis {
  requires dev.tumbler.lock;
  requires redis.clients.jedis;
  // a named module, so not resolved for Jedis (an automatic module) alone: the pool settings are its types
  requires org.apache.commons.pool2;
  requires org.slf4j;

  provides dev.tumbler.lock.spi.LockProvider with dev.tumbler.lock.redis.RedisLockProvider;
}
