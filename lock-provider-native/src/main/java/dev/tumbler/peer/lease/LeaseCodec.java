package dev.tumbler.peer.lease;

import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.MessageCodec;
import dev.tumbler.peer.core.Wire;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Binary encoding of {@link LeaseMessage}: {@code version(1) type(1) fields}, big-endian; strings are modified
 * UTF-8 with a 2-byte length. Decoding checks the version, the type, every name, id and count, counts against the
 * bytes left (a corrupt count is refused, never allocated), and that nothing trails. Thread safe.
 */
public final class LeaseCodec implements MessageCodec<LeaseMessage> {

  /** The encoding version this codec writes and reads. */
  public static final byte VERSION = 1;

  /** The longest name: the provider's qualified name (at most 517 characters). */
  static final int MAX_NAME_LENGTH = 520;

  static final byte ACQUIRE = 1;
  static final byte CANCEL = 2;
  static final byte RENEW = 3;
  static final byte RECALL_REPLY = 4;
  static final byte RELEASE = 5;
  static final byte RESTATE = 6;
  static final byte RESTATED = 7;
  static final byte GRANT = 8;
  static final byte BUSY = 9;
  static final byte RENEWED = 10;
  static final byte RENEW_DENIED = 11;
  static final byte RECALL = 12;
  static final byte REVOKED = 13;
  static final byte WHO_HOLDS = 14;
  static final byte HOLDS = 15;

  private static final String CODEC = "lease";
  private static final int MIN_TEXT_BYTES = 3;
  private static final int MIN_HELD_BYTES = MIN_TEXT_BYTES + 8 + 8 + 1 + 2;
  private static final int MIN_WANTED_BYTES = 8 + MIN_TEXT_BYTES + 1 + 2;

  @Override
  public byte[] encode(LeaseMessage message) {
    return encode(message, 0);
  }

