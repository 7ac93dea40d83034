package dev.tumbler.lock.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.HeldLock;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** heldLocks() on H2: one SELECT of the holders table, filtered to the namespace. */
class JdbcHeldLocksTest {

  static LockService open(String namespace) {
    return LockProviders.connect("lock:jdbc:h2:mem:held;DB_CLOSE_DELAY=-1?createSchema=true&leaseTime=10s"
        + (namespace.isEmpty() ? "" : "&namespace=" + namespace));
  }

  @Test
  void listsTheRowsOfItsNamespaceWithTheHoldersTokens() throws InterruptedException {
    try (LockService ops = open("ops"); LockService other = open("o"); LockService none = open("")) {
      Lease mutex = ops.lock("orders/42").acquire();
      Lease read = ops.readWriteLock("a/b").readLock().acquire();
      Lease permits = ops.semaphore("pool", 3).acquire(2);
      Lease elsewhere = other.lock("ps/x").acquire();
      Lease noNamespace = none.lock("y").acquire();

      List<HeldLock> held = ops.heldLocks().orElseThrow();
      assertEquals(List.of("a/b", "orders/42", "pool"), held.stream().map(HeldLock::name).toList(), held.toString());
      HeldLock m = held.get(1);
      assertEquals("mutex", m.kind());
      assertEquals(mutex.fencingToken(), m.token().getAsLong());
      assertTrue(m.tokenIsHolders());
      Duration left = m.remaining().orElseThrow();
      assertTrue(left.compareTo(Duration.ZERO) > 0 && left.compareTo(Duration.ofSeconds(10)) <= 0, left.toString());
      assertEquals("read", held.get(0).kind());
      assertEquals(read.fencingToken(), held.get(0).token().getAsLong());
      assertTrue(held.get(2).holder().endsWith(" x2"), held.get(2).holder());
      assertEquals(List.of("ps/x"), other.heldLocks().orElseThrow().stream().map(HeldLock::name).toList());
      assertEquals(List.of("y"), none.heldLocks().orElseThrow().stream().map(HeldLock::name).toList());

      mutex.release();
      read.release();
      permits.release();
      assertEquals(List.of(), ops.heldLocks().orElseThrow());
      elsewhere.release();
      noNamespace.release();
    }
  }

  @Test
  void keysOfOtherNamespacesAreNotParsedAsOurs() {
    String key = Primitive.key("ab", Primitive.Kind.MUTEX, "c/d");
    assertEquals("c/d", Primitive.parse(key, "ab").orElseThrow()[1]);
    assertEquals(Optional.empty(), Primitive.parse(key, "a"));
    assertEquals(Optional.empty(), Primitive.parse(key, ""));
    assertEquals(Optional.empty(), Primitive.parse(Primitive.key("", Primitive.Kind.MUTEX, "2/ab/x"), "ab"));
  }
}
