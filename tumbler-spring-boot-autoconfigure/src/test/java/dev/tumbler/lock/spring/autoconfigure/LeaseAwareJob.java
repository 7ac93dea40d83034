package dev.tumbler.lock.spring.autoconfigure;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.spring.Locked;
import dev.tumbler.lock.spring.LockedRun;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/** Locked methods that return values, hold the lock past their run, and hear of a lease lost while they run. */
public class LeaseAwareJob {
  // the bean is a class proxy whose own fields are unset: tests reach these through the methods below
  private final AtomicReference<String> seen = new AtomicReference<>();
  private final CountDownLatch started = new CountDownLatch(1);

  /** What the last {@link #untilInterrupted} or {@link #untilInvalid} run saw. */
  public String seen() {
    return seen.get();
  }

  /** Opens when {@link #untilInterrupted} or {@link #untilInvalid} has started. */
  public boolean awaitStarted(long seconds) throws InterruptedException {
    return started.await(seconds, TimeUnit.SECONDS);
  }

  @Locked(name = "${job.lock:locked-job}")
  public Optional<Long> token() {
    return Optional.of(LockedRun.lease().orElseThrow().fencingToken());
  }

  @Locked(name = "${job.lock:locked-job}")
  public String name() {
    return LockedRun.lease().orElseThrow().name();
  }

  @Locked(name = "${job.lock:locked-job}", holdAtLeast = "800ms")
  public void brief() {
  }

  @Locked(name = "${job.lock:locked-job}", interruptOnLost = true)
  public void untilInterrupted() {
    started.countDown();
    try {
      new CountDownLatch(1).await(60, TimeUnit.SECONDS);
      seen.set("not interrupted in 60 s");
    } catch (InterruptedException e) {
      Lease lease = LockedRun.lease().orElseThrow();
      seen.set("interrupted, lease valid: " + lease.isValid());
    }
  }

  @Locked(name = "${job.lock:locked-job}")
  public void untilInvalid() throws InterruptedException {
    started.countDown();
    Lease lease = LockedRun.lease().orElseThrow();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (lease.isValid() && System.nanoTime() < end) {
      Thread.sleep(10);
    }
    seen.set(lease.isValid() ? "still valid after 60 s" : "invalid");
  }
}
