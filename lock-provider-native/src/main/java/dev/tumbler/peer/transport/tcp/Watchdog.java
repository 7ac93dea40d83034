package dev.tumbler.peer.transport.tcp;

import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Closes a socket whose handshake has not finished in time: a per-read timeout alone lets a slowloris live, one byte
 * at a time. Either the handshake ends in time ({@link #done}) or the socket is closed ({@link #fired}), never both.
 * Thread safe.
 */
final class Watchdog {
  private static final int RUNNING = 0;
  private static final int DONE = 1;
  private static final int FIRED = 2;

  private final Thread thread;
  private final AtomicInteger outcome = new AtomicInteger(RUNNING);

  Watchdog(Socket s, Duration timeout) {
    thread = Thread.ofVirtual().name("tumbler-tcp-handshake-timer").start(() -> {
      try {
        Thread.sleep(timeout);
        if (outcome.compareAndSet(RUNNING, FIRED)) {
          Sockets.closeQuietly(s);
        }
      } catch (InterruptedException e) {
        // handshake finished
      }
    });
  }

  /** Stops the watchdog; returns false if it fired first (the socket is closed, or is being closed). */
  boolean done() {
    if (outcome.compareAndSet(RUNNING, DONE)) {
      thread.interrupt();
      return true;
    }
    return outcome.get() == DONE;
  }

  boolean fired() {
    return outcome.get() == FIRED;
  }
}
