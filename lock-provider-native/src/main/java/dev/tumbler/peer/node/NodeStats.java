package dev.tumbler.peer.node;

/**
 * Counters of one native node, for the demo and benchmarks: {@code service.unwrap(NodeStats.class)}.
 * Values only grow. Thread safe.
 */
public interface NodeStats {
  /** This node's id. */
  String nodeId();

  /** The algorithm the node runs, as in the URL ({@code lamport}, {@code ricart-agrawala}). */
  String algorithm();

  /** Protocol messages this node has sent to peers. */
  long messagesSent();

  /** Protocol messages this node has received from peers. */
  long messagesReceived();

  /** Grants (lock entries) this node's clients have received. */
  long grants();
}
