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
   * The bytes of {@code message} behind {@code headroom} zero bytes that the caller fills in (a wrapper's
   * header), so that a wrapper does not copy the message into a second array. The default copies; a codec
   * on a hot path writes the header room itself.
   */
  default byte[] encode(M message, int headroom) {
    byte[] body = encode(message);
    byte[] out = new byte[headroom + body.length];
    System.arraycopy(body, 0, out, headroom, body.length);
    return out;
  }

  /**
   * The message in {@code bytes}.
   *
   * @throws CodecException if the bytes are not exactly one valid message of this codec's version
   */
  M decode(byte[] bytes);

  /**
   * The message in {@code bytes} from {@code offset} to the end (behind a wrapper's header). The default
   * copies that range; a codec on a hot path reads it in place.
   *
   * @throws CodecException as {@link #decode(byte[])}
   */
  default M decode(byte[] bytes, int offset) {
    return decode(java.util.Arrays.copyOfRange(bytes, offset, bytes.length));
  }
}
