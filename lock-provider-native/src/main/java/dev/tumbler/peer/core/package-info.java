/**
 * The protocol-core abstraction of the native provider: an algorithm is a pure state machine
 * ({@link dev.tumbler.peer.core.ProtocolCore}) from {@link dev.tumbler.peer.core.Input}s to
 * {@link dev.tumbler.peer.core.Output}s, with its messages as records of a sealed sub-interface of
 * {@link dev.tumbler.peer.core.PeerMessage} and a {@link dev.tumbler.peer.core.MessageCodec}. The same
 * core runs under the simulator and the node runtime. Not an exported API.
 */
package dev.tumbler.peer.core;
