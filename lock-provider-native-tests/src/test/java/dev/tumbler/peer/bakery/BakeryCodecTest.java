package dev.tumbler.peer.bakery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.bakery.BakeryMessage.Entering;
import dev.tumbler.peer.bakery.BakeryMessage.Key;
import dev.tumbler.peer.bakery.BakeryMessage.Mark;
import dev.tumbler.peer.bakery.BakeryMessage.Mode;
import dev.tumbler.peer.bakery.BakeryMessage.ReqKey;
import dev.tumbler.peer.bakery.BakeryMessage.State;
import dev.tumbler.peer.bakery.BakeryMessage.Ticket;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.CodecChecks;
import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.Output;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The bakery codec: every message round-trips, and every malformed input is a {@link CodecException}. */
class BakeryCodecTest {

  private final BakeryCodec codec = new BakeryCodec();

  private static final ReqKey R = new ReqKey("10.0.0.1:7000", 5, 1);
  private static final ReqKey R2 = new ReqKey("ünïcødé ✓", Long.MAX_VALUE, Long.MAX_VALUE);
  private static final Key K = new Key(1, 1, 0);
  private static final Key K2 = new Key(BakeryMessage.MAX_TERM, BakeryMessage.MAX_H, 2);
  private static final Mode EX = new Mode(Claim.Mode.EXCLUSIVE, Claim.Writer.HARD, 0);
  private static final Mode TIMED = new Mode(Claim.Mode.WRITE, Claim.Writer.TIMED_SOFT, 600_000_000_000L);
  private static final Ticket T1 = new Ticket("x", K, R, "a", EX, State.ADDED, 0);
  private static final Ticket T2 = new Ticket("n".repeat(BakeryCodec.MAX_NAME_LENGTH), K2, R2, "b", TIMED,
      State.ACTIVE, 119_000_000);
  private static final String TAG = "ünïcødé ✓#1." + "t".repeat(Claim.MAX_TAG_LENGTH - 12);
  private static final Ticket T3 = new Ticket("x", K, R, "a", EX, State.ACTIVE, 5, TAG);

