package dev.tumbler.lock.spi;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockTimeoutException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * {@link Lock#acquireAsync} over the blocking {@link Lock#tryAcquire}: the wait runs on its own virtual
 * thread. The future completes with the lease, or with {@link LockTimeoutException} (naming the lock,
 * the provider and the time waited) when the wait ends, or with whatever the wait threw. Cancelling the
 * future interrupts the wait; a lease granted anyway is released at once, so cancellation never leaks a
 * lock.
 */
public final class AsyncAcquire {
  private AsyncAcquire() {}

  /** Starts {@code lock.tryAcquire(maxWait)} on a virtual thread. */
  public static CompletableFuture<Lease> start(Lock lock, Duration maxWait, String provider) {
    Checks.maxWait(maxWait);
    Pending pending = new Pending();
    Thread worker = Thread.ofVirtual().name("tumbler-acquire-" + lock.name()).unstarted(() -> {
      long start = System.nanoTime();
      try {
        Optional<Lease> lease = lock.tryAcquire(maxWait);
        if (lease.isPresent()) {
          if (!pending.complete(lease.get())) {
            lease.get().release();
          }
        } else {
          pending.completeExceptionally(timeout(lock.name(), provider, Duration.ofNanos(System.nanoTime() - start)));
        }
      } catch (InterruptedException e) {
        pending.completeExceptionally(e);
      } catch (Throwable e) {
        pending.completeExceptionally(e);
      }
    });
    pending.worker = worker;
    worker.start();
    return pending;
  }

  /** The exception for a wait that ended: which lock, which provider, how long. */
  private static LockTimeoutException timeout(String name, String provider, Duration waited) {
    return new LockTimeoutException("lock '" + name + "' on " + provider + " was not granted within "
        + waited.toMillis() + "ms");
  }

  private static final class Pending extends CompletableFuture<Lease> {
    volatile Thread worker;

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean cancelled = super.cancel(mayInterruptIfRunning);
      Thread w = worker;
      if (cancelled && w != null) {
        w.interrupt();
      }
      return cancelled;
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
      return new CompletableFuture<>();
    }
  }
}
