package dev.tumbler.peer.transport.tcp;

import dev.tumbler.peer.transport.tcp.Frames.FrameSealer;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;

/**
 * A member's sending end to one peer: its send queue and flow control, and the writing half of its dialer thread
 * (a {@link Redialer} keeps the connection). The member sends only on the connections it dialled; the acceptor
 * never writes after its ACCEPT, so any byte from it, or the end of its stream, ends the link.
 *
 * <p>On TLS, the dialer thread writes every frame, taking them from the queue. On plain TCP the connection is a
 * non-blocking {@link SocketChannel} after its handshake, and {@link #send} writes a frame itself when nothing is
 * queued or half written before it, and the socket takes it whole at once: the usual case, which spares the
 * hand-off to the dialer thread. Whatever the socket does not take is left to the dialer thread, which waits in a
 * selector until the socket is writable; later frames queue behind it. So a send never blocks, and a peer that stops
 * reading fills the queue until more than {@code queueLimit} bytes wait and the link is closed, as on TLS.
 *
 * <p>Thread safe: {@link #send} and {@link #breakLink} from any thread, the {@link Redialer.Role} from the dialer's.
 */
final class PeerOutbound implements Redialer.Role<PeerOutbound.Link> {
  private record Item(long generation, byte[] payload) {}

  private static final Item WAKE = new Item(-1, new byte[0]);

  private final String self;
  private final String peer;
  private final TcpLinkSettings settings;
  private final Lifecycle life;
  private final Logger log;
  private final long queueLimit;
  private final LinkedBlockingQueue<Item> queue = new LinkedBlockingQueue<>();
  private final AtomicLong queuedBytes = new AtomicLong();
  private long generations; // the dialer thread's
  /** The connection while the link is up, else null. */
  private volatile Link current;

  PeerOutbound(String self, String peer, TcpLinkSettings settings, Lifecycle life, Logger log, long queueLimit) {
    this.self = self;
    this.peer = peer;
    this.settings = settings;
    this.life = life;
    this.log = log;
    this.queueLimit = queueLimit;
  }

  /** Whether the link is up: from its {@code peerUp} until its {@code peerDown}. */
  boolean isUp() {
    return current != null;
  }

  /** Writes or queues {@code payloads} for the current connection; dropped while the link is down. Never blocks. */
  void send(List<byte[]> payloads) {
    Link link = current;
    if (link == null) {
      log.trace("{}: link to {} down, payload dropped", self, peer);
      return;
    }
    Direct d = link.direct();
    if (d != null && d.tryWrite(payloads)) {
      return;
    }
    for (byte[] payload : payloads) {
      if (queuedBytes.addAndGet(payload.length) > queueLimit) {
        queuedBytes.addAndGet(-payload.length);
        breakLink("more than " + queueLimit + " bytes queued");
        return;
      }
      queue.add(new Item(link.generation(), payload));
    }
    if (d != null) {
      d.selector.wakeup();
    }
  }

  /** Ends the current connection, if any; the dialer reports peerDown and reconnects. */
  void breakLink(String why) {
    Link link = current;
    if (link != null) {
      log.info("{}: closing link to {}: {}", self, peer, why);
      Sockets.closeQuietly(link.socket());
      queue.add(WAKE);
      if (link.direct() != null) {
        link.direct().selector.wakeup();
      }
    }
  }

  // ---------------------------------------------------------------- the dialer thread's part

  /** One connection while it is up: a {@link Direct} on plain TCP (null on TLS), the stream and its sealer. */
  record Link(Socket socket, long generation, Direct direct, DataOutputStream out, FrameSealer sealer) {}

  @Override
  public Socket open() throws IOException {
    // plain TCP dials through a channel, so that the link can turn non-blocking after its handshake
    return settings.tls() ? new Socket() : SocketChannel.open().socket();
  }

