package dev.tumbler.lock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.FencedResource;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * What the README promises across a failover, on a real sentinel set-up: the primary holding a lock is
 * killed, the sentinels promote its replica, and the replica — made to have missed the last counter
 * increments, as asynchronous replication allows — grants the lock again with a larger fencing token, so
 * a fenced resource rejects the old holder's late write. The old holder is told it lost the lock, and its
 * service goes on with the new primary.
 */
class RedisFailoverTest {
  private static final Duration LEASE = Duration.ofSeconds(2);
  private static final Duration BOUND = Duration.ofSeconds(30);

  @Test
  void fencingTokensKeepIncreasingAcrossASentinelFailover() throws Exception {
    try (EmbeddedSentinels setUp = EmbeddedSentinels.start();
        LockService a = LockProviders.connect(setUp.url(ReplicatedTarget.params(LEASE)))) {
      String name = "orders/42";
      FencedResource<String> resource = new FencedResource<>();
      // a few grants first, so that the counter has something to lose
      for (int i = 0; i < 3; i++) {
        a.lock(name).acquire().release();
      }
      Lease held = a.lock(name).acquire();
      AtomicReference<LeaseLostEvent> lost = new AtomicReference<>();
      held.onLost(lost::set);
      long t = held.fencingToken();
      assertTrue(resource.write(t, "written by the first holder"));
      RedisProcess old = setUp.primary();
      awaitReplicated(setUp, old, name);

      old.kill();
      RedisProcess promoted = setUp.awaitPromotedOtherThan(old, BOUND);

      // the replica missed the last increments: its counter is behind the token the old primary granted
      String fence = new RedisKeys("").mutex(RedisKeys.Kind.MUTEX, name).getLast();
      try (Jedis j = promoted.client()) {
        j.set(fence, Long.toString(t - 2));
      }

      try (LockService b = LockProviders.connect(setUp.url(ReplicatedTarget.params(LEASE)))) {
        Lease next = b.lock(name).tryAcquire(BOUND).orElseThrow(() -> new AssertionError(
            "the lock was not granted on the promoted replica within " + BOUND.toSeconds() + " s"));
        assertTrue(next.fencingToken() > t, "token " + next.fencingToken() + " after the failover is not above " + t);
        assertTrue(resource.write(next.fencingToken(), "written by the next holder"));
        assertFalse(resource.write(t, "a late write of the first holder"), "the fenced resource took a stale token");
        assertEquals("written by the next holder", resource.value());
        assertEquals(1, resource.staleWrites());
        next.release();
      }

      RedisProcess.await(BOUND, "the first holder to be told it lost the lock", () -> lost.get() != null);
      assertFalse(held.isValid());
      held.release();
      // the first service follows the new primary: its commands and its release notifications
      a.lock("after-failover").tryAcquire(BOUND).orElseThrow(() -> new AssertionError(
          "the service opened before the failover was not granted a free lock after it")).release();
    }
  }

  /** Waits until the replica has the grant (so the lock is held there too, as after most failovers). */
  private static void awaitReplicated(EmbeddedSentinels setUp, RedisProcess primary, String name) {
    List<String> keys = new RedisKeys("").mutex(RedisKeys.Kind.MUTEX, name);
    for (RedisProcess r : setUp.servers()) {
      if (r != primary) {
        RedisProcess.await(Duration.ofSeconds(10), "the replica to have the grant", () -> {
          try (Jedis j = r.client()) {
            return j.exists(keys.getFirst());
          }
        });
      }
    }
  }
}
