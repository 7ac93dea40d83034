/**
 * The registry of the native provider's algorithms: {@link dev.tumbler.peer.algorithm.Algorithm}
 * describes one (name, capabilities, node limit, codec, settings, core factory) and
 * {@link dev.tumbler.peer.algorithm.Algorithms} lists them. The provider, the CLI and the simulator take
 * algorithms from here.
 */
package dev.tumbler.peer.algorithm;
