package dev.tumbler.peer.buckets;

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
 * Binary encoding of {@link BucketsMessage}: {@code version(1) type(1) fields}, big-endian; strings are modified
 * UTF-8 with a 2-byte length. Decoding checks the version, the type, every name, session, count and permit number,
 * counts against the bytes left (a corrupt count is refused, never allocated), and that nothing trails. Thread safe.
 */
public final class BucketsCodec implements MessageCodec<BucketsMessage> {

  /** The encoding version this codec writes and reads. */
  public static final byte VERSION = 1;

  /** The longest name: the provider's qualified name (at most 517 characters) behind a one-character kind. */
  static final int MAX_NAME_LENGTH = 520;
  /** The longest session name: the node's id and a counter. */
  static final int MAX_SESSION_LENGTH = 1024;
  /** The longest refusal detail. */
  static final int MAX_DETAIL_LENGTH = 2048;

  static final byte ACQUIRE = 1;
  static final byte CANCEL = 2;
  static final byte RELEASE = 3;
  static final byte SESSION_RENEW = 4;
  static final byte QUERY = 5;
  static final byte RESTATE = 6;
  static final byte RESTATED = 7;
  static final byte GRANT = 8;
  static final byte BUSY = 9;
  static final byte REFUSED = 10;
  static final byte SESSION_RENEWED = 11;
  static final byte REVOKED = 12;
  static final byte TOTAL = 13;
  static final byte WHO_HOLDS = 14;
  static final byte HOLDS = 15;

  private static final String CODEC = "buckets";
  private static final int MIN_TEXT_BYTES = 3;
  private static final int MIN_HELD_BYTES = MIN_TEXT_BYTES * 2 + 8 + 4 + 4 + 2;
  private static final int MIN_WANTED_BYTES = MIN_TEXT_BYTES * 2 + 8 + 4 + 4 + 2;

  @Override
  public byte[] encode(BucketsMessage message) {
    return encode(message, 0);
  }

