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
 * PostgreSQL's {@code LISTEN} for one service: a virtual thread holds one connection of the service's pool,
 * listens on the table's release channel and wakes the waiters of each released key. Started with the
 * first wait, so a service that never waits holds no extra connection. When the connection breaks, it
 * wakes every waiter (notifications may have been missed) and listens again on a new one; meanwhile
 * waiters look again every {@code recheck}. Thread safe.
 */
final class Notifications {
  private static final Logger LOG = LoggerFactory.getLogger(Notifications.class);
  private static final int POLL_MILLIS = 500;

  private final DataSource dataSource;
  private final String channel;
  private final Wakeups wakeups;
  private final Duration retry;
  private volatile boolean closed;
  private Thread thread;

  Notifications(DataSource dataSource, String channel, Wakeups wakeups, Duration retry) {
    this.dataSource = dataSource;
    this.channel = channel;
    this.wakeups = wakeups;
    this.retry = retry;
  }

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

  private void run() {
    while (!closed) {
      try (Connection c = dataSource.getConnection()) {
        PGConnection pg = c.unwrap(PGConnection.class);
        try (Statement s = c.createStatement()) {
          s.execute("LISTEN " + channel);
        }
        wakeups.wakeAll(); // releases while we were not listening
        while (!closed) {
          PGNotification[] ns = pg.getNotifications(POLL_MILLIS);
          if (ns != null) {
            for (PGNotification n : ns) {
              wakeups.wake(n.getParameter());
            }
          }
        }
      } catch (Exception e) {
        if (closed) {
          return;
        }
        LOG.debug("listening on {} failed; listening again in {} ms: {}", channel, retry.toMillis(), e.toString());
        wakeups.wakeAll();
        try {
          Thread.sleep(retry);
        } catch (InterruptedException ie) {
          return;
        }
      }
    }
  }
}
