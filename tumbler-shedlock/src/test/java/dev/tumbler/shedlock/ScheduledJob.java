package dev.tumbler.shedlock;

import dev.tumbler.lock.Lease;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * A job as an application writes it: {@code @Scheduled} every 20 ms on every instance, {@code @SchedulerLock} so
 * that one instance at a time runs it, at most every {@link #AT_LEAST_MS}. Each run records when it ran, on which
 * instance and with which fencing token.
 */
public class ScheduledJob {
  static final long AT_LEAST_MS = 300;
  static final long RUN_MS = 40;

  /** One run. */
  record Run(String instance, long start, long end, long token, boolean validAtEnd) {}

  static final Queue<Run> RUNS = new ConcurrentLinkedQueue<>();

  private final String instance;

  public ScheduledJob(String instance) {
    this.instance = instance;
  }

  @Scheduled(fixedDelay = 20)
  @SchedulerLock(name = "report", lockAtMostFor = "PT30S", lockAtLeastFor = "PT0.3S")
  public void report() throws InterruptedException {
    long start = System.nanoTime();
    LockAssert.assertLocked();
    Lease lease = TumblerLockProvider.currentLease().orElseThrow(() -> new AssertionError("no lease in the run"));
    Thread.sleep(RUN_MS);
    RUNS.add(new Run(instance, start, System.nanoTime(), lease.fencingToken(), lease.isValid()));
  }
}