  @Override
  public Link up(Redialer.Connection c) throws IOException {
    Socket s = c.socket();
    long g = ++generations;
    FrameSealer sealer = new FrameSealer(c.keys().toAcceptor());
    Direct d = null;
    if (s.getChannel() != null) {
      // plain TCP: from now on non-blocking, written by send and by the dialer thread (see Direct)
      SocketChannel ch = s.getChannel();
      ch.configureBlocking(false);
      d = new Direct(g, ch, sealer, Selector.open());
    }
    Link link = new Link(s, g, d, c.out(), sealer);
    current = link;
    return link;
  }

  @Override
  public void serve(Link link) throws IOException, InterruptedException {
    if (link.direct() != null) {
      directLoop(link);
    } else {
      life.spawn("tumbler-tcp-watch-" + peer, () -> watch(link.socket()));
      writeLoop(link);
    }
  }

  @Override
  public void down(Link link) {
    current = null;
    if (link != null && link.direct() != null) {
      Sockets.closeQuietly(link.direct().selector);
    }
    List<Item> dropped = new ArrayList<>();
    queue.drainTo(dropped);
    for (Item it : dropped) {
      queuedBytes.addAndGet(-it.payload.length);
    }
  }

  /**
   * A plain TCP connection in non-blocking mode, after its handshake. Frames are sealed and written under
   * {@link #lock}, by {@link #send} or by the dialer thread, so that their sequence numbers follow the order they
   * reach the socket; the dialer thread takes queued items only under it too, so a frame written directly never
   * overtakes one queued before it.
   */
  private final class Direct {
    final long generation;
    final SocketChannel channel;
    final FrameSealer sealer;
    final Selector selector;
    final ReentrantLock lock = new ReentrantLock();
    // guarded by lock
    private ByteBuffer pending; // a frame the socket took only part of
    private IOException failure; // a direct write failed: the link is over
    private long lastWrite = System.nanoTime();

    Direct(long generation, SocketChannel channel, FrameSealer sealer, Selector selector) {
      this.generation = generation;
      this.channel = channel;
      this.sealer = sealer;
      this.selector = selector;
    }

    /**
     * Writes the frames of {@code payloads} now, with one system call, if nothing waits before them and nobody
     * else is writing; returns false if they must be queued instead. Never blocks: the channel is non-blocking, and
     * what the socket does not take is finished by the dialer thread.
     */
    boolean tryWrite(List<byte[]> payloads) {
      if (!lock.tryLock()) {
        return false;
      }
      try {
        if (pending != null || !queue.isEmpty()) {
          return false;
        }
        if (failure != null) {
          return true; // the link is going down: dropped, as its peerDown will say
        }
        try {
          ByteBuffer[] frames = new ByteBuffer[payloads.size()];
          long total = 0;
          for (int i = 0; i < frames.length; i++) {
            frames[i] = ByteBuffer.wrap(sealer.frame(Frames.DATA, payloads.get(i)));
            total += frames[i].remaining();
          }
          long written = frames.length == 1 ? channel.write(frames[0]) : channel.write(frames);
          lastWrite = System.nanoTime();
          if (written < total) {
            pending = rest(frames, (int) (total - written));
            selector.wakeup();
          }
        } catch (IOException e) {
          failure = e;
          Sockets.closeQuietly(channel);
          selector.wakeup();
        }
        return true;
      } finally {
        lock.unlock();
      }
    }

    /** What {@code frames} still hold, {@code left} bytes, in one buffer. */
    private static ByteBuffer rest(ByteBuffer[] frames, int left) {
      ByteBuffer b = ByteBuffer.allocate(left);
      for (ByteBuffer f : frames) {
        b.put(f);
      }
      return b.flip();
    }

    /**
     * Dialer thread, under {@link #lock}: writes what the socket takes now (the rest of a half-written frame, then
     * queued items, then a PING if nothing was written for {@code heartbeat}). Returns whether a frame is left half
     * written.
     */
    boolean flush(long heartbeat) throws IOException {
      if (failure != null) {
        throw failure;
      }
      if (pending != null) {
        channel.write(pending);
        if (pending.hasRemaining()) {
          return true;
        }
        pending = null;
      }
      Item it;
      while ((it = queue.poll()) != null) {
        if (taken(it, generation) && write(sealer.frame(Frames.DATA, it.payload))) {
          return true;
        }
      }
      if (System.nanoTime() - lastWrite >= heartbeat) {
        return write(sealer.frame(Frames.PING, Frames.EMPTY));
      }
      return false;
    }

