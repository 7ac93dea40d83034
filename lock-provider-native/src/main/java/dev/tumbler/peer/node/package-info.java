/**
 * The node runtime ({@link dev.tumbler.peer.node.PeerNode}): one protocol core on one serial executor,
 * with a transport, the monotonic clock and real timers; and its counters ({@link
 * dev.tumbler.peer.node.NodeStats}, reachable through {@code LockService.unwrap}).
 */
package dev.tumbler.peer.node;
