package dev.tumbler.peer.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.TransactionOptions.Quorum;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.CodecChecks;
import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.TxOptions;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ClientCodecTest {

  private final ClientCodec codec = new ClientCodec();

  static List<ClientMessage> every() {
    Claim write = Claim.write("w", Claim.Writer.TIMED_SOFT, 5_000);
    TxOptions tx = new TxOptions(true, Quorum.ALL, List.of("n2", "n1"), 7_000);
    return List.of(
        new ClientMessage.Hello(-5, 1, "lease", 30_000_000_000L, List.of(), List.of()),
        new ClientMessage.Hello(Long.MAX_VALUE, 2, "agent", 1, List.of(
            new ClientMessage.Asked(1, Claim.exclusive("ünïcødé ✓"), false, 0, true),
            new ClientMessage.Asked(2, Claim.tx(List.of("a", "b", "c"), Claim.Mode.READ), true, 3, false),
            new ClientMessage.Asked(4, Claim.permits("s", 2, 5).withTag("candidate ✓"), false, 0, false),
            new ClientMessage.Asked(5, write, false, 0, false)),
            List.of(new ClientMessage.Open(3, tx), new ClientMessage.Open(9, TxOptions.plainLock()))),
        new ClientMessage.Acquire(1, 3, 7, Claim.read("r"), true, 0),
        new ClientMessage.Acquire(1, 4, 8, Claim.tx(List.of("x", "y"), Claim.Mode.WRITE), false, 3),
        new ClientMessage.Release(1, 5, 7),
        new ClientMessage.Cancel(1, 6, 8),
        new ClientMessage.Renew(1, 7, 7),
        new ClientMessage.Begin(1, 8, 3, tx),
        new ClientMessage.End(1, 9, 3),
        new ClientMessage.HolderQuery(1, 10, 11, "e-leader"),
        new ClientMessage.PermitsQuery(1, 11, 12, "s", 5),
        new ClientMessage.Ping(1, 12),
        new ClientMessage.Bye(1, 13),
        new ClientMessage.Welcome(1, 1, 22_500_000_000L),
        new ClientMessage.Refused(1, 1, "this cluster runs algorithm lease, not agent"),
        new ClientMessage.Gone(1, 0, false, "member n0 has no session 1 of this client"),
        new ClientMessage.Gone(1, 0, true, "member n0 is stopping"),
        new ClientMessage.Granted(1, 3, 5, 7, "r", 99, 1, Long.MAX_VALUE),
        new ClientMessage.Granted(1, 3, 5, 7, "s", -1, 3, 0),
        new ClientMessage.Renewed(1, 7, 5, 7, 6),
        new ClientMessage.Failed(1, 3, 5, 8, "x/y", Output.Failure.DEADLOCK, Set.of("n1", "n0"), ""),
        new ClientMessage.Failed(1, 3, 5, 8, "", Output.Failure.REFUSED, Set.of(), "why ✓"),
        new ClientMessage.Lost(1, 3, 5, 7, "r", Output.LostReason.CONNECTION_LOST, "detail"),
        new ClientMessage.Lost(1, 3, 5, 7, "", Output.LostReason.REVOKED, "not held"),
        new ClientMessage.TxAborted(1, 3, 5, 3, Output.Failure.UNAVAILABLE, Set.of("n2"), "gone"),
        new ClientMessage.Holder(1, 3, 5, 11, "e-leader", ""),
        new ClientMessage.Holder(1, 3, 5, 11, "e-leader", "client c0 #1.2"),
        new ClientMessage.Permits(1, 3, 5, 12, "s", 0),
        new ClientMessage.Pong(1, 12, 0),
        new ClientMessage.Again(1, 12, 7),
        new ClientMessage.ListQuery(1, 13, 14, List.of("1:a/", "e1:a/")),
        new ClientMessage.Listing(1, 3, 5, 14, false, List.of()),
        new ClientMessage.Listing(1, 3, 5, 14, true, List.of(
            new Output.Listed("1:a/x", Claim.Mode.WRITE, 1, "n1 c#1", 15, true, 16),
            new Output.Listed("1:a/p", Claim.Mode.PERMITS, 2, "n2#3", 17, false, -1))));
  }

  @Test
  void everyMessageRoundTrips() {
    for (ClientMessage m : every()) {
      byte[] bytes = codec.encode(m);
      assertEquals(ClientCodec.VERSION, bytes[0], "version byte first");
      assertEquals(m, codec.decode(bytes));
      assertEquals(m, codec.decode(codec.encode(m, 3), 3), "behind a header");
    }
  }

  @Test
  void everyMessageIsEncodedAsBefore() {
    CodecChecks.encodesAsBefore(codec, every(), "src/test/resources/dev/tumbler/peer/client/client-codec.golden");
  }

  @Test
  void damageIsRefusedWithAReason() {
    CodecChecks.refusesDamage(codec, ClientCodec.VERSION, every(), new ClientMessage.Ping(1, 2), (byte) 0,
        (byte) 13, (byte) 19, (byte) 33, (byte) -1);
  }

  @Test
  void randomBytesDecodeOrAreRefused() {
    CodecChecks.survivesRandomBytes(codec, ClientCodec.VERSION, every(), 20_000);
  }

  @Test
  void handWrittenBadFieldsAreRefusedWithAReason() throws Exception {
    refused("negative sequence number", "sequence number", raw(ClientMessage.Ping.class, o -> {
      o.writeLong(1);
      o.writeLong(-1);
    }));
    refused("negative session time", "session time", raw(ClientMessage.Pong.class, o -> {
      o.writeLong(1);
      o.writeLong(1);
      o.writeLong(-3);
    }));
    refused("negative grant's time", "grant's time", raw(ClientMessage.Renewed.class, o -> {
      o.writeLong(1);
      o.writeLong(1);
      o.writeLong(1);
      o.writeLong(7);
      o.writeLong(-1);
    }));
    refused("an unknown failure", "unknown failure", raw(ClientMessage.Failed.class, o -> {
      o.writeLong(1);
      o.writeLong(1);
      o.writeLong(1);
      o.writeLong(7);
      o.writeUTF("n");
      o.writeByte(Output.Failure.values().length);
      o.writeInt(0);
      o.writeUTF("");
    }));
    refused("permits above the limit", "invalid client message", acquire(o -> {
      o.writeInt(1);
      o.writeUTF("s");
      o.writeByte(Claim.Mode.PERMITS.ordinal());
      o.writeInt(6);
      o.writeInt(5);
      o.writeByte(0);
      o.writeLong(0);
      o.writeUTF("");
    }));
    refused("a path too deep", "path of 17", acquire(o -> o.writeInt(17)));
    refused("an empty path element", "path element of 0", acquire(o -> {
      o.writeInt(1);
      o.writeUTF("");
    }));
    refused("a huge count of requests", "claims 100000", raw(ClientMessage.Hello.class, o -> {
      o.writeLong(1);
      o.writeLong(1);
      o.writeUTF("lease");
      o.writeLong(1);
      o.writeInt(100_000);
    }));
    refused("an unknown quorum", "unknown quorum", raw(ClientMessage.Begin.class, o -> {
      o.writeLong(1);
      o.writeLong(1);
      o.writeLong(3);
      o.writeBoolean(false);
      o.writeByte(Quorum.values().length);
      o.writeInt(0);
      o.writeLong(0);
    }));
  }

  private static byte[] acquire(CodecChecks.Body claim) throws Exception {
    return raw(ClientMessage.Acquire.class, o -> {
      o.writeLong(1);
      o.writeLong(1);
      o.writeLong(7);
      claim.write(o);
      o.writeBoolean(false);
      o.writeLong(0);
    });
  }

  /** The bytes of a message of {@code kind} written by hand: what an encoder would never make. */
  private static byte[] raw(Class<? extends ClientMessage> kind, CodecChecks.Body body) throws Exception {
    return CodecChecks.raw(ClientCodec.VERSION, new ClientCodec().type(kind), body);
  }


  private void refused(String what, String naming, byte[] bytes) {
    CodecException e = assertThrows(CodecException.class, () -> codec.decode(bytes), what);
    assertTrue(e.getMessage().contains(naming), what + ": " + e.getMessage());
  }
}