    /** Nanoseconds until a PING is due. Under {@link #lock}. */
    long untilPing(long heartbeat) {
      return heartbeat - (System.nanoTime() - lastWrite);
    }

    private boolean write(byte[] frame) throws IOException {
      ByteBuffer b = ByteBuffer.wrap(frame);
      channel.write(b);
      lastWrite = System.nanoTime();
      if (b.hasRemaining()) {
        pending = b;
        return true;
      }
      return false;
    }
  }

  /**
   * The dialer thread's part of a plain TCP link: finishes what {@link #send} left half written or queued, sends a
   * PING when nothing was written for a quarter of {@code idleTimeout}, and watches the link (end of stream or any
   * byte means it is over). Returns only by throwing, when the link ends.
   */
  private void directLoop(Link link) throws IOException {
    Direct d = link.direct();
    long heartbeat = settings.heartbeatNanos();
    SelectionKey key = d.channel.register(d.selector, SelectionKey.OP_READ);
    ByteBuffer one = ByteBuffer.allocate(1);
    try {
      while (true) {
        if (!d.channel.isOpen() || current != link || !life.started()) {
          throw new IOException("link closed");
        }
        boolean halfWritten;
        long untilPing;
        d.lock.lock();
        try {
          halfWritten = d.flush(heartbeat);
          untilPing = d.untilPing(heartbeat);
        } finally {
          d.lock.unlock();
        }
        key.interestOps(halfWritten ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ);
        d.selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(untilPing)));
        boolean readable = d.selector.selectedKeys().remove(key) && key.isValid() && key.isReadable();
        if (Thread.currentThread().isInterrupted()) {
          throw new IOException("link closed");
        }
        if (readable) {
          one.clear();
          int n = d.channel.read(one);
          if (n < 0) {
            throw new EOFException();
          }
          if (n > 0) {
            sentOnSendOnly();
          }
        }
      }
    } catch (CancelledKeyException e) {
      throw new IOException("link closed"); // the channel was closed under the selector
    }
  }

  /** The TLS link's writer: DATA from the queue, a PING when it was empty for a quarter of {@code idleTimeout}. */
  private void writeLoop(Link link) throws IOException, InterruptedException {
    long heartbeat = TimeUnit.NANOSECONDS.toMillis(settings.heartbeatNanos());
    DataOutputStream out = link.out();
    while (true) {
      Item it = queue.poll(heartbeat, TimeUnit.MILLISECONDS);
      if (link.socket().isClosed() || current != link || !life.started()) {
        throw new IOException("link closed");
      }
      if (it == null) {
        Frames.write(out, Frames.PING, link.sealer().seal(Frames.PING, Frames.EMPTY));
        out.flush();
        continue;
      }
      if (taken(it, link.generation())) {
        Frames.write(out, Frames.DATA, link.sealer().seal(Frames.DATA, it.payload));
        if (queue.isEmpty()) {
          out.flush();
        }
      }
    }
  }

  /**
   * Whether {@code it}, just taken from the queue, is a payload to write on connection {@code generation}: not a
   * wake-up, nor queued for an earlier connection (dropped, as its peerDown said).
   */
  private boolean taken(Item it, long generation) {
    if (it == WAKE) {
      return false;
    }
    queuedBytes.addAndGet(-it.payload.length);
    return it.generation == generation;
  }

  /** The TLS link's reader: the acceptor never writes after ACCEPT, so end of stream or any byte ends the link. */
  private void watch(Socket s) {
    try {
      InputStream in = s.getInputStream();
      if (in.read() >= 0) {
        sentOnSendOnly();
      }
    } catch (IOException e) {
      // closed, by either side
    } finally {
      Sockets.closeQuietly(s);
      queue.add(WAKE);
    }
  }

  private void sentOnSendOnly() throws IOException {
    if (life.started()) {
      log.warn("{}: closing link to {}: it sent data on a send-only link", self, peer);
    }
    throw new IOException("link closed");
  }
}