  @Override
  public byte[] encode(BucketsMessage message, int headroom) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(headroom + 48);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.write(new byte[headroom]);
      out.writeByte(VERSION);
      out.writeByte(type(message));
      switch (message) {
        case BucketsMessage.Acquire m -> {
          out.writeLong(m.inc());
          out.writeUTF(m.session());
          out.writeLong(m.reqId());
          out.writeUTF(m.name());
          out.writeInt(m.permits());
          out.writeInt(m.limit());
          out.writeBoolean(m.attempt());
          out.writeUTF(m.tag());
          out.writeLong(m.echo());
        }
        case BucketsMessage.Cancel m -> {
          out.writeLong(m.inc());
          out.writeUTF(m.session());
          out.writeLong(m.reqId());
        }
        case BucketsMessage.Release m -> {
          out.writeLong(m.inc());
          out.writeUTF(m.session());
          out.writeUTF(m.name());
          out.writeLong(m.grantId());
        }
        case BucketsMessage.SessionRenew m -> {
          out.writeLong(m.inc());
          out.writeUTF(m.session());
          out.writeLong(m.echo());
        }
        case BucketsMessage.Query m -> {
          out.writeLong(m.inc());
          out.writeLong(m.queryId());
          out.writeUTF(m.name());
        }
        case BucketsMessage.Restate m -> {
          out.writeLong(m.inc());
          out.writeLong(m.term());
          out.writeInt(m.sessions().size());
          for (String s : m.sessions()) {
            out.writeUTF(s);
          }
          out.writeInt(m.held().size());
          for (BucketsMessage.Held h : m.held()) {
            out.writeUTF(h.session());
            out.writeUTF(h.name());
            out.writeLong(h.grantId());
            out.writeInt(h.permits());
            out.writeInt(h.limit());
            out.writeUTF(h.tag());
          }
          out.writeInt(m.wanted().size());
          for (BucketsMessage.Wanted w : m.wanted()) {
            out.writeUTF(w.session());
            out.writeLong(w.reqId());
            out.writeUTF(w.name());
            out.writeInt(w.permits());
            out.writeInt(w.limit());
            out.writeUTF(w.tag());
          }
          out.writeLong(m.echo());
        }
        case BucketsMessage.Restated m -> {
          out.writeLong(m.inc());
          out.writeLong(m.term());
        }
        case BucketsMessage.Grant m -> {
          out.writeLong(m.term());
          out.writeUTF(m.session());
          out.writeLong(m.reqId());
          out.writeUTF(m.name());
          out.writeLong(m.grantId());
          out.writeLong(m.token());
          out.writeLong(m.total());
          out.writeLong(m.echo());
          out.writeLong(m.floor());
        }
        case BucketsMessage.Busy m -> {
          out.writeUTF(m.session());
          out.writeLong(m.reqId());
          out.writeLong(m.total());
        }
        case BucketsMessage.Refused m -> {
          out.writeUTF(m.session());
          out.writeLong(m.reqId());
          out.writeUTF(m.detail());
        }
        case BucketsMessage.SessionRenewed m -> {
          out.writeUTF(m.session());
          out.writeLong(m.echo());
        }
        case BucketsMessage.Revoked m -> {
          out.writeUTF(m.session());
          out.writeUTF(m.name());
          out.writeLong(m.grantId());
        }
        case BucketsMessage.WhoHolds m -> {
          out.writeLong(m.inc());
          out.writeLong(m.queryId());
          out.writeUTF(m.name());
        }
        case BucketsMessage.Holds m -> {
          out.writeLong(m.term());
          out.writeLong(m.queryId());
          out.writeUTF(m.name());
          out.writeUTF(m.tag());
        }
        case BucketsMessage.Total m -> {
          out.writeLong(m.queryId());
          out.writeUTF(m.name());
          out.writeLong(m.total());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  private static byte type(BucketsMessage m) {
    return switch (m) {
      case BucketsMessage.Acquire x -> ACQUIRE;
      case BucketsMessage.Cancel x -> CANCEL;
      case BucketsMessage.Release x -> RELEASE;
      case BucketsMessage.SessionRenew x -> SESSION_RENEW;
      case BucketsMessage.Query x -> QUERY;
      case BucketsMessage.Restate x -> RESTATE;
      case BucketsMessage.Restated x -> RESTATED;
      case BucketsMessage.Grant x -> GRANT;
      case BucketsMessage.Busy x -> BUSY;
      case BucketsMessage.Refused x -> REFUSED;
      case BucketsMessage.SessionRenewed x -> SESSION_RENEWED;
      case BucketsMessage.Revoked x -> REVOKED;
      case BucketsMessage.Total x -> TOTAL;
      case BucketsMessage.WhoHolds x -> WHO_HOLDS;
      case BucketsMessage.Holds x -> HOLDS;
    };
  }

  @Override
  public BucketsMessage decode(byte[] bytes) {
    return decode(bytes, 0);
  }

  @Override
  public BucketsMessage decode(byte[] bytes, int offset) {
    if (bytes == null || offset < 0 || bytes.length - offset < 2) {
      throw new CodecException("buckets message too short: " + (bytes == null ? "null"
          : Math.max(0, bytes.length - offset) + " bytes"));
    }
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes, offset, bytes.length - offset));
    try {
      byte version = in.readByte();
      if (version != VERSION) {
        throw new CodecException("buckets message version " + version + " is not supported (expected " + VERSION
            + ")");
      }
      byte type = in.readByte();
      BucketsMessage m = switch (type) {
        case ACQUIRE -> new BucketsMessage.Acquire(inc(in), session(in), id(in, "request id"), name(in),
            permits(in), limit(in), in.readBoolean(), tag(in), in.readLong());
        case CANCEL -> new BucketsMessage.Cancel(inc(in), session(in), id(in, "request id"));
        case RELEASE -> new BucketsMessage.Release(inc(in), session(in), name(in), id(in, "grant id"));
        case SESSION_RENEW -> new BucketsMessage.SessionRenew(inc(in), session(in), in.readLong());
        case QUERY -> new BucketsMessage.Query(inc(in), id(in, "query id"), name(in));
        case RESTATE -> restate(in);
        case RESTATED -> new BucketsMessage.Restated(inc(in), id(in, "term"));
        case GRANT -> new BucketsMessage.Grant(id(in, "term"), session(in), id(in, "request id"), name(in),
            id(in, "grant id"), id(in, "token"), id(in, "total"), in.readLong(), id(in, "floor"));
        case BUSY -> new BucketsMessage.Busy(session(in), id(in, "request id"), id(in, "total"));
        case REFUSED -> new BucketsMessage.Refused(session(in), id(in, "request id"),
            Wire.text(in, MAX_DETAIL_LENGTH, CODEC, "detail"));
        case SESSION_RENEWED -> new BucketsMessage.SessionRenewed(session(in), in.readLong());
        case REVOKED -> new BucketsMessage.Revoked(session(in), name(in), id(in, "grant id"));
        case TOTAL -> new BucketsMessage.Total(id(in, "query id"), name(in), id(in, "total"));
        case WHO_HOLDS -> new BucketsMessage.WhoHolds(inc(in), id(in, "query id"), name(in));
        case HOLDS -> new BucketsMessage.Holds(id(in, "term"), id(in, "query id"), name(in), tag(in));
        default -> throw new CodecException("unknown buckets message type " + type);
      };
      Wire.end(in, CODEC, type);
      return m;
    } catch (EOFException e) {
      throw new CodecException("truncated buckets message (" + (bytes.length - offset) + " bytes)", e);
    } catch (IOException e) {
      throw new CodecException("malformed buckets message: " + e.getMessage(), e);
    }
  }

