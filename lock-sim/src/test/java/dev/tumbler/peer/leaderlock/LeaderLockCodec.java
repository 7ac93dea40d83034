package dev.tumbler.peer.leaderlock;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.MessageCodec;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/** {@code version(1) type(1) fields}, big-endian; names as modified UTF-8. Thread safe. */
final class LeaderLockCodec implements MessageCodec<LeaderLockMessage> {

  private static final byte VERSION = 1;
  private static final Claim.Mode[] MODES = Claim.Mode.values();

  @Override
  public byte[] encode(LeaderLockMessage message) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(VERSION);
      switch (message) {
        case LeaderLockMessage.Acquire m -> {
          out.writeByte(1);
          request(out, m.inc(), m.seq(), m.requestId(), m.name(), m.mode(), m.attempt());
        }
        case LeaderLockMessage.Waiting m -> {
          out.writeByte(2);
          request(out, m.inc(), m.seq(), m.requestId(), m.name(), m.mode(), m.attempt());
        }
        case LeaderLockMessage.Renew m -> longs(out, 3, m.inc(), m.seq(), m.requestId());
        case LeaderLockMessage.Release m -> longs(out, 4, m.inc(), m.seq(), m.requestId());
        case LeaderLockMessage.Grant m -> longs(out, 5, m.term(), m.requestId(), m.echo(), m.token());
        case LeaderLockMessage.Renewed m -> longs(out, 6, m.term(), m.requestId(), m.echo());
        case LeaderLockMessage.Busy m -> longs(out, 7, m.term(), m.requestId());
        case LeaderLockMessage.Revoked m -> longs(out, 8, m.term(), m.requestId());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  private static void request(DataOutputStream out, long inc, long seq, long requestId, String name, Claim.Mode mode,
      boolean attempt) throws IOException {
    out.writeLong(inc);
    out.writeLong(seq);
    out.writeLong(requestId);
    out.writeUTF(name);
    out.writeByte(mode.ordinal());
    out.writeBoolean(attempt);
  }

  private static void longs(DataOutputStream out, int type, long... values) throws IOException {
    out.writeByte(type);
    for (long v : values) {
      out.writeLong(v);
    }
  }

  @Override
  public LeaderLockMessage decode(byte[] bytes) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      if (in.readByte() != VERSION) {
        throw new CodecException("unknown leader-lock version " + bytes[0]);
      }
      int type = in.readByte();
      LeaderLockMessage m = switch (type) {
        case 1 -> new LeaderLockMessage.Acquire(in.readLong(), in.readLong(), in.readLong(), in.readUTF(), mode(in),
            bool(in));
        case 2 -> new LeaderLockMessage.Waiting(in.readLong(), in.readLong(), in.readLong(), in.readUTF(), mode(in),
            bool(in));
        case 3 -> new LeaderLockMessage.Renew(in.readLong(), in.readLong(), in.readLong());
        case 4 -> new LeaderLockMessage.Release(in.readLong(), in.readLong(), in.readLong());
        case 5 -> new LeaderLockMessage.Grant(in.readLong(), in.readLong(), in.readLong(), in.readLong());
        case 6 -> new LeaderLockMessage.Renewed(in.readLong(), in.readLong(), in.readLong());
        case 7 -> new LeaderLockMessage.Busy(in.readLong(), in.readLong());
        case 8 -> new LeaderLockMessage.Revoked(in.readLong(), in.readLong());
        default -> throw new CodecException("unknown leader-lock message type " + type);
      };
      if (in.available() != 0) {
        throw new CodecException(in.available() + " trailing bytes after " + m);
      }
      return m;
    } catch (IOException e) {
      throw new CodecException("truncated leader-lock message", e);
    }
  }

  private static Claim.Mode mode(DataInputStream in) throws IOException {
    int ordinal = in.readByte();
    if (ordinal < 0 || ordinal >= MODES.length || MODES[ordinal] == Claim.Mode.PERMITS) {
      throw new CodecException("not a lock mode: " + ordinal);
    }
    return MODES[ordinal];
  }

  private static boolean bool(DataInputStream in) throws IOException {
    int b = in.readByte();
    if (b != 0 && b != 1) {
      throw new CodecException("not a boolean: " + b);
    }
    return b == 1;
  }
}
