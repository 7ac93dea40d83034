package dev.tumbler.lock.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.HeldLock;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** heldLocks() against an in-process ZooKeeper: the queues under the service's root. */
class ZooKeeperHeldLocksTest {
  static TestingServer server;

  @BeforeAll
  static void start() throws Exception {
    server = ZooKeeperServers.server();
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  static LockService open(String namespace) {
    return LockProviders.connect("lock:zookeeper://" + server.getConnectString() + "/held?sessionTimeout=4s"
        + (namespace.isEmpty() ? "" : "&namespace=" + namespace));
  }

  @Test
  void listsHoldersWithTheirOwnTokensAndNotTheWaiters() throws Exception {
    try (LockService ops = open("ops"); LockService waiter = open("ops"); LockService other = open("other")) {
      Lease mutex = ops.lock("orders/42").acquire();
      CompletableFuture<Lease> queued = waiter.lock("orders/42").acquireAsync(Duration.ofSeconds(30));
      Lease read = ops.readWriteLock("a:b").readLock().acquire();
      Lease permits = ops.semaphore("pool", 3).acquire(2);
      Lease elsewhere = other.lock("x").acquire();

      List<HeldLock> held = ops.heldLocks().orElseThrow();
      assertEquals(List.of("a:b", "orders/42", "pool"), held.stream().map(HeldLock::name).toList(), held.toString());
      HeldLock m = held.get(1);
      assertEquals("mutex", m.kind());
      assertEquals(mutex.fencingToken(), m.token().getAsLong(), "the holder's own token, the node's czxid");
      assertTrue(m.tokenIsHolders());
      assertTrue(m.holder().contains("(session 0x"), m.holder());
      assertTrue(m.remaining().isEmpty(), "bound to the session, no term");
      assertEquals("read", held.get(0).kind());
      assertEquals(read.fencingToken(), held.get(0).token().getAsLong());
      assertEquals("semaphore", held.get(2).kind());
      assertEquals(permits.fencingToken(), held.get(2).token().getAsLong());
      assertTrue(held.get(2).holder().endsWith(" x2"), held.get(2).holder());

      mutex.release();
      Lease next = queued.get();
      HeldLock handedOver = ops.heldLocks().orElseThrow().stream().filter(h -> h.name().equals("orders/42"))
          .findFirst().orElseThrow();
      assertEquals(next.fencingToken(), handedOver.token().getAsLong());
      next.release();
      read.release();
      permits.release();
      assertEquals(List.of(), ops.heldLocks().orElseThrow());
      assertEquals(List.of("x"), other.heldLocks().orElseThrow().stream().map(HeldLock::name).toList());
      elsewhere.release();
    }
  }

  @Test
  void segmentsDecodeBackToTheirNames() {
    for (String name : List.of("a/b", "a%2Fb", ".", "..", "\u0001x", "emoji \uD83D\uDE00", "ü")) {
      assertEquals(name, ZNodeNames.name(ZNodeNames.segment(name)));
    }
  }
}
