package dev.tumbler.peer.node;

/**
 * Counters of one native node, for the demo and benchmarks: {@code service.unwrap(NodeStats.class)}.
 * Values only grow. Thread safe.
 */
public interface NodeStats {
  /** This node's id. */
  String nodeId();

  /** The algorithm the node runs, as in the URL ({@code lamport}, {@code ricart-agrawala}, …). */
  String algorithm();

  /** Protocol messages this node has sent to peers. */
  long messagesSent();

  /** Protocol messages this node has received from peers. */
  long messagesReceived();

  /** Grants (lock entries) this node's clients have received. */
  long grants();

  /** Grants of this node's clients that the core reported lost while a client still held them. */
  long lost();

  /**
   * The elected view this node last adopted (term, leaders, and until when this node may act as a
   * leader), for algorithms with elections; empty for the others and before the first election.
   * <b>Warning:</b> the view's type is in a package the module does not export, so on the module path its
   * fields are out of reach (on the class path they are not).
   */
  @SuppressWarnings("exports")
  java.util.Optional<dev.tumbler.peer.core.Observation.View> view();

  /** Protocol messages this node has sent to peers, by message type (its simple class name), sorted. */
  java.util.Map<String, Long> messagesSentByType();

  /** Grants this node's own services hold right now (a thin client's held through a member count at the client). */
  int heldLocks();

  /** The thin clients' sessions this member serves right now; 0 on a thin client and on a member that takes none. */
  int clientSessions();

  /** A thin client's home: the member that serves its session; empty on a member, or while the client has none. */
  java.util.Optional<String> home();
}
