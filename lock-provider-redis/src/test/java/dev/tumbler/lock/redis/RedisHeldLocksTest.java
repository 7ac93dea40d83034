package dev.tumbler.lock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.HeldLock;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** heldLocks() on a real Redis server: SCAN of the namespace's keys. */
class RedisHeldLocksTest {
  static EmbeddedRedis redis;

  @BeforeAll
  static void start() {
    redis = EmbeddedRedis.start();
  }

  @AfterAll
  static void stop() {
    redis.close();
  }

  static LockService open(String namespace) {
    return LockProviders.connect("lock:redis://" + redis.address() + "?leaseTime=10s&timeout=500ms"
        + (namespace.isEmpty() ? "" : "&namespace=" + namespace));
  }

  @Test
  void listsTheGrantsOfItsNamespaceWithHolderTokenAndRemainingTerm() throws InterruptedException {
    try (LockService ops = open("ops"); LockService other = open("other"); LockService none = open("")) {
      Lease mutex = ops.lock("orders/42").acquire();
      Lease read = ops.readWriteLock("a:b {c}").readLock().acquire();
      Lease permits = ops.semaphore("pool", 3).acquire(2);
      Lease elsewhere = other.lock("orders/42").acquire();
      Lease noNamespace = none.lock("orders/43").acquire();

      List<HeldLock> held = ops.heldLocks().orElseThrow();
      assertEquals(List.of("a:b {c}", "orders/42", "pool"), held.stream().map(HeldLock::name).toList(), held.toString());
      HeldLock m = held.get(1);
      assertEquals("mutex", m.kind());
      assertTrue(m.holder().matches("[A-Za-z0-9_-]+:\\d+"), m.holder()); // <client id>:<n>
      assertFalse(m.tokenIsHolders());
      assertTrue(m.token().getAsLong() >= mutex.fencingToken(), m + " vs " + mutex.fencingToken());
      Duration left = m.remaining().orElseThrow();
      assertTrue(left.compareTo(Duration.ZERO) > 0 && left.compareTo(Duration.ofSeconds(10)) <= 0, left.toString());
      assertEquals("read", held.get(0).kind());
      assertTrue(held.get(0).remaining().orElseThrow().compareTo(Duration.ZERO) > 0);
      assertEquals("semaphore", held.get(2).kind());
      assertTrue(held.get(2).holder().endsWith(" x2"), held.get(2).holder());

      assertEquals(List.of("orders/43"), none.heldLocks().orElseThrow().stream().map(HeldLock::name).toList(),
          "an empty namespace does not list the keys of other namespaces");
      assertEquals(List.of("orders/42"), other.heldLocks().orElseThrow().stream().map(HeldLock::name).toList());

      mutex.release();
      read.release();
      permits.release();
      assertEquals(List.of(), ops.heldLocks().orElseThrow());
      elsewhere.release();
      noNamespace.release();
    }
  }

  @Test
  void keysDecodeBackToTheirNames() {
    for (String name : List.of("a:b", "a%3Ab", "ü/{x}", "tumbler:m:{y}")) {
      assertEquals(name, RedisKeys.decode(RedisKeys.encode(name)));
    }
  }
}
