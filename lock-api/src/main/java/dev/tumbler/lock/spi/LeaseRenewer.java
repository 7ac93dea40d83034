package dev.tumbler.lock.spi;

import dev.tumbler.lock.LeaseLostEvent;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * Renews leases in the background and enforces their deadlines: one virtual thread per lease.
 *
 * <p>For each lease with a term {@code T} and {@code renew=auto}, the renewer sends a renewal
 * {@code T/3} after the last successful request; after a failed one it retries every {@code T/12}
 * (so several attempts fit in the trusted window). Each attempt runs in its own virtual thread, and the
 * watching thread waits for it only until the lease's deadline: a renewal call that hangs cannot delay
 * the loss. When the deadline passes with no success, the lease is marked lost
 * ({@link LeaseLostEvent.Reason#EXPIRED}) on the watching thread, which runs the lost listeners. A
 * renewal the backend refuses marks it lost at once ({@link LeaseLostEvent.Reason#REVOKED}).
 *
 * <p>With {@code renew=manual} only the deadline is watched.
 *
 * <p>{@link #pause()} stops sending renewals (deadlines are still watched), as a long pause of the
 * client would; used by fault injection in tests. Thread safe.
 */
public final class LeaseRenewer implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(LeaseRenewer.class.getName());

  private final Ticker ticker;
  private final String threadPrefix;
  private final Map<AbstractLease, Thread> watchers = new ConcurrentHashMap<>();
  private volatile boolean paused;
  private volatile boolean closed;

  /**
   * @param ticker the clock the leases use
   * @param threadPrefix names the threads, for thread dumps ({@code "tumbler-redis-renew"})
   */
  public LeaseRenewer(Ticker ticker, String threadPrefix) {
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.threadPrefix = Objects.requireNonNull(threadPrefix, "threadPrefix");
  }

  /** Starts watching (and, with {@code renew=auto}, renewing) {@code lease} until it ends. */
  public void watch(AbstractLease lease) {
    if (closed || !lease.settings().expires()) {
      return;
    }
    Thread t = Thread.ofVirtual().name(threadPrefix + "-" + lease.name()).unstarted(() -> run(lease));
    if (watchers.putIfAbsent(lease, t) == null) {
      t.start();
    }
  }

  /** Stops watching {@code lease} (it was released). */
  public void unwatch(AbstractLease lease) {
    Thread t = watchers.remove(lease);
    if (t != null && t != Thread.currentThread()) {
      LockSupport.unpark(t);
    }
  }

  /** Stops sending renewals; deadlines are still enforced. */
  public void pause() {
    paused = true;
  }

  /** Sends renewals again. */
  public void resume() {
    paused = false;
    for (Thread t : watchers.values()) {
      LockSupport.unpark(t);
    }
  }

  /** Whether renewals are paused. */
  public boolean isPaused() {
    return paused;
  }

  /** How many leases are watched. */
  public int watched() {
    return watchers.size();
  }

  /** Stops every watcher; leases are not marked lost by this (the service does that). */
  @Override
  public void close() {
    closed = true;
    for (Thread t : watchers.values()) {
      LockSupport.unpark(t);
    }
    watchers.clear();
  }

  private boolean active(AbstractLease lease) {
    return !closed && watchers.containsKey(lease) && lease.isValid();
  }

  private void run(AbstractLease lease) {
    LeaseSettings settings = lease.settings();
    long interval = settings.renewIntervalNanos();
    long retry = Math.max(1, interval / 4);
    long nextRenew = lease.lastSentNanos() + interval;
    try {
      while (active(lease)) {
        long now = ticker.read();
        long deadline = lease.validUntilNanos();
        boolean auto = settings.renew() == LeaseSettings.Renew.AUTO && !paused;
        long wakeAt = auto ? Math.min(nextRenew, deadline) : deadline;
        if (wakeAt - now > 0) {
          LockSupport.parkNanos(this, wakeAt - now);
          continue;
        }
        if (deadline - ticker.read() <= 0) {
          lease.expire();
          return;
        }
        // time to renew
        long sent = ticker.read();
        Outcome outcome = attempt(lease, deadline - sent);
        switch (outcome) {
          case RENEWED -> {
            lease.extend(sent);
            nextRenew = sent + interval;
          }
          case NOT_OURS -> {
            lease.markLost(LeaseLostEvent.Reason.REVOKED, "the backend refused the renewal: the lease is no longer ours", null);
            return;
          }
          case FAILED -> nextRenew = ticker.read() + retry;
          case TIMED_OUT -> {
            lease.expire();
            return;
          }
        }
      }
    } finally {
      watchers.remove(lease, Thread.currentThread());
    }
  }

  private enum Outcome { RENEWED, NOT_OURS, FAILED, TIMED_OUT }

  private Outcome attempt(AbstractLease lease, long waitNanos) {
    CompletableFuture<Boolean> f = new CompletableFuture<>();
    Thread.ofVirtual().name(threadPrefix + "-call-" + lease.name()).start(() -> {
      try {
        f.complete(lease.doRenew());
      } catch (Throwable e) {
        f.completeExceptionally(e);
      }
    });
    try {
      return f.get(Math.max(1, waitNanos), TimeUnit.NANOSECONDS) ? Outcome.RENEWED : Outcome.NOT_OURS;
    } catch (TimeoutException e) {
      return Outcome.TIMED_OUT;
    } catch (ExecutionException e) {
      LOG.log(System.Logger.Level.DEBUG, "renewal of '" + lease.name() + "' failed; retrying: " + e.getCause());
      return Outcome.FAILED;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Outcome.FAILED;
    }
  }
}
