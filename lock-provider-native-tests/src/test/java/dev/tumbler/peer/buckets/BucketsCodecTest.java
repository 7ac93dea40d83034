package dev.tumbler.peer.buckets;

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

class BucketsCodecTest {

  private final BucketsCodec codec = new BucketsCodec();

  static List<BucketsMessage> every() {
    return List.of(
        new BucketsMessage.Acquire(1, "n0/s1", 2, "ünïcødé ✓", 3, 10, false, "", -7),
        new BucketsMessage.Acquire(1, "n0/s1", 2, "pool", Integer.MAX_VALUE, Integer.MAX_VALUE, true, "job#4", 5),
        new BucketsMessage.Cancel(3, "s", 4),
        new BucketsMessage.Release(5, "s", "pool", 6),
        new BucketsMessage.SessionRenew(7, "s", -8),
        new BucketsMessage.Query(9, 10, "pool"),
        new BucketsMessage.Restate(11, 0, List.of(), List.of(), List.of(), 12),
        new BucketsMessage.Restate(11, 42, List.of("s1", "s2"),
            List.of(new BucketsMessage.Held("s1", "pool", 1, 2, 4, "t ✓"), new BucketsMessage.Held("s2", "q", 3, 1, 1, "")),
            List.of(new BucketsMessage.Wanted("s1", 5, "pool", 3, 6, "")), 13),
        new BucketsMessage.Restated(14, 15),
        new BucketsMessage.Grant(16, "s", 17, "pool", 18, 19, 20, 21, 22),
        new BucketsMessage.Busy("s", 22, 23),
        new BucketsMessage.Refused("s", 24, "limit 4 below the 6 permits this handle asks for"),
        new BucketsMessage.SessionRenewed("s", 25),
        new BucketsMessage.Revoked("s", "pool", 26),
        new BucketsMessage.WhoHolds(27, 28, "pool"),
        new BucketsMessage.Holds(29, 30, "pool", "node-1#2"),
        new BucketsMessage.Total(31, "pool", 0),
        new BucketsMessage.ListHeld(32, 33, List.of("S1:a/", "L1:a/")),
        new BucketsMessage.Listing(34, 35, List.of(
            new Output.Listed("S1:a/pool", Claim.Mode.PERMITS, 3, "node-1#2 job#4", 36, true, 37),
            new Output.Listed("L1:a/n", Claim.Mode.EXCLUSIVE, 1, "node-2#1", 38, true, -1))));
  }

  @Test
  void everyMessageRoundTrips() {
    for (BucketsMessage m : every()) {
      byte[] bytes = codec.encode(m);
      assertEquals(BucketsCodec.VERSION, bytes[0], "version byte first");
      assertEquals(m, codec.decode(bytes));
      assertEquals(m, codec.decode(codec.encode(m, 3), 3), "behind a header");
    }
  }

  @Test
  void everyMessageIsEncodedAsBefore() {
    CodecChecks.encodesAsBefore(codec, every(), "src/test/resources/dev/tumbler/peer/buckets/buckets-codec.golden");
  }

  @Test
  void damageIsRefusedWithAReason() {
    CodecChecks.refusesDamage(codec, BucketsCodec.VERSION, every(), new BucketsMessage.Cancel(1, "s", 2), (byte) 0,
        (byte) 18, (byte) 99, (byte) -1);
  }

  @Test
  void handWrittenBadFieldsAreRefusedWithAReason() throws Exception {
    refused("zero permits", "permits 0", raw(BucketsMessage.Acquire.class, o -> {
      o.writeLong(1);
      o.writeUTF("s");
      o.writeLong(1);
      o.writeUTF("pool");
      o.writeInt(0);
      o.writeInt(4);
      o.writeBoolean(false);
      o.writeUTF("");
      o.writeLong(0);
    }));
    refused("negative limit", "limit -4", raw(BucketsMessage.Acquire.class, o -> {
      o.writeLong(1);
      o.writeUTF("s");
      o.writeLong(1);
      o.writeUTF("pool");
      o.writeInt(1);
      o.writeInt(-4);
      o.writeBoolean(false);
      o.writeUTF("");
      o.writeLong(0);
    }));
    refused("empty session", "session of 0", raw(BucketsMessage.Cancel.class, o -> {
      o.writeLong(1);
      o.writeUTF("");
      o.writeLong(1);
    }));
    refused("negative incarnation", "incarnation", raw(BucketsMessage.Cancel.class, o -> {
      o.writeLong(-3);
      o.writeUTF("s");
      o.writeLong(1);
    }));
    refused("control character in a name", "control", raw(BucketsMessage.Query.class,
        o -> {
          o.writeLong(1);
          o.writeLong(1);
          o.writeUTF("po\tol");
        }));
    refused("a tag too long", "tag of 513", raw(BucketsMessage.Holds.class, o -> {
      o.writeLong(1);
      o.writeLong(1);
      o.writeUTF("pool");
      o.writeUTF("t".repeat(513));
    }));
    refused("negative total", "total", raw(BucketsMessage.Total.class, o -> {
      o.writeLong(1);
      o.writeUTF("pool");
      o.writeLong(-1);
    }));
    refused("a lying count of sessions", "claims 2147483647",
        raw(BucketsMessage.Restate.class, o -> {
          o.writeLong(1);
          o.writeLong(1);
          o.writeInt(Integer.MAX_VALUE);
        }));
    refused("a lying count of held grants", "claims 500",
        raw(BucketsMessage.Restate.class, o -> {
          o.writeLong(1);
          o.writeLong(1);
          o.writeInt(0);
          o.writeInt(500);
          o.writeInt(0);
          o.writeLong(0);
        }));
    refused("a restatement for a negative term", "term",
        raw(BucketsMessage.Restate.class, o -> {
          o.writeLong(1);
          o.writeLong(-3);
          o.writeInt(0);
          o.writeInt(0);
          o.writeInt(0);
          o.writeLong(0);
        }));
  }

  @Test
  void aRestatementOfManyGrantsFits() {
    List<String> sessions = new ArrayList<>();
    List<BucketsMessage.Held> held = new ArrayList<>();
    for (int i = 1; i <= 2_000; i++) {
      sessions.add("n1/s" + i);
      held.add(new BucketsMessage.Held("n1/s" + i, "pool-" + (i % 7), i, 1 + i % 3, 8, ""));
    }
    BucketsMessage m = new BucketsMessage.Restate(3, 5, sessions, held, List.of(), 4);
    assertEquals(m, codec.decode(codec.encode(m)));
  }

  @Test
  void randomBytesNeverEscapeAsAnythingButCodecException() {
    CodecChecks.survivesRandomBytes(codec, BucketsCodec.VERSION, every(), 20_000);
  }


  /** The bytes of a message of {@code kind} written by hand: what an encoder would never make. */
  private static byte[] raw(Class<? extends BucketsMessage> kind, CodecChecks.Body body) throws Exception {
    return CodecChecks.raw(BucketsCodec.VERSION, new BucketsCodec().type(kind), body);
  }

  private void refused(String what, String naming, byte[] bytes) {
    CodecException e = assertThrows(CodecException.class, () -> codec.decode(bytes), what);
    assertTrue(e.getMessage().contains(naming), what + ": " + e.getMessage());
  }
}
