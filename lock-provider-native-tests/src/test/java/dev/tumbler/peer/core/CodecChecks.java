package dev.tumbler.peer.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.SplittableRandom;

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

  /**
   * What damage to a good encoding must give: a {@link CodecException} for nothing, no bytes and a bare
   * version byte; for every message of {@code every}, one for each truncation, one naming the trailing byte
   * and one naming a wrong version; and one naming the type for each of {@code badTypes} put in the type byte
   * of {@code typed}'s encoding.
   */
  public static <M extends PeerMessage> void refusesDamage(MessageCodec<M> codec, byte version, Iterable<M> every,
      M typed, byte... badTypes) {
    assertThrows(CodecException.class, () -> codec.decode(null));
    assertThrows(CodecException.class, () -> codec.decode(new byte[0]));
    assertThrows(CodecException.class, () -> codec.decode(new byte[] {version}));
    for (M m : every) {
      byte[] good = codec.encode(m);
      for (int len = 2; len < good.length; len++) {
        byte[] cut = Arrays.copyOf(good, len);
        assertThrows(CodecException.class, () -> codec.decode(cut),
            m + " truncated to " + len);
      }
      byte[] trailing = Arrays.copyOf(good, good.length + 1);
      refused(codec, trailing, "trailing", m.toString());
      byte[] v = good.clone();
      v[0] = (byte) (version + 1);
      refused(codec, v, "version", m.toString());
    }
    for (byte type : badTypes) {
      byte[] t = codec.encode(typed);
      t[1] = type;
      refused(codec, t, "type", "type " + type);
    }
  }

  /**
   * {@code rounds} inputs from a fixed seed, half random bytes behind the codec's version byte and half an encoding of
   * one of {@code every} with one byte flipped: each decodes to a message or is refused ({@link #decodesOrRefuses}).
   */
  public static <M extends PeerMessage> void survivesRandomBytes(MessageCodec<M> codec, byte version, List<M> every,
      int rounds) {
    SplittableRandom r = new SplittableRandom(42);
    List<byte[]> goods = every.stream().map(codec::encode).toList();
    for (int i = 0; i < rounds; i++) {
      byte[] bytes;
      if (r.nextBoolean()) {
        bytes = new byte[r.nextInt(60)];
        r.nextBytes(bytes);
        if (bytes.length > 0) {
          bytes[0] = version;
        }
      } else {
        bytes = goods.get(r.nextInt(goods.size())).clone();
        bytes[r.nextInt(bytes.length)] ^= (byte) (1 + r.nextInt(255));
      }
      decodesOrRefuses(codec, bytes);
    }
  }

  /**
   * The wire format did not change: the encoding of each of {@code every} is the one kept in {@code golden}, a file of
   * one line a message (its bytes in hex, then the message). {@code -Dgolden.rewrite=true} writes the file anew, for a
   * change of format made on purpose (with a new version byte, and a reason in its commit).
   *
   * @param golden the file, relative to the module (tests run there): {@code src/test/resources/...}
   */
  public static <M extends PeerMessage> void encodesAsBefore(MessageCodec<M> codec, List<M> every, String golden) {
    List<String> lines = new ArrayList<>();
    for (M m : every) {
      lines.add(HexFormat.of().formatHex(codec.encode(m)) + " " + m);
    }
    Path file = Path.of(golden);
    try {
      if (Boolean.getBoolean("golden.rewrite")) {
        Files.createDirectories(file.getParent());
        Files.write(file, lines, StandardCharsets.UTF_8);
      }
      List<String> kept = Files.readAllLines(file, StandardCharsets.UTF_8);
      for (int i = 0; i < Math.max(kept.size(), lines.size()); i++) {
        String want = i < kept.size() ? kept.get(i) : "(none)";
        String got = i < lines.size() ? lines.get(i) : "(none)";
        assertEquals(want, got, "message " + i + " of " + file + " is encoded otherwise than before (a change of the "
            + "wire format: rewrite with -Dgolden.rewrite=true only with a new version byte)");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void refused(MessageCodec<?> codec, byte[] bytes, String naming, String what) {
    CodecException e = assertThrows(CodecException.class, () -> codec.decode(bytes),
        what);
    assertTrue(e.getMessage().contains(naming), what + ": " + e.getMessage());
  }
}
