package dev.tumbler.peer.provider;

import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.node.NodeStats;
import java.util.Map;
import java.util.Optional;

/**
 * What {@code unwrap(NodeStats.class)} hands out: the node's counters, read through, and nothing else. The
 * node itself is a {@code NodeStats} too, but handing it out would give a cast to the whole runtime (close it,
 * step its core, reach its transport). Thread safe, as the node's counters are.
 */
final class NodeStatsView implements NodeStats {
  private final NodeStats node;

  NodeStatsView(NodeStats node) {
    this.node = node;
  }

  @Override
  public String nodeId() {
    return node.nodeId();
  }

  @Override
  public String algorithm() {
    return node.algorithm();
  }

  @Override
  public long messagesSent() {
    return node.messagesSent();
  }

  @Override
  public long messagesReceived() {
    return node.messagesReceived();
  }

  @Override
  public long grants() {
    return node.grants();
  }

  @Override
  public long lost() {
    return node.lost();
  }

  @Override
  public Optional<Observation.View> view() {
    return node.view();
  }

  @Override
  public Map<String, Long> messagesSentByType() {
    return node.messagesSentByType();
  }

  @Override
  public int heldLocks() {
    return node.heldLocks();
  }

  @Override
  public int clientSessions() {
    return node.clientSessions();
  }

  @Override
  public Optional<String> home() {
    return node.home();
  }

  @Override
  public String toString() {
    return "NodeStats[" + node.nodeId() + "]";
  }
}
