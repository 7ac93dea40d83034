package dev.tumbler.peer.core;

import java.util.Objects;

/**
 * A leader of an elected view: a node and the incarnation it had when elected. A node that restarted is a
 * new incarnation that lost its state, so it is not the leader it was.
 *
 * @param nodeId the node's id
 * @param incarnation the random nonce the node drew when it started
 */
public record Leader(String nodeId, long incarnation) {
  public Leader {
    Objects.requireNonNull(nodeId, "nodeId");
  }
}
