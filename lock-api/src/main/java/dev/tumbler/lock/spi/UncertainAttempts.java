package dev.tumbler.lock.spi;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The attempts of one acquire whose outcome is unknown, and their undoing. An attempt is uncertain when its request
 * was sent and no answer came (a read that timed out, a connection lost): the server may have granted it, and it may
 * still grant it after the caller gave up, since a server can run a request late (one slow to arrive, a process slow
 * to be scheduled). An undo sent at once can then run first and find nothing, and the late grant is a lease nobody
 * has, holding the name for its whole term; a late refusal can leave a place in line that nobody keeps.
 *
 * <p>So every uncertain attempt is undone again and again, in the background, until its undo finds something to
 * undo or a lease term has passed since it was sent; and once the wait is over ({@link #waitOver}), what a late
 * attempt can leave behind of the wait (its place in line) is undone the same way. One task per acquire, started by
 * its first uncertain attempt: its first round runs at once, then rounds back off from 20 ms to a second. It ends
 * when nothing is left to undo, a term after the last uncertain attempt was sent, or when the service closes. A
 * request that reaches its server more than a term after it was sent is not covered. Thread safe.
 *
 * @param <T> what an undo needs to know of one attempt (the owner or holder id it asked with)
 */
public final class UncertainAttempts<T> {

  /** Undoes what one attempt may have done. */
  @FunctionalInterface
  public interface Undo<T> {
    /**
     * @return true when it undid something (the attempt ran, and can do nothing more), false when it found nothing
     *     (the attempt may not have run yet)
     * @throws Exception if the undo could not be done now (it is tried again in the next round)
     */
    boolean undo(T attempt) throws Exception;
  }

  private static final long FIRST_BACKOFF_MILLIS = 20;
  private static final long LAST_BACKOFF_MILLIS = 1_000;

  private final Ticker ticker;
  private final long termNanos;
  private final BooleanSupplier closed;
  private final Consumer<Runnable> background;
  private final Undo<T> undo;
  private final List<T> pending = new ArrayList<>(0); // guarded by this
  private boolean any; // guarded by this
  private long lastSent; // guarded by this
  private Runnable leaveAgain; // guarded by this
  private boolean running; // guarded by this

  /**
   * @param term how long an uncertain attempt is undone again: the lease term a late grant would have
   * @param closed whether the service has closed (the task then ends; what is left expires with its term)
   * @param background runs the task (a virtual thread, counted among the service's calls in flight)
   */
  public UncertainAttempts(Ticker ticker, Duration term, BooleanSupplier closed, Consumer<Runnable> background,
      Undo<T> undo) {
    this.ticker = ticker;
    this.termNanos = term.toNanos();
    this.closed = closed;
    this.background = background;
    this.undo = undo;
  }

  /** Records an attempt whose outcome is unknown, sent at {@code sentNanos} ({@link Ticker} time), and undoes it. */
  public synchronized void add(T attempt, long sentNanos) {
    pending.add(attempt);
    lastSent = any ? Math.max(lastSent, sentNanos) : sentNanos;
    any = true;
    start();
  }

  /** Whether an attempt of this acquire had an unknown outcome. */
  public synchronized boolean any() {
    return any;
  }

  /**
   * The wait is over: from now on each round also runs {@code leave} (what undoes the wait's place in line), until a
   * term after the last uncertain attempt was sent. Nothing when no attempt was uncertain.
   */
  public synchronized void waitOver(Runnable leave) {
    if (any) {
      leaveAgain = leave;
      start();
    }
  }

  private void start() {
    if (!running) {
      running = true;
      background.accept(this::run);
    }
  }

  private void run() {
    long backoff = FIRST_BACKOFF_MILLIS;
    while (true) {
      List<T> round;
      Runnable leave;
      long left;
      synchronized (this) {
        left = termNanos - (ticker.read() - lastSent);
        if (left <= 0 || closed.getAsBoolean() || pending.isEmpty() && leaveAgain == null) {
          running = false;
          return;
        }
        round = List.copyOf(pending);
        leave = leaveAgain;
      }
      for (T a : round) {
        boolean done;
        try {
          done = undo.undo(a);
        } catch (Exception e) {
          done = false; // tried again next round
        }
        if (done) {
          synchronized (this) {
            pending.remove(a);
          }
        }
      }
      if (leave != null) {
        try {
          leave.run();
        } catch (RuntimeException e) {
          // tried again next round
        }
      }
      LockSupport.parkNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(backoff)));
      backoff = Math.min(LAST_BACKOFF_MILLIS, backoff * 2);
    }
  }
}
