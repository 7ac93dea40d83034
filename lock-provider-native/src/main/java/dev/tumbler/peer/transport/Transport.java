package dev.tumbler.peer.transport;

import java.util.List;
import java.util.Set;

/**
 * Moves opaque payloads between the peers of one native cluster. Peers are named by id (for TCP, the
 * {@code host:port} a peer listens on). Delivery per ordered pair of peers is FIFO and reliable while a
 * link is up (TCP semantics); a payload sent while a link is down is dropped, and the loss is reported
 * as {@link Receiver#peerDown}. Protocol cores re-send what they need after {@link Receiver#peerUp}.
 *
 * <p>Implementations: the in-memory transport (one JVM) and the TCP transport. Thread safe.
 */
public interface Transport extends AutoCloseable {

  /** Callbacks from the transport. Called from transport threads; implementations must be thread safe. */
  interface Receiver {
    /** A payload from {@code peer}, in the order {@code peer} sent it. */
    void deliver(String peer, byte[] payload);

    /** A link to {@code peer} is (again) up: an authenticated connection exists. */
    void peerUp(String peer);

    /** The link to {@code peer} is down; payloads sent since may be lost. */
    void peerDown(String peer);
  }

  /** This peer's id. */
  String self();

  /** The other peers' ids (fixed membership). */
  Set<String> peers();

  /** Starts delivering to {@code receiver}; connects to the peers. Called once. */
  void start(Receiver receiver);

  /** Sends {@code payload} to {@code peer} asynchronously; never blocks on the network. */
  void send(String peer, byte[] payload);

  /**
   * Sends {@code payloads} to {@code peer} in order, as {@link #send(String, byte[])} would one by one; a
   * transport may put them in one write, so that the peer reads them with one wake-up.
   */
  default void send(String peer, List<byte[]> payloads) {
    for (byte[] p : payloads) {
      send(peer, p);
    }
  }

  /**
   * Waits until what was sent to thin clients before the call is written, or {@code maxNanos} pass: a member that
   * stops on purpose gets its last words (a {@code Gone}) out before it closes. The default waits for nothing.
   *
   * @throws InterruptedException if interrupted while it waits
   */
  default void flush(long maxNanos) throws InterruptedException {}

  /** Whether a link to {@code peer} is up right now. */
  boolean isUp(String peer);

  /** Closes every link; no callback follows. Idempotent. */
  @Override
  void close();
}
