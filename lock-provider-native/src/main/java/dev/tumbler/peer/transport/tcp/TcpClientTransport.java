package dev.tumbler.peer.transport.tcp;

import dev.tumbler.peer.transport.Transport;
import java.io.IOException;
import java.net.Socket;
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
import java.util.concurrent.TimeUnit;
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
 * As between members, inside TLS when it is on (the member's certificate checked against the host dialled), but
 * under the clients' secret, with labels of its own and a key per direction ({@link Handshake#CLIENTS}); the
 * client's HELLO names its id and the address it dialled.
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
 *   <li>After a failed attempt or a broken connection the client waits and redials, as a member redials a
 *       peer ({@link Redialer}), a member that refused it too (wrong secret, {@code maxClients} reached); the
 *       refusal is logged with its reason, once (again when the reason changes, or a minute later). When every
 *       member has been tried and those that answered all refused the client secret, {@link #credentialRefused()}
 *       says so, so that a caller waiting for a first link can fail at once rather than wait out its time-out.
 * </ul>
 *
 * <p>Thread safe. {@link #send} never blocks (a bounded queue and a writer thread per connection). One
 * platform thread per member dials it and then reads its connection, and one writes to it while it is up;
 * callbacks come from those threads, and none starts after {@link #close()} returns (one already running
 * may finish).
 */
public final class TcpClientTransport extends TcpEndpoint {
  private static final Logger LOG = LoggerFactory.getLogger(TcpClientTransport.class);
  private static final SecureRandom IDS = new SecureRandom();

  /** How long {@link #close()} waits, in all, for what was sent to be written. */
  static final long DRAIN_MILLIS = 1_000;

  private final TcpClientConfig config;
  private final Map<String, Member> links = new LinkedHashMap<>();

  private TcpClientTransport(TcpClientConfig config) {
    super(newId(), Collections.unmodifiableSet(new LinkedHashSet<>(config.members())), LOG);
    this.config = config;
    Handshake handshake = new Handshake(Handshake.CLIENTS, config.clientSecret());
    for (String m : peers) {
      links.put(m, new Member(m, handshake));
    }
  }

  /** {@code client/} and 32 lowercase hex digits, at random. */
  private static String newId() {
    byte[] id = new byte[16];
    IDS.nextBytes(id);
    return Frames.CLIENT_ID_PREFIX + HexFormat.of().formatHex(id);
  }

  /**
   * A client of the members {@code config} names, with a fresh client id; connects nowhere until
   * {@link #start}.
   */
  public static TcpClientTransport open(TcpClientConfig config) {
    return new TcpClientTransport(Objects.requireNonNull(config, "config"));
  }

  /**
   * Starts dialling every member.
   *
   * @throws IllegalStateException if already started or closed
   */
  @Override
  public void start(Receiver receiver) {
    // platform threads: a client has a few members, and a platform thread blocked in a read is woken by the
    // kernel directly, without the virtual thread scheduler's hand-offs on the path of every reply
    life.start(receiver, () -> links.forEach((id, m) -> life.spawnPlatform("tumbler-tcp-client-dial-" + id,
        m.dialer)));
    LOG.info("{}: dialling members {}{}", self, peers, config.link().tls() ? " (TLS)" : "");
  }

  /**
   * Queues {@code payloads} for {@code member} and returns at once; dropped when the connection is down
   * (the receiver has been, or will be, told with {@code peerDown}). The arrays must not be changed afterwards.
   *
   * @throws IllegalArgumentException if {@code member} is not one of {@link #peers()}, or a payload
   *     exceeds maxFrameSize
   */
  @Override
  public void send(String member, List<byte[]> payloads) {
    Member m = memberOf(member);
    config.link().checkPayloads(payloads);
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
   * {@link #close()} closes every connection once what was sent on it before the call is written (at most
   * {@value #DRAIN_MILLIS} ms in all: a client's last releases reach its member rather than wait there for its session
   * to expire).
   */
  @Override
  void closing() {
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
  }

  /** Closes the current connection to {@code member}, if any (tests: a break the member sees as well). */
  void breakLink(String member) {
    DuplexLink l = memberOf(member).link;
    if (l != null) {
      l.close("asked to");
    }
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
      switch (m.dialer.outcome()) {
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

  /**
   * One member's connection: its {@link Redialer}'s role, on one platform thread that dials the member and then reads
   * its connection, while a second one writes to it.
   */
  private final class Member implements Redialer.Role<DuplexLink> {
    final String id;
    final Redialer<DuplexLink> dialer;
    /** The current connection while it is up (after its peerUp, until its peerDown); else null. */
    volatile DuplexLink link;

    Member(String id, Handshake handshake) {
      this.id = id;
      this.dialer = new Redialer<>(id, id, config.link(), handshake, life, self, LOG, this);
    }

    @Override
    public Socket open() {
      return new Socket();
    }

    @Override
    public DuplexLink up(Redialer.Connection c) {
      Handshake.Keys keys = c.keys();
      DuplexLink l = new DuplexLink(c.socket(), c.in(), c.out(), keys.toAcceptor(), keys.toDialer(), config.link(),
          DuplexLink.queueLimit(config.link()));
      link = l;
      return l;
    }

    @Override
    public void serve(DuplexLink l) throws IOException {
      life.spawnPlatform("tumbler-tcp-client-write-" + id, l::writeLoop);
      l.readLoop(payload -> life.callback(r -> r.deliver(id, payload)));
    }

    @Override
    public String ending(DuplexLink l, IOException e) {
      return l.ending(e);
    }

    @Override
    public void down(DuplexLink l) {
      link = null;
      if (l != null) {
        l.close("ended");
      }
    }
  }

  private Member memberOf(String member) {
    Objects.requireNonNull(member, "member");
    Member m = links.get(member);
    if (m == null) {
      throw new IllegalArgumentException("'" + member + "' is not one of " + self + "'s members " + peers);
    }
    return m;
  }
}
