package dev.tumbler.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A TCP forwarder on loopback that delays every byte by a fixed time in each direction, to put a
 * simulated network between a client and a server on one machine. With a one-way delay {@code d}, a
 * request and its reply take {@code 2d} more than without the proxy (plus the proxy's own hop, which
 * {@link #oneWayDelayNanos(long)} lets a caller calibrate away).
 *
 * <h2>Why one spinning thread</h2>
 * Bytes are forwarded as they arrive: each chunk read from a socket is stamped with its arrival time and
 * written to the other side at {@code arrival + d}, in arrival order (one FIFO for all connections: with
 * one delay for both directions, arrival order is due order). A chunk that arrives while an earlier one
 * waits is not held back behind it, so pipelined requests keep their spacing, and a reply is never
 * batched with the next one; what a client sees is its own round trips, each {@code 2d} longer.
 *
 * <p>Timed parking on a loaded Linux machine overshoots by about 100 µs (timer slack and wake-up
 * latency), as much as the delay being simulated. So one thread does everything on non-blocking
 * channels and, while any chunk is in flight or traffic was seen within the last {@value #SPIN_IDLE_MS}
 * ms, polls its selector and the clock in a busy loop instead of sleeping; only an idle proxy blocks in
 * {@link Selector#select()}. The price is one core kept busy while a benchmark pushes traffic through it.
 *
 * <p>Not a test fixture: no faults, no limits on buffered bytes (a reader that stops reading makes the
 * proxy buffer without bound). Thread safe as far as its public methods go; listens on 127.0.0.1.
 */
final class DelayProxy implements AutoCloseable {

  private static final int SPIN_IDLE_MS = 2;
  private static final int CHUNK = 16 * 1024;

  private final InetSocketAddress target;
  private final Selector selector;
  private final ServerSocketChannel server;
  private final Thread loop;
  private final ArrayDeque<Chunk> inFlight = new ArrayDeque<>();
  private final List<Link> links = new ArrayList<>();
  private volatile long delayNanos;
  private volatile boolean closed;

  /** Bytes read from {@code from}'s peer, due on {@code to} at {@code due}; an empty buffer is an end of stream. */
  private record Chunk(long due, Side to, ByteBuffer bytes) {}

  /** One socket of a link, with what is due on it but not yet written (a partial write). */
  private static final class Side {
    final SocketChannel channel;
    final ArrayDeque<ByteBuffer> backlog = new ArrayDeque<>();
    SelectionKey key;
    Side peer;
    boolean inputDone;
    boolean outputShut;

    /** Reads until the end of the stream; waits for writability while a partial write is pending. */
    void updateInterest() {
      if (key.isValid()) {
        key.interestOps((inputDone ? 0 : SelectionKey.OP_READ) | (backlog.isEmpty() ? 0 : SelectionKey.OP_WRITE));
      }
    }

    Side(SocketChannel channel) {
      this.channel = channel;
    }
  }

  private record Link(Side client, Side backend) {}

  private DelayProxy(InetSocketAddress target, long oneWayDelayNanos) throws IOException {
    this.target = target;
    this.delayNanos = oneWayDelayNanos;
    this.selector = Selector.open();
    this.server = ServerSocketChannel.open();
    server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
    server.configureBlocking(false);
    server.register(selector, SelectionKey.OP_ACCEPT);
    this.loop = Thread.ofPlatform().daemon().name("delay-proxy-" + port()).start(this::run);
  }

  /** Starts a proxy to {@code host:port} that delays each direction by {@code oneWayDelayNanos}. */
  static DelayProxy start(String host, int port, long oneWayDelayNanos) {
    try {
      return new DelayProxy(new InetSocketAddress(host, port), oneWayDelayNanos);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start a delaying proxy to " + host + ":" + port, e);
    }
  }

  /** The port clients connect to, on 127.0.0.1. */
  int port() {
    try {
      return ((InetSocketAddress) server.getLocalAddress()).getPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code 127.0.0.1:port} of the proxy. */
  String address() {
    return "127.0.0.1:" + port();
  }

  /** The delay each direction adds, applied to bytes that arrive from now on. */
  void oneWayDelayNanos(long nanos) {
    if (nanos < 0) {
      throw new IllegalArgumentException("a delay cannot be negative: " + nanos + " ns");
    }
    delayNanos = nanos;
  }

  long oneWayDelayNanos() {
    return delayNanos;
  }

  @Override
  public void close() throws InterruptedException {
    closed = true;
    selector.wakeup();
    loop.join(5000);
  }

  private void run() {
    ByteBuffer buf = ByteBuffer.allocateDirect(CHUNK);
    long lastTraffic = 0;
    try {
      while (!closed) {
        boolean busy = !inFlight.isEmpty()
            || System.nanoTime() - lastTraffic < TimeUnit.MILLISECONDS.toNanos(SPIN_IDLE_MS);
        int ready = busy ? selector.selectNow() : selector.select();
        long now = System.nanoTime();
        if (ready > 0) {
          Iterator<SelectionKey> it = selector.selectedKeys().iterator();
          while (it.hasNext()) {
            SelectionKey k = it.next();
            it.remove();
            if (!k.isValid()) {
              continue;
            }
            if (k.isAcceptable()) {
              accept();
            } else if (k.isReadable()) {
              read(k, buf, now);
              lastTraffic = now;
            } else if (k.isWritable()) {
              flush((Side) k.attachment());
            }
          }
        }
        while (!inFlight.isEmpty() && inFlight.peekFirst().due() - System.nanoTime() <= 0) {
          Chunk c = inFlight.pollFirst();
          if (c.to().channel.isOpen()) {
            c.to().backlog.addLast(c.bytes());
            flush(c.to());
          }
          lastTraffic = System.nanoTime();
        }
        if (busy) {
          Thread.onSpinWait();
        }
      }
    } catch (IOException e) {
      if (!closed) {
        throw new UncheckedIOException("the delaying proxy on " + address() + " failed", e);
      }
    } finally {
      for (Link l : links) {
        closeQuietly(l.client().channel);
        closeQuietly(l.backend().channel);
      }
      closeQuietly(server);
      try {
        selector.close();
      } catch (IOException ignored) {
        // closing anyway
      }
    }
  }

  private void accept() throws IOException {
    SocketChannel client = server.accept();
    if (client == null) {
      return;
    }
    SocketChannel backend;
    try {
      // a blocking connect on loopback: a few microseconds, once per connection
      backend = SocketChannel.open(target);
    } catch (IOException e) {
      closeQuietly(client);
      return;
    }
    Side c = new Side(client);
    Side b = new Side(backend);
    c.peer = b;
    b.peer = c;
    for (Side s : List.of(c, b)) {
      s.channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
      s.channel.configureBlocking(false);
      s.key = s.channel.register(selector, SelectionKey.OP_READ, s);
    }
    links.add(new Link(c, b));
  }

  private void read(SelectionKey k, ByteBuffer buf, long arrival) {
    Side from = (Side) k.attachment();
    buf.clear();
    int n;
    try {
      n = from.channel.read(buf);
    } catch (IOException e) {
      n = -1;
    }
    if (n == 0) {
      return;
    }
    ByteBuffer bytes;
    if (n < 0) {
      // end of stream: passed on, after the bytes before it, as a half close
      from.inputDone = true;
      from.updateInterest();
      bytes = ByteBuffer.allocate(0);
    } else {
      buf.flip();
      bytes = ByteBuffer.allocate(n).put(buf).flip();
    }
    inFlight.addLast(new Chunk(arrival + delayNanos, from.peer, bytes));
  }

  private void flush(Side to) {
    try {
      while (!to.backlog.isEmpty()) {
        ByteBuffer b = to.backlog.peekFirst();
        if (!b.hasRemaining()) {
          to.backlog.pollFirst();
          to.channel.shutdownOutput();
          to.outputShut = true;
          if (to.peer.outputShut) {
            closeQuietly(to.channel);
            closeQuietly(to.peer.channel);
          }
          continue;
        }
        to.channel.write(b);
        if (b.hasRemaining()) {
          // the socket's buffer is full: the rest goes when it is writable, still ahead of later chunks
          break;
        }
        to.backlog.pollFirst();
      }
      to.updateInterest();
    } catch (IOException e) {
      closeQuietly(to.channel);
      closeQuietly(to.peer.channel);
    }
  }

  private static void closeQuietly(java.nio.channels.Channel c) {
    try {
      c.close();
    } catch (IOException ignored) {
      // nothing to do
    }
  }
}