  static List<BakeryMessage> every() {
    List<BakeryMessage> all = new ArrayList<>();
    all.add(new BakeryMessage.Lock(R, "x", EX, 120_000_000, -1, 1, null));
    all.add(new BakeryMessage.Lock(R2, "y", new Mode(Claim.Mode.READ, Claim.Writer.HARD, 0), 1, 0, 9, R));
    all.add(new BakeryMessage.Lock(R, "x", EX, 120_000_000, -1, 1, null, "node-1#3.1"));
    all.add(new BakeryMessage.Lock(R2, "y", EX, 1, 0, 9, R, TAG));
    all.add(new BakeryMessage.Waiting(R, 2));
    all.add(new BakeryMessage.Renew(R, K, 3));
    all.add(new BakeryMessage.Relock(R2, "x", K2, 4));
    all.add(new BakeryMessage.Unlock(R));
    all.add(new BakeryMessage.Locked(R, K2, 5));
    for (Output.Failure f : Output.Failure.values()) {
      all.add(new BakeryMessage.LockFailed(R, f, f == Output.Failure.CONTENDED ? "" : "2 of 3 leaders reachable"));
    }
    all.add(new BakeryMessage.Renewed(R, 6));
    all.add(new BakeryMessage.Unlocked(R2, "unknown"));
    all.add(new BakeryMessage.LockEntering(1, R, "x"));
    all.add(new BakeryMessage.LockEntered(BakeryMessage.MAX_TERM, R));
    all.add(new BakeryMessage.GetMaxTicket(2, R, "x"));
    all.add(new BakeryMessage.MaxTicket(2, R, 0));
    all.add(new BakeryMessage.MaxTicket(2, R2, BakeryMessage.MAX_H));
    all.add(new BakeryMessage.AddTicket(3, T1));
    all.add(new BakeryMessage.AddTicket(3, T2));
    all.add(new BakeryMessage.AddTicket(3, T3));
    all.add(new BakeryMessage.TicketAdded(3, R, true, List.of()));
    all.add(new BakeryMessage.TicketAdded(3, R, true, List.of(R2, R)));
    all.add(new BakeryMessage.TicketAdded(3, R, false, List.of()));
    all.add(new BakeryMessage.LockExiting(3, R, "x"));
    all.add(new BakeryMessage.TicketReady(3, "x", K));
    all.add(new BakeryMessage.TicketCheck(3, "x", K));
    all.add(new BakeryMessage.TicketGone(3, "x", K));
    all.add(new BakeryMessage.ActivateLock(3, "x", K));
    all.add(new BakeryMessage.LockActivated(3, "x", K, true));
    all.add(new BakeryMessage.LockActivated(3, "x", K2, false));
    all.add(new BakeryMessage.RenewTicket(3, "x", K));
    all.add(new BakeryMessage.TicketRenewed(3, "x", K));
    all.add(new BakeryMessage.DropTicket(3, "x", R));
    all.add(new BakeryMessage.TablesRequest(4));
    all.add(new BakeryMessage.Tables(4, 0, List.of(), false, List.of(), List.of()));
    all.add(new BakeryMessage.Tables(4, 3, List.of(new Leader("a", 1), new Leader("b", 2), new Leader("c", 0)),
        true, List.of(T1, T2, T3), List.of(new Mark("x", 7, -1), new Mark("y", 0, 5))));
    all.add(new BakeryMessage.Restate(0, 0, true, List.of(), List.of(), List.of(), List.of()));
    all.add(new BakeryMessage.Restate(4, 77, false, List.of(new BakeryMessage.Lock(R, "x", TIMED, 5, -1, 1, R2)),
        List.of(new BakeryMessage.Relock(R2, "y", K, 2)), List.of(T1, T2), List.of(new Entering("x", R, "a"))));
    all.add(new BakeryMessage.Restate(4, 77, false, List.of(new BakeryMessage.Lock(R, "x", EX, 5, -1, 1, null, TAG)),
        List.of(), List.of(T3), List.of()));
    all.add(new BakeryMessage.WhoHolds(1, "x"));
    all.add(new BakeryMessage.WhoHolds(Long.MAX_VALUE, "n".repeat(BakeryCodec.MAX_NAME_LENGTH)));
    all.add(new BakeryMessage.Holds(1, "x", true, null, ""));
    all.add(new BakeryMessage.Holds(1, "x", false, null, ""));
    all.add(new BakeryMessage.Holds(-1, "x", true, K2, TAG));
    all.add(new BakeryMessage.Holds(2, "x", true, K, ""));
    all.add(new BakeryMessage.ListTickets(5, List.of("1:a/", "e1:a/")));
    all.add(new BakeryMessage.TicketList(5, false, List.of()));
    all.add(new BakeryMessage.TicketList(5, true, List.of(T1, T3)));
    return all;
  }

  @Test
  void everyMessageRoundTripsWithAStableEncoding() {
    for (BakeryMessage m : every()) {
      byte[] bytes = codec.encode(m);
      assertEquals(BakeryCodec.VERSION, bytes[0], "version byte first");
      assertEquals(m, codec.decode(bytes), m.toString());
      CodecChecks.decodesOrRefuses(codec, bytes);
    }
  }

  @Test
  void everyMessageIsEncodedAsBefore() {
    CodecChecks.encodesAsBefore(codec, every(), "src/test/resources/dev/tumbler/peer/bakery/bakery-codec.golden");
  }

  @Test
  void truncatedTrailingVersionAndTypeAreTypedErrors() {
    CodecChecks.refusesDamage(codec, BakeryCodec.VERSION, every(), new BakeryMessage.TablesRequest(1), (byte) 0, (byte) 32, (byte) 99, (byte) -1);
  }


