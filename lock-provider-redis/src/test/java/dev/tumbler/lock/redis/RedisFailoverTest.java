package dev.tumbler.lock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.FencedResource;
import dev.tumbler.torture.backend.Processes;
import dev.tumbler.torture.backend.RedisCluster;
import dev.tumbler.torture.backend.RedisProcess;
import dev.tumbler.torture.backend.RedisSentinels;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * What the README promises across a failover, on a real sentinel set-up and a real cluster with replicas:
 * the primary holding a lock is killed, its replica is promoted, and the replica — made to have missed
 * the last counter increments, as asynchronous replication allows — grants the lock again with a larger
 * fencing token, so a fenced resource rejects the old holder's late write. The old holder is told it lost
 * the lock, and services opened before the failover go on with the new primary: commands, and release
 * notifications (a waiter whose re-check is far away is woken by the release's push).
 */
class RedisFailoverTest {
  private static final Duration LEASE = Duration.ofSeconds(2);
  private static final Duration BOUND = Duration.ofSeconds(30);
  /** No re-check and no expiry within the test: only a release notification wakes a waiter. */
  private static final String PUSH_ONLY = "leaseTime=60s&timeout=500ms&recheck=60s";

  @Test
  void sentinelFailover() throws Exception {
    try (RedisSentinels setUp = RedisSentinels.start()) {
      fencingSurvivesFailover(setUp::url, key -> setUp.primary(), old -> {
        old.kill();
        return setUp.awaitPromotedOtherThan(old, BOUND);
      });
    }
  }

  @Test
  void clusterFailover() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3, true)) {
      String seeds = String.join(",", cluster.addresses());
      fencingSurvivesFailover(p -> "lock:redis://" + seeds + "?mode=cluster&" + p, cluster::masterOf, old -> {
        old.kill();
        RedisProcess[] promoted = new RedisProcess[1];
        Processes.await(BOUND, "a replica to take over the killed master's slots", () -> {
          try {
            promoted[0] = cluster.masterOf(keys("orders/42").getFirst());
            return promoted[0] != old;
          } catch (RuntimeException e) {
            return false;
          }
        });
        cluster.awaitOk();
        return promoted[0];
      });
    }
  }

  /**
   * @param url the URL of the set-up with the given parameters
   * @param primaryOf the server that holds a key now
   * @param failOver kills the given primary and returns the replica promoted in its place
   */
  private static void fencingSurvivesFailover(UnaryOperator<String> url, Function<String, RedisProcess> primaryOf,
      UnaryOperator<RedisProcess> failOver) throws Exception {
    String name = "orders/42";
    try (LockService a = LockProviders.connect(url.apply(ReplicatedTarget.params(LEASE)));
        LockService waiting = LockProviders.connect(url.apply(PUSH_ONLY))) {
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
      RedisProcess old = primaryOf.apply(keys(name).getFirst());
      try (Jedis j = old.client()) {
        // the replica has the grant: the lock is held there too, as after most failovers
        assertEquals(1, j.waitReplicas(1, 10_000), "the replica did not acknowledge the grant");
      }

      RedisProcess promoted = failOver.apply(old);

      // the replica missed the last increments: its counter is behind the token the old primary granted
      try (Jedis j = promoted.client()) {
        j.set(keys(name).getLast(), Long.toString(t - 2));
      }
      try (LockService b = LockProviders.connect(url.apply(ReplicatedTarget.params(LEASE)))) {
        Lease next = b.lock(name).tryAcquire(BOUND).orElseThrow(() -> new AssertionError(
            "the lock was not granted on the promoted replica within " + BOUND.toSeconds() + " s"));
        assertTrue(next.fencingToken() > t, "token " + next.fencingToken() + " after the failover is not above " + t);
        assertTrue(resource.write(next.fencingToken(), "written by the next holder"));
        assertFalse(resource.write(t, "a late write of the first holder"), "the fenced resource took a stale token");
        assertEquals("written by the next holder", resource.value());
        assertEquals(1, resource.staleWrites());
        next.release();

        Processes.await(BOUND, "the first holder to be told it lost the lock", () -> lost.get() != null);
        assertFalse(held.isValid());
        held.release();
        // the service opened before the failover follows the new primary
        a.lock("after-failover").tryAcquire(BOUND).orElseThrow(() -> new AssertionError(
            "the service opened before the failover was not granted a free lock after it")).release();

      }
      // and so do its release notifications: a waiter with no re-check for a minute, behind a holder whose
      // grant lasts a minute, is woken by the release's push
      try (LockService c = LockProviders.connect(url.apply(PUSH_ONLY))) {
        Lease blocking = c.lock("pushed").tryAcquire(BOUND).orElseThrow();
        CompletableFuture<Optional<Lease>> woken = CompletableFuture.supplyAsync(() -> {
          try {
            return waiting.lock("pushed").tryAcquire(Duration.ofSeconds(50));
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        });
        Thread.sleep(500);
        blocking.release();
        Lease pushed = woken.get(20, TimeUnit.SECONDS).orElseThrow(() -> new AssertionError("the waiter was not granted"));
        pushed.release();
      }
    }
  }

  private static java.util.List<String> keys(String name) {
    return new RedisKeys("").mutex(RedisKeys.Kind.MUTEX, name);
  }
}
