/**
 * The node runtime ({@link dev.tumbler.peer.runtime.PeerNode}): one protocol core on one serial executor,
 * with a transport, the monotonic clock and real timers. Not exported: services reach their node through
 * the provider, and {@code unwrap} hands out only its counters.
 */
package dev.tumbler.peer.runtime;
