package dev.tumbler.peer.lamport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.core.CodecChecks;
import dev.tumbler.peer.core.CodecException;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LamportCodecTest {

  private final LamportCodec codec = new LamportCodec();

  static List<LamportMessage> every() {
    return List.of(
        new LamportMessage.Request("orders/42", 7, false),
        new LamportMessage.Request("ünïcødé ✓", LamportCore.MAX_CLOCK, true),
        new LamportMessage.Ack(0),
        new LamportMessage.Release("a", 3, 9),
        new LamportMessage.Reply("a", 3, 10),
        new LamportMessage.Busy("a", 3, 11),
        new LamportMessage.Sync(12, List.of(), true),
        new LamportMessage.Sync(13, List.of(new LamportMessage.Entry("a", 1, false),
            new LamportMessage.Entry("b", 2, true)), false));
  }

  @Test
  void everyMessageIsEncodedAsBefore() {
    CodecChecks.encodesAsBefore(codec, every(), "src/test/resources/dev/tumbler/peer/lamport/lamport-codec.golden");
  }

  @Test
  void everyMessageRoundTrips() {
    for (LamportMessage m : every()) {
      byte[] bytes = codec.encode(m);
      assertEquals(LamportCodec.VERSION, bytes[0], "version byte first");
      assertEquals(m, codec.decode(bytes));
    }
  }

  @Test
  void badBytesAreTypedErrors() throws IOException {
    byte[] good = codec.encode(new LamportMessage.Release("name", 3, 9));
    assertThrows(CodecException.class, () -> codec.decode(new byte[0]));
    assertThrows(CodecException.class, () -> codec.decode(null));
    byte[] v = good.clone();
    v[0] = 2;
    assertTrue(assertThrows(CodecException.class, () -> codec.decode(v)).getMessage().contains("version"));
    byte[] t = good.clone();
    t[1] = 99;
    assertTrue(assertThrows(CodecException.class, () -> codec.decode(t)).getMessage().contains("type"));
    for (int len = 2; len < good.length; len++) {
      byte[] cut = Arrays.copyOf(good, len);
      assertThrows(CodecException.class, () -> codec.decode(cut), "truncated to " + len);
    }
    byte[] trailing = Arrays.copyOf(good, good.length + 1);
    assertTrue(assertThrows(CodecException.class, () -> codec.decode(trailing)).getMessage().contains("trailing"));
    // a sync claiming two billion entries must not allocate them
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(b);
    out.writeByte(LamportCodec.VERSION);
    out.writeByte(type(LamportMessage.Sync.class));
    out.writeLong(5);
    out.writeBoolean(true);
    out.writeInt(Integer.MAX_VALUE);
    assertThrows(CodecException.class, () -> codec.decode(b.toByteArray()));
    // negative timestamps, empty and control-character names
    assertThrows(CodecException.class, () -> codec.decode(raw(type(LamportMessage.Ack.class), o -> o.writeLong(-1))));
    assertThrows(CodecException.class, () -> codec.decode(raw(type(LamportMessage.Request.class), o -> {
      o.writeUTF("");
      o.writeLong(1);
      o.writeBoolean(false);
    })));
    assertThrows(CodecException.class, () -> codec.decode(raw(type(LamportMessage.Request.class), o -> {
      o.writeUTF("a\nb");
      o.writeLong(1);
      o.writeBoolean(false);
    })));
  }

  @Test
  void randomBytesNeverEscapeAsAnythingButCodecException() {
    SplittableRandom r = new SplittableRandom(42);
    for (int i = 0; i < 20_000; i++) {
      byte[] bytes = new byte[r.nextInt(40)];
      r.nextBytes(bytes);
      if (bytes.length > 0 && r.nextBoolean()) {
        bytes[0] = LamportCodec.VERSION;
      }
      CodecChecks.decodesOrRefuses(codec, bytes);
    }
  }

  private static byte[] raw(byte type, CodecChecks.Body body) throws IOException {
    return CodecChecks.raw(LamportCodec.VERSION, type, body);
  }

  /** The type byte of {@code kind}, for a message written by hand. */
  private static byte type(Class<? extends LamportMessage> kind) {
    return new LamportCodec().type(kind);
  }
}
