package dev.tumbler.lock.spring;

import dev.tumbler.lock.Lease;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * The lease of the {@link Locked} method running on this thread: its fencing token, whether it is still valid,
 * and its {@code onLost} listeners, without injecting the {@link dev.tumbler.lock.LockService}.
 *
 * <pre>{@code
 * @Scheduled(fixedDelay = 60_000)
 * @Locked(name = "ledger-export")
 * void export() {
 *   long token = LockedRun.lease().orElseThrow().fencingToken();   // pass it to what the job writes
 *   for (Batch b : batches()) {
 *     if (!LockedRun.lease().orElseThrow().isValid()) return;      // lost: another instance may run now
 *     write(b, token);
 *   }
 * }
 * }</pre>
 */
public final class LockedRun {
  /** The leases of the locked runs on this thread, the innermost first. */
  private static final ThreadLocal<Deque<Lease>> RUNS = new ThreadLocal<>();

  private LockedRun() {}

  /** The lease of the innermost {@link Locked} method running on this thread, or empty outside one. */
  public static Optional<Lease> lease() {
    Deque<Lease> runs = RUNS.get();
    return runs == null ? Optional.empty() : Optional.ofNullable(runs.peekFirst());
  }

  static void enter(Lease lease) {
    Deque<Lease> runs = RUNS.get();
    if (runs == null) {
      runs = new ArrayDeque<>(2);
      RUNS.set(runs);
    }
    runs.addFirst(lease);
  }

  static void leave(Lease lease) {
    Deque<Lease> runs = RUNS.get();
    if (runs != null) {
      runs.removeFirstOccurrence(lease);
      if (runs.isEmpty()) {
        RUNS.remove();
      }
    }
  }
}
