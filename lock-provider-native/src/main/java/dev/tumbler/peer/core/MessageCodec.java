package dev.tumbler.peer.core;

/**
 * The explicit binary encoding of one algorithm's messages: a version byte, a type byte, then the
 * fields (big-endian, {@link java.io.DataOutput} style). Never Java serialization. Thread safe.
 *
 * @param <M> the algorithm's message type
 */
public interface MessageCodec<M extends PeerMessage> {

  /** The bytes of {@code message}. */
  byte[] encode(M message);

  /**
   * The message in {@code bytes}.
   *
   * @throws CodecException if the bytes are not exactly one valid message of this codec's version
   */
  M decode(byte[] bytes);
}
