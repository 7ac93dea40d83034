package dev.tumbler.peer.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;

/** What every codec test and fuzz target asks of a {@link MessageCodec}, in one place. */
public final class CodecChecks {

  private CodecChecks() {}

  /** Writes a message body by hand, as a hostile or buggy peer might. */
  public interface Body {
    void write(DataOutputStream out) throws IOException;
  }

  /** The bytes {@code version type body}, written by hand (to build what an encoder would never make). */
  public static byte[] raw(byte version, byte type, Body body) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(b);
    out.writeByte(version);
    out.writeByte(type);
    body.write(out);
    return b.toByteArray();
  }

  /**
   * Any bytes decode to a message or fail with a {@link CodecException} that says why (no other exception);
   * a decoded message survives encode and decode, and its encoding is stable.
   */
  public static <M extends PeerMessage> void decodesOrRefuses(MessageCodec<M> codec, byte[] bytes) {
    M m;
    try {
      m = codec.decode(bytes);
    } catch (CodecException e) {
      assertNotNull(e.getMessage(), "a CodecException without a message");
      return;
    }
    byte[] again = codec.encode(m);
    assertEquals(m, codec.decode(again), "a decoded message does not survive encode and decode");
    assertArrayEquals(again, codec.encode(codec.decode(again)), "the encoding of a message is not stable");
  }
}
