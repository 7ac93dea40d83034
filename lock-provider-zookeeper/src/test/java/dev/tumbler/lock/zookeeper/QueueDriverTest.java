package dev.tumbler.lock.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.spi.Ticker;
import java.util.List;
import org.apache.curator.framework.recipes.locks.PredicateResults;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;

/** The read/write grant rule on queue listings, without a server. */
class QueueDriverTest {
  private static final String W1 = "_c_a1-m1-w-lock-0000000001";
  private static final String R2 = "_c_a2-m2-r-lock-0000000002";
  private static final String R3 = "_c_a3-m3-r-lock-0000000003";
  private static final String W4 = "_c_a4-m4-w-lock-0000000004";
  private static final String R5 = "_c_a5-m5-r-lock-0000000005";

  private static PredicateResults check(QueueDriver.Mode mode, List<String> queue, String ours) throws Exception {
    return new QueueDriver(mode, Ticker.system(), "m", null).getsTheLock(null, queue, ours, 1);
  }

  @Test
  void writersGoOneAtATimeInOrder() throws Exception {
    List<String> q = List.of(W1, R2, R3, W4, R5);
    assertTrue(check(QueueDriver.Mode.WRITE, q, W1).getsTheLock());
    PredicateResults w4 = check(QueueDriver.Mode.WRITE, q, W4);
    assertFalse(w4.getsTheLock());
    assertEquals(R3, w4.getPathToWatch(), "a writer watches the node just ahead of it");
  }

  @Test
  void readersShareUntilAWriterIsAhead() throws Exception {
    assertTrue(check(QueueDriver.Mode.READ, List.of(R2, R3), R3).getsTheLock(), "readers share");
    PredicateResults r3 = check(QueueDriver.Mode.READ, List.of(W1, R2, R3), R3);
    assertFalse(r3.getsTheLock(), "a reader behind a writer waits");
    assertEquals(W1, r3.getPathToWatch());
    PredicateResults r5 = check(QueueDriver.Mode.READ, List.of(W1, R2, R3, W4, R5), R5);
    assertFalse(r5.getsTheLock());
    assertEquals(W4, r5.getPathToWatch(), "a reader watches the nearest writer ahead of it");
    assertNull(check(QueueDriver.Mode.READ, List.of(R2, R3, W4), R3).getPathToWatch(),
        "a writer behind does not block a reader");
  }

  @Test
  void vanishedNodeStartsOver() {
    assertThrows(KeeperException.NoNodeException.class, () -> check(QueueDriver.Mode.WRITE, List.of(W1), R2));
  }

  @Test
  void writeTagIsReadFromTheNodeName() {
    assertTrue(QueueDriver.isWrite(W1));
    assertFalse(QueueDriver.isWrite(R2));
    // a marker that happens to end in "w" is not mistaken for the tag
    assertFalse(QueueDriver.isWrite("_c_a-mw-r-lock-0000000007"));
  }

  @Test
  void markerIsMatchedWithItsDelimiters() {
    assertTrue(ZooKeeperLockService.carries("ab12-w-lock-0000000001", "ab12"), "at the start");
    assertTrue(ZooKeeperLockService.carries("_c_a1-ab12-w-lock-0000000001", "ab12"), "after a protection prefix");
    assertTrue(ZooKeeperLockService.carries("ab1ab12-x-ab12-p2-lock-0000000001", "ab12"), "a later occurrence");
    assertFalse(ZooKeeperLockService.carries("ab123-w-lock-0000000001", "ab12"), "a longer marker");
    assertFalse(ZooKeeperLockService.carries("xab12-w-lock-0000000001", "ab12"), "no '-' before it");
    assertFalse(ZooKeeperLockService.carries("_c_a1-ab12", "ab12"), "no '-' after it");
    assertFalse(ZooKeeperLockService.carries("_c_a1-m1-w-lock-0000000001", "m"), "a marker that is a prefix of another");
  }
}
