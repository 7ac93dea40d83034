package dev.tumbler.lock.jdbc;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL's {@code LISTEN} for one service: while the service has waiters, a virtual thread holds one
 * connection of the service's pool, listens on the table's release channel and wakes the waiters of each
 * released key. Started by the first wait; once no waiter is left (it looks every
 * {@value #POLL_MILLIS} ms) it stops listening ({@code UNLISTEN}) and gives the connection back to the
 * pool, so a service without waiters holds no connection for it; the next wait starts it again. When the
 * connection breaks, it wakes every waiter (notifications may have been missed) and listens again on a new
 * one; meanwhile waiters look again every {@code recheck}. So the pool must have a connection for the
 * service's calls besides this one ({@link JdbcConfig#minimumPoolSize}). Thread safe.
 */
final class Notifications {
  private static final Logger LOG = LoggerFactory.getLogger(Notifications.class);
  private static final int POLL_MILLIS = 500;

  private final DataSource dataSource;
  private final String channel;
  private final Wakeups wakeups;
  private final Duration retry;
  /** Told when the listening connection was taken out of the pool (the service may open a spare). */
  private final Runnable pinned;
  private volatile boolean closed;
  /** The listening thread, or null when none runs (guarded by this). */
  private Thread thread;

  Notifications(DataSource dataSource, String channel, Wakeups wakeups, Duration retry, Runnable pinned) {
    this.dataSource = dataSource;
    this.channel = channel;
    this.wakeups = wakeups;
    this.retry = retry;
    this.pinned = pinned;
  }

  /** Listens, unless a thread does already; called by each wait after it registered as a waiter. */
  synchronized void start() {
    if (thread == null && !closed) {
      thread = Thread.ofVirtual().name("tumbler-jdbc-listen-" + channel).start(this::run);
    }
  }

  void close() {
    Thread t;
    synchronized (this) {
      closed = true;
      t = thread;
    }
    if (t != null) {
      t.interrupt();
      try {
        t.join(POLL_MILLIS * 4L);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Whether to go on: false once the service is closed or has no waiter, and then the thread is gone (under
   * the same lock as {@link #start}, so a waiter that registered after this look starts a new one).
   */
  private synchronized boolean stillNeeded() {
    if (closed || !wakeups.hasWaiters()) {
      thread = null;
      return false;
    }
    return true;
  }

  private void run() {
    while (stillNeeded()) {
      try (Connection c = dataSource.getConnection()) {
        pinned.run();
        PGConnection pg = c.unwrap(PGConnection.class);
        try (Statement s = c.createStatement()) {
          s.execute("LISTEN " + channel);
        }
        wakeups.wakeAll(); // releases while we were not listening
        while (!closed && wakeups.hasWaiters()) {
          PGNotification[] ns = pg.getNotifications(POLL_MILLIS);
          if (ns != null) {
            for (PGNotification n : ns) {
              wakeups.notified(n.getParameter());
            }
          }
        }
        if (!closed) {
          // the connection goes back to the pool: it must not go on collecting this channel's notifications
          try (Statement s = c.createStatement()) {
            s.execute("UNLISTEN " + channel);
          }
        }
      } catch (Exception e) {
        if (closed) {
          synchronized (this) {
            thread = null;
          }
          return;
        }
        LOG.debug("listening on {} failed; listening again in {} ms: {}", channel, retry.toMillis(), e.toString());
        wakeups.wakeAll();
        try {
          Thread.sleep(retry);
        } catch (InterruptedException ie) {
          synchronized (this) {
            thread = null;
          }
          return;
        }
      }
    }
  }
}