  @Override
  public byte[] encode(LeaseMessage message, int headroom) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(headroom + 48);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.write(new byte[headroom]);
      out.writeByte(VERSION);
      out.writeByte(type(message));
      switch (message) {
        case LeaseMessage.Acquire m -> {
          out.writeLong(m.inc());
          out.writeLong(m.reqId());
          out.writeUTF(m.name());
          out.writeBoolean(m.attempt());
          out.writeUTF(m.tag());
          out.writeLong(m.echo());
        }
        case LeaseMessage.Cancel m -> {
          out.writeLong(m.inc());
          out.writeLong(m.reqId());
          out.writeUTF(m.name());
        }
        case LeaseMessage.Renew m -> {
          out.writeLong(m.inc());
          out.writeUTF(m.name());
          out.writeLong(m.leaseId());
          out.writeBoolean(m.active());
          out.writeUTF(m.tag());
          out.writeLong(m.echo());
        }
        case LeaseMessage.RecallReply m -> {
          out.writeLong(m.inc());
          out.writeUTF(m.name());
          out.writeLong(m.leaseId());
          out.writeBoolean(m.accepted());
        }
        case LeaseMessage.Release m -> {
          out.writeLong(m.inc());
          out.writeUTF(m.name());
          out.writeLong(m.leaseId());
        }
        case LeaseMessage.Restate m -> {
          out.writeLong(m.inc());
          out.writeLong(m.term());
          out.writeInt(m.held().size());
          for (LeaseMessage.Held h : m.held()) {
            out.writeUTF(h.name());
            out.writeLong(h.leaseId());
            out.writeLong(h.token());
            out.writeBoolean(h.active());
            out.writeUTF(h.tag());
          }
          out.writeInt(m.wanted().size());
          for (LeaseMessage.Wanted w : m.wanted()) {
            out.writeLong(w.reqId());
            out.writeUTF(w.name());
            out.writeBoolean(w.attempt());
            out.writeUTF(w.tag());
          }
          out.writeLong(m.echo());
        }
        case LeaseMessage.WhoHolds m -> {
          out.writeLong(m.inc());
          out.writeLong(m.queryId());
          out.writeUTF(m.name());
        }
        case LeaseMessage.Holds m -> {
          out.writeLong(m.term());
          out.writeLong(m.queryId());
          out.writeUTF(m.name());
          out.writeUTF(m.tag());
        }
        case LeaseMessage.Restated m -> {
          out.writeLong(m.inc());
          out.writeLong(m.term());
        }
        case LeaseMessage.Grant m -> {
          out.writeLong(m.term());
          out.writeLong(m.reqId());
          out.writeUTF(m.name());
          out.writeLong(m.leaseId());
          out.writeLong(m.token());
          out.writeLong(m.echo());
        }
        case LeaseMessage.Busy m -> {
          out.writeLong(m.term());
          out.writeLong(m.reqId());
          out.writeUTF(m.name());
        }
        case LeaseMessage.Renewed m -> {
          out.writeLong(m.term());
          out.writeUTF(m.name());
          out.writeLong(m.leaseId());
          out.writeLong(m.echo());
        }
        case LeaseMessage.RenewDenied m -> writeLease(out, m.term(), m.name(), m.leaseId());
        case LeaseMessage.Recall m -> writeLease(out, m.term(), m.name(), m.leaseId());
        case LeaseMessage.Revoked m -> writeLease(out, m.term(), m.name(), m.leaseId());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  private static void writeLease(DataOutputStream out, long term, String name, long leaseId) throws IOException {
    out.writeLong(term);
    out.writeUTF(name);
    out.writeLong(leaseId);
  }

  private static byte type(LeaseMessage m) {
    return switch (m) {
      case LeaseMessage.Acquire x -> ACQUIRE;
      case LeaseMessage.Cancel x -> CANCEL;
      case LeaseMessage.Renew x -> RENEW;
      case LeaseMessage.RecallReply x -> RECALL_REPLY;
      case LeaseMessage.Release x -> RELEASE;
      case LeaseMessage.Restate x -> RESTATE;
      case LeaseMessage.WhoHolds x -> WHO_HOLDS;
      case LeaseMessage.Holds x -> HOLDS;
      case LeaseMessage.Restated x -> RESTATED;
      case LeaseMessage.Grant x -> GRANT;
      case LeaseMessage.Busy x -> BUSY;
      case LeaseMessage.Renewed x -> RENEWED;
      case LeaseMessage.RenewDenied x -> RENEW_DENIED;
      case LeaseMessage.Recall x -> RECALL;
      case LeaseMessage.Revoked x -> REVOKED;
    };
  }

  @Override
  public LeaseMessage decode(byte[] bytes) {
    return decode(bytes, 0);
  }

  @Override
  public LeaseMessage decode(byte[] bytes, int offset) {
    if (bytes == null || offset < 0 || bytes.length - offset < 2) {
      throw new CodecException("lease message too short: " + (bytes == null ? "null"
          : Math.max(0, bytes.length - offset) + " bytes"));
    }
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes, offset, bytes.length - offset));
    try {
      byte version = in.readByte();
      if (version != VERSION) {
        throw new CodecException("lease message version " + version + " is not supported (expected " + VERSION + ")");
      }
      byte type = in.readByte();
      LeaseMessage m = switch (type) {
        case ACQUIRE -> new LeaseMessage.Acquire(inc(in), id(in, "request id"), name(in), in.readBoolean(), tag(in),
            in.readLong());
        case CANCEL -> new LeaseMessage.Cancel(inc(in), id(in, "request id"), name(in));
        case RENEW -> new LeaseMessage.Renew(inc(in), name(in), id(in, "lease id"), in.readBoolean(), tag(in),
            in.readLong());
        case RECALL_REPLY -> new LeaseMessage.RecallReply(inc(in), name(in), id(in, "lease id"), in.readBoolean());
        case RELEASE -> new LeaseMessage.Release(inc(in), name(in), id(in, "lease id"));
        case RESTATE -> restate(in);
        case WHO_HOLDS -> new LeaseMessage.WhoHolds(inc(in), id(in, "query id"), name(in));
        case HOLDS -> new LeaseMessage.Holds(id(in, "term"), id(in, "query id"), name(in), tag(in));
        case RESTATED -> new LeaseMessage.Restated(inc(in), id(in, "term"));
        case GRANT -> new LeaseMessage.Grant(id(in, "term"), id(in, "request id"), name(in), id(in, "lease id"),
            id(in, "token"), in.readLong());
        case BUSY -> new LeaseMessage.Busy(id(in, "term"), id(in, "request id"), name(in));
        case RENEWED -> new LeaseMessage.Renewed(id(in, "term"), name(in), id(in, "lease id"), in.readLong());
        case RENEW_DENIED -> new LeaseMessage.RenewDenied(id(in, "term"), name(in), id(in, "lease id"));
        case RECALL -> new LeaseMessage.Recall(id(in, "term"), name(in), id(in, "lease id"));
        case REVOKED -> new LeaseMessage.Revoked(id(in, "term"), name(in), id(in, "lease id"));
        default -> throw new CodecException("unknown lease message type " + type);
      };
      Wire.end(in, CODEC, type);
      return m;
    } catch (EOFException e) {
      throw new CodecException("truncated lease message (" + (bytes.length - offset) + " bytes)", e);
    } catch (IOException e) {
      throw new CodecException("malformed lease message: " + e.getMessage(), e);
    }
  }

  private static LeaseMessage.Restate restate(DataInputStream in) throws IOException {
    long inc = inc(in);
    long term = id(in, "term");
    int n = Wire.count(in, MIN_HELD_BYTES, CODEC, "held leases");
    List<LeaseMessage.Held> held = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      held.add(new LeaseMessage.Held(name(in), id(in, "lease id"), id(in, "token"), in.readBoolean(), tag(in)));
    }
    n = Wire.count(in, MIN_WANTED_BYTES, CODEC, "wanted requests");
    List<LeaseMessage.Wanted> wanted = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      wanted.add(new LeaseMessage.Wanted(id(in, "request id"), name(in), in.readBoolean(), tag(in)));
    }
    return new LeaseMessage.Restate(inc, term, held, wanted, in.readLong());
  }

  private static long inc(DataInputStream in) throws IOException {
    return Wire.nonNegative(in, CODEC, "incarnation");
  }

  private static long id(DataInputStream in, String what) throws IOException {
    return Wire.nonNegative(in, CODEC, what);
  }

  private static String name(DataInputStream in) throws IOException {
    return Wire.text(in, MAX_NAME_LENGTH, CODEC, "name");
  }

  private static String tag(DataInputStream in) throws IOException {
    return Wire.tag(in, CODEC);
  }
}
