package dev.tumbler.peer.transport.tcp;

import dev.tumbler.peer.transport.tcp.Frames.Hello;
import dev.tumbler.peer.transport.tcp.TcpProtocolException.Reason;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;

/**
 * One of a member's listen sockets, for peers or for thin clients: the accept loop, the limits on connections that
 * have not proved themselves, and the handshake of each accepted connection (TLS first, when on, then the
 * {@link Handshake}) on a virtual thread of its own, within {@code handshakeTimeout}. A connection that proves the
 * secret goes to the listener's {@link Role}, which sends the ACCEPT and serves it; one that fails is closed and the
 * reason logged.
 *
 * <p><b>Floods.</b> At most {@value #MAX_UNIDENTIFIED} connections may wait for their handshake at once; to admit
 * another, the one this node has been <em>reading longest</em> is closed, and while none has been read the listener
 * accepts no more (see {@link UnidentifiedPool}). The peer listener moves a connection out of that pool as soon as
 * its HELLO names a member ({@link #claim}); at most {@value #MAX_CLAIMS_PER_NAME} handshakes may claim one member at
 * a time, the oldest closed first. A client connection stays in the pool until its proof is checked: any id of the
 * right form names a client, so there is nothing to claim. Each listener has its own pool, so a flood of clients
 * takes no room from members' handshakes. Anyone who can connect can make a connection fail, so these failures are
 * logged at most {@value #LOG_BURST} lines per {@value #LOG_WINDOW_SECONDS} s ({@link LogLimiter}); never a secret.
 *
 * <p>Thread safe.
 */
final class Listener {
  /** Connections that may wait for their handshake at once; beyond it the one read longest is closed. */
  static final int MAX_UNIDENTIFIED = 256;
  /** Handshakes that may claim one member at once (HELLO named it, proof not yet checked). */
  static final int MAX_CLAIMS_PER_NAME = 4;
  static final int LOG_BURST = 20;
  static final int LOG_WINDOW_SECONDS = 10;

  /**
   * What a kind of listener calls things, in its threads' names and its log lines.
   *
   * @param connection what it accepts: {@code connection}, {@code client connection}
   * @param dialer who dials it: {@code peer}, {@code client}
   * @param waitingFor what a connection in its pool waits for: {@code a first frame}, {@code their handshake}
   * @param summary what the summary of suppressed lines counts
   * @param threads the prefix of its threads' names
   * @param readBuffer the size of a connection's read buffer
   */
  record Terms(String connection, String dialer, String waitingFor, String summary, String threads,
      int readBuffer) {}

  static final Terms PEERS = new Terms("connection", "peer", "a first frame",
      "connections closed before their handshake completed", "tumbler-tcp-", 1 << 16);
  static final Terms CLIENTS = new Terms("client connection", "client", "their handshake",
      "client connections refused or closed", "tumbler-tcp-client-", 1 << 12);

  /** What a listener does with its connections. */
  interface Role {
    /** Refuses a HELLO by throwing (the REJECT carries the reason); may {@link #claim} the name it gives. */
    void check(Socket s, Hello hello) throws TcpProtocolException;

    /**
     * Serves a connection whose dialer proved the secret (its ACCEPT not yet sent). Returns true if it handed the
     * connection to another thread, which then {@link #discard}s it when done; false if done with it. A failure it
     * throws is logged as a failed handshake.
     */
    boolean serve(Accepted a) throws IOException;
  }

  /** A connection whose dialer proved the secret. */
  record Accepted(Socket socket, String remote, DataInputStream in, DataOutputStream out, Watchdog watchdog,
      Handshake.Proven proven) {}

  private final ServerSocket server;
  private final Terms terms;
  private final Handshake handshake;
  private final Duration handshakeTimeout;
  private final Lifecycle life;
  private final String self;
  private final Logger log;
  private final LogLimiter limiter;
  // connections in their handshake: not yet named (by HELLO), and claiming each name, oldest first
  private final ReentrantLock handshakes = new ReentrantLock();
  private final Condition room = handshakes.newCondition();
  private final UnidentifiedPool<Socket> unidentified = new UnidentifiedPool<>(MAX_UNIDENTIFIED);
  private final Map<String, ArrayDeque<Socket>> claims = new HashMap<>();
  private final Set<Socket> evicted = ConcurrentHashMap.newKeySet();
  private volatile Role role;

  Listener(ServerSocket server, Terms terms, Handshake handshake, Duration handshakeTimeout, Lifecycle life,
      String self, Logger log) {
    this.server = server;
    this.terms = terms;
    this.handshake = handshake;
    this.handshakeTimeout = handshakeTimeout;
    this.life = life;
    this.self = self;
    this.log = log;
    this.limiter = new LogLimiter(log, self, LOG_WINDOW_SECONDS, TimeUnit.SECONDS, LOG_BURST, terms.summary());
  }

  int port() {
    return server.getLocalPort();
  }

  /** Starts the accept loop; connections that prove the secret go to {@code role}. */
  void start(Role role) {
    this.role = role;
    life.spawn(terms.threads() + "accept-" + self, this::acceptLoop);
  }

  /** Closes the listen socket (the connections are the lifecycle's to close), and logs what was suppressed. */
  void close() {
    Sockets.closeQuietly(server);
    limiter.flush();
  }

  /** The rate limit of this listener's warnings, for its role's own. */
  LogLimiter limiter() {
    return limiter;
  }

