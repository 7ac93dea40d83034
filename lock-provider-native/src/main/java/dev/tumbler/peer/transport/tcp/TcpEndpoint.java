package dev.tumbler.peer.transport.tcp;

import dev.tumbler.peer.transport.Transport;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;

/**
 * What a member's {@link TcpTransport} and a client's {@link TcpClientTransport} have in common: an id, the ids of
 * the ends it links to, and its {@link Lifecycle}, which its parts share. Thread safe.
 */
abstract sealed class TcpEndpoint implements Transport permits TcpTransport, TcpClientTransport {
  final String self;
  final Set<String> peers;
  final Lifecycle life;
  final Logger log;

  TcpEndpoint(String self, Set<String> peers, Logger log) {
    this.self = self;
    this.peers = peers;
    this.log = log;
    this.life = new Lifecycle(self, log);
  }

  /** This end's id; see the class javadoc. */
  @Override
  public final String self() {
    return self;
  }

  /** The ids of the ends it links to; see the class javadoc. */
  @Override
  public final Set<String> peers() {
    return peers;
  }

  /** As {@link #send(String, List)} with one payload. */
  @Override
  public final void send(String peer, byte[] payload) {
    send(peer, List.of(payload));
  }

  /**
   * Closes every connection and listen socket; no callback starts afterwards (one already running may finish).
   * Idempotent.
   */
  @Override
  public final void close() {
    if (life.close()) {
      closing();
      life.stopAll();
      log.info("{}: transport closed", self);
    }
  }

  /** What {@link #close()} does before it closes every socket and interrupts every thread. */
  abstract void closing();

  @Override
  public String toString() {
    return getClass().getSimpleName() + "[" + self + ", peers=" + peers + ", " + life.name() + "]";
  }
}
