package dev.tumbler.peer.core;

/**
 * A message between the peers of one native cluster. Each algorithm declares its messages as records of
 * its own {@code sealed} sub-interface (for example {@code LamportMessage}), so its core can switch over
 * them exhaustively; this base is deliberately not sealed itself, because a sealed interface can only
 * permit types of its own package, and every algorithm lives in a package of its own.
 *
 * <p>Every peer message carries the sender's logical timestamp, which is all a driver needs to know about
 * it (for traces); the rest is the algorithm's.
 */
public interface PeerMessage {

  /** The sender's logical clock when it sent the message. */
  long ts();
}
