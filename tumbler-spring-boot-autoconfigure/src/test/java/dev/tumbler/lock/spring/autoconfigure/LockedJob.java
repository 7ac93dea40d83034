package dev.tumbler.lock.spring.autoconfigure;

import dev.tumbler.lock.spring.Locked;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A job with a skipping and a waiting locked method, each counting its runs; {@link #park} makes the next
 * skipping run wait. The bean is a class proxy whose own fields are unset: tests go through the methods.
 */
public class LockedJob {
  private final AtomicInteger skipRuns = new AtomicInteger();
  private final AtomicInteger waitRuns = new AtomicInteger();
  private volatile CountDownLatch entered = new CountDownLatch(0);
  private volatile CountDownLatch hold = new CountDownLatch(0);

  public int skipRuns() {
    return skipRuns.get();
  }

  public int waitRuns() {
    return waitRuns.get();
  }

  /** The next skipping run waits for {@code hold}; the returned latch opens when it has started. */
  public CountDownLatch park(CountDownLatch hold) {
    this.hold = hold;
    this.entered = new CountDownLatch(1);
    return entered;
  }

  @Locked(name = "${job.lock:locked-job}")
  public void skipping() throws InterruptedException {
    skipRuns.incrementAndGet();
    entered.countDown();
    hold.await(10, TimeUnit.SECONDS);
  }

  @Locked(name = "${job.lock:locked-job}", mode = Locked.Mode.WAIT, maxWait = "200ms")
  public void waiting() {
    waitRuns.incrementAndGet();
  }
}
