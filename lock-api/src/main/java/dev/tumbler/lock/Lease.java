package dev.tumbler.lock;

import java.time.Duration;
import java.util.function.Consumer;

/**
 * A held lock, read lock, write lock, block of semaphore permits or leadership term.
 *
 * <h2>Term, renewal and the client's safe view</h2>
 * A grant opens a lease of term {@code T} (the service's {@code leaseTime}, default 30 s). Unless the
 * service was opened with {@code renew=manual}, the client renews the lease in the background every
 * {@code T/3} for as long as it is held; no application thread is involved. The client considers the
 * lease valid only until {@code sent + T × safety} (safety &lt; 1, default 3/4), measured on the
 * monotonic clock from the moment the acquire or renew request that last succeeded was <em>sent</em>.
 * If no renewal succeeds by then, {@link #isValid()} turns false and the {@link #onLost} listeners run
 * — before the backend can grant the lock to anyone else, as long as the client's and the backend's
 * clock rates differ by less than {@code 1/safety - 1} (33% at the default).
 *
 * <h2>Fencing</h2>
 * {@link #fencingToken()} of every grant of a name is larger than that of every earlier grant of that
 * name (when the provider declares {@link Capability#FENCING}). Pass it to the resource you protect and
 * have it reject tokens lower than the highest it has seen: that keeps the resource safe even from a
 * holder that was paused (GC, swap) past the end of its lease and wakes up believing it still holds it.
 * A lease alone cannot give that guarantee; no lock service can.
 *
 * <h2>Ownership and thread safety</h2>
 * A lease belongs to this object, not to a thread: any thread, virtual or not, may renew or release it.
 * All methods are thread safe. {@link Lock#asJavaLock()} gives thread-owned, reentrant semantics on top.
 *
 * <h2>Release</h2>
 * {@link #release()} and {@link #close()} are idempotent: the first call gives the lease back to the
 * backend (best effort: when the backend cannot be reached, the lease ends there by expiry), later calls
 * do nothing. Releasing does not fire the lost listeners. Closing the {@link LockService} releases every
 * lease taken through it and <em>does</em> fire their listeners, with {@link LeaseLostEvent.Reason#SERVICE_CLOSED}.
 */
public interface Lease extends AutoCloseable {

  /** The name of the lock, semaphore or election this lease is on. */
  String name();

  /**
   * The fencing token of this grant: strictly larger than the token of every earlier grant of this name
   * when the provider declares {@link Capability#FENCING}. Constant for the life of the lease (renewals
   * keep it).
   */
  long fencingToken();

  /** How many permits this lease holds: 1 for a lock, the number asked for a semaphore. */
  default int permits() {
    return 1;
  }

  /**
   * Whether the client may still act as the holder: false once released, expired by the client's own
   * clock, or lost. Once false it never turns true again. Cheap: reads local state and the monotonic
   * clock; never calls the backend.
   */
  boolean isValid();

  /**
   * Time left of the current term by the client's safe view (see the class comment), measured on the
   * client's monotonic clock; {@link Duration#ZERO} once the lease is not valid. For providers without
   * {@link Capability#LEASE_EXPIRY}, whose grants hold until released, a valid lease has an effectively
   * infinite remaining time ({@code Duration.ofSeconds(Long.MAX_VALUE, 999_999_999)}).
   */
  Duration remaining();

  /**
   * Renews the lease now, for another full term counted from the moment this request is sent. Needed only
   * with {@code renew=manual}; harmless otherwise. Blocks for one round trip to the backend.
   *
   * @throws LeaseLostException if the lease is no longer valid, or the backend says it is not ours
   * @throws ServiceUnavailableException if the backend cannot be reached (the lease stays valid until its
   *     current term ends)
   */
  void renew();

  /**
   * Adds a listener that is called once when this lease is lost: it expired, was revoked, or its service
   * was closed. Not called when the holder releases the lease. If the lease is already lost, the
   * listener is called at once on the calling thread. Listeners are called in the order added, on the
   * thread that detected the loss, at the latest when another holder may exist; a listener that throws is
   * logged and does not stop the others. Listeners should be quick: hand long work to another thread.
   *
   * @return this lease, for chaining
   */
  Lease onLost(Consumer<LeaseLostEvent> listener);

  /**
   * Gives the lease back. Idempotent; never throws for a lease that was already lost or released. Called
   * while the lost listeners run on another thread, it gives the lease back only after they have run.
   */
  void release();

  /** Same as {@link #release()}. */
  @Override
  void close();
}
