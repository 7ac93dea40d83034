package dev.tumbler.lock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.LockException;
import dev.tumbler.lock.ServiceUnavailableException;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.exceptions.JedisClusterException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * What the client's exceptions become. An answer that says "not now" is an outage, as a lost connection is: the
 * contract lets any call fail with {@link ServiceUnavailableException} while the backend cannot serve, and waits ride
 * it out. A Redis Cluster answers CLUSTERDOWN while it forms again after its nodes restarted; a listing that called it a
 * refusal broke the contract (the TCK's chaos storm on a cluster, restarting every node, caught it).
 */
class RedisErrorsTest {

  private static final String WHERE = "Redis servers 127.0.0.1:7000,127.0.0.1:7001";

  @Test
  void answersThatSayNotNowAreOutages() {
    for (JedisDataException e : new JedisDataException[] {new JedisClusterException("CLUSTERDOWN The cluster is down"),
        new JedisDataException("TRYAGAIN Multiple keys request during rehashing of slot"),
        new JedisDataException("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."),
        new JedisDataException("READONLY You can't write against a read only replica."),
        new JedisDataException("LOADING Redis is loading the dataset in memory")}) {
      LockException t = RedisLockService.translate(WHERE, "listing the held locks", e);
      assertInstanceOf(ServiceUnavailableException.class, t, e.getMessage());
      assertTrue(t.getMessage().startsWith(WHERE + " could not serve listing the held locks now: "), t.getMessage());
      assertEquals(e, t.getCause());
    }
  }

  @Test
  void otherAnswersAreRefusalsAndALostConnectionIsAnOutage() {
    LockException refused = RedisLockService.translate(WHERE, "acquiring lock 'a'",
        new JedisDataException("ERR Error running script: user_script:1: bad argument"));
    assertFalse(refused instanceof ServiceUnavailableException, refused.toString());
    assertTrue(refused.getMessage().startsWith(WHERE + " refused acquiring lock 'a': ERR"), refused.getMessage());
    // a message that only mentions a transient word is not one of those answers
    assertFalse(RedisLockService.translate(WHERE, "x", new JedisDataException("ERR not LOADING"))
        instanceof ServiceUnavailableException);
    assertInstanceOf(ServiceUnavailableException.class,
        RedisLockService.translate(WHERE, "releasing lock 'a'", new JedisConnectionException("Connection reset")));
  }
}
