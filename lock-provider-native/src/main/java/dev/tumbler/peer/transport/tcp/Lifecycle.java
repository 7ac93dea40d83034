package dev.tumbler.peer.transport.tcp;

import dev.tumbler.peer.transport.Transport.Receiver;
import java.io.Closeable;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.slf4j.Logger;

/**
 * One transport's life, {@code LATENT → STARTED → CLOSED}, and what its end must stop: the receiver it calls back
 * (never before start, never once closed), the threads it started (interrupted at close) and the sockets it opened
 * (closed at close). Shared by a member's {@link TcpTransport} and a client's {@link TcpClientTransport} and by
 * their parts. Thread safe.
 */
final class Lifecycle {
  private enum State { LATENT, STARTED, CLOSED }

  private final String self;
  private final Logger log;
  private final Object stateLock = new Object();
  private volatile State state = State.LATENT;
  private volatile Receiver receiver;
  private final Set<Closeable> open = ConcurrentHashMap.newKeySet();
  private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
  private final AtomicInteger threadCount = new AtomicInteger();

  /** {@code self} and {@code log}: for the line that says the receiver failed. */
  Lifecycle(String self, Logger log) {
    this.self = self;
    this.log = log;
  }

  /**
   * Takes {@code receiver} and runs {@code starting} (which starts the transport's threads) under the state lock, so
   * that a concurrent {@link #close} waits for it.
   *
   * @throws IllegalStateException if already started or closed
   */
  void start(Receiver receiver, Runnable starting) {
    Objects.requireNonNull(receiver, "receiver");
    synchronized (stateLock) {
      if (state != State.LATENT) {
        throw new IllegalStateException("transport " + self + " is " + name());
      }
      this.receiver = receiver;
      state = State.STARTED;
      starting.run();
    }
  }

  /** Whether the transport is started and not closed. */
  boolean started() {
    return state == State.STARTED;
  }

  /** Marks the transport closed; returns false if it already was (the caller then does nothing). */
  boolean close() {
    synchronized (stateLock) {
      if (state == State.CLOSED) {
        return false;
      }
      state = State.CLOSED;
      return true;
    }
  }

  /** After {@link #close}: closes every tracked socket and interrupts every thread still running. */
  void stopAll() {
    for (Closeable c : open) {
      Sockets.closeQuietly(c);
    }
    for (Thread t : threads) {
      t.interrupt();
    }
  }

  /** {@code latent}, {@code started} or {@code closed}. */
  String name() {
    return state.name().toLowerCase(Locale.ROOT);
  }

  /** Registers a socket (or selector) for {@link #stopAll} to close. */
  void track(Closeable c) {
    open.add(c);
  }

  void untrack(Closeable c) {
    open.remove(c);
  }

  /** Calls the receiver, unless the transport is not started or is closed; a receiver's failure is logged. */
  void callback(Consumer<Receiver> call) {
    if (state != State.STARTED) {
      return;
    }
    try {
      call.accept(receiver);
    } catch (RuntimeException e) {
      log.error("{}: receiver failed", self, e);
    }
  }

  /**
   * Delivers {@code payload} from {@code peer}, unless the transport is not started or is closed. Unlike
   * {@link #callback}, a receiver's failure propagates: its reader ends the connection, and the link's down/up
   * cycle tells both ends, where a payload dropped on a FIFO link would go unnoticed.
   */
  void deliver(String peer, byte[] payload) {
    if (state == State.STARTED) {
      receiver.deliver(peer, payload);
    }
  }

  /** Starts a virtual thread, named {@code name} and a serial number, which {@link #stopAll} interrupts. */
  void spawn(String name, Runnable r) {
    start(Thread.ofVirtual(), name, r);
  }

  /** As {@link #spawn}, on a daemon platform thread: for blocking reads on the path of every message. */
  void spawnPlatform(String name, Runnable r) {
    start(Thread.ofPlatform().daemon(), name, r);
  }

  private void start(Thread.Builder builder, String name, Runnable r) {
    Thread t = builder.name(name + "#" + threadCount.incrementAndGet()).unstarted(() -> {
      try {
        r.run();
      } finally {
        threads.remove(Thread.currentThread());
      }
    });
    threads.add(t);
    t.start();
  }
}
