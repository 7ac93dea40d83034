package dev.tumbler.peer.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.agent.LockTable.Entry;
import dev.tumbler.peer.agent.LockTable.Mode;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.CodecChecks;
import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.Output;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class AgentCodecTest {

  private final AgentCodec codec = new AgentCodec();

  static final AgentId A = new AgentId(7, 0, 1);
  static final AgentId B = new AgentId(9, 2, 4);

  static List<AgentMessage> every() {
    List<Entry> queue = List.of(
        new Entry(A, List.of("n", "a"), Mode.WRITE, Mode.READ, 3, 17, false),
        new Entry(B, List.of("n"), Mode.READ, null, 5, 0, true));
    return List.of(
        new AgentMessage.Lock(1, A, List.of("ünïcødé ✓", "b"), Mode.WRITE),
        new AgentMessage.Lock(1, A, List.of("e-election"), Mode.WRITE, "node-1#3.7"),
        new AgentMessage.Surrender(2, A, List.of("x"), 40),
        new AgentMessage.End(3, B),
        new AgentMessage.Renew(4, A, 120_000_000, -5),
        new AgentMessage.Renewed(5, A, Long.MAX_VALUE),
        new AgentMessage.Stamp(6, B, List.of("p"), 99, true),
        new AgentMessage.Stamped(7, B, List.of("p"), 99, true, 120),
        new AgentMessage.Restate(8, 120, List.of()),
        new AgentMessage.Restate(8, 120, List.of(new AgentMessage.Claimed(A, List.of("a"), Mode.READ),
            new AgentMessage.Claimed(B, List.of("a", "b"), Mode.WRITE, "candidate ✓"),
            new AgentMessage.Claimed(B, List.of("c"), Mode.WRITE, Mode.READ, ""),
            new AgentMessage.Claimed(A, List.of("d"), Mode.READ, Mode.WRITE, "t"))),
        new AgentMessage.Info(9, A, List.of("n", "a"), 30, queue, null),
        new AgentMessage.Info(9, B, List.of("n"), 31, List.of(), A),
        new AgentMessage.Forward(10, B, List.of("n"), "node-2", 31, queue),
        new AgentMessage.Surrendered(11, B, A, List.of("n", "a"), "node-1", 30),
        new AgentMessage.ListHeld(12, 13, List.of("1:a/", "e1:a/")),
        new AgentMessage.Listing(14, 13, false, List.of(), List.of()),
        new AgentMessage.Listing(14, 13, true,
            List.of(new Output.Listed("1:a/x", Claim.Mode.EXCLUSIVE, 1, "node-1 candidate ✓", 42, true, 43)),
            List.of(new AgentMessage.Part("node-2", new Output.Listed("1:a/y/z", Claim.Mode.WRITE, 1, "node-2", 0,
                false, -1)))));
  }

  @Test
  void everyMessageRoundTrips() {
    for (AgentMessage m : every()) {
      byte[] bytes = codec.encode(m);
      assertEquals(AgentCodec.VERSION, bytes[0], "version byte first");
      assertEquals(m, codec.decode(bytes));
      assertEquals(m, codec.decode(codec.encode(m, 3), 3), "behind a header");
    }
  }

  @Test
  void everyMessageIsEncodedAsBefore() {
    CodecChecks.encodesAsBefore(codec, every(), "src/test/resources/dev/tumbler/peer/agent/agent-codec.golden");
  }

  @Test
  void damageIsRefusedWithAReason() {
    CodecChecks.refusesDamage(codec, AgentCodec.VERSION, every(), new AgentMessage.End(1, A), (byte) 0, (byte) 14,
        (byte) 99, (byte) -1);
  }

  @Test
  void handWrittenBadFieldsAreRefusedWithAReason() throws Exception {
    refused("negative clock", "clock", raw(AgentMessage.End.class, o -> {
      o.writeLong(-1);
      id(o, 1, 0, 1);
    }));
    refused("negative id part", "agent id", raw(AgentMessage.End.class, o -> {
      o.writeLong(1);
      id(o, 1, -3, 1);
    }));
    refused("control character in a tag", "tag", raw(AgentMessage.Lock.class, o -> {
      o.writeLong(1);
      id(o, 1, 0, 1);
      o.writeByte(1);
      o.writeUTF("n");
      o.writeByte(1);
      o.writeUTF("bad\ntag");
    }));
    refused("a tag too long", "tag of 513", raw(AgentMessage.Lock.class, o -> {
      o.writeLong(1);
      id(o, 1, 0, 1);
      o.writeByte(1);
      o.writeUTF("n");
      o.writeByte(1);
      o.writeUTF("t".repeat(513));
    }));
    refused("empty path", "path of 0", raw(AgentMessage.Lock.class, o -> {
      o.writeLong(1);
      id(o, 1, 0, 1);
      o.writeByte(0);
      o.writeByte(0);
    }));
    refused("too deep", "path of 17", raw(AgentMessage.Lock.class, o -> {
      o.writeLong(1);
      id(o, 1, 0, 1);
      o.writeByte(17);
    }));
    refused("empty element", "path element of 0", raw(AgentMessage.Lock.class, o -> {
      o.writeLong(1);
      id(o, 1, 0, 1);
      o.writeByte(1);
      o.writeUTF("");
      o.writeByte(0);
    }));
    refused("control character", "control", raw(AgentMessage.Lock.class, o -> {
      o.writeLong(1);
      id(o, 1, 0, 1);
      o.writeByte(1);
      o.writeUTF("a\nb");
      o.writeByte(0);
    }));
    refused("mode", "lock mode 2", raw(AgentMessage.Lock.class, o -> {
      o.writeLong(1);
      id(o, 1, 0, 1);
      o.writeByte(1);
      o.writeUTF("a");
      o.writeByte(2);
    }));
    refused("a lying count", "claims 2147483647", raw(AgentMessage.Restate.class, o -> {
      o.writeLong(1);
      o.writeLong(1);
      o.writeInt(Integer.MAX_VALUE);
    }));
    refused("a lying queue", "claims 1000", raw(AgentMessage.Info.class, o -> {
      o.writeLong(1);
      id(o, 1, 0, 1);
      o.writeByte(1);
      o.writeUTF("a");
      o.writeLong(5);
      o.writeInt(1000);
    }));
    // an entry that holds without the version it was granted at
    refused("held, never granted", "granted at", raw(AgentMessage.Info.class, o -> {
      o.writeLong(1);
      id(o, 1, 0, 1);
      o.writeByte(1);
      o.writeUTF("a");
      o.writeLong(5);
      o.writeInt(1);
      id(o, 1, 0, 1);
      o.writeByte(1);
      o.writeUTF("a");
      o.writeByte(0);
      o.writeByte(1);
      o.writeLong(1);
      o.writeLong(0);
      o.writeBoolean(false);
      o.writeBoolean(false);
    }));
    refused("a term that is not positive", "term", raw(AgentMessage.Renew.class, o -> {
      o.writeLong(1);
      id(o, 1, 0, 1);
      o.writeLong(0);
      o.writeLong(5);
    }));
    refused("a lying listing", "claims 1000 listed parts", raw(AgentMessage.Listing.class, o -> {
      o.writeLong(1);
      o.writeLong(2);
      o.writeBoolean(true);
      o.writeInt(0);
      o.writeInt(1000);
    }));
    refused("a part's empty node", "node id of 0", raw(AgentMessage.Listing.class, o -> {
      o.writeLong(1);
      o.writeLong(2);
      o.writeBoolean(true);
      o.writeInt(0);
      o.writeInt(1);
      o.writeUTF("");
      o.writeUTF("1:a/x");
      o.writeByte(0);
      o.writeInt(1);
      o.writeUTF("n");
      o.writeLong(0);
      o.writeBoolean(false);
      o.writeLong(5);
    }));
    refused("empty node", "node id of 0", raw(AgentMessage.Surrendered.class, o -> {
      o.writeLong(1);
      id(o, 1, 0, 1);
      id(o, 1, 0, 2);
      o.writeByte(1);
      o.writeUTF("a");
      o.writeUTF("");
      o.writeLong(3);
    }));
  }

  @Test
  void aQueueOfManyEntriesFitsAndStillChecksItsCount() {
    List<Entry> q = new ArrayList<>();
    for (int i = 1; i <= 500; i++) {
      q.add(new Entry(new AgentId(i, i % 3, i), List.of("p", "c" + i), Mode.READ, Mode.READ, i, i + 1L, false));
    }
    AgentMessage m = new AgentMessage.Info(1, A, List.of("p"), 600, q, null);
    assertEquals(m, codec.decode(codec.encode(m)));
    List<Entry> deep = Collections.nCopies(1, new Entry(A, Collections.nCopies(16, "x"), Mode.WRITE, null, 1, 0, false));
    AgentMessage d = new AgentMessage.Forward(1, B, List.of("x"), "n", 2, deep);
    assertEquals(d, codec.decode(codec.encode(d)));
    // a listing names a transaction's claim by its whole path, joined: the deepest with the longest elements
    String longest = String.join("/", Collections.nCopies(Claim.MAX_DEPTH, "x".repeat(AgentCodec.MAX_ELEMENT_LENGTH)));
    AgentMessage l = new AgentMessage.Listing(1, 2, true, List.of(new Output.Listed(longest, Claim.Mode.WRITE, 1, "n",
        3, true, 4)), List.of(new AgentMessage.Part("n", new Output.Listed(longest, Claim.Mode.READ, 1, "n", 0, false,
        -1))));
    assertEquals(l, codec.decode(codec.encode(l)));
  }

  @Test
  void randomBytesNeverEscapeAsAnythingButCodecException() {
    CodecChecks.survivesRandomBytes(codec, AgentCodec.VERSION, every(), 20_000);
  }


  /** The bytes of a message of {@code kind} written by hand: what an encoder would never make. */
  private static byte[] raw(Class<? extends AgentMessage> kind, CodecChecks.Body body) throws Exception {
    return CodecChecks.raw(AgentCodec.VERSION, new AgentCodec().type(kind), body);
  }

  private void refused(String what, String naming, byte[] bytes) {
    CodecException e = assertThrows(CodecException.class, () -> codec.decode(bytes), what);
    assertTrue(e.getMessage().contains(naming), what + ": " + e.getMessage());
  }

  private static void id(java.io.DataOutputStream o, long clock, int node, long seq) throws java.io.IOException {
    o.writeLong(clock);
    o.writeInt(node);
    o.writeLong(seq);
  }
}
