package dev.tumbler.peer.transport.tcp;

import static dev.tumbler.peer.transport.tcp.Sockets.printable;

import dev.tumbler.peer.transport.tcp.Frames.Hello;
import dev.tumbler.peer.transport.tcp.TcpProtocolException.Reason;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;

/**
 * The client listener's {@link Listener.Role}: the thin clients a member serves (see {@link TcpTransport},
 * "Clients", for the events and limits). A connection whose HELLO names a client id and that proves
 * {@code clientSecret} is served over one {@link DuplexLink}: the handshake's virtual thread goes on to read it
 * until it ends, and a second virtual thread writes to it (virtual, unlike a peer's platform reader, because a
 * member may serve thousands of clients). A connection that replaces an older one of the same id is announced only
 * once the older one's {@code peerDown} has been called, so up and down alternate per id; a new client beyond
 * {@code maxClients} is refused after its proof (a reconnecting client takes no more room).
 *
 * <p>Thread safe.
 */
final class ClientLinks implements Listener.Role {
  private final String self;
  private final Set<String> members;
  private final TcpLinkSettings settings;
  private final int maxClients;
  private final Lifecycle life;
  private final Logger log;
  private final Listener listener;
  private final long queueLimit;
  // written under `registry`, read without it
  private final ConcurrentHashMap<String, Client> clients = new ConcurrentHashMap<>();
  private final Object registry = new Object();

  /** One client connection being served (or about to be). */
  private static final class Client {
    final String id;
    final DuplexLink link;
    /** Completes after this connection's last callback: its peerDown, or nothing if it never went up. */
    final CompletableFuture<Void> ended = new CompletableFuture<>();
    /** Set just before its peerUp: from then on {@link #send} writes to it. */
    volatile boolean up;

    Client(String id, DuplexLink link) {
      this.id = id;
      this.link = link;
    }
  }

  /** {@code members}: every member's id, this one's included (a client id is none of them). */
  ClientLinks(String self, Set<String> members, TcpLinkSettings settings, int maxClients, Lifecycle life, Logger log,
      Listener listener) {
    this.self = self;
    this.members = members;
    this.settings = settings;
    this.maxClients = maxClients;
    this.life = life;
    this.log = log;
    this.listener = listener;
    this.queueLimit = DuplexLink.queueLimit(settings);
  }

  /** Waits until what was queued for every client is written, or {@code maxNanos} pass in all. */
  void drain(long maxNanos) throws InterruptedException {
    long end = System.nanoTime() + maxNanos;
    for (Client c : List.copyOf(clients.values())) {
      c.link.drain(Math.max(0, end - System.nanoTime()));
    }
  }

  /** Closes every client connection (the lifecycle closes their sockets and threads too). */
  void close() {
    for (Client c : clients.values()) {
      c.link.close("the transport closed");
    }
  }

  /** Queues {@code payloads} for {@code client}; dropped if it is not up (its peerDown was or will be called). */
  void send(String client, List<byte[]> payloads) {
    Client c = clients.get(client);
    if (c == null || !c.up || !c.link.send(payloads)) {
      log.trace("{}: client {} not connected, payload dropped", self, client);
    }
  }

  boolean isUp(String client) {
    Client c = clients.get(client);
    return c != null && c.up && !c.link.isClosed();
  }

  /**
   * A client names itself by a client id. What it says it dialled is not checked (it knows this member only by the
   * address it dialled, which may be a NAT's or a DNS alias's) but is covered by both proofs.
   */
  @Override
  public void check(Socket s, Hello hello) throws TcpProtocolException {
    String client = hello.dialer();
    if (!Frames.isClientId(client)) {
      throw new TcpProtocolException(Reason.BAD_CLIENT_ID, "'" + printable(client) + "'"
          + (members.contains(client) ? " is a member's id: members dial the peer listener" : ""));
    }
  }