  @Test
  void handWrittenBadFieldsAreRefusedWithAReason() throws Exception {
    // a failure ordinal out of range
    byte[] failure = raw(BakeryMessage.LockFailed.class, out -> {
      out.writeUTF("a");
      out.writeLong(1);
      out.writeLong(1);
      out.writeByte(Output.Failure.values().length);
      out.writeUTF("");
    });
    assertTrue(assertThrows(CodecException.class, () -> codec.decode(failure)).getMessage().contains("failure"));
    // a boolean that is neither 0 nor 1
    byte[] bool = raw(BakeryMessage.LockActivated.class, out -> {
      out.writeLong(1);
      out.writeUTF("x");
      out.writeLong(1);
      out.writeLong(1);
      out.writeByte(0);
      out.writeByte(2);
    });
    assertTrue(assertThrows(CodecException.class, () -> codec.decode(bool)).getMessage().contains("boolean"));
    // an owner slot of 3, a term of 0, a ticket number of 0: not a key
    for (long[] k : new long[][] {{1, 1, 3}, {0, 1, 0}, {1, 0, 0}, {BakeryMessage.MAX_TERM + 1, 1, 0}}) {
      byte[] key = raw(BakeryMessage.TicketReady.class, out -> {
        out.writeLong(1);
        out.writeUTF("x");
        out.writeLong(k[0]);
        out.writeLong(k[1]);
        out.writeByte((int) k[2]);
      });
      assertTrue(assertThrows(CodecException.class, () -> codec.decode(key)).getMessage().contains("key"));
    }
    // an empty name, a name with a control character, an empty node id
    for (String name : new String[] {"", "a\nb"}) {
      byte[] bad = raw(BakeryMessage.TicketReady.class, out -> {
        out.writeLong(1);
        out.writeUTF(name);
        out.writeLong(1);
        out.writeLong(1);
        out.writeByte(0);
      });
      assertTrue(assertThrows(CodecException.class, () -> codec.decode(bad)).getMessage().contains("name"));
    }
    byte[] emptyId = raw(BakeryMessage.Unlock.class, out -> {
      out.writeUTF("");
      out.writeLong(1);
      out.writeLong(1);
    });
    assertTrue(assertThrows(CodecException.class, () -> codec.decode(emptyId)).getMessage().contains("node id"));
    // a count that the bytes left cannot hold is refused before anything is allocated
    byte[] count = raw(BakeryMessage.TicketAdded.class, out -> {
      out.writeLong(1);
      out.writeUTF("a");
      out.writeLong(1);
      out.writeLong(1);
      out.writeBoolean(true);
      out.writeInt(Integer.MAX_VALUE);
    });
    assertTrue(assertThrows(CodecException.class, () -> codec.decode(count)).getMessage().contains("claims"));
    // a mode the bakery does not serve, a quiet period without a timed-soft writer
    for (int[] mode : new int[][] {{Claim.Mode.PERMITS.ordinal(), 0, 0}, {Claim.Mode.WRITE.ordinal(), 0, 5},
        {Claim.Mode.READ.ordinal(), 1, 0}, {9, 0, 0}, {0, 9, 0}}) {
      byte[] lock = raw(BakeryMessage.Lock.class, out -> {
        out.writeUTF("a");
        out.writeLong(1);
        out.writeLong(1);
        out.writeUTF("x");
        out.writeByte(mode[0]);
        out.writeByte(mode[1]);
        out.writeLong(mode[2]);
        out.writeLong(1);
        out.writeLong(-1);
        out.writeLong(1);
        out.writeBoolean(false);
        out.writeUTF("");
      });
      assertThrows(CodecException.class, () -> codec.decode(lock), Arrays.toString(mode));
    }
    // a table reporting a view of its own term or later
    byte[] view = raw(BakeryMessage.Tables.class, out -> {
      out.writeLong(4);
      out.writeLong(4);
      out.writeByte(0);
      out.writeBoolean(false);
      out.writeInt(0);
      out.writeInt(0);
    });
    assertThrows(CodecException.class, () -> codec.decode(view));
    // a holder's tag that is too long or holds a control character; a question about no name
    for (String tag : new String[] {"t".repeat(Claim.MAX_TAG_LENGTH + 1), "a\u0000b"}) {
      byte[] holds = raw(BakeryMessage.Holds.class, out -> {
        out.writeLong(1);
        out.writeUTF("x");
        out.writeBoolean(true);
        out.writeBoolean(true);
        out.writeLong(1);
        out.writeLong(1);
        out.writeByte(0);
        out.writeUTF(tag);
      });
      assertTrue(assertThrows(CodecException.class, () -> codec.decode(holds)).getMessage().contains("tag"));
    }
    // a holder's tag without the ticket it names
    byte[] tagWithoutKey = raw(BakeryMessage.Holds.class, out -> {
      out.writeLong(1);
      out.writeUTF("x");
      out.writeBoolean(true);
      out.writeBoolean(false);
      out.writeUTF("cand-1");
    });
    assertTrue(assertThrows(CodecException.class, () -> codec.decode(tagWithoutKey)).getMessage()
        .contains("tag without a ticket"));
    // a ticket from a leader that says it does not act
    byte[] notActing = raw(BakeryMessage.Holds.class, out -> {
      out.writeLong(1);
      out.writeUTF("x");
      out.writeBoolean(false);
      out.writeBoolean(true);
      out.writeLong(1);
      out.writeLong(1);
      out.writeByte(0);
      out.writeUTF("");
    });
    assertTrue(assertThrows(CodecException.class, () -> codec.decode(notActing)).getMessage()
        .contains("does not act"));
    byte[] noName = raw(BakeryMessage.WhoHolds.class, out -> {
      out.writeLong(1);
      out.writeUTF("");
    });
    assertTrue(assertThrows(CodecException.class, () -> codec.decode(noName)).getMessage().contains("name"));
    // a ticket whose tag holds a control character
    byte[] ticket = raw(BakeryMessage.AddTicket.class, out -> {
      out.writeLong(3);
      out.writeUTF("x");
      out.writeLong(1);
      out.writeLong(1);
      out.writeByte(0);
      out.writeUTF("a");
      out.writeLong(1);
      out.writeLong(1);
      out.writeUTF("a");
      out.writeByte(Claim.Mode.EXCLUSIVE.ordinal());
      out.writeByte(Claim.Writer.HARD.ordinal());
      out.writeLong(0);
      out.writeByte(BakeryMessage.State.ACTIVE.ordinal());
      out.writeLong(5);
      out.writeUTF("a\nb");
    });
    assertTrue(assertThrows(CodecException.class, () -> codec.decode(ticket)).getMessage().contains("tag"));
  }

