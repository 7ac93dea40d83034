package dev.tumbler.peer.composite;

import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.MessageCodec;
import dev.tumbler.peer.core.PeerMessage;
import java.util.EnumMap;
import java.util.Map;

/**
 * Binary encoding of {@link Envelope}: {@code version(1) channel(1) body}, the body encoded by its
 * channel's own codec (which has its own version byte). A channel this node does not host, a wrong
 * version or too few bytes are a {@link CodecException}; so is whatever the channel's codec rejects.
 * Thread safe if the channel codecs are.
 */
public final class EnvelopeCodec implements MessageCodec<Envelope> {

  /** The envelope encoding version this codec writes and reads. */
  public static final byte VERSION = 1;
  /** The version and channel bytes in front of the body. */
  private static final int HEADER = 2;

  private final Map<Channel, MessageCodec<? extends PeerMessage>> codecs;

  /** @param codecs the codec of each hosted channel */
  public EnvelopeCodec(Map<Channel, MessageCodec<? extends PeerMessage>> codecs) {
    this.codecs = new EnumMap<>(codecs);
  }

  @Override
  public byte[] encode(Envelope message) {
    byte[] out = encodeBody(codec(message.channel()), message.body(), HEADER);
    out[0] = VERSION;
    out[1] = message.channel().number();
    return out;
  }

  @Override
  public Envelope decode(byte[] bytes) {
    if (bytes.length < 3) {
      throw new CodecException("an envelope is at least 3 bytes, got " + bytes.length);
    }
    if (bytes[0] != VERSION) {
      throw new CodecException("unknown envelope version " + bytes[0] + " (this node speaks " + VERSION + ")");
    }
    Channel channel = Channel.of(bytes[1]);
    MessageCodec<? extends PeerMessage> codec = channel == null ? null : codecs.get(channel);
    if (codec == null) {
      throw new CodecException("envelope for channel " + bytes[1] + ", which this node does not host");
    }
    return new Envelope(channel, codec.decode(bytes, HEADER));
  }

  private MessageCodec<? extends PeerMessage> codec(Channel channel) {
    MessageCodec<? extends PeerMessage> c = codecs.get(channel);
    if (c == null) {
      throw new IllegalArgumentException("no codec for channel " + channel);
    }
    return c;
  }

  @SuppressWarnings("unchecked")
  private static <M extends PeerMessage> byte[] encodeBody(MessageCodec<M> codec, PeerMessage body, int headroom) {
    // a core's sends are its own message type (checked by the composite)
    return codec.encode((M) body, headroom);
  }
}
