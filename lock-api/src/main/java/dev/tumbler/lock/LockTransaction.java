package dev.tumbler.lock;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Several hierarchical locks taken together, with distributed deadlock detection. A name is a path
 * ({@code ["db", "orders", "42"]}); locking a path conflicts with locks on its ancestors and on its
 * descendants. Capability {@link Capability#TRANSACTIONS} (and {@link Capability#HIERARCHICAL_NAMES}).
 *
 * <pre>{@code
 * try (LockTransaction tx = service.beginTransaction(TransactionOptions.defaults())) {
 *   tx.lock(LockMode.WRITE, "accounts", "a").lock(LockMode.WRITE, "accounts", "b");
 *   if (tx.await(Duration.ofSeconds(5))) {
 *     transfer(tx.fencingTokens());
 *   }
 * }
 * }</pre>
 *
 * <p>When transactions wait for each other in a cycle, the provider breaks the cycle: the chosen
 * transaction surrenders a lock it holds on the cycle and requeues for it, or, with
 * {@link TransactionOptions#abortOnDeadlock()} and a lock it was already told it holds, aborts. Not
 * thread safe: one transaction is driven by one thread at a time.
 */
public interface LockTransaction extends AutoCloseable {

  /**
   * Asks for a lock on {@code path}; returns at once. Asking again for a held path in {@link LockMode#WRITE}
   * upgrades a read lock when this transaction is its only reader.
   *
   * @throws IllegalArgumentException if the path is empty or has a bad name
   * @throws IllegalStateException if the transaction is closed or aborted
   * @return this transaction, for chaining
   */
  LockTransaction lock(LockMode mode, String... path);

  /** Same as {@link #lock(LockMode, String...)} with the path as a list. */
  LockTransaction lock(LockMode mode, List<String> path);

  /**
   * Waits at most {@code maxWait} until every lock asked for is held.
   *
   * @return true if all are held
   * @throws DeadlockException if the transaction was aborted to break a deadlock
   * @throws InterruptedException if interrupted while waiting
   */
  boolean await(Duration maxWait) throws InterruptedException;

  /** The paths held now, with the fencing token of each. */
  Map<List<String>, Long> fencingTokens();

  /** Adds a listener called once for each held lock that is lost (surrendered, expired, closed). */
  LockTransaction onLost(Consumer<LeaseLostEvent> listener);

  /** Releases every lock of the transaction. Idempotent. */
  @Override
  void close();
}
