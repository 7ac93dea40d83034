package dev.tumbler.lock.tck;

import static dev.tumbler.lock.tck.LockTck.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.DeadlockException;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LockMode;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.LockTransaction;
import dev.tumbler.lock.TransactionOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The TCK group "transactions" ({@link LockTck.Transactions}; needs: TRANSACTIONS (+ HIERARCHICAL_NAMES)). It
 * checks: several locks per transaction; readers share a path; [a] vs [a,b] conflict both ways, siblings do not; a
 * two-transaction deadlock is resolved within 8 s + 2 × leaseTime (surrender: both finish; abortOnDeadlock:
 * exactly one DeadlockException, the other gets both); bad paths, use after close.
 */
abstract class TransactionsGroup extends TckGroup {

  TransactionsGroup(LockTck tck) {
    super(tck);
  }

  /** How long a deadlock may take to be detected and broken. */
  private Duration deadlockBound() {
    return Duration.ofSeconds(8).plus(leaseTime().multipliedBy(2));
  }

  private LockTransaction tx(LockService s) {
    return s.beginTransaction(TransactionOptions.defaults());
  }

  private LockTransaction holding(LockMode mode, String... path) throws InterruptedException {
    LockTransaction t = tx(open()).lock(mode, path);
    assertTrue(t.await(GRANT_WAIT), "a free path was not granted");
    return t;
  }

  @Test
  @DisplayName("await is false until every lock asked for is held; fencingTokens() lists only the paths held")
  void partialGrant() throws InterruptedException {
    String n = name("tx-partial");
    LockTransaction holder = holding(LockMode.WRITE, n, "y");
    LockTransaction t = tx(open()).lock(LockMode.WRITE, n, "x").lock(LockMode.WRITE, n, "y");
    long t0 = System.nanoTime();
    assertFalse(t.await(SHORT_WAIT), "await returned true while a lock asked for is held by another transaction");
    assertWaited(t0, SHORT_WAIT, "await(" + SHORT_WAIT.toMillis() + "ms)");
    Set<List<String>> held = t.fencingTokens().keySet();
    assertTrue(Set.of(List.of(n, "x")).containsAll(held), "fencingTokens() lists a path the transaction does not hold: " + held);
    holder.close();
    assertTrue(t.await(releaseBound()), "the transaction did not get every lock after the other holder closed");
    assertEquals(Set.of(List.of(n, "x"), List.of(n, "y")), t.fencingTokens().keySet(),
        "fencingTokens() does not list exactly the held paths");
    t.close();
  }

