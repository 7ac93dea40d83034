package dev.tumbler.peer.lamport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.tumbler.peer.composite.Hosting;
import dev.tumbler.peer.core.CodecChecks;
import dev.tumbler.peer.core.CodecException;
import java.util.ArrayList;
import java.util.List;

/**
 * Fuzzes the Lamport message codec, the bytes a peer reads off an authenticated link. Without
 * {@code JAZZER_FUZZ} these replay the kept inputs under {@code src/test/resources/.../LamportCodecFuzzTestInputs};
 * with it they fuzz (see the provider README's "Fuzzing" section and {@code .ci/fuzz}).
 *
 * <p>Oracles: any bytes decode to a message or fail with {@link CodecException} (no other exception, no
 * allocation a corrupt count asks for); a decoded message encodes to bytes that decode to the same message;
 * every message the codec can carry round-trips byte for byte.
 */
class LamportCodecFuzzTest {
  private final LamportCodec codec = new LamportCodec();

  @FuzzTest(maxDuration = "10s", maxExecutions = 100_000)
  void decode(byte[] bytes) {
    CodecChecks.decodesOrRefuses(codec, bytes);
  }

  /** The node's whole wire codec: the envelope ({@code version channel}) around the Lamport body. */
  @FuzzTest(maxDuration = "10s", maxExecutions = 100_000)
  void wire(byte[] bytes) {
    CodecChecks.decodesOrRefuses(Hosting.codec(LamportAlgorithm.LAMPORT), bytes);
  }

  @FuzzTest(maxDuration = "10s", maxExecutions = 100_000)
  void roundTrip(FuzzedDataProvider data) {
    LamportMessage m = message(data);
    byte[] bytes = codec.encode(m);
    assertEquals(m, codec.decode(bytes));
    // then one corrupted byte: a message or a CodecException, never anything else
    if (bytes.length > 0) {
      int at = data.consumeInt(0, bytes.length - 1);
      bytes[at] ^= (byte) data.consumeInt(1, 255);
      try {
        LamportMessage c = codec.decode(bytes);
        assertEquals(c, codec.decode(codec.encode(c)));
      } catch (CodecException expected) {
        // the corruption was seen
      }
    }
  }

  private static LamportMessage message(FuzzedDataProvider d) {
    return switch (d.consumeInt(0, 5)) {
      case 0 -> new LamportMessage.Request(name(d), ts(d), d.consumeBoolean());
      case 1 -> new LamportMessage.Ack(ts(d));
      case 2 -> new LamportMessage.Release(name(d), ts(d), ts(d));
      case 3 -> new LamportMessage.Reply(name(d), ts(d), ts(d));
      case 4 -> new LamportMessage.Busy(name(d), ts(d), ts(d));
      default -> {
        List<LamportMessage.Entry> entries = new ArrayList<>();
        int n = d.consumeInt(0, 8);
        for (int i = 0; i < n; i++) {
          entries.add(new LamportMessage.Entry(name(d), ts(d), d.consumeBoolean()));
        }
        yield new LamportMessage.Sync(ts(d), entries, d.consumeBoolean());
      }
    };
  }

  private static long ts(FuzzedDataProvider d) {
    return d.consumeLong(0, LamportCore.MAX_CLOCK);
  }

  /** A name the codec carries: 1 to MAX_NAME_LENGTH characters, no control characters. */
  private static String name(FuzzedDataProvider d) {
    StringBuilder sb = new StringBuilder();
    for (char c : d.consumeString(LamportCodec.MAX_NAME_LENGTH).toCharArray()) {
      if (!Character.isISOControl(c) && !Character.isSurrogate(c)) {
        sb.append(c);
      }
    }
    return sb.isEmpty() ? "x" : sb.toString();
  }
}
