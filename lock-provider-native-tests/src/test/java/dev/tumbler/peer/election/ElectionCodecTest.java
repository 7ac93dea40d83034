package dev.tumbler.peer.election;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.core.CodecChecks;
import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.Leader;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ElectionCodecTest {

  private final ElectionCodec codec = new ElectionCodec();

  private static final List<Leader> THREE = List.of(new Leader("10.0.0.1:7000", 1), new Leader("ünïcødé ✓", 0),
      new Leader("x".repeat(ElectionCodec.MAX_ID_BYTES), Long.MAX_VALUE));

  private static List<ElectionMessage> every() {
    List<ElectionMessage> all = new ArrayList<>();
    for (boolean informed : new boolean[] {false, true}) {
      for (boolean answer : new boolean[] {false, true}) {
        all.add(new ElectionMessage.Hello(0, 1, 0, informed, 0, 0, List.of(), answer));
      }
    }
    all.add(new ElectionMessage.Hello(Long.MAX_VALUE, 15, ElectionMessage.Hello.MAX_RANDOM_ID, true, Long.MAX_VALUE, 9,
        THREE, true));
    all.add(new ElectionMessage.Propose(1, List.of(new Leader("a", 5))));
    all.add(new ElectionMessage.Propose(Long.MAX_VALUE, THREE));
    for (ElectionMessage.Reason r : ElectionMessage.Reason.values()) {
      all.add(new ElectionMessage.Vote(7, r, 8, 6, THREE));
    }
    all.add(new ElectionMessage.Vote(1, ElectionMessage.Reason.UNINFORMED, 0, 0, List.of()));
    List<Leader> sixteen = new ArrayList<>();
    for (int i = 0; i < ElectionSettings.MAX_LEADER_COUNT; i++) {
      sixteen.add(new Leader("n" + i, i));
    }
    all.add(new ElectionMessage.Leaders(3, sixteen));
    all.add(new ElectionMessage.Leaders(5, List.of(new Leader("node-\uD83D\uDE00", 2)))); // 4 UTF-8 bytes, not 6
    all.add(new ElectionMessage.Beat(3, 0));
    all.add(new ElectionMessage.Beat(Long.MAX_VALUE, Long.MAX_VALUE));
    all.add(new ElectionMessage.BeatAck(0, 4));
    all.add(new ElectionMessage.BeatAck(3, 4));
    all.add(new ElectionMessage.Retire(0));
    all.add(new ElectionMessage.Retire(9));
    return all;
  }

  @Test
  void everyMessageRoundTrips() {
    for (ElectionMessage m : every()) {
      byte[] bytes = codec.encode(m);
      assertEquals(ElectionCodec.VERSION, bytes[0], "version byte first");
      assertEquals(m, codec.decode(bytes));
    }
  }

  @Test
  void everyMessageIsEncodedAsBefore() {
    CodecChecks.encodesAsBefore(codec, every(), "src/test/resources/dev/tumbler/peer/election/election-codec.golden");
  }

  @Test
  void truncatedTrailingVersionAndTypeAreTypedErrors() {
    CodecChecks.refusesDamage(codec, ElectionCodec.VERSION, every(), new ElectionMessage.Beat(1, 1), (byte) 0, (byte) 8, (byte) 99, (byte) -1);
  }


  @Test
  void badOrdinalsBooleansAndCountsAreTypedErrors() throws IOException {
    // a vote reason past the last ordinal
    CodecException e = assertThrows(CodecException.class, () -> codec.decode(raw(ElectionMessage.Vote.class, o -> {
      o.writeLong(1);
      o.writeByte(ElectionMessage.Reason.values().length);
      o.writeLong(1);
      view(o, 0, List.of());
    })));
    assertTrue(e.getMessage().contains("reason"), e.getMessage());
    // a Hello flag byte with a bit other than informed (1) and answer (2)
    for (int flags : new int[] {4, 5, 8, 128, 255}) {
      e = assertThrows(CodecException.class, () -> codec.decode(raw(ElectionMessage.Hello.class, o -> {
        o.writeLong(1);
        o.writeByte(3);
        o.writeInt(5);
        o.writeByte(flags);
        o.writeLong(0);
        view(o, 0, List.of());
      })));
      assertTrue(e.getMessage().contains("flag"), e.getMessage());
    }
    // more leaders than a view may have, with or without the bytes behind the count
    List<String> seventeen = new ArrayList<>();
    for (int i = 0; i <= ElectionSettings.MAX_LEADER_COUNT; i++) {
      seventeen.add("n" + i);
    }
    e = assertThrows(CodecException.class, () -> codec.decode(raw(ElectionMessage.Leaders.class, o -> view(o, 2,
        seventeen))));
    assertTrue(e.getMessage().contains("17 leaders"), e.getMessage());
    assertThrows(CodecException.class, () -> codec.decode(raw(ElectionMessage.Propose.class, o -> {
      o.writeLong(2);
      o.writeByte(255);
    })));
  }

  /** A Hello written before the answer flag existed (its boolean byte 0 or 1) asks for an answer, as it did. */
  @Test
  void helloOfBeforeTheAnswerFlagAsksForAnAnswer() throws IOException {
    for (int informed = 0; informed <= 1; informed++) {
      int flag = informed;
      ElectionMessage.Hello h = assertInstanceOf(ElectionMessage.Hello.class,
          codec.decode(raw(ElectionMessage.Hello.class, o -> hello(o, 9, 14, 77, 3, 2, List.of("a"), flag))));
      assertEquals(new ElectionMessage.Hello(9, 14, 77, informed == 1, 3, 2, List.of(new Leader("a", 1)), false), h);
    }
  }

  @Test
  void badNodeIdsAreTypedErrors() throws IOException {
    byte[][] ids = {
      new byte[0],                                       // empty
      "x".repeat(256).getBytes(StandardCharsets.UTF_8),  // too long
      {(byte) 0xC3, (byte) 0x28},                        // not UTF-8
      {(byte) 0xED, (byte) 0xA0, (byte) 0x80},           // an encoded surrogate (CESU), not UTF-8
      "a\nb".getBytes(StandardCharsets.UTF_8),           // a control character
    };
    for (byte[] id : ids) {
      assertThrows(CodecException.class, () -> codec.decode(raw(ElectionMessage.Leaders.class, o -> {
        o.writeLong(2);
        o.writeByte(1);
        o.writeShort(id.length);
        o.write(id);
        o.writeLong(1);
      })), () -> "id " + Arrays.toString(id));
    }
    // ids that cannot be encoded are refused on the way out, not garbled
    for (String id : new String[] {"a\u0000", "x".repeat(256), "\uD800", "é".repeat(128)}) {
      assertThrows(IllegalArgumentException.class,
          () -> codec.encode(new ElectionMessage.Leaders(1, List.of(new Leader(id, 1)))), id);
    }
  }

  @Test
  void fieldsOutOfRangeAreTypedErrors() throws IOException {
    List<byte[]> bad = new ArrayList<>();
    bad.add(raw(ElectionMessage.Hello.class, o -> hello(o, -1, 1, 0, 0, 0, List.of())));        // incarnation
    bad.add(raw(ElectionMessage.Hello.class, o -> hello(o, 1, 0, 0, 0, 0, List.of())));         // priority 0
    bad.add(raw(ElectionMessage.Hello.class, o -> hello(o, 1, 16, 0, 0, 0, List.of())));        // priority 16
    bad.add(raw(ElectionMessage.Hello.class, o -> hello(o, 1, 1, 1 << 28, 0, 0, List.of())));   // random id
    bad.add(raw(ElectionMessage.Hello.class, o -> hello(o, 1, 1, -1, 0, 0, List.of())));        // random id
    bad.add(raw(ElectionMessage.Hello.class, o -> hello(o, 1, 1, 0, -1, 0, List.of())));        // highest term
    bad.add(raw(ElectionMessage.Hello.class, o -> hello(o, 1, 1, 0, 0, 0, List.of("a"))));      // leaders, term 0
    bad.add(raw(ElectionMessage.Hello.class, o -> hello(o, 1, 1, 0, 0, 3, List.of())));         // term, no leaders
    bad.add(raw(ElectionMessage.Propose.class, o -> view(o, 0, List.of("a"))));                 // term 0
    bad.add(raw(ElectionMessage.Propose.class, o -> view(o, 4, List.of("a", "a"))));            // repeated node
    bad.add(raw(ElectionMessage.Leaders.class, o -> view(o, 4, List.of())));                    // no leaders
    bad.add(raw(ElectionMessage.Leaders.class, o -> view(o, -4, List.of("a"))));                // negative term
    bad.add(raw(ElectionMessage.Beat.class, o -> {                                              // beat of term 0
      o.writeLong(0);
      o.writeLong(1);
    }));
    bad.add(raw(ElectionMessage.BeatAck.class, o -> {                                           // negative seq
      o.writeLong(1);
      o.writeLong(-1);
    }));
    bad.add(raw(ElectionMessage.Leaders.class, o -> {                                           // negative incarnation
      o.writeLong(2);
      o.writeByte(1);
      o.writeShort(1);
      o.writeByte('a');
      o.writeLong(-7);
    }));
    for (byte[] b : bad) {
      assertThrows(CodecException.class, () -> codec.decode(b), () -> Arrays.toString(b));
    }
  }

  @Test
  void randomBytesNeverEscapeAsAnythingButCodecException() {
    SplittableRandom r = new SplittableRandom(42);
    List<byte[]> goods = new ArrayList<>();
    for (ElectionMessage m : every()) {
      goods.add(codec.encode(m));
    }
    for (int i = 0; i < 20_000; i++) {
      byte[] bytes;
      if (r.nextBoolean()) {
        bytes = new byte[r.nextInt(60)];
        r.nextBytes(bytes);
        if (bytes.length > 1) {
          bytes[0] = ElectionCodec.VERSION;
          bytes[1] = (byte) (1 + r.nextInt(6));
        }
      } else { // a valid message with a few bytes flipped
        bytes = goods.get(r.nextInt(goods.size())).clone();
        for (int k = 1 + r.nextInt(3); k > 0; k--) {
          bytes[r.nextInt(bytes.length)] = (byte) r.nextInt(256);
        }
      }
      CodecChecks.decodesOrRefuses(codec, bytes);
    }
  }

  private static byte[] raw(Class<? extends ElectionMessage> kind, CodecChecks.Body body) throws IOException {
    return CodecChecks.raw(ElectionCodec.VERSION, new ElectionCodec().type(kind), body);
  }

  private static void hello(DataOutputStream o, long incarnation, int priority, int randomId, long highest,
      long term, List<String> ids) throws IOException {
    hello(o, incarnation, priority, randomId, highest, term, ids, 1);
  }

  private static void hello(DataOutputStream o, long incarnation, int priority, int randomId, long highest,
      long term, List<String> ids, int flags) throws IOException {
    o.writeLong(incarnation);
    o.writeByte(priority);
    o.writeInt(randomId);
    o.writeByte(flags);
    o.writeLong(highest);
    view(o, term, ids);
  }

  private static void view(DataOutputStream o, long term, List<String> ids) throws IOException {
    o.writeLong(term);
    o.writeByte(ids.size());
    for (String id : ids) {
      o.writeUTF(id); // ASCII ids: modified UTF-8 is UTF-8
      o.writeLong(1);
    }
  }
}
