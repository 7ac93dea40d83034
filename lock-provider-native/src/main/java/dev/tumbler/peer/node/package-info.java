/**
 * The native provider's vendor extension: a node's counters ({@link dev.tumbler.peer.node.NodeStats}),
 * reachable through {@code LockService.unwrap(NodeStats.class)}. The one package the module exports.
 */
package dev.tumbler.peer.node;
