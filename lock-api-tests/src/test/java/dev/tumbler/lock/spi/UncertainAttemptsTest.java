package dev.tumbler.lock.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

class UncertainAttemptsTest {

  private static void awaitTrue(BooleanSupplier condition, String what) throws InterruptedException {
    long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() - until < 0, what);
      Thread.sleep(5);
    }
  }

  private static final List<Thread> undoThreads = new CopyOnWriteArrayList<>();

  @Test
  void anAttemptIsUndoneAgainUntilItsUndoFindsSomethingOneAtATime() throws Exception {
    UncertainAttempts u = new UncertainAttempts(Ticker.system(), Duration.ofSeconds(30), () -> false, "test-undo");
    AtomicInteger inUndo = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    List<AtomicInteger> calls = List.of(new AtomicInteger(), new AtomicInteger(), new AtomicInteger());
    UncertainAttempts.Wait w1 = u.begin();
    UncertainAttempts.Wait w2 = u.begin();
    for (int i = 0; i < calls.size(); i++) {
      AtomicInteger c = calls.get(i);
      // each attempt's grant "commits late": its undo finds it on the third try
      (i == 0 ? w1 : w2).addUndoneOnce(() -> {
        most.accumulateAndGet(inUndo.incrementAndGet(), Math::max);
        undoThreads.add(Thread.currentThread());
        Thread.sleep(5);
        inUndo.decrementAndGet();
        return c.incrementAndGet() >= 3;
      }, System.nanoTime());
    }
    awaitTrue(() -> calls.stream().allMatch(c -> c.get() >= 3), "not undone: " + calls);
    awaitTrue(() -> undoThreads.stream().noneMatch(Thread::isAlive), "the undoing did not end with nothing to do");
    calls.forEach(c -> assertEquals(3, c.get(), "undone again after its undo found it"));
    assertEquals(1, most.get(), "undos ran at once");
  }

  @Test
  void anUndoThatNeverFindsAnythingStopsATermAfterItsAttemptWasSent() throws Exception {
    Duration term = Duration.ofMillis(600);
    UncertainAttempts u = new UncertainAttempts(Ticker.system(), term, () -> false, "test-undo-term");
    AtomicInteger calls = new AtomicInteger();
    List<Thread> threads = new CopyOnWriteArrayList<>();
    long sent = System.nanoTime();
    u.begin().addUndoneOnce(() -> {
      threads.add(Thread.currentThread());
      calls.incrementAndGet();
      return false;
    }, sent);
    awaitTrue(() -> calls.get() >= 4, "not undone again");
    awaitTrue(() -> threads.stream().noneMatch(Thread::isAlive), "the undoing did not end");
    long ended = System.nanoTime();
    assertTrue(ended - sent >= term.toNanos(), "ended before a term had passed since the attempt was sent");
    int after = calls.get();
    Thread.sleep(100);
    assertEquals(after, calls.get(), "undone after the term");
  }

  @Test
  void theWaitsEndIsUndoneAgainOnlyAfterAnUncertainAttemptAndNothingAfterTheServiceCloses() throws Exception {
    AtomicBoolean closed = new AtomicBoolean();
    UncertainAttempts u = new UncertainAttempts(Ticker.system(), Duration.ofSeconds(30), closed::get, "test-undo-end");
    AtomicInteger leaves = new AtomicInteger();
    UncertainAttempts.Wait none = u.begin();
    none.over(leaves::incrementAndGet);
    Thread.sleep(100);
    assertEquals(0, leaves.get(), "a wait without an uncertain attempt left its line again");

    UncertainAttempts.Wait w = u.begin();
    w.addUndoneOnce(() -> true, System.nanoTime());
    w.over(leaves::incrementAndGet);
    awaitTrue(() -> leaves.get() >= 3, "the wait's place was not left again");
    closed.set(true);
    Thread.sleep(1_200); // (the longest back-off: the undoing sees the close by then)
    int after = leaves.get();
    Thread.sleep(1_200);
    assertEquals(after, leaves.get(), "left the line after the service closed");
  }
}
