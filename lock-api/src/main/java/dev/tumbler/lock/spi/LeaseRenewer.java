package dev.tumbler.lock.spi;

import dev.tumbler.lock.LeaseLostEvent;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * Renews leases in the background and enforces their deadlines, for every lease of one service.
 *
 * <p>One virtual thread per renewer wakes every tick ({@code T/24}, between 1 ms and 1 s) and looks at
 * each watched lease:
 * <ul>
 *   <li>when {@code T/3} has passed since the last successful request was sent (and {@code renew=auto}),
 *       it starts a renewal on its own virtual thread; after a failed attempt it retries every
 *       {@code T/12}, so several attempts fit in the trusted window;
 *   <li>when the lease's deadline ({@code sent + T × safety}) has passed with no success, it marks the
 *       lease lost ({@link LeaseLostEvent.Reason#EXPIRED}) — at most one tick late, long before the
 *       backend's term {@code T} ends. The loss is dispatched on its own virtual thread, which runs the
 *       lost listeners; a renewal call that hangs cannot delay it, and a success that comes after the
 *       deadline does not revive the lease;
 *   <li>a renewal the backend refuses marks it lost at once ({@link LeaseLostEvent.Reason#REVOKED}).
 * </ul>
 *
 * <p>Watching a lease costs a map insertion and two small tasks, made ready then so that a
 * renewal that falls due starts at once: no thread is started or woken at grant, so a lock held for less
 * than {@code T/3} costs the renewer almost nothing on the acquire path. The loop thread stops after a few
 * seconds without leases and starts again with the next one.
 *
 * <p>{@link #pause()} stops sending renewals (deadlines are still enforced), as a long pause of the
 * client would look to the backend; fault injection in tests uses it. Thread safe.
 */
public final class LeaseRenewer implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(LeaseRenewer.class.getName());
  private static final long MIN_TICK_NANOS = 1_000_000L;
  private static final long MAX_TICK_NANOS = 1_000_000_000L;
  private static final long IDLE_EXIT_NANOS = 5_000_000_000L;

  private final Ticker ticker;
  private final String threadPrefix;
  private final Map<AbstractLease, Watch> watched = new ConcurrentHashMap<>();
  private final Object loopLock = new Object();
  // guarded by loopLock
  private Thread loop;
  private volatile long tickNanos = MAX_TICK_NANOS;
  private volatile boolean paused;
  private volatile boolean closed;

  /**
   * @param ticker the clock the leases use
   * @param threadPrefix names the threads, for thread dumps ({@code "tumbler-redis-lease"})
   */
  public LeaseRenewer(Ticker ticker, String threadPrefix) {
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    this.threadPrefix = Objects.requireNonNull(threadPrefix, "threadPrefix");
    warmUp();
  }

  /**
   * A watched lease's schedule. The tasks the loop may start for it, and their thread names, are made only
   * when one falls due (most leases are released first); their call sites are run once when the renewer is
   * made ({@link #warmUp}), since the first lambda and the first string concatenation of a call site cost a
   * bootstrap that, on a busy machine, takes tens of milliseconds, and a renewal that is due has only
   * {@code 5T/12} before the client's deadline.
   */
  private static final class Watch {
    volatile long nextRenew;
    volatile boolean inFlight;

    Watch(long nextRenew) {
      this.nextRenew = nextRenew;
    }
  }

  private String threadName(String what, String lease) {
    return threadPrefix + what + lease;
  }

  private Runnable renewal(AbstractLease lease, Watch w) {
    return () -> renew(lease, w);
  }

  private static Runnable expiry(AbstractLease lease) {
    return () -> lease.expire();
  }

  /** Bootstraps the call sites above, so that the first renewal that falls due does not pay for it. */
  private void warmUp() {
    threadName("-renew-", "");
    renewal(null, null);
    expiry(null);
  }

  /** Starts watching (and, with {@code renew=auto}, renewing) {@code lease} until it ends. */
  public void watch(AbstractLease lease) {
    LeaseSettings settings = lease.settings();
    if (closed || !settings.expires()) {
      return;
    }
    if (watched.putIfAbsent(lease, new Watch(lease.lastSentNanos() + settings.renewIntervalNanos())) != null) {
      return;
    }
    long tick = tickFor(settings);
    synchronized (loopLock) {
      if (loop == null) {
        tickNanos = tick;
        loop = Thread.ofVirtual().name(threadPrefix).start(this::run);
      } else if (tick < tickNanos) {
        tickNanos = tick;
        LockSupport.unpark(loop);
      }
    }
  }

  /** Stops watching {@code lease} (it was released or lost). */
  public void unwatch(AbstractLease lease) {
    watched.remove(lease);
  }

  /** Stops sending renewals; deadlines are still enforced. */
  public void pause() {
    paused = true;
  }

  /** Sends renewals again, from the next tick on. */
  public void resume() {
    paused = false;
  }

  /** How many leases are watched. */
  public int watched() {
    return watched.size();
  }

  /** Stops watching everything; leases are not marked lost by this (the service does that). */
  @Override
  public void close() {
    closed = true;
    watched.clear();
    synchronized (loopLock) {
      if (loop != null) {
        LockSupport.unpark(loop);
      }
    }
  }

  /** T/24: a loss is noticed at most that late after the client's deadline at 3T/4, well before T. */
  private static long tickFor(LeaseSettings settings) {
    return Math.max(MIN_TICK_NANOS, Math.min(MAX_TICK_NANOS, settings.leaseTime().toNanos() / 24));
  }

  private void run() {
    long idleSince = Long.MIN_VALUE;
    while (!closed) {
      long now = ticker.read();
      long tick = MAX_TICK_NANOS;
      for (Map.Entry<AbstractLease, Watch> e : watched.entrySet()) {
        AbstractLease lease = e.getKey();
        Watch w = e.getValue();
        LeaseSettings settings = lease.settings();
        tick = Math.min(tick, tickFor(settings));
        if (lease.isReleased() || lease.isLost()) {
          watched.remove(lease, w);
        } else if (now - lease.validUntilNanos() >= 0) {
          watched.remove(lease, w);
          Thread.ofVirtual().name(threadName("-expire-", lease.name())).start(expiry(lease));
        } else if (!w.inFlight && !paused && settings.renew() == LeaseSettings.Renew.AUTO && now - w.nextRenew >= 0) {
          w.inFlight = true;
          Thread.ofVirtual().name(threadName("-renew-", lease.name())).start(renewal(lease, w));
        }
      }
      if (watched.isEmpty()) {
        if (idleSince == Long.MIN_VALUE) {
          idleSince = now;
        } else if (now - idleSince > IDLE_EXIT_NANOS) {
          synchronized (loopLock) {
            // watch() inserts before taking loopLock: an insertion not seen here sees loop == null
            if (watched.isEmpty()) {
              loop = null;
              return;
            }
          }
        }
      } else {
        idleSince = Long.MIN_VALUE;
        tickNanos = tick;
      }
      LockSupport.parkNanos(this, tickNanos);
    }
    synchronized (loopLock) {
      if (loop == Thread.currentThread()) {
        loop = null;
      }
    }
  }

  private void renew(AbstractLease lease, Watch w) {
    LeaseSettings settings = lease.settings();
    long sent = ticker.read();
    try {
      if (lease.doRenew()) {
        w.nextRenew = sent + settings.renewIntervalNanos();
        lease.extend(sent);
      } else {
        watched.remove(lease, w);
        lease.markLost(LeaseLostEvent.Reason.REVOKED, "the backend refused the renewal: the lease is no longer ours", null);
      }
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.DEBUG, "renewal of '" + lease.name() + "' failed; retrying: " + e);
      w.nextRenew = ticker.read() + Math.max(1, settings.renewIntervalNanos() / 4);
    } finally {
      w.inFlight = false;
    }
  }
}
