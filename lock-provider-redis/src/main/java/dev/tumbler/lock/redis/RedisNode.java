package dev.tumbler.lock.redis;

import java.time.Duration;
import java.util.List;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * One Redis server: a pool of command connections ({@link JedisPooled}) and the {@link WakeupHub} of
 * its release channels. Scripts run with EVALSHA and fall back to EVAL once when the server does not
 * know the script (after a restart or SCRIPT FLUSH), which also caches it again. Thread safe.
 */
final class RedisNode implements AutoCloseable {
  private final HostAndPort address;
  private final JedisPooled jedis;
  private final WakeupHub hub;

  RedisNode(HostAndPort address, JedisClientConfig config, Duration timeout, String controlChannel, Duration heartbeat) {
    this.address = address;
    ConnectionPoolConfig pool = new ConnectionPoolConfig();
    // waiters hold no connection while they wait, so a modest pool serves many threads
    pool.setMaxTotal(64);
    pool.setMaxIdle(64);
    pool.setMinIdle(0);
    pool.setMaxWait(timeout);
    pool.setTestOnBorrow(false);
    pool.setJmxEnabled(false);
    this.jedis = new JedisPooled(pool, address, config);
    this.hub = new WakeupHub(address, config, controlChannel, heartbeat);
  }

  JedisPooled jedis() {
    return jedis;
  }

  WakeupHub hub() {
    return hub;
  }

  /**
   * Runs {@code script}: one round trip (two the first time a server sees it). A script that is safe to
   * run twice ({@code idempotent}: renewals, releases, reads) is retried once on a connection failure,
   * since a pooled connection may have died quietly (server restart, idle timeout); an acquire is not,
   * as it may have been granted before the reply was lost (see {@link RedisLockService}).
   */
  Object eval(Scripts.Script script, List<String> keys, List<String> args, boolean idempotent) {
    try {
      return evalOnce(script, keys, args);
    } catch (JedisConnectionException e) {
      if (!idempotent) {
        throw e;
      }
      return evalOnce(script, keys, args);
    }
  }

  private Object evalOnce(Scripts.Script script, List<String> keys, List<String> args) {
    try {
      return jedis.evalsha(script.sha(), keys, args);
    } catch (JedisNoScriptException e) {
      return jedis.eval(script.source(), keys, args);
    }
  }

  /** Checks the server answers; throws the client's exception otherwise. */
  void ping() {
    jedis.ping();
  }

  @Override
  public void close() {
    hub.close();
    jedis.close();
  }

  @Override
  public String toString() {
    return address.toString();
  }
}
