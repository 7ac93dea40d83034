package dev.tumbler.peer.transport.tcp;

import dev.tumbler.peer.transport.tcp.TcpProtocolException.Reason;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.random.RandomGenerator;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;

/**
 * Keeps one connection to one remote end, dialling it again whenever it ends, until the transport closes: a
 * member's link to a peer ({@link PeerOutbound}) and a client's to a member ({@link TcpClientTransport}) alike, on
 * the dialling thread. An attempt connects within {@code connectTimeout}, then runs TLS (if on; the remote's
 * certificate checked against its id's host, as HTTPS does) and the {@link Handshake} within
 * {@code handshakeTimeout}; once it is through, the link is up until the {@link Role} says it ended (the transport's
 * receiver hears {@code peerUp} and then {@code peerDown}). After a failed attempt or a broken link it waits (see
 * {@link #backoffMillis}); a successful handshake resets the backoff. A refusal (a wrong secret, a full member) is
 * logged once per reason, not at every redial ({@link RepeatedWarning}).
 *
 * <p>Not thread safe, but for {@link #outcome()}: one dialling thread runs it.
 */
final class Redialer<L> implements Runnable {

  /** What the side that dials does with its connections, one at a time. */
  interface Role<L> {
    /** An unconnected socket to dial with. */
    Socket open() throws IOException;

    /** The handshake of {@code c} completed: makes it the link, from now on up (sends go to it). */
    L up(Connection c) throws IOException;

    /** Runs the link until it ends; returns only by throwing. */
    void serve(L link) throws IOException, InterruptedException;

    /** Why {@code link} ended, from {@code e}: for the log line. */
    default String ending(L link, IOException e) {
      return Sockets.describe(e);
    }

    /** The attempt is over (the link, if any, is down): forgets it. {@code link} is null if it never came up. */
    void down(L link);
  }

  /** A connection whose handshake completed, with its streams and keys. */
  record Connection(Socket socket, DataInputStream in, DataOutputStream out, Handshake.Keys keys) {}

  /** How the last attempt ended (see {@link TcpClientTransport#credentialRefused}). */
  enum Outcome {
    /** No attempt has ended yet. */
    PENDING,
    /** Its link came up (and may have gone down since). */
    UP,
    /** The two ends do not share the secret: one of them refused the other's proof. */
    REFUSED,
    /** Not reached, or the handshake failed for another reason. */
    FAILED
  }

  private final String remote;
  private final String address;
  private final TcpLinkSettings settings;
  private final Handshake handshake;
  private final Lifecycle life;
  private final String self;
  private final Logger log;
  private final Role<L> role;
  /** Refusals logged once, not at every redial. */
  private final RepeatedWarning refusals = new RepeatedWarning();
  private volatile Outcome outcome = Outcome.PENDING;

  /**
   * @param remote the remote end's id: named in its HELLO, and the host its TLS certificate must match
   * @param address where to dial it ({@code host:port}; the id, or a dial address)
   */
  Redialer(String remote, String address, TcpLinkSettings settings, Handshake handshake, Lifecycle life, String self,
      Logger log, Role<L> role) {
    this.remote = remote;
    this.address = address;
    this.settings = settings;
    this.handshake = handshake;
    this.life = life;
    this.self = self;
    this.log = log;
    this.role = role;
  }

  Outcome outcome() {
    return outcome;
  }