  /** Registers the connection, sends its ACCEPT and reads it until it ends, on this thread. */
  @Override
  public boolean serve(Listener.Accepted a) throws IOException {
    String id = a.proven().dialer();
    String who = a.remote() + " (" + id + ")";
    listener.settle(a.socket());
    Handshake.Keys keys = a.proven().keys();
    Client conn = new Client(id, new DuplexLink(a.socket(), a.in(), a.out(), keys.toDialer(), keys.toAcceptor(),
        settings, queueLimit));
    try {
      Client old = register(conn, a.out());
      if (old != null) {
        // the client reconnected: its old connection is dead to it. Announce this one after the old one's end
        old.link.close("replaced by a newer connection from " + id);
        awaitEnd(old);
      }
      // stopped before the ACCEPT: once the client has it, only the link's end may close the connection
      if (!a.watchdog().done()) {
        throw new SocketTimeoutException("handshake timed out");
      }
      Frames.write(a.out(), Frames.ACCEPT, Frames.EMPTY);
      a.out().flush();
      DuplexLink link = conn.link;
      if (!link.isClosed()) {
        conn.up = true;
        log.debug("{}: client {} ({}) up", self, id, a.remote());
        life.callback(r -> r.peerUp(id));
      }
      life.spawn("tumbler-tcp-client-write-" + id, link::writeLoop);
      link.readLoop(payload -> life.callback(r -> r.deliver(id, payload)));
    } catch (IOException | RuntimeException e) {
      if (!conn.up && !conn.link.isClosed()) {
        throw e; // refused, or its handshake ran out of time: the listener logs it as a failed handshake
      }
      ended(who, conn, e);
    } finally {
      conn.link.close("ended");
      synchronized (registry) {
        clients.remove(conn.id, conn);
      }
      if (conn.up) {
        life.callback(r -> r.peerDown(id));
      }
      conn.ended.complete(null);
    }
    return false;
  }

  /** Waits for {@code old}'s last callback; its reader ends as soon as its socket is closed. */
  private static void awaitEnd(Client old) throws IOException {
    try {
      old.ended.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("transport closed");
    } catch (ExecutionException e) {
      throw new IllegalStateException(e); // never completed exceptionally
    }
  }

  /**
   * Makes {@code conn} its client's connection; returns the one it replaces, or null.
   *
   * @throws TcpProtocolException (after sending the REJECT) if {@code maxClients} are served and this is a
   *     new client
   */
  private Client register(Client conn, DataOutputStream out) throws IOException {
    int served;
    synchronized (registry) {
      if (!life.started()) {
        throw new IOException("transport closed");
      }
      Client old = clients.get(conn.id);
      served = clients.size();
      if (old != null || served < maxClients) {
        clients.put(conn.id, conn);
        return old;
      }
    }
    Handshake.reject(out, Reason.TOO_MANY_CLIENTS);
    throw new TcpProtocolException(Reason.TOO_MANY_CLIENTS, "'" + conn.id + "' refused: " + served
        + " clients served, maxClients " + maxClients);
  }

  /**
   * Logs why a client connection ended once accepted. Protocol errors and idle timeouts are rate-limited with the
   * handshake failures, since a thousand clients (behind one broken router, say) could cause them; a client's
   * ordinary end is INFO.
   */
  private void ended(String who, Client conn, Exception failure) {
    if (!life.started()) {
      return;
    }
    switch (failure) {
      case TcpProtocolException e -> {
        if (listener.limiter().allow(e.reason().name())) {
          log.warn("{}: closing client connection from {}: {}", self, who, conn.link.ending(e));
        }
      }
      case IOException e -> {
        if (!conn.up) {
          log.info("{}: client connection from {} ended before it was up: {}", self, who, conn.link.closedBecause());
        } else if (e instanceof SocketTimeoutException && conn.link.closedBecause() == null) {
          if (listener.limiter().allow("IDLE")) {
            log.warn("{}: closing client connection from {}: {}", self, who, conn.link.ending(e));
          }
        } else {
          log.info("{}: client connection from {} ended: {}", self, who, conn.link.ending(e));
        }
      }
      default -> log.error("{}: closing client connection from {}: {}", self, who, failure.toString(), failure);
    }
  }
}
