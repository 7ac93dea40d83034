package dev.tumbler.peer.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.CodecChecks;
import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.Output;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class LeaseCodecTest {

  private final LeaseCodec codec = new LeaseCodec();

  static List<LeaseMessage> every() {
    return List.of(
        new LeaseMessage.Acquire(1, 2, "ünïcødé ✓", false, "", -7),
        new LeaseMessage.Acquire(1, 3, "e-election", true, "node-1#3.7", Long.MAX_VALUE),
        new LeaseMessage.Cancel(4, 5, "n"),
        new LeaseMessage.Renew(6, "n", 7, true, "t", 8),
        new LeaseMessage.Renew(6, "n", 7, false, "", -1),
        new LeaseMessage.RecallReply(9, "n", 10, true),
        new LeaseMessage.RecallReply(9, "n", 10, false),
        new LeaseMessage.Release(11, "n", 12),
        new LeaseMessage.Restate(13, 0, List.of(), List.of(), 14),
        new LeaseMessage.Restate(13, 42,
            List.of(new LeaseMessage.Held("a", 1, 2, true, "candidate ✓"), new LeaseMessage.Held("b", 3, 4, false, "")),
            List.of(new LeaseMessage.Wanted(5, "c", true, ""), new LeaseMessage.Wanted(6, "d", false, "x")), 15),
        new LeaseMessage.WhoHolds(16, 17, "n"),
        new LeaseMessage.Holds(18, 19, "n", ""),
        new LeaseMessage.Holds(18, 19, "n", "node-2#1"),
        new LeaseMessage.Restated(20, 21),
        new LeaseMessage.Grant(22, 23, "n", 24, 25, 26),
        new LeaseMessage.Busy(27, 28, "n"),
        new LeaseMessage.Renewed(29, "n", 30, 31),
        new LeaseMessage.RenewDenied(32, "n", 33),
        new LeaseMessage.Recall(34, "n", 35),
        new LeaseMessage.Revoked(36, "n", 37),
        new LeaseMessage.ListHeld(38, 39, List.of("1:a/", "e1:a/")),
        new LeaseMessage.Listing(40, 41, List.of()),
        new LeaseMessage.Listing(40, 41, List.of(
            new Output.Listed("1:a/x", Claim.Mode.EXCLUSIVE, 1, "node-1 candidate ✓", 42, false, 43),
            new Output.Listed("1:a/y", Claim.Mode.READ, 1, "node-2", 44, true, -1))));
  }

  @Test
  void everyMessageRoundTrips() {
    for (LeaseMessage m : every()) {
      byte[] bytes = codec.encode(m);
      assertEquals(LeaseCodec.VERSION, bytes[0], "version byte first");
      assertEquals(m, codec.decode(bytes));
      assertEquals(m, codec.decode(codec.encode(m, 3), 3), "behind a header");
    }
  }

  @Test
  void everyMessageIsEncodedAsBefore() {
    CodecChecks.encodesAsBefore(codec, every(), "src/test/resources/dev/tumbler/peer/lease/lease-codec.golden");
  }

  @Test
  void damageIsRefusedWithAReason() {
    CodecChecks.refusesDamage(codec, LeaseCodec.VERSION, every(), new LeaseMessage.Cancel(1, 2, "n"), (byte) 0,
        (byte) 18, (byte) 99, (byte) -1);
  }

  @Test
  void handWrittenBadFieldsAreRefusedWithAReason() throws Exception {
    refused("negative incarnation", "incarnation", raw(LeaseMessage.Cancel.class, o -> {
      o.writeLong(-1);
      o.writeLong(1);
      o.writeUTF("n");
    }));
    refused("negative request id", "request id", raw(LeaseMessage.Cancel.class, o -> {
      o.writeLong(1);
      o.writeLong(-5);
      o.writeUTF("n");
    }));
    refused("empty name", "name of 0", raw(LeaseMessage.Cancel.class, o -> {
      o.writeLong(1);
      o.writeLong(1);
      o.writeUTF("");
    }));
    refused("a name too long", "name of 521", raw(LeaseMessage.Cancel.class, o -> {
      o.writeLong(1);
      o.writeLong(1);
      o.writeUTF("n".repeat(521));
    }));
    refused("control character in a name", "control", raw(LeaseMessage.Release.class, o -> {
      o.writeLong(1);
      o.writeUTF("a\u0000b");
      o.writeLong(1);
    }));
    refused("control character in a tag", "tag", raw(LeaseMessage.Acquire.class, o -> {
      o.writeLong(1);
      o.writeLong(1);
      o.writeUTF("n");
      o.writeBoolean(false);
      o.writeUTF("bad\ntag");
      o.writeLong(0);
    }));
    refused("a tag too long", "tag of 513", raw(LeaseMessage.Renew.class, o -> {
      o.writeLong(1);
      o.writeUTF("n");
      o.writeLong(1);
      o.writeBoolean(true);
      o.writeUTF("t".repeat(513));
      o.writeLong(0);
    }));
    refused("negative token", "token", raw(LeaseMessage.Grant.class, o -> {
      o.writeLong(1);
      o.writeLong(1);
      o.writeUTF("n");
      o.writeLong(1);
      o.writeLong(-2);
      o.writeLong(0);
    }));
    refused("negative term", "term", raw(LeaseMessage.Recall.class, o -> {
      o.writeLong(-1);
      o.writeUTF("n");
      o.writeLong(1);
    }));
    refused("a lying count of held leases", "claims 2147483647",
        raw(LeaseMessage.Restate.class, o -> {
          o.writeLong(1);
          o.writeLong(1);
          o.writeInt(Integer.MAX_VALUE);
        }));
    refused("a lying count of wanted requests", "claims 1000",
        raw(LeaseMessage.Restate.class, o -> {
          o.writeLong(1);
          o.writeLong(1);
          o.writeInt(0);
          o.writeInt(1000);
          o.writeLong(0);
        }));
    refused("a restatement for a negative term", "term", raw(LeaseMessage.Restate.class, o -> {
      o.writeLong(1);
      o.writeLong(-3);
      o.writeInt(0);
      o.writeInt(0);
      o.writeLong(0);
    }));
  }

  @Test
  void aRestatementOfManyLeasesFits() {
    List<LeaseMessage.Held> held = new ArrayList<>();
    List<LeaseMessage.Wanted> wanted = new ArrayList<>();
    for (int i = 1; i <= 2_000; i++) {
      held.add(new LeaseMessage.Held("lock-" + i, i, i * 3L, i % 2 == 0, i % 3 == 0 ? "" : "tag-" + i));
      wanted.add(new LeaseMessage.Wanted(i, "name-" + i, i % 5 == 0, ""));
    }
    LeaseMessage m = new LeaseMessage.Restate(7, 3, held, wanted, 99);
    assertEquals(m, codec.decode(codec.encode(m)));
  }

  @Test
  void randomBytesNeverEscapeAsAnythingButCodecException() {
    CodecChecks.survivesRandomBytes(codec, LeaseCodec.VERSION, every(), 20_000);
  }


  /** The bytes of a message of {@code kind} written by hand: what an encoder would never make. */
  private static byte[] raw(Class<? extends LeaseMessage> kind, CodecChecks.Body body) throws Exception {
    return CodecChecks.raw(LeaseCodec.VERSION, new LeaseCodec().type(kind), body);
  }

  private void refused(String what, String naming, byte[] bytes) {
    CodecException e = assertThrows(CodecException.class, () -> codec.decode(bytes), what);
    assertTrue(e.getMessage().contains(naming), what + ": " + e.getMessage());
  }
}
