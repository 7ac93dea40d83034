package dev.tumbler.peer.transport.tcp;

import dev.tumbler.peer.transport.tcp.Frames.FrameSealer;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * One client connection after its handshake, at either end (a member's {@link ClientLinks}, or a
 * {@link TcpClientTransport}): unlike a peer link, it carries DATA frames both ways on the one socket, so a
 * client needs no listener of its own (it works behind NAT). Each direction is sealed under its own key and
 * numbers its frames from zero: under one shared key, a frame could be sent back to the end that wrote it
 * and verify there.
 *
 * <p>Two threads serve it. The owner's thread runs {@link #readLoop}, which delivers DATA in order and
 * ends the connection when nothing (not even a PING) arrived for {@code idleTimeout}: that catches
 * half-open connections and silent partitions. A writer thread runs {@link #writeLoop}, which writes what
 * {@link #send} queued and a PING when it wrote nothing for a quarter of {@code idleTimeout}. So
 * {@link #send} never blocks on the network: a far end that stops reading fills the queue up to
 * {@code queueLimit} bytes, and then the connection is closed (its owner reports the link down).
 *
 * <p>Thread safe: {@link #send} and {@link #close} from any thread; each loop from one thread.
 */
final class DuplexLink {
  /** Wakes the writer (identity-compared: no caller's list is this one). */
  private static final List<byte[]> WAKE = Collections.unmodifiableList(new ArrayList<>());

  private final Socket socket;
  private final DataInputStream in;
  private final DataOutputStream out;
  private final FrameSealer outgoing; // the writer's only
  private final FrameSealer incoming; // the reader's only
  private final int maxFrameSize;
  private final Duration idleTimeout;
  private final long heartbeat;
  private final long queueLimit;
  private final LinkedBlockingQueue<List<byte[]>> queue = new LinkedBlockingQueue<>();
  private final AtomicLong queuedBytes = new AtomicLong();
  /** Why this end closed the connection; null while open. Set once. */
  private final AtomicReference<String> closedBecause = new AtomicReference<>();

  /**
   * @param sendKey the key of the frames this end writes
   * @param receiveKey the key of the frames this end reads
   * @param settings for {@code maxFrameSize} and {@code idleTimeout}
   * @param queueLimit the most bytes queued; see {@link #queueLimit(TcpLinkSettings)}
   */
  DuplexLink(Socket socket, DataInputStream in, DataOutputStream out, byte[] sendKey, byte[] receiveKey,
      TcpLinkSettings settings, long queueLimit) {
    this.socket = socket;
    this.in = in;
    this.out = out;
    this.outgoing = new FrameSealer(sendKey);
    this.incoming = new FrameSealer(receiveKey);
    this.maxFrameSize = settings.maxFrameSize();
    this.idleTimeout = settings.idleTimeout();
    this.heartbeat = settings.heartbeatNanos();
    this.queueLimit = queueLimit;
  }

  /**
   * The bound on what one connection may queue: client messages are small, and a thousand slow clients must not
   * exhaust a member's memory.
   */
  static long queueLimit(TcpLinkSettings settings) {
    return Math.max(4L << 20, 2L * settings.maxFrameSize());
  }

  /**
   * Queues {@code payloads} for the writer, in order, and returns at once; returns false when they are
   * dropped: the connection is closed, or this would queue more than {@code queueLimit} bytes (which closes
   * it). The arrays must not be changed afterwards.
   */
  boolean send(List<byte[]> payloads) {
    if (isClosed()) {
      return false;
    }
    long bytes = 0;
    for (byte[] p : payloads) {
      bytes += p.length;
    }
    if (queuedBytes.addAndGet(bytes) > queueLimit) {
      queuedBytes.addAndGet(-bytes);
      close("more than " + queueLimit + " bytes queued (the other end reads too slowly)");
      return false;
    }
    queue.add(List.copyOf(payloads));
    return true;
  }

  /**
   * Waits until everything queued so far is written and flushed, the connection closes, or {@code maxNanos} pass;
   * returns whether it was all written. For a graceful close: the last messages (a client's releases) get out.
   */
  boolean drain(long maxNanos) throws InterruptedException {
    long end = System.nanoTime() + maxNanos;
    while (queuedBytes.get() > 0 && !isClosed()) {
      if (System.nanoTime() - end >= 0) {
        return false;
      }
      Thread.sleep(1);
    }
    return queuedBytes.get() <= 0;
  }

  /** Closes the connection, giving {@code why} as the reason (the first reason given wins). Idempotent. */
  void close(String why) {
    if (closedBecause.compareAndSet(null, why)) {
      Sockets.closeQuietly(socket);
      queue.add(WAKE);
    }
  }

  boolean isClosed() {
    return closedBecause.get() != null;
  }

  /** Why this end closed the connection, or null if it did not (yet). */
  String closedBecause() {
    return closedBecause.get();
  }

  /**
   * Reads frames until the connection ends, handing each DATA payload to {@code deliver} in order; returns
   * only by throwing. A {@link SocketTimeoutException} means nothing arrived for {@code idleTimeout}.
   */
  void readLoop(Consumer<byte[]> deliver) throws IOException {
    socket.setSoTimeout(Sockets.millis(idleTimeout));
    while (true) {
      byte[] payload = Frames.readData(in, incoming, maxFrameSize);
      if (!isClosed()) {
        deliver.accept(payload); // frames buffered before a close are not delivered after it
      }
    }
  }

  /**
   * Writes queued payloads, and a PING when nothing was written for a quarter of {@code idleTimeout}, until
   * the connection is closed; a failed write closes it.
   */
  void writeLoop() {
    long lastWrite = System.nanoTime();
    try {
      while (!isClosed()) {
        long wait = heartbeat - (System.nanoTime() - lastWrite);
        List<byte[]> batch = wait > 0 ? queue.poll(wait, TimeUnit.NANOSECONDS) : queue.poll();
        if (isClosed()) {
          return;
        }
        if (batch == null) {
          out.write(outgoing.frame(Frames.PING, Frames.EMPTY));
          out.flush();
          lastWrite = System.nanoTime();
          continue;
        }
        if (batch == WAKE) {
          continue;
        }
        long bytes = 0;
        for (byte[] p : batch) {
          out.write(outgoing.frame(Frames.DATA, p));
          bytes += p.length;
        }
        if (queue.isEmpty()) {
          out.flush(); // else the next batch follows at once, and the flush after it takes both
        }
        queuedBytes.addAndGet(-bytes); // after the flush: none queued means all written (see drain)
        lastWrite = System.nanoTime();
      }
    } catch (IOException e) {
      close("a write failed: " + Sockets.describe(e));
    } catch (InterruptedException e) {
      close("closed");
    }
  }

  /** Why the connection ended, for a log line: this end's reason if it closed it, else from {@code e}. */
  String ending(IOException e) {
    String why = closedBecause();
    if (why != null) {
      return why;
    }
    if (e instanceof SocketTimeoutException) {
      return "nothing received for " + idleTimeout.toMillis() + " ms";
    }
    return e instanceof EOFException ? "closed by the other end" : Sockets.describe(e);
  }
}
