package dev.tumbler.peer.transport.tcp;

import dev.tumbler.peer.transport.Transport;
import dev.tumbler.peer.transport.tcp.Frames.Frame;
import dev.tumbler.peer.transport.tcp.TcpProtocolException.Reason;
import dev.tumbler.peer.transport.tcp.TcpTransport.Watchdog;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Transport} of a thin client: a process that is not a member of a native cluster but holds
 * sessions with its members, over TCP or TLS (see {@link TcpTransport}, "Clients", for the member's side).
 *
 * <p>The client dials every member's client address it is given and keeps one connection to each; it has
 * no listener, so it works behind NAT. Its {@link #peers()} are those addresses, in the order given, and
 * its {@link #self()} is {@code client/} and 32 lowercase hex digits drawn from {@link SecureRandom} when
 * the transport is opened: a new id per instance, so a restarted client process is a new client.
 *
 * <h2>Handshake</h2>
 * As between members (HMAC-SHA256 challenge and response over fresh 32-byte nonces from both ends, inside
 * TLS when it is on, the member's certificate checked against the host dialled), but under the clients'
 * secret and with labels of its own ({@code "tumbler/1 client proof"}, {@code "tumbler/1 member proof to a
 * client"}), so that no proof made on the peer listener verifies here or the other way round. The client's
 * HELLO names its id and the address it dialled; both proofs cover both, and both nonces. Then each
 * direction has its own key ({@code "tumbler/1 client-to-member key"}, {@code "tumbler/1 member-to-client
 * key"}) and numbers its frames from zero.
 *
 * <h2>Up and down</h2>
 * <ul>
 *   <li>{@link Receiver#peerUp peerUp(m)} after the handshake with member {@code m} completes; from then
 *       until the next {@code peerDown(m)}, payloads {@link #send sent} to {@code m} go on that connection,
 *       in order, and {@link Receiver#deliver deliver(m, …)} is called for each DATA frame {@code m} sends on
 *       it, in order, from one thread at a time. Nothing is delivered from {@code m} outside that span.
 *   <li>{@link Receiver#peerDown peerDown(m)} when the connection ends: either end closes it, a write fails,
 *       nothing arrived for {@code idleTimeout} (both ends send a PING when idle for a quarter of it), or the
 *       send queue overflows (a member that stops reading). Payloads queued but not yet written are dropped,
 *       and payloads sent while down are dropped; the member sees the same connection end.
 *   <li>After a failed attempt or a broken connection the client waits and redials: exponential backoff
 *       from {@code backoffMin} to {@code backoffMax}, each wait drawn from the upper half, reset after a
 *       successful handshake (as a member redials a peer). A member that refuses (wrong secret,
 *       {@code maxClients} reached) is redialled the same way; the refusal is logged with its reason, once (again
 *       when the reason changes, or a minute later). When every member has been tried and those that answered all
 *       refused the client secret, {@link #credentialRefused()} says so, so that a caller waiting for a first link
 *       can fail at once rather than wait out its time-out.
 * </ul>
 *
 * <p>Thread safe. {@link #send} never blocks (a bounded queue and a writer thread per connection). One
 * platform thread per member dials it and then reads its connection, and one writes to it while it is up;
 * callbacks come from those threads, and none starts after {@link #close()} returns (one already running
 * may finish).
 */
public final class TcpClientTransport implements Transport {
  private static final Logger LOG = LoggerFactory.getLogger(TcpClientTransport.class);
  private static final SecureRandom IDS = new SecureRandom();

  private enum State { LATENT, STARTED, CLOSED }

  private final TcpClientConfig config;
  private final byte[] clientSecret;
  private final String self;
  private final Set<String> members;
  private final Map<String, Member> links = new LinkedHashMap<>();
  private final Set<Closeable> open = ConcurrentHashMap.newKeySet();
  private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
  private final AtomicInteger threadCount = new AtomicInteger();
  private final SecureRandom nonces = new SecureRandom();
  private final long queueLimit;
  private final Object stateLock = new Object();
  private volatile State state = State.LATENT;
  private volatile Receiver receiver;

  private TcpClientTransport(TcpClientConfig config) {
    this.config = config;
    this.clientSecret = config.clientSecret();
    byte[] id = new byte[16];
    IDS.nextBytes(id);
    this.self = Frames.CLIENT_ID_PREFIX + HexFormat.of().formatHex(id);
    this.members = Collections.unmodifiableSet(new LinkedHashSet<>(config.members()));
    for (String m : members) {
      links.put(m, new Member(m));
    }
    this.queueLimit = Math.max(4L << 20, 2L * config.maxFrameSize());
  }

  /** How long {@link #close()} waits, in all, for what was sent to be written. */
  static final long DRAIN_MILLIS = 1_000;

  /**
   * A client of the members {@code config} names, with a fresh client id; connects nowhere until
   * {@link #start}.
   */
  public static TcpClientTransport open(TcpClientConfig config) {
    return new TcpClientTransport(Objects.requireNonNull(config, "config"));
  }

  /** This client's id: {@code client/} and 32 lowercase hex digits, random per instance. */
  @Override
  public String self() {
    return self;
  }

  /** The members' client addresses, in the order configured (a {@link LinkedHashSet}, unmodifiable). */
  @Override
  public Set<String> peers() {
    return members;
  }

  /** The settings this transport runs with. */
  public TcpClientConfig config() {
    return config;
  }

  /**
   * Starts dialling every member.
   *
   * @throws IllegalStateException if already started or closed
   */
  @Override
  public void start(Receiver receiver) {
    Objects.requireNonNull(receiver, "receiver");
    synchronized (stateLock) {
      if (state != State.LATENT) {
        throw new IllegalStateException("transport " + self + " is " + state.name().toLowerCase());
      }
      this.receiver = receiver;
      state = State.STARTED;
      for (Member m : links.values()) {
        spawn("tumbler-tcp-client-dial-" + m.id, m::run);
      }
    }
    LOG.info("{}: dialling members {}{}", self, members, config.tls() ? " (TLS)" : "");
  }

  /**
   * Queues {@code payload} for {@code member} and returns at once; dropped when the connection is down
   * (the receiver has been, or will be, told with {@code peerDown}). The array must not be changed afterwards.
   *
   * @throws IllegalArgumentException if {@code member} is not one of {@link #peers()}, or the payload
   *     exceeds maxFrameSize
   */
  @Override
  public void send(String member, byte[] payload) {
    send(member, List.of(payload));
  }

  @Override
  public void send(String member, List<byte[]> payloads) {
    Member m = memberOf(member);
    for (byte[] p : payloads) {
      Objects.requireNonNull(p, "payload");
      if (p.length > config.maxFrameSize()) {
        throw new IllegalArgumentException("payload of " + p.length + " bytes exceeds maxFrameSize "
            + config.maxFrameSize());
      }
    }
    DuplexLink l = m.link;
    if (l == null || !l.send(payloads)) {
      LOG.trace("{}: link to {} down, payload dropped", self, member);
    }
  }

  @Override
  public boolean isUp(String member) {
    DuplexLink l = memberOf(member).link;
    return l != null && !l.isClosed();
  }

  /**
   * Closes every connection, once what was sent on it before the call is written (at most {@value #DRAIN_MILLIS} ms in
   * all: a client's last releases reach its member rather than wait there for its session to expire); no callback
   * starts afterwards. Idempotent.
   */
  @Override
  public void close() {
    synchronized (stateLock) {
      if (state == State.CLOSED) {
        return;
      }
      state = State.CLOSED;
    }
    long drainEnd = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DRAIN_MILLIS);
    for (Member m : links.values()) {
      DuplexLink l = m.link;
      try {
        if (l != null && !l.drain(Math.max(0, drainEnd - System.nanoTime()))) {
          LOG.debug("{}: what was sent to {} was not all written within {} ms of close", self, m.id, DRAIN_MILLIS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    for (Member m : links.values()) {
      DuplexLink l = m.link;
      if (l != null) {
        l.close("the transport closed");
      }
    }
    for (Closeable c : open) {
      TcpTransport.closeQuietly(c);
    }
    for (Thread t : threads) {
      t.interrupt();
    }
    LOG.info("{}: transport closed", self);
  }

  /** Closes the current connection to {@code member}, if any (tests: a break the member sees as well). */
  void breakLink(String member) {
    DuplexLink l = memberOf(member).link;
    if (l != null) {
      l.close("asked to");
    }
  }

  @Override
  public String toString() {
    return "TcpClientTransport[" + self + ", members=" + members + ", " + state.name().toLowerCase() + "]";
  }

  // ---------------------------------------------------------------- one member

  /** How the last attempt to reach a member ended (see {@link #credentialRefused}). */
  private enum Outcome {
    /** No attempt has ended yet. */
    PENDING,
    /** Its link came up (and may have gone down since). */
    UP,
    /** It and this client do not share the client secret: one of them refused the other's proof. */
    REFUSED,
    /** Not reached, or the handshake failed for another reason. */
    FAILED
  }

  /**
   * Whether the members refused this client's credential, as far as can be told yet: every member has been tried, none
   * has let the client in, and at least one of them does not share its {@code clientSecret} (the client found the
   * member's proof wrong, or the member said so of the client's). Then the description (which members refused, which
   * could not be reached), else empty; never the secret. A member that refuses once is still redialled, as ever; this
   * tells a caller that waits for a first link that none will come with this credential.
   */
  public Optional<String> credentialRefused() {
    List<String> refused = new ArrayList<>();
    List<String> unreachable = new ArrayList<>();
    for (Member m : links.values()) {
      switch (m.outcome) {
        case PENDING, UP -> {
          return Optional.empty();
        }
        case REFUSED -> refused.add(m.id);
        case FAILED -> unreachable.add(m.id);
      }
    }
    if (refused.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of("refused by " + String.join(", ", refused)
        + (unreachable.isEmpty() ? "" : "; not reached: " + String.join(", ", unreachable)));
  }

  /** The dialler and reader of one member's connection, on one platform thread. */
  private final class Member {
    final String id;
    /** The current connection while it is up (after its peerUp, until its peerDown); else null. */
    volatile DuplexLink link;
    volatile Outcome outcome = Outcome.PENDING;
    /** Refusals logged once, not at every redial. */
    private final RepeatedWarning refusals = new RepeatedWarning();

    Member(String id) {
      this.id = id;
    }

    void run() {
      int failures = 0;
      while (state == State.STARTED) {
        Socket raw = new Socket();
        Socket s = raw;
        DuplexLink l = null;
        open.add(raw);
        try {
          Connected c = connect(raw);
          s = c.socket();
          open.add(s);
          if (state != State.STARTED) {
            throw new IOException("transport closed"); // close() may have missed s
          }
          l = new DuplexLink(s, c.in(), c.out(), c.toMember(), c.toClient(), config.maxFrameSize(),
              config.idleTimeout(), queueLimit);
          failures = 0;
          link = l;
          outcome = Outcome.UP;
          refusals.reset();
          LOG.info("{}: link to {} up{}", self, id, config.tls() ? " (TLS)" : "");
          callback(r -> r.peerUp(id));
          DuplexLink writing = l;
          spawn("tumbler-tcp-client-write-" + id, writing::writeLoop);
          l.readLoop(payload -> callback(r -> r.deliver(id, payload)));
        } catch (TcpProtocolException e) {
          if (l == null && outcome != Outcome.UP) {
            outcome = e.secretsDiffer() ? Outcome.REFUSED : Outcome.FAILED;
          }
          if (state == State.STARTED && l != null) {
            LOG.warn("{}: link to {} closed: {}", self, id, l.ending(e));
          } else if (state == State.STARTED) {
            String due = refusals.due(e.getMessage());
            if (due != null) {
              LOG.warn("{}: link to {} refused: {}", self, id, due);
            } else {
              LOG.debug("{}: link to {} refused again: {}", self, id, e.getMessage());
            }
          }
        } catch (IOException e) {
          if (l == null && outcome == Outcome.PENDING) {
            outcome = Outcome.FAILED;
          }
          if (state == State.STARTED) {
            if (l != null) {
              LOG.info("{}: link to {} broke: {}", self, id, l.ending(e));
            } else {
              LOG.debug("{}: cannot connect to {}: {}", self, id, TcpTransport.describe(e));
            }
          }
        } catch (RuntimeException e) {
          LOG.error("{}: link to {} failed", self, id, e);
        } finally {
          link = null;
          if (l != null) {
            l.close("ended");
          }
          TcpTransport.closeQuietly(s);
          TcpTransport.closeQuietly(raw);
          open.remove(s);
          open.remove(raw);
          if (l != null) {
            LOG.info("{}: link to {} down", self, id);
            callback(r -> r.peerDown(id));
          }
        }
        if (state != State.STARTED || Thread.currentThread().isInterrupted()) {
          return;
        }
        if (!TcpTransport.sleepQuietly(backoff(failures++))) {
          return;
        }
      }
    }

    private record Connected(Socket socket, DataInputStream in, DataOutputStream out, byte[] toMember,
        byte[] toClient) {}

    /** Connects, runs TLS (if on) and the client handshake within {@code handshakeTimeout}. */
    private Connected connect(Socket raw) throws IOException {
      String host = TcpTransport.hostOf(id);
      int port = TcpTransport.portOf(id);
      raw.setTcpNoDelay(true);
      raw.setKeepAlive(true);
      raw.connect(new InetSocketAddress(host, port), TcpTransport.millis(config.connectTimeout()));
      Watchdog watchdog = new Watchdog(raw, config.handshakeTimeout());
      Socket s = raw;
      try {
        raw.setSoTimeout(TcpTransport.millis(config.handshakeTimeout()));
        if (config.tls()) {
          SSLSocket ssl = (SSLSocket) config.sslContext().getSocketFactory().createSocket(raw, host, port, true);
          SSLParameters params = ssl.getSSLParameters();
          params.setEndpointIdentificationAlgorithm("HTTPS");
          ssl.setSSLParameters(params);
          s = ssl;
          open.add(ssl);
          ssl.startHandshake();
        }
        DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 1 << 12));
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), 1 << 12));
        Connected c = handshake(s, in, out);
        if (!watchdog.done()) {
          throw new SocketTimeoutException("handshake timed out");
        }
        return c;
      } catch (IOException e) {
        TcpTransport.closeQuietly(s);
        open.remove(s);
        if (watchdog.fired() || e instanceof SocketTimeoutException) {
          throw new TcpProtocolException(Reason.TIMEOUT, "no complete handshake with " + id + " within "
              + config.handshakeTimeout().toMillis() + " ms");
        }
        throw e;
      } finally {
        watchdog.done();
      }
    }

    private Connected handshake(Socket s, DataInputStream in, DataOutputStream out) throws IOException {
      byte[] nonce = new byte[Frames.NONCE_BYTES];
      nonces.nextBytes(nonce);
      Frames.write(out, Frames.HELLO, Frames.hello(self, id, nonce));
      out.flush();
      Frame c = Frames.read(in, Frames.MAX_HANDSHAKE_FRAME);
      rejected(c);
      if (c.type() != Frames.CHALLENGE) {
        throw new TcpProtocolException(Reason.UNEXPECTED_FRAME, "expected CHALLENGE, got type " + c.type());
      }
      byte[][] ch = Frames.parseChallenge(c.body());
      byte[] expected = Frames.proof(clientSecret, Frames.MEMBER_PROOF, self, id, nonce, ch[0]);
      if (!Frames.sameProof(expected, ch[1])) {
        TcpTransport.reject(out, Reason.BAD_MAC); // the member logs that this client refused its proof
        throw new TcpProtocolException(Reason.BAD_MAC, id + " did not prove the client secret: this client's "
            + "clientSecret differs from the member's");
      }
      Frames.write(out, Frames.RESPONSE, Frames.proof(clientSecret, Frames.CLIENT_PROOF, self, id, nonce, ch[0]));
      out.flush();
      Frame a = Frames.read(in, Frames.MAX_HANDSHAKE_FRAME);
      rejected(a);
      if (a.type() != Frames.ACCEPT || a.body().length != 0) {
        throw new TcpProtocolException(Reason.UNEXPECTED_FRAME, "expected ACCEPT, got type " + a.type());
      }
      return new Connected(s, in, out,
          Frames.proof(clientSecret, Frames.CLIENT_TO_MEMBER_KEY, self, id, nonce, ch[0]),
          Frames.proof(clientSecret, Frames.MEMBER_TO_CLIENT_KEY, self, id, nonce, ch[0]));
    }

    private void rejected(Frame f) throws TcpProtocolException {
      if (f.type() == Frames.REJECT) {
        Reason r = f.body().length == 1 ? Reason.ofCode(f.body()[0]) : Reason.REJECTED;
        throw new TcpProtocolException(Reason.REJECTED, r, id + " says: " + r.text);
      }
    }

    private long backoff(int failures) {
      synchronized (config.random()) {
        return TcpTransport.backoffMillis(failures, config.backoffMin().toMillis(), config.backoffMax().toMillis(),
            config.random());
      }
    }
  }

  // ---------------------------------------------------------------- helpers

  private Member memberOf(String member) {
    Objects.requireNonNull(member, "member");
    Member m = links.get(member);
    if (m == null) {
      throw new IllegalArgumentException("'" + member + "' is not one of " + self + "'s members " + members);
    }
    return m;
  }

  private void callback(Consumer<Receiver> call) {
    if (state != State.STARTED) {
      return;
    }
    try {
      call.accept(receiver);
    } catch (RuntimeException e) {
      LOG.error("{}: receiver failed", self, e);
    }
  }

  /**
   * Platform threads: a client has a few members, and a platform thread blocked in a read is woken by the
   * kernel directly, without the virtual thread scheduler's hand-offs on the path of every reply.
   */
  private void spawn(String name, Runnable r) {
    Thread t = Thread.ofPlatform().daemon().name(name + "#" + threadCount.incrementAndGet()).unstarted(() -> {
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