  // ---------------------------------------------------------------- accepting

  private void acceptLoop() {
    while (life.started()) {
      if (!awaitRoom()) {
        return;
      }
      Socket s;
      try {
        s = server.accept();
      } catch (IOException e) {
        if (life.started()) {
          log.warn("{}: accepting a {} failed: {}", self, terms.connection(), e.toString());
          Sockets.sleepQuietly(100);
        }
        continue;
      }
      Socket evict;
      handshakes.lock();
      try {
        evict = unidentified.admit(s);
      } finally {
        handshakes.unlock();
      }
      if (evict != null) {
        evicted.add(evict);
        Sockets.closeQuietly(evict); // its thread logs it, rate-limited
      }
      life.track(s);
      if (!life.started()) {
        Sockets.closeQuietly(s);
        break;
      }
      life.spawn(terms.threads() + "in-" + s.getRemoteSocketAddress(), () -> handshake(s));
    }
  }

  /**
   * Waits until the pool of connections awaiting their handshake can take one more, that is until it is not full or
   * holds a connection that has been read; meanwhile new connections wait in the listen backlog. Returns false if
   * the transport closed meanwhile.
   */
  private boolean awaitRoom() {
    handshakes.lock();
    try {
      while (!unidentified.hasRoom()) {
        if (!life.started()) {
          return false;
        }
        room.await(); // close() interrupts this thread
      }
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      handshakes.unlock();
    }
  }

  /** {@code s}'s HELLO named {@code name}: it leaves the unnamed pool and claims that name. */
  void claim(Socket s, String name) {
    Socket oldest = null;
    handshakes.lock();
    try {
      unidentified.remove(s);
      room.signalAll();
      ArrayDeque<Socket> q = claims.computeIfAbsent(name, p -> new ArrayDeque<>());
      q.addLast(s);
      if (q.size() > MAX_CLAIMS_PER_NAME) {
        oldest = q.pollFirst();
      }
    } finally {
      handshakes.unlock();
    }
    if (oldest != null) {
      evicted.add(oldest);
      Sockets.closeQuietly(oldest);
    }
  }

  /** {@code s} finished its handshake, or ended: it no longer counts in either pool. */
  void settle(Socket s) {
    handshakes.lock();
    try {
      if (unidentified.remove(s)) {
        room.signalAll();
      }
      claims.values().removeIf(q -> q.remove(s) && q.isEmpty());
    } finally {
      handshakes.unlock();
    }
  }

  /** Closes a connection this listener accepted and forgets it. */
  void discard(Socket s, Watchdog watchdog) {
    watchdog.done();
    settle(s);
    evicted.remove(s);
    Sockets.closeQuietly(s);
    life.untrack(s);
  }

  // ---------------------------------------------------------------- one connection

  /** A virtual thread per accepted connection: its handshake, then its {@link Role}. */
  private void handshake(Socket s) {
    String remote = String.valueOf(s.getRemoteSocketAddress());
    Watchdog watchdog = new Watchdog(s, handshakeTimeout);
    String dialer = null;
    boolean handedOver = false;
    try {
      s.setTcpNoDelay(true);
      s.setSoTimeout(Sockets.millis(handshakeTimeout));
      handshakes.lock();
      try {
        unidentified.reading(s); // from now on it may be evicted to admit another
        room.signalAll();
      } finally {
        handshakes.unlock();
      }
      if (s instanceof SSLSocket ssl) {
        ssl.startHandshake();
      }
      DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream(), terms.readBuffer()));
      DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), 1 << 12));
      Handshake.Proven p = handshake.accept(in, out, hello -> role.check(s, hello));
      dialer = p.dialer();
      handedOver = role.serve(new Accepted(s, remote, in, out, watchdog, p));
    } catch (IOException | RuntimeException e) {
      failed(s, dialer == null ? remote : remote + " (" + dialer + ")", watchdog, e);
    } finally {
      if (!handedOver) {
        discard(s, watchdog);
      }
    }
  }

  /** Logs why a connection ended before it was served (rate-limited); {@code who} is its address and id. */
  void failed(Socket s, String who, Watchdog watchdog, Exception failure) {
    if (!life.started()) {
      return;
    }
    String what = terms.connection();
    switch (failure) {
      case TcpProtocolException e -> {
        if (limiter.allow(e.reason().name())) {
          log.warn("{}: closing {} from {}: {}", self, what, who, e.getMessage());
        }
      }
      case IOException e -> {
        if (evicted.remove(s)) {
          if (limiter.allow("EVICTED")) {
            log.warn("{}: closing {} from {} during its handshake: read longest of {} waiting for {}, closed to "
                + "admit a new connection", self, what, who, MAX_UNIDENTIFIED, terms.waitingFor());
          }
        } else if (watchdog.fired() || e instanceof SocketTimeoutException) {
          if (limiter.allow("TIMEOUT")) {
            log.warn("{}: closing {} from {}: {} (no complete handshake within {} ms)", self, what, who,
                Reason.TIMEOUT.text, handshakeTimeout.toMillis());
          }
        } else if (limiter.allow("IO")) {
          log.warn("{}: closing {} from {} during its handshake: {}", self, what, who,
              e instanceof EOFException ? "closed by the " + terms.dialer() : Sockets.describe(e));
        }
      }
      default -> log.error("{}: closing {} from {}: {}", self, what, who, failure.toString(), failure);
    }
  }
}
