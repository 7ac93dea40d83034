package dev.tumbler.peer.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.tumbler.peer.agent.LockTable.Entry;
import dev.tumbler.peer.agent.LockTable.Mode;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.CodecChecks;
import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.Output;
import java.util.ArrayList;
import java.util.List;

/**
 * Fuzzes the agent codec, bytes a peer controls on a node that serves transactions: any bytes decode to a message
 * or fail with {@link CodecException}, a decoded message survives encode and decode with a stable encoding, and
 * every message the codec can carry round-trips. Without {@code JAZZER_FUZZ} it replays its kept inputs;
 * {@code .ci/fuzz} runs it longer.
 */
class AgentCodecFuzzTest {
  private final AgentCodec codec = new AgentCodec();

  @FuzzTest(maxDuration = "10s", maxExecutions = 100_000)
  void decode(byte[] bytes) {
    CodecChecks.decodesOrRefuses(codec, bytes);
  }

  @FuzzTest(maxDuration = "10s", maxExecutions = 100_000)
  void roundTrip(FuzzedDataProvider data) {
    AgentMessage m = message(data);
    byte[] bytes = codec.encode(m);
    assertEquals(m, codec.decode(bytes));
    if (bytes.length > 0) {
      bytes[data.consumeInt(0, bytes.length - 1)] ^= (byte) data.consumeInt(1, 255);
      CodecChecks.decodesOrRefuses(codec, bytes);
    }
  }

  private static AgentMessage message(FuzzedDataProvider d) {
    long clock = d.consumeLong(0, Long.MAX_VALUE);
    return switch (d.consumeInt(0, 12)) {
      case 0 -> new AgentMessage.Lock(clock, id(d), path(d), mode(d));
      case 1 -> new AgentMessage.Surrender(clock, id(d), path(d), d.consumeLong(0, Long.MAX_VALUE));
      case 2 -> new AgentMessage.End(clock, id(d));
      case 3 -> new AgentMessage.Renew(clock, id(d), d.consumeLong(1, Long.MAX_VALUE), d.consumeLong());
      case 4 -> new AgentMessage.Renewed(clock, id(d), d.consumeLong());
      case 5 -> new AgentMessage.Stamp(clock, id(d), path(d), d.consumeLong(0, Long.MAX_VALUE), d.consumeBoolean());
      case 6 -> new AgentMessage.Stamped(clock, id(d), path(d), d.consumeLong(0, Long.MAX_VALUE), d.consumeBoolean(),
          d.consumeLong(0, Long.MAX_VALUE));
      case 7 -> {
        List<AgentMessage.Claimed> c = new ArrayList<>();
        int n = d.consumeInt(0, 4);
        for (int i = 0; i < n; i++) {
          c.add(new AgentMessage.Claimed(id(d), path(d), mode(d), d.consumeBoolean() ? mode(d) : null, ""));
        }
        yield new AgentMessage.Restate(clock, d.consumeLong(0, Long.MAX_VALUE), c);
      }
      case 8 -> new AgentMessage.Info(clock, id(d), path(d), d.consumeLong(0, Long.MAX_VALUE), queue(d),
          d.consumeBoolean() ? id(d) : null);
      case 9 -> new AgentMessage.Forward(clock, id(d), path(d), text(d), d.consumeLong(0, Long.MAX_VALUE), queue(d));
      case 10 -> new AgentMessage.ListHeld(clock, d.consumeLong(0, Long.MAX_VALUE), List.of(text(d), text(d)));
      case 11 -> {
        List<Output.Listed> held = new ArrayList<>();
        List<AgentMessage.Part> parts = new ArrayList<>();
        int n = d.consumeInt(0, 3);
        for (int i = 0; i < n; i++) {
          held.add(new Output.Listed(text(d), Claim.Mode.EXCLUSIVE, 1, text(d), d.consumeLong(1, Long.MAX_VALUE), true,
              d.consumeLong(-1, Long.MAX_VALUE)));
          parts.add(new AgentMessage.Part(text(d), new Output.Listed(text(d), Claim.Mode.READ, 1, text(d), 0, false,
              d.consumeLong(-1, Long.MAX_VALUE))));
        }
        yield new AgentMessage.Listing(clock, d.consumeLong(0, Long.MAX_VALUE), d.consumeBoolean(), held, parts);
      }
      default -> new AgentMessage.Surrendered(clock, id(d), id(d), path(d), text(d), d.consumeLong(0, Long.MAX_VALUE));
    };
  }

  private static AgentId id(FuzzedDataProvider d) {
    return new AgentId(d.consumeLong(0, Long.MAX_VALUE), d.consumeInt(0, Integer.MAX_VALUE),
        d.consumeLong(0, Long.MAX_VALUE));
  }

  private static Mode mode(FuzzedDataProvider d) {
    return d.consumeBoolean() ? Mode.READ : Mode.WRITE;
  }

  private static String text(FuzzedDataProvider d) {
    String s = d.consumeString(20).replaceAll("\\p{Cntrl}", "");
    return s.isEmpty() ? "x" : s;
  }

  private static List<String> path(FuzzedDataProvider d) {
    List<String> p = new ArrayList<>();
    int n = d.consumeInt(1, 16);
    for (int i = 0; i < n; i++) {
      p.add(text(d));
    }
    return p;
  }

  private static List<Entry> queue(FuzzedDataProvider d) {
    List<Entry> q = new ArrayList<>();
    int n = d.consumeInt(0, 4);
    for (int i = 0; i < n; i++) {
      Mode holds = d.consumeBoolean() ? mode(d) : null;
      q.add(new Entry(id(d), path(d), mode(d), holds, d.consumeLong(1, Long.MAX_VALUE),
          holds == null ? 0 : d.consumeLong(1, Long.MAX_VALUE), d.consumeBoolean()));
    }
    return q;
  }
}