  @Test
  @DisplayName("lock() returns at once, even for a path another transaction holds; an interrupted await throws")
  void lockReturnsAtOnce() throws Exception {
    String n = name("tx-at-once");
    LockTransaction holder = holding(LockMode.WRITE, n);
    LockService s = open();
    Job<LockTransaction> asking = start("tx-lock", () -> tx(s).lock(LockMode.WRITE, n));
    LockTransaction t;
    try {
      t = asking.result().get(SLACK.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("lock() of a path another transaction holds did not return within " + SLACK, e);
    }
    Job<Boolean> waiter = start("tx-interrupted", () -> t.await(GRANT_WAIT));
    Thread.sleep(200);
    waiter.thread().interrupt();
    Throwable f = waiter.failure(SLACK);
    assertTrue(f instanceof InterruptedException, "an interrupted await ended with " + f);
    assertFalse(t.await(Duration.ZERO), "a held path was granted to another transaction");
    holder.close();
    assertTrue(t.await(releaseBound()), "the path was not granted after its holder closed");
    t.close();
  }

  @Test
  @DisplayName("WRITE on a path this transaction reads upgrades it, once it is the only reader")
  void upgrade() throws Exception {
    String n = name("tx-upgrade");
    LockTransaction t1 = tx(open());
    LockTransaction t2 = tx(open());
    assertTrue(t1.lock(LockMode.READ, n).await(GRANT_WAIT), "a free path was not granted to a reader");
    assertTrue(t2.lock(LockMode.READ, n).await(GRANT_WAIT), "readers did not share the path");
    t1.lock(LockMode.WRITE, n);
    assertFalse(t1.await(SHORT_WAIT), "an upgrade was granted while another transaction reads the path");
    t2.close();
    assertTrue(t1.await(GRANT_WAIT), "the upgrade was not granted once this transaction was the only reader");
    LockTransaction t3 = tx(open());
    assertFalse(t3.lock(LockMode.READ, n).await(SHORT_WAIT), "a reader was granted beside an upgraded writer");
    t1.close();
    t1.close(); // idempotent
    assertTrue(t3.await(GRANT_WAIT), "closing the upgraded transaction did not release the path");
    assertThrows(IllegalStateException.class, () -> t1.lock(LockMode.READ, n), "lock() after close");
  }

  @Test
  @DisplayName("a transaction takes several locks; close releases them all")
  void lockSeveral() throws InterruptedException {
    String n = name("tx");
    LockService a = open();
    LockService b = open();
    LockTransaction t1 = tx(a).lock(LockMode.WRITE, n, "x").lock(LockMode.WRITE, List.of(n, "y"));
    assertTrue(t1.await(GRANT_WAIT), "free locks were not granted to a transaction");
    Map<List<String>, Long> tokens = t1.fencingTokens();
    assertTrue(tokens.containsKey(List.of(n, "x")) && tokens.containsKey(List.of(n, "y")),
        "fencingTokens() does not list the held paths: " + tokens);
    LockTransaction t2 = tx(b).lock(LockMode.WRITE, n, "y");
    long t0 = System.nanoTime();
    assertFalse(t2.await(SHORT_WAIT), "a held path was granted to another transaction");
    assertWaited(t0, SHORT_WAIT, "await(" + SHORT_WAIT.toMillis() + "ms)");
    t1.close();
    t1.close();
    assertTrue(t2.await(GRANT_WAIT), "the paths were not granted after the holder closed");
    t2.close();
  }

  @Test
  @DisplayName("readers share a path; a writer waits for them")
  void readersShare() throws InterruptedException {
    String n = name("tx-read");
    LockTransaction r1 = tx(open()).lock(LockMode.READ, n);
    LockTransaction r2 = tx(open()).lock(LockMode.READ, n);
    assertTrue(r1.await(GRANT_WAIT) && r2.await(GRANT_WAIT), "readers did not share a path");
    LockTransaction w = tx(open()).lock(LockMode.WRITE, n);
    assertFalse(w.await(SHORT_WAIT), "a writer was granted beside readers");
    r1.close();
    r2.close();
    assertTrue(w.await(GRANT_WAIT), "the writer was not granted after the readers left");
    w.close();
  }

  @Test
  @Requires(Capability.HIERARCHICAL_NAMES)
  @DisplayName("a path conflicts with its ancestors and descendants, not its siblings")
  void hierarchy() throws InterruptedException {
    String n = name("tx-tree");
    LockTransaction parent = tx(open()).lock(LockMode.WRITE, n);
    assertTrue(parent.await(GRANT_WAIT));
    LockTransaction child = tx(open()).lock(LockMode.WRITE, n, "a", "b");
    assertFalse(child.await(SHORT_WAIT), "[" + n + ",a,b] was granted while [" + n + "] is held");
    parent.close();
    assertTrue(child.await(GRANT_WAIT), "the child was not granted after the parent left");
    LockTransaction ancestor = tx(open()).lock(LockMode.WRITE, n);
    assertFalse(ancestor.await(SHORT_WAIT), "[" + n + "] was granted while [" + n + ",a,b] is held");
    LockTransaction sibling = tx(open()).lock(LockMode.WRITE, n, "a", "c");
    assertTrue(sibling.await(GRANT_WAIT), "a sibling path was refused");
    child.close();
    sibling.close();
    assertTrue(ancestor.await(GRANT_WAIT));
    ancestor.close();
  }

  @Test
  @DisplayName("a two-transaction deadlock is resolved: each in turn gets both locks")
  void deadlockSurrender() throws Exception {
    deadlock(false);
  }

  @Test
  @DisplayName("with abortOnDeadlock, one transaction aborts with DeadlockException and the other gets both")
  void deadlockAbort() throws Exception {
    deadlock(true);
  }

  private void deadlock(boolean abort) throws Exception {
    String n = name("tx-deadlock");
    TransactionOptions o = TransactionOptions.defaults().withAbortOnDeadlock(abort);
    LockTransaction t1 = open().beginTransaction(o).lock(LockMode.WRITE, n, "x");
    LockTransaction t2 = open().beginTransaction(o).lock(LockMode.WRITE, n, "y");
    assertTrue(t1.await(GRANT_WAIT) && t2.await(GRANT_WAIT), "free locks were not granted");
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    t1.onLost(lost::add);
    t2.onLost(lost::add);
    t1.lock(LockMode.WRITE, n, "y");
    t2.lock(LockMode.WRITE, n, "x");
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger peak = new AtomicInteger();
    Callable<Boolean> body1 = () -> finish(t1, inside, peak);
    Callable<Boolean> body2 = () -> finish(t2, inside, peak);
    Job<Boolean> j1 = start("tx1", body1);
    Job<Boolean> j2 = start("tx2", body2);
    Duration bound = deadlockBound();
    Throwable f1 = j1.failure(bound.plus(SLACK));
    Throwable f2 = j2.failure(bound.plus(SLACK));
    assertTrue(peak.get() <= 1, "both transactions held both locks at once");
    // breaking the cycle took a held lock from a transaction: its onLost heard it, once per lock, as DEADLOCK. This
    // checks that the event comes, not when: listeners run on a thread of their own. (It once did not come at all:
    // the native node told the aborted transaction's failure before the lost listener had run, the transaction closed
    // and its released lease no longer reported the loss; PeerNodeTransactionTest.) Whether it comes before the
    // winner is granted (DESIGN's lost-before-granted) is not checked here yet, and the native agent does not promise
    // it when the winner is on another node (an open defect)
    eventually(SLACK, "no onLost listener heard of the lock given up to break the deadlock", () -> !lost.isEmpty());
    assertTrue(lost.stream().allMatch(e -> e.reason() == LeaseLostEvent.Reason.DEADLOCK), "lost events: " + lost);
    assertEquals(lost.size(), lost.stream().map(e -> e.name() + "#" + e.fencingToken()).distinct().count(),
        "a lost lock was reported twice: " + lost);
    if (abort) {
      int aborted = (f1 instanceof DeadlockException ? 1 : 0) + (f2 instanceof DeadlockException ? 1 : 0);
      assertEquals(1, aborted, "exactly one transaction must abort; got " + f1 + " and " + f2);
      Job<Boolean> winner = f1 == null ? j1 : j2;
      assertTrue(winner.result().getNow(false), "the surviving transaction did not get both locks");
    } else {
      assertEquals(null, f1, "transaction 1 failed");
      assertEquals(null, f2, "transaction 2 failed");
      assertTrue(j1.result().getNow(false) && j2.result().getNow(false), "the deadlock was not resolved within " + bound);
    }
  }

  private boolean finish(LockTransaction t, AtomicInteger inside, AtomicInteger peak) throws InterruptedException {
    try {
      boolean all = t.await(deadlockBound());
      if (all) {
        peak.accumulateAndGet(inside.incrementAndGet(), Math::max);
        Thread.sleep(20);
        inside.decrementAndGet();
      }
      return all;
    } finally {
      t.close();
    }
  }

  @Test
  @DisplayName("bad paths and use after close are rejected")
  void badInput() throws InterruptedException {
    LockService s = open();
    LockTransaction t = tx(s);
    assertThrows(NullPointerException.class, () -> s.beginTransaction(null));
    assertThrows(IllegalArgumentException.class, () -> t.lock(LockMode.WRITE));
    assertThrows(IllegalArgumentException.class, () -> t.lock(LockMode.WRITE, List.of()));
    assertThrows(IllegalArgumentException.class, () -> t.lock(LockMode.WRITE, "a", ""));
    assertThrows(NullPointerException.class, () -> t.lock(null, "a"));
    assertThrows(IllegalArgumentException.class, () -> t.await(Duration.ofMillis(-1)));
    t.close();
    assertThrows(IllegalStateException.class, () -> t.lock(LockMode.WRITE, name("closed-tx")));
  }
}
