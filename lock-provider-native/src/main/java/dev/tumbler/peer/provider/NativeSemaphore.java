package dev.tumbler.peer.provider;

import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.AbstractSemaphore;
import dev.tumbler.lock.spi.Deadline;
import dev.tumbler.peer.core.Claim;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A semaphore handle on a native node: its permits are counted by the cluster's semaphore server ({@code buckets},
 * NATIVE-ALGORITHMS §6), elected among the nodes, whatever the service's lock algorithm. A wait ends as a lock's
 * does ({@link NativeAcquire}); a handle whose {@code maxPermits} disagrees with how the name is held now (with no
 * {@code bucketSize}, handles of a name must agree; with one, {@code maxPermits} must be a multiple of it) gets an
 * {@link IllegalStateException} naming both.
 *
 * <p>{@link #availablePermits()} asks the node, which asks the server (the node answers at once from the server's
 * last word on the name, less what it released since, when it cannot reach one); it waits at most a second, or
 * {@code peerTimeout} if shorter, and then gives this handle's last answer. Thread safe.
 */
final class NativeSemaphore extends AbstractSemaphore {

  /** The longest {@link #availablePermits()} waits for the server. */
  private static final long ANSWER_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final NativeLockService service;
  private final String qualified;
  /** The last answer this handle got; all of them before the first. */
  private volatile int lastAnswer;

  NativeSemaphore(NativeLockService service, String name, int maxPermits) {
    super(service, name, maxPermits);
    this.service = service;
    this.qualified = service.nativeSettings().qualify(name);
    this.lastAnswer = maxPermits;
  }

  @Override
  protected AbstractLease doAcquire(int permits, Deadline deadline) throws InterruptedException {
    return new NativeAcquire(service, "semaphore", name(), Claim.permits(qualified, permits, maxPermits()),
        service.semaphoreSettings()).acquire(deadline);
  }

  @Override
  public int availablePermits() {
    service.checkOpen();
    long wait = Math.min(ANSWER_WAIT_NANOS, service.nativeSettings().peerTimeout().toNanos());
    CompletableFuture<Integer> answer = service.node().permits(qualified, maxPermits());
    try {
      int available = answer.get(wait, TimeUnit.NANOSECONDS);
      lastAnswer = available;
      return available;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return lastAnswer;
    } catch (ExecutionException | TimeoutException e) {
      return lastAnswer;
    } finally {
      answer.cancel(false);
    }
  }
}