  @Test
  void randomBytesAndCorruptedMessagesDecodeOrFailCleanly() {
    SplittableRandom random = new SplittableRandom(3);
    List<BakeryMessage> all = every();
    for (int i = 0; i < 20_000; i++) {
      byte[] bytes = codec.encode(all.get(random.nextInt(all.size())));
      int flips = 1 + random.nextInt(3);
      for (int f = 0; f < flips; f++) {
        bytes[random.nextInt(bytes.length)] ^= (byte) (1 + random.nextInt(255));
      }
      CodecChecks.decodesOrRefuses(codec, bytes);
    }
  }

  @Test
  void tokensAreTheKeyReadAsANumber() {
    assertEquals((1L << 34) + (1L << 2), new Key(1, 1, 0).token());
    assertTrue(K2.token() > 0, "the largest key is a positive token");
    assertTrue(new Key(2, 1, 0).token() > new Key(1, BakeryMessage.MAX_H, 2).token(), "a later term is larger");
    assertTrue(new Key(1, 2, 0).token() > new Key(1, 1, 2).token(), "a larger H is larger");
  }

  private static byte[] raw(Class<? extends BakeryMessage> kind, CodecChecks.Body body) throws Exception {
    return CodecChecks.raw(BakeryCodec.VERSION, new BakeryCodec().type(kind), body);
  }
}
