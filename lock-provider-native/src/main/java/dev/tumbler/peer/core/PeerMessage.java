package dev.tumbler.peer.core;

/**
 * A message between the peers of one native cluster. Each algorithm declares its messages as records of
 * its own {@code sealed} sub-interface (for example {@code LamportMessage}), so its core can switch over
 * them exhaustively; this base is deliberately not sealed itself, because a sealed interface can only
 * permit types of its own package, and every algorithm lives in a package of its own. What a message
 * carries (a logical clock, a term, a request key) is the algorithm's business.
 */
public interface PeerMessage {

  /** The message's type, for counters and traces: its simple class name unless a wrapper says more. */
  default String typeName() {
    return getClass().getSimpleName();
  }
}