  private static BucketsMessage.Restate restate(DataInputStream in) throws IOException {
    long inc = inc(in);
    long term = id(in, "term");
    int n = Wire.count(in, MIN_TEXT_BYTES, CODEC, "sessions");
    List<String> sessions = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      sessions.add(session(in));
    }
    n = Wire.count(in, MIN_HELD_BYTES, CODEC, "held grants");
    List<BucketsMessage.Held> held = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      held.add(new BucketsMessage.Held(session(in), name(in), id(in, "grant id"), permits(in), limit(in), tag(in)));
    }
    n = Wire.count(in, MIN_WANTED_BYTES, CODEC, "wanted requests");
    List<BucketsMessage.Wanted> wanted = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      wanted.add(new BucketsMessage.Wanted(session(in), id(in, "request id"), name(in), permits(in), limit(in),
          tag(in)));
    }
    return new BucketsMessage.Restate(inc, term, sessions, held, wanted, in.readLong());
  }

  private static long inc(DataInputStream in) throws IOException {
    return Wire.nonNegative(in, CODEC, "incarnation");
  }

  private static long id(DataInputStream in, String what) throws IOException {
    return Wire.nonNegative(in, CODEC, what);
  }

  private static String session(DataInputStream in) throws IOException {
    return Wire.text(in, MAX_SESSION_LENGTH, CODEC, "session");
  }

  private static String name(DataInputStream in) throws IOException {
    return Wire.text(in, MAX_NAME_LENGTH, CODEC, "name");
  }

  private static String tag(DataInputStream in) throws IOException {
    return Wire.tag(in, CODEC);
  }

  private static int permits(DataInputStream in) throws IOException {
    return Wire.positive(in, Integer.MAX_VALUE, CODEC, "permits");
  }

  private static int limit(DataInputStream in) throws IOException {
    return Wire.positive(in, Integer.MAX_VALUE, CODEC, "limit");
  }
}
