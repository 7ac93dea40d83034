package dev.tumbler.peer.core;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The codec toolkit on a message family of its own: the table, the framing, what a bad table or record does. */
class WireCodecTest {

  sealed interface Toy extends PeerMessage {
    sealed interface Up extends Toy {}

    record Ask(long inc, String name, Claim claim, List<String> nodes, long echo) implements Up {}

    record Tell(long term, String tag, int permits) implements Toy {
      public Tell {
        if (permits > 10) {
          throw new IllegalArgumentException("at most 10 permits, not " + permits);
        }
      }
    }
  }

  private static final byte ASK = 1;
  private static final byte TELL = 2;
  private static final byte NO_TYPE = 9;

  private static WireCodec.Table<Toy> table() {
    return WireCodec.table("toy", (byte) 3, Toy.class).names(8)
        .message(ASK, Toy.Ask.class,
            (m, o) -> o.inc(m.inc()).name(m.name()).claim(m.claim()).strings(m.nodes()).echo(m.echo()),
            i -> new Toy.Ask(i.inc(), i.name(), i.claim(8), i.list(3, "nodes", x -> x.text(8, "node")), i.echo()));
  }

  private static final class ToyCodec extends WireCodec<Toy> {
    ToyCodec(Table<Toy> table) {
      super(table);
    }
  }

  private static ToyCodec codec() {
    return new ToyCodec(table().message(TELL, Toy.Tell.class,
        (m, o) -> o.term(m.term()).tag(m.tag()).number(m.permits()),
        i -> new Toy.Tell(i.term(), i.tag(), i.positive("permits"))));
  }

  @Test
  void aMessageIsItsVersionTypeAndFieldsAndComesBack() {
    ToyCodec codec = codec();
    Toy.Ask ask = new Toy.Ask(7, "n", Claim.permits("pool", 2, 4).withTag("t"), List.of("a", "b"), -1);
    byte[] bytes = codec.encode(ask);
    assertEquals(3, bytes[0], "version");
    assertEquals(ASK, bytes[1], "type");
    assertEquals(ASK, codec.type(Toy.Ask.class));
    assertEquals(ask, codec.decode(bytes));
    byte[] behind = codec.encode(ask, 5);
    assertArrayEquals(bytes, java.util.Arrays.copyOfRange(behind, 5, behind.length), "behind a header");
    assertEquals(ask, codec.decode(behind, 5));
    Toy.Tell tell = new Toy.Tell(4, "", 10);
    assertEquals(tell, codec.decode(codec.encode(tell)));
  }

  @Test
  void aTableThatLacksARecordIsRefusedWhenTheCodecIsMade() {
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> new ToyCodec(table()));
    assertTrue(e.getMessage().contains("Tell"), e.getMessage());
    assertThrows(IllegalStateException.class, () -> table().message(ASK, Toy.Tell.class, (m, o) -> { },
        i -> new Toy.Tell(0, "", 1)));
    assertThrows(IllegalStateException.class, () -> table().message(128, Toy.Tell.class, (m, o) -> { },
        i -> new Toy.Tell(0, "", 1)));
  }

  @Test
  void badBytesAreCodecExceptionsThatSayWhy() throws Exception {
    ToyCodec codec = codec();
    refused(codec, null, "too short");
    refused(codec, new byte[] {3}, "too short");
    refused(codec, new byte[] {4, ASK}, "version 4");
    refused(codec, new byte[] {3, NO_TYPE}, "unknown toy message type 9");
    refused(codec, new byte[] {3, -1}, "unknown toy message type -1");
    byte[] tell = codec.encode(new Toy.Tell(1, "", 1));
    refused(codec, java.util.Arrays.copyOf(tell, tell.length - 1), "truncated");
    refused(codec, java.util.Arrays.copyOf(tell, tell.length + 1), "trailing");
    refused(codec, CodecChecks.raw((byte) 3, TELL, o -> {
      o.writeLong(-1);
      o.writeUTF("");
      o.writeInt(1);
    }), "negative term");
    refused(codec, CodecChecks.raw((byte) 3, TELL, o -> {
      o.writeLong(1);
      o.writeUTF("");
      o.writeInt(11);
    }), "invalid toy message type 2: at most 10 permits");
    refused(codec, CodecChecks.raw((byte) 3, ASK, o -> {
      o.writeLong(1);
      o.writeUTF("a name too long");
    }), "name of 15 characters");
    refused(codec, CodecChecks.raw((byte) 3, ASK, o -> {
      o.writeLong(1);
      o.writeUTF("n");
      o.writeInt(0);
    }), "a claim's path of 0 elements in toy message");
  }

  private static void refused(ToyCodec codec, byte[] bytes, String naming) {
    CodecException e = assertThrows(CodecException.class, () -> codec.decode(bytes));
    assertTrue(e.getMessage().contains(naming), e.getMessage());
  }
}
