package dev.tumbler.peer.lamport;

import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.MessageCodec;
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
 * Binary encoding of {@link LamportMessage}: {@code version(1) type(1) fields}, big-endian; names as
 * modified UTF-8 with a 2-byte length ({@link DataOutputStream#writeUTF}). Decoding checks the version,
 * the type, name validity, counts against the bytes left, and that nothing trails. Thread safe.
 */
public final class LamportCodec implements MessageCodec<LamportMessage> {

  /** The encoding version this codec writes and reads. */
  public static final byte VERSION = 1;

  /**
   * The longest name on the wire: the provider's qualified name ({@code <length>:<namespace>/<name>}) with a
   * 3-digit length and a namespace and a name of 256 characters each.
   */
  static final int MAX_NAME_LENGTH = 3 + 1 + 256 + 1 + 256;

  static final byte REQUEST = 1;
  static final byte ACK = 2;
  static final byte RELEASE = 3;
  static final byte REPLY = 4;
  static final byte BUSY = 5;
  static final byte SYNC = 6;

  @Override
  public byte[] encode(LamportMessage message) {
    return encode(message, 0);
  }

  @Override
  public byte[] encode(LamportMessage message, int headroom) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(headroom + 32);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.write(new byte[headroom]);
      out.writeByte(VERSION);
      switch (message) {
        case LamportMessage.Request r -> {
          out.writeByte(REQUEST);
          out.writeUTF(r.name());
          out.writeLong(r.ts());
          out.writeBoolean(r.attempt());
        }
        case LamportMessage.Ack a -> {
          out.writeByte(ACK);
          out.writeLong(a.ts());
        }
        case LamportMessage.Release r -> {
          out.writeByte(RELEASE);
          out.writeUTF(r.name());
          out.writeLong(r.requestTs());
          out.writeLong(r.ts());
        }
        case LamportMessage.Reply r -> {
          out.writeByte(REPLY);
          out.writeUTF(r.name());
          out.writeLong(r.requestTs());
          out.writeLong(r.ts());
        }
        case LamportMessage.Busy b -> {
          out.writeByte(BUSY);
          out.writeUTF(b.name());
          out.writeLong(b.requestTs());
          out.writeLong(b.ts());
        }
        case LamportMessage.Sync s -> {
          out.writeByte(SYNC);
          out.writeLong(s.ts());
          out.writeBoolean(s.answer());
          out.writeInt(s.entries().size());
          for (LamportMessage.Entry e : s.entries()) {
            out.writeUTF(e.name());
            out.writeLong(e.requestTs());
            out.writeBoolean(e.attempt());
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot happen writing to memory", e);
    }
    return bytes.toByteArray();
  }

  @Override
  public LamportMessage decode(byte[] bytes) {
    return decode(bytes, 0);
  }

  @Override
  public LamportMessage decode(byte[] bytes, int offset) {
    if (bytes == null || offset < 0 || bytes.length - offset < 2) {
      throw new CodecException("lamport message too short: " + (bytes == null ? "null"
          : Math.max(0, bytes.length - offset) + " bytes"));
    }
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes, offset, bytes.length - offset));
    try {
      byte version = in.readByte();
      if (version != VERSION) {
        throw new CodecException("lamport message version " + version + " is not supported (expected " + VERSION + ")");
      }
      byte type = in.readByte();
      LamportMessage m = switch (type) {
        case REQUEST -> new LamportMessage.Request(name(in), timestamp(in), in.readBoolean());
        case ACK -> new LamportMessage.Ack(timestamp(in));
        case RELEASE -> new LamportMessage.Release(name(in), timestamp(in), timestamp(in));
        case REPLY -> new LamportMessage.Reply(name(in), timestamp(in), timestamp(in));
        case BUSY -> new LamportMessage.Busy(name(in), timestamp(in), timestamp(in));
        case SYNC -> {
          long ts = timestamp(in);
          boolean answer = in.readBoolean();
          int n = in.readInt();
          // each entry takes at least 2 + 1 + 8 + 1 bytes: a count beyond that is a lie, not an allocation
          if (n < 0 || n > in.available() / 12) {
            throw new CodecException("lamport sync claims " + n + " entries in " + in.available() + " bytes");
          }
          List<LamportMessage.Entry> entries = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            entries.add(new LamportMessage.Entry(name(in), timestamp(in), in.readBoolean()));
          }
          yield new LamportMessage.Sync(ts, entries, answer);
        }
        default -> throw new CodecException("unknown lamport message type " + type);
      };
      if (in.available() > 0) {
        throw new CodecException("lamport message type " + type + " has " + in.available() + " trailing bytes");
      }
      return m;
    } catch (EOFException e) {
      throw new CodecException("truncated lamport message (" + (bytes.length - offset) + " bytes)", e);
    } catch (IOException e) {
      throw new CodecException("malformed lamport message: " + e.getMessage(), e);
    }
  }

  private static String name(DataInputStream in) throws IOException {
    String name = in.readUTF();
    // a lock name, possibly behind a namespace prefix: never empty, no control characters
    if (name.isEmpty() || name.length() > MAX_NAME_LENGTH) {
      throw new CodecException("lock name of " + name.length() + " characters in lamport message");
    }
    for (int i = 0; i < name.length(); i++) {
      if (Character.isISOControl(name.charAt(i))) {
        throw new CodecException("lock name with a control character in lamport message");
      }
    }
    return name;
  }

  private static long timestamp(DataInputStream in) throws IOException {
    long ts = in.readLong();
    if (ts < 0 || ts > LamportCore.MAX_CLOCK) {
      throw new CodecException("lamport timestamp out of range: " + ts);
    }
    return ts;
  }
}