  @Override
  public void run() {
    String via = address.equals(remote) ? "" : " via " + address;
    int failures = 0;
    while (life.started()) {
      Socket raw;
      try {
        raw = role.open();
      } catch (IOException e) {
        log.error("{}: cannot open a socket to {}", self, remote, e);
        if (!Sockets.sleepQuietly(backoff(failures++))) {
          return;
        }
        continue;
      }
      Socket s = raw;
      L link = null;
      life.track(raw);
      try {
        Connection c = connect(raw);
        s = c.socket();
        life.track(s);
        if (!life.started()) {
          throw new IOException("transport closed"); // close() may have missed s
        }
        link = role.up(c);
        failures = 0;
        outcome = Outcome.UP;
        refusals.reset();
        log.info("{}: link to {}{} up{}", self, remote, via, settings.tls() ? " (TLS)" : "");
        life.callback(r -> r.peerUp(remote));
        role.serve(link);
      } catch (TcpProtocolException e) {
        if (link == null && outcome != Outcome.UP) {
          outcome = e.secretsDiffer() ? Outcome.REFUSED : Outcome.FAILED;
        }
        if (life.started() && link != null) {
          log.warn("{}: link to {} closed: {}", self, remote, role.ending(link, e));
        } else if (life.started()) {
          String due = refusals.due(e.getMessage());
          if (due != null) {
            log.warn("{}: link to {} refused: {}", self, remote, due);
          } else {
            log.debug("{}: link to {} refused again: {}", self, remote, e.getMessage());
          }
        }
      } catch (IOException e) {
        if (link == null && outcome == Outcome.PENDING) {
          outcome = Outcome.FAILED;
        }
        if (life.started() && link != null) {
          log.info("{}: link to {} broke: {}", self, remote, role.ending(link, e));
        } else if (life.started()) {
          log.debug("{}: cannot connect to {}{}: {}", self, remote, via, Sockets.describe(e));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (RuntimeException e) {
        log.error("{}: link to {} failed", self, remote, e);
      } finally {
        role.down(link);
        Sockets.closeQuietly(s);
        Sockets.closeQuietly(raw);
        life.untrack(s);
        life.untrack(raw);
        if (link != null) {
          log.info("{}: link to {} down", self, remote);
          life.callback(r -> r.peerDown(remote));
        }
      }
      if (!life.started() || Thread.currentThread().isInterrupted()) {
        return;
      }
      if (!Sockets.sleepQuietly(backoff(failures++))) {
        return;
      }
    }
  }

  /** Connects {@code raw}, runs TLS (if on) and the handshake within {@code handshakeTimeout}. */
  private Connection connect(Socket raw) throws IOException {
    raw.setTcpNoDelay(true);
    raw.setKeepAlive(true);
    raw.connect(new InetSocketAddress(Sockets.hostOf(address), Sockets.portOf(address)),
        Sockets.millis(settings.connectTimeout()));
    Watchdog watchdog = new Watchdog(raw, settings.handshakeTimeout());
    Socket s = raw;
    try {
      raw.setSoTimeout(Sockets.millis(settings.handshakeTimeout()));
      if (settings.tls()) {
        // TLS checks the remote's id host, not the address dialled (a NAT's, an alias's, a relay's)
        SSLSocket ssl = (SSLSocket) settings.sslContext().getSocketFactory().createSocket(raw, Sockets.hostOf(remote),
            Sockets.portOf(remote), true);
        SSLParameters params = ssl.getSSLParameters();
        params.setEndpointIdentificationAlgorithm("HTTPS");
        ssl.setSSLParameters(params);
        s = ssl;
        life.track(ssl);
        ssl.startHandshake();
      }
      DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 1 << 12));
      DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), 1 << 16));
      Handshake.Keys keys = handshake.dial(in, out, self, remote);
      if (!watchdog.done()) {
        throw new SocketTimeoutException("handshake timed out");
      }
      s.setSoTimeout(0);
      return new Connection(s, in, out, keys);
    } catch (IOException e) {
      Sockets.closeQuietly(s);
      life.untrack(s);
      // the per-read timeout and the watchdog both end at the handshake timeout: either may come first
      if (watchdog.fired() || e instanceof SocketTimeoutException) {
        throw new TcpProtocolException(Reason.TIMEOUT, "no complete handshake with " + remote + " within "
            + settings.handshakeTimeout().toMillis() + " ms");
      }
      throw e;
    } finally {
      watchdog.done();
    }
  }

  private long backoff(int failures) {
    RandomGenerator random = settings.random();
    synchronized (random) {
      return backoffMillis(failures, settings.backoffMin().toMillis(), settings.backoffMax().toMillis(), random);
    }
  }

  /**
   * The wait before reconnection attempt {@code failures + 1} (exponential backoff with jitter): the ceiling
   * {@code min × 2^failures}, capped at {@code max}, and the wait drawn uniformly from the ceiling's upper half, so
   * that peers that lost each other at the same moment do not redial in lockstep.
   */
  static long backoffMillis(int failures, long min, long max, RandomGenerator random) {
    long ceiling = failures >= 30 ? max : Math.min(max, min << Math.max(0, failures));
    ceiling = Math.max(1, Math.min(max, ceiling));
    long half = ceiling / 2;
    return half + random.nextLong(ceiling - half + 1);
  }
}
