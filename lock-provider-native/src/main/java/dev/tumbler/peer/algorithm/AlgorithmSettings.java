package dev.tumbler.peer.algorithm;

/**
 * The settings of one algorithm that shape its nodes, read from the URL by {@link Algorithm#settings}.
 * Implementations are records: two services may share a node only if their settings are {@code equals}.
 * {@link #describe()} names each setting as its URL parameter, for the message that says why two
 * services cannot share a node.
 */
public interface AlgorithmSettings {

  /** The settings of an algorithm that has none. */
  AlgorithmSettings NONE = () -> "";

  /** The settings as URL parameters ({@code priority=14&electionDelay=10s}); empty for none. */
  String describe();
}
