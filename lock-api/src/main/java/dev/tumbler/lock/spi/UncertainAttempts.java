package dev.tumbler.lock.spi;

import java.time.Duration;
import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The attempts of a service's acquires whose outcome is unknown, and their undoing. An attempt is uncertain when its
 * request was sent and no answer came (a read that timed out, a connection lost): the server may have granted it, and
 * it may still grant it after the caller gave up, since a server can run a request late (one slow to arrive, a
 * process slow to be scheduled). An undo sent at once can then run first and find nothing, and the late grant is a
 * lease nobody has, holding the name for its whole term; a late refusal can leave a place in line that nobody keeps.
 *
 * <p>So every uncertain attempt is undone again and again until its undo finds something to undo or a lease term
 * has passed since it was sent; and once its wait is over ({@link Wait#over}), what a late attempt can leave behind
 * of the wait (its place in line) is undone the same way. Each undo backs off from 20 ms to a second between
 * tries. One virtual thread per service does them all, one at a time, started when there is something to undo and
 * gone when there is nothing: the undoing adds at most one call at a time to what the service's callers make (an
 * application's connection pool is not drained by it). It stops when the service closes; what is left expires with
 * its term. A request that reaches its server more than a term after it was sent is not covered. Thread safe.
 */
public final class UncertainAttempts {

  /** Undoes what one attempt may have done. */
  @FunctionalInterface
  public interface Undo {
    /**
     * @return true when it undid something (the attempt ran, and can do nothing more), false when it found nothing
     *     (the attempt may not have run yet)
     * @throws Exception if the undo could not be done now (it is tried again later)
     */
    boolean undo() throws Exception;
  }

  private static final long FIRST_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
  private static final long LAST_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final Ticker ticker;
  private final long termNanos;
  private final BooleanSupplier closed;
  private final String threadName;
  private final PriorityQueue<Item> due = new PriorityQueue<>((a, b) -> Long.compare(a.at, b.at)); // guarded by this
  private boolean running; // guarded by this

  /**
   * @param term how long an uncertain attempt is undone again: the lease term a late grant would have
   * @param closed whether the service has closed (the undoing then ends)
   * @param threadName the name of the thread that undoes
   */
  public UncertainAttempts(Ticker ticker, Duration term, BooleanSupplier closed, String threadName) {
    this.ticker = ticker;
    this.termNanos = term.toNanos();
    this.closed = closed;
    this.threadName = threadName;
  }

  /** The uncertain attempts of one acquire (made for each; costs nothing until one is added). */
  public Wait begin() {
    return new Wait();
  }

  /** One acquire's uncertain attempts. Thread safe. */
  public final class Wait {
    private boolean any; // guarded by this
    private long lastSent; // guarded by this

    private Wait() {}

    /**
     * An attempt sent at {@code sentNanos} ({@link Ticker} time) had no answer, and its caller has just undone it
     * once, finding nothing: {@code undo} it again and again, the first time after the first back-off.
     */
    public void addUndoneOnce(Undo undo, long sentNanos) {
      note(sentNanos);
      schedule(new Item(undo, sentNanos, ticker.read() + FIRST_BACKOFF_NANOS, 2 * FIRST_BACKOFF_NANOS));
    }

    /**
     * Notes an attempt sent at {@code sentNanos} that had no answer, whose caller undoes it once itself (and hands it
     * to {@link #addUndoneOnce} if that found nothing): from now on the wait's end is undone again ({@link #over}).
     */
    public void noted(long sentNanos) {
      note(sentNanos);
    }

    /**
     * The wait is over: {@code leave} (what undoes the wait's place in line) is run now and again until a term after
     * its last uncertain attempt was sent. Nothing when no attempt was uncertain.
     */
    public void over(Runnable leave) {
      long sent;
      synchronized (this) {
        if (!any) {
          return;
        }
        sent = lastSent;
      }
      schedule(new Item(() -> {
        leave.run();
        return false;
      }, sent, ticker.read(), FIRST_BACKOFF_NANOS));
    }

    private synchronized void note(long sentNanos) {
      lastSent = any ? Math.max(lastSent, sentNanos) : sentNanos;
      any = true;
    }
  }

  private static final class Item {
    final Undo undo;
    final long sent;
    long at;
    long backoff;

    Item(Undo undo, long sent, long at, long backoff) {
      this.undo = undo;
      this.sent = sent;
      this.at = at;
      this.backoff = backoff;
    }
  }

  private synchronized void schedule(Item item) {
    due.add(item);
    if (!running) {
      running = true;
      Thread.ofVirtual().name(threadName).start(this::run);
    } else {
      notifyAll();
    }
  }

  private void run() {
    while (true) {
      Item item;
      synchronized (this) {
        while (true) {
          if (closed.getAsBoolean() || due.isEmpty()) {
            due.clear();
            running = false;
            return;
          }
          long wait = due.peek().at - ticker.read();
          if (wait <= 0) {
            item = due.poll();
            break;
          }
          try {
            TimeUnit.NANOSECONDS.timedWait(this, wait);
          } catch (InterruptedException e) {
            due.clear();
            running = false;
            return;
          }
        }
      }
      if (ticker.read() - item.sent >= termNanos) {
        continue; // a late copy of the attempt can do nothing more: its grant would have expired
      }
      boolean done;
      try {
        done = item.undo.undo();
      } catch (Exception | Error e) {
        done = false; // (tried again later; an Error must not leave the queue without its thread)
      }
      if (!done) {
        item.at = ticker.read() + item.backoff;
        item.backoff = Math.min(LAST_BACKOFF_NANOS, item.backoff * 2);
        synchronized (this) {
          due.add(item);
        }
      }
    }
  }
}
