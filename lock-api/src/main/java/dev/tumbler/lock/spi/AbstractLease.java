package dev.tumbler.lock.spi;

import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LeaseLostException;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.ServiceUnavailableException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The lease state machine every provider shares: a provider writes only the two backend calls,
 * {@link #doRenew()} and {@link #doRelease()}.
 *
 * <pre>
 *             release()                         expiry by the client's clock, revocation, close
 *   RELEASED &lt;----------- VALID -----------------------------------------------------------&gt; LOST
 * </pre>
 *
 * <ul>
 *   <li>VALID until {@code sent + T × safety} of the last successful acquire or renew (see
 *       {@link LeaseSettings}); never, for {@linkplain LeaseSettings#unbounded unbounded} settings.
 *   <li>Both other states are final. The first transition wins; a renewal that succeeds after the lease
 *       was lost does not revive it.
 *   <li>On the transition to LOST, every listener added by {@link #onLost} runs exactly once, in the
 *       order added, on the thread that made the transition; one that throws is logged and the others
 *       still run. A listener added later runs at once. RELEASED fires no listener.
 *   <li>{@link #release()} calls {@link #doRelease()} once, whatever the state (a lost lease may still
 *       be ours on the backend; the provider's release must only delete what is still ours).
 * </ul>
 *
 * <p>Expiry is noticed by whoever looks first: {@link #isValid()} on any thread, or the service's
 * {@link LeaseRenewer}, which watches every lease's deadline even while a renewal call hangs. Thread safe.
 */
public abstract class AbstractLease implements Lease {
  private static final System.Logger LOG = System.getLogger(AbstractLease.class.getName());
  /** What {@link #remaining()} says of a valid lease that never expires. */
  private static final Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);

  private enum State { VALID, RELEASED, LOST }

  private static final VarHandle RELEASE_CALLED;

  static {
    try {
      RELEASE_CALLED = MethodHandles.lookup().findVarHandle(AbstractLease.class, "releaseCalled", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final String name;
  private final long fencingToken;
  private final int permits;
  private final LeaseSettings settings;
  private final Ticker ticker;
  /** Set once, by the first release (a field and a handle: an AtomicBoolean was 16 bytes of every lease). */
  private volatile boolean releaseCalled;

  // guarded by this
  private State state = State.VALID;
  private LeaseLostEvent lostEvent;
  /** Guarded by this; the shared empty list until the first is added (most leases have none). */
  private List<Consumer<LeaseLostEvent>> listeners = List.of();
  /** The thread running the lost listeners while it does (guarded by this): release() waits for it. */
  private Thread notifying;
  // written under this, read without
  private volatile long validUntil;
  private volatile long lastSent;
  private volatile AbstractLockService service;

  /**
   * @param name the lock name
   * @param fencingToken the grant's fencing token
   * @param permits permits held (1 for locks)
   * @param settings the term and safety factor
   * @param ticker the monotonic clock of the service
   * @param sentNanos the {@code ticker} reading taken just before the acquire request that granted this
   *     lease was sent: the request the backend answered with the grant, not the first of a wait (a lease
   *     stamped with the start of a long wait would be born expired; {@link AbstractLock} and {@link AbstractSemaphore}
   *     gives such a lease back and tries again)
   */
  protected AbstractLease(String name, long fencingToken, int permits, LeaseSettings settings, Ticker ticker,
      long sentNanos) {
    this.name = Objects.requireNonNull(name, "name");
    this.fencingToken = fencingToken;
    this.permits = permits;
    this.settings = Objects.requireNonNull(settings, "settings");
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.lastSent = sentNanos;
    this.validUntil = settings.expires() ? sentNanos + settings.trustedNanos() : Long.MAX_VALUE;
  }

  /**
   * Renews the lease on the backend for a full term.
   *
   * @return true if the backend renewed it; false if the backend says it is no longer ours
   * @throws RuntimeException if the backend cannot be reached; the lease stays valid until its deadline
   */
  protected abstract boolean doRenew();

  /**
   * Gives the lease back on the backend, deleting only what is still ours. Called once. An exception is
   * logged: the lease then ends on the backend by expiry.
   */
  protected abstract void doRelease();

  @Override
  public final String name() {
    return name;
  }

  @Override
  public final long fencingToken() {
    return fencingToken;
  }

  @Override
  public final int permits() {
    return permits;
  }

  /** The settings this lease was granted with. */
  public final LeaseSettings settings() {
    return settings;
  }

  @Override
  public final boolean isValid() {
    State s;
    synchronized (this) {
      s = state;
    }
    if (s != State.VALID) {
      return false;
    }
    if (settings.expires() && ticker.read() - validUntil >= 0) {
      expire();
      return false;
    }
    return true;
  }

  /** Whether {@link #release()} was called. */
  public final boolean isReleased() {
    return releaseCalled;
  }

  /** Whether the lease was lost (expired, revoked or closed), as opposed to released or valid. */
  public final synchronized boolean isLost() {
    return state == State.LOST;
  }

  /** The event of the loss, once lost. */
  public final synchronized Optional<LeaseLostEvent> lostEvent() {
    return Optional.ofNullable(lostEvent);
  }

  @Override
  public final Duration remaining() {
    if (!isValid()) {
      return Duration.ZERO;
    }
    if (!settings.expires()) {
      return FOREVER;
    }
    return Duration.ofNanos(Math.max(0, validUntil - ticker.read()));
  }

  /** The ticker reading at which the client stops trusting this lease; {@link Long#MAX_VALUE} if never. */
  public final long validUntilNanos() {
    return validUntil;
  }

  /** The ticker reading when the last successful acquire or renew request was sent. */
  public final long lastSentNanos() {
    return lastSent;
  }

  @Override
  public final void renew() {
    if (!isValid()) {
      throw lostException("cannot renew");
    }
    if (!settings.expires()) {
      return;
    }
    long sent = ticker.read();
    boolean ours;
    try {
      ours = doRenew();
    } catch (LockException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new ServiceUnavailableException("cannot renew the lease on '" + name + "': " + e.getMessage(), e);
    }
    if (!ours) {
      markLost(LeaseLostEvent.Reason.REVOKED, "the backend no longer holds this lease for us", null);
      throw lostException("cannot renew");
    }
    if (!extend(sent)) {
      throw lostException("renewed too late");
    }
  }

  /**
   * Extends validity to {@code sentNanos + T × safety} after a successful renewal whose request was sent
   * at {@code sentNanos}. Has no effect on a lease that is no longer valid, or whose deadline already
   * passed (a late success cannot revive it).
   *
   * @return whether the lease is still valid
   */
  protected final boolean extend(long sentNanos) {
    if (!settings.expires()) {
      return isValid();
    }
    synchronized (this) {
      if (state != State.VALID) {
        return false;
      }
      if (ticker.read() - validUntil >= 0) {
        // fall through to expire() outside the lock
      } else {
        long until = sentNanos + settings.trustedNanos();
        if (until - validUntil > 0) {
          validUntil = until;
          lastSent = sentNanos;
        }
        return true;
      }
    }
    expire();
    return false;
  }

  @Override
  public final Lease onLost(Consumer<LeaseLostEvent> listener) {
    Objects.requireNonNull(listener, "listener");
    LeaseLostEvent event;
    synchronized (this) {
      if (lostEvent == null) {
        if (state == State.VALID) { // released: a listener is never called, so none is kept
          if (listeners.isEmpty()) {
            listeners = new ArrayList<>(2);
          }
          listeners.add(listener);
        }
        return this;
      }
      event = lostEvent;
    }
    runListener(listener, event);
    return this;
  }

  /**
   * {@inheritDoc}
   *
   * <p>A release from another thread while the lost listeners run waits for them to finish: giving the
   * lease back earlier would let another holder exist before every listener has heard of the loss. (So a
   * listener must not wait for a thread that releases the same lease.)
   */
  @Override
  public final void release() {
    if (!RELEASE_CALLED.compareAndSet(this, false, true)) {
      return;
    }
    boolean interrupted = false;
    synchronized (this) {
      if (state == State.VALID) {
        state = State.RELEASED;
        listeners = List.of();
      }
      while (notifying != null && notifying != Thread.currentThread()) {
        try {
          wait();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    try {
      doRelease();
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "release of '" + name + "' failed; it ends on the backend by expiry: " + e, e);
    } finally {
      AbstractLockService s = service;
      if (s != null) {
        s.forget(this);
      }
    }
  }

  @Override
  public final void close() {
    release();
  }

  /**
   * Marks the lease lost and runs the listeners, if it is still valid.
   *
   * @return true if this call made the transition
   */
  public final boolean markLost(LeaseLostEvent.Reason reason, String detail, Throwable cause) {
    List<Consumer<LeaseLostEvent>> toRun;
    LeaseLostEvent event;
    synchronized (this) {
      if (state != State.VALID) {
        return false;
      }
      state = State.LOST;
      event = new LeaseLostEvent(name, fencingToken, reason, detail, Optional.ofNullable(cause));
      lostEvent = event;
      toRun = listeners;
      listeners = List.of();
      notifying = Thread.currentThread();
    }
    try {
      for (Consumer<LeaseLostEvent> l : toRun) {
        runListener(l, event);
      }
    } finally {
      synchronized (this) {
        notifying = null;
        notifyAll();
      }
    }
    AbstractLockService s = service;
    if (s != null) {
      s.leaseLost(this);
    }
    return true;
  }

  /** Marks the lease lost because its deadline passed without a successful renewal. */
  final boolean expire() {
    return markLost(LeaseLostEvent.Reason.EXPIRED, "no renewal succeeded within "
        + Duration.ofNanos(settings.trustedNanos()).toMillis() + "ms of the last request sent", null);
  }

  /** An exception describing why this lease cannot be used. */
  public final LeaseLostException lostException(String action) {
    LeaseLostEvent e = lostEvent().orElse(null);
    if (e != null) {
      return new LeaseLostException(action + ": " + e.toException().getMessage(), e.cause().orElse(null));
    }
    return new LeaseLostException(action + ": lease on '" + name + "' (fencing token " + fencingToken
        + ") is " + (releaseCalled ? "released" : "no longer valid"));
  }

  final void attach(AbstractLockService s) {
    this.service = s;
  }

  private void runListener(Consumer<LeaseLostEvent> l, LeaseLostEvent event) {
    try {
      l.accept(event);
    } catch (RuntimeException | Error e) {
      if (e instanceof VirtualMachineError) {
        throw e;
      }
      LOG.log(System.Logger.Level.WARNING, "a lost listener of '" + name + "' threw; the others still run", e);
    }
  }

  @Override
  public String toString() {
    String s;
    synchronized (this) {
      s = state.name();
    }
    return getClass().getSimpleName() + "[name=" + name + ", token=" + fencingToken + ", permits=" + permits
        + ", state=" + s + "]";
  }
}
