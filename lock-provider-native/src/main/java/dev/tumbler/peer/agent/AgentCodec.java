package dev.tumbler.peer.agent;

import dev.tumbler.peer.agent.LockTable.Entry;
import dev.tumbler.peer.agent.LockTable.Mode;
import dev.tumbler.peer.core.Claim;
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
 * Binary encoding of {@link AgentMessage}: {@code version(1) type(1) clock(8) fields}, big-endian. A path is a
 * count byte and its elements, each modified UTF-8 with a 2-byte length; an agent id is {@code clock(8) node(4)
 * seq(8)}; a queue is a count and its entries. Decoding checks the version, the type, every path, id, mode and
 * version, counts against the bytes left (a corrupt count is refused, never allocated), and that nothing
 * trails. Thread safe.
 */
public final class AgentCodec implements MessageCodec<AgentMessage> {

  /** The encoding version this codec writes and reads. */
  public static final byte VERSION = 1;

  /**
   * The longest path element or node id on the wire: the provider's qualified name ({@code <length>:<namespace>/
   * <name>}) with a 3-digit length and a namespace and a name of 256 characters each.
   */
  static final int MAX_ELEMENT_LENGTH = 3 + 1 + 256 + 1 + 256;

  static final byte LOCK = 1;
  static final byte SURRENDER = 2;
  static final byte END = 3;
  static final byte RENEW = 4;
  static final byte RENEWED = 5;
  static final byte STAMP = 6;
  static final byte STAMPED = 7;
  static final byte RESTATE = 8;
  static final byte INFO = 9;
  static final byte FORWARD = 10;
  static final byte SURRENDERED = 11;

  /** The fewest bytes of an agent id, a path, and a queue entry: what a count is checked against. */
  private static final int ID_BYTES = 8 + 4 + 8;
  private static final int MIN_PATH_BYTES = 1 + 2 + 1;
  private static final int MIN_ENTRY_BYTES = ID_BYTES + MIN_PATH_BYTES + 1 + 1 + 8 + 8 + 1;
  private static final int MIN_CLAIMED_BYTES = ID_BYTES + MIN_PATH_BYTES + 1 + 1 + 2;

  @Override
  public byte[] encode(AgentMessage message) {
    return encode(message, 0);
  }

  @Override
  public byte[] encode(AgentMessage message, int headroom) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(headroom + 64);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.write(new byte[headroom]);
      out.writeByte(VERSION);
      out.writeByte(type(message));
      out.writeLong(message.clock());
      switch (message) {
        case AgentMessage.Lock m -> {
          id(out, m.agent());
          path(out, m.path());
          out.writeByte(m.mode().ordinal());
          out.writeUTF(m.tag());
        }
        case AgentMessage.Surrender m -> {
          id(out, m.agent());
          path(out, m.path());
          out.writeLong(m.version());
        }
        case AgentMessage.End m -> id(out, m.agent());
        case AgentMessage.Renew m -> {
          id(out, m.agent());
          out.writeLong(m.term());
          out.writeLong(m.echo());
        }
        case AgentMessage.Renewed m -> {
          id(out, m.agent());
          out.writeLong(m.echo());
        }
        case AgentMessage.Stamp m -> {
          id(out, m.agent());
          path(out, m.path());
          out.writeLong(m.t());
          out.writeBoolean(m.fresh());
        }
        case AgentMessage.Stamped m -> {
          id(out, m.agent());
          path(out, m.path());
          out.writeLong(m.t());
          out.writeBoolean(m.ok());
          out.writeLong(m.version());
        }
        case AgentMessage.Restate m -> {
          out.writeLong(m.version());
          out.writeInt(m.entries().size());
          for (AgentMessage.Claimed c : m.entries()) {
            id(out, c.agent());
            path(out, c.path());
            out.writeByte(c.mode().ordinal());
            out.writeByte(c.held() == null ? 0 : 1 + c.held().ordinal());
            out.writeUTF(c.tag());
          }
        }
        case AgentMessage.Info m -> {
          id(out, m.to());
          path(out, m.path());
          out.writeLong(m.version());
          queue(out, m.queue());
          out.writeBoolean(m.surrenderOf() != null);
          if (m.surrenderOf() != null) {
            id(out, m.surrenderOf());
          }
        }
        case AgentMessage.Forward m -> {
          id(out, m.to());
          path(out, m.path());
          out.writeUTF(m.server());
          out.writeLong(m.version());
          queue(out, m.queue());
        }
        case AgentMessage.Surrendered m -> {
          id(out, m.to());
          id(out, m.by());
          path(out, m.path());
          out.writeUTF(m.server());
          out.writeLong(m.version());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot happen writing to memory", e);
    }
    return bytes.toByteArray();
  }

  private static byte type(AgentMessage m) {
    return switch (m) {
      case AgentMessage.Lock x -> LOCK;
      case AgentMessage.Surrender x -> SURRENDER;
      case AgentMessage.End x -> END;
      case AgentMessage.Renew x -> RENEW;
      case AgentMessage.Renewed x -> RENEWED;
      case AgentMessage.Stamp x -> STAMP;
      case AgentMessage.Stamped x -> STAMPED;
      case AgentMessage.Restate x -> RESTATE;
      case AgentMessage.Info x -> INFO;
      case AgentMessage.Forward x -> FORWARD;
      case AgentMessage.Surrendered x -> SURRENDERED;
    };
  }

  private static void id(DataOutputStream out, AgentId id) throws IOException {
    out.writeLong(id.clock());
    out.writeInt(id.node());
    out.writeLong(id.seq());
  }

  private static void path(DataOutputStream out, List<String> path) throws IOException {
    out.writeByte(path.size());
    for (String e : path) {
      out.writeUTF(e);
    }
  }

  private static void queue(DataOutputStream out, List<Entry> queue) throws IOException {
    out.writeInt(queue.size());
    for (Entry e : queue) {
      id(out, e.agent());
      path(out, e.path());
      out.writeByte(e.wants().ordinal());
      out.writeByte(e.holds() == null ? 0 : 1 + e.holds().ordinal());
      out.writeLong(e.seq());
      out.writeLong(e.grantedAt());
      out.writeBoolean(e.surrendered());
    }
  }

  @Override
  public AgentMessage decode(byte[] bytes) {
    return decode(bytes, 0);
  }

  @Override
  public AgentMessage decode(byte[] bytes, int offset) {
    if (bytes == null || offset < 0 || bytes.length - offset < 2) {
      throw new CodecException("agent message too short: " + (bytes == null ? "null"
          : Math.max(0, bytes.length - offset) + " bytes"));
    }
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes, offset, bytes.length - offset));
    try {
      byte version = in.readByte();
      if (version != VERSION) {
        throw new CodecException("agent message version " + version + " is not supported (expected " + VERSION + ")");
      }
      byte type = in.readByte();
      if (type < LOCK || type > SURRENDERED) {
        throw new CodecException("unknown agent message type " + type);
      }
      long clock = nonNegative(in, "clock");
      AgentMessage m = switch (type) {
        case LOCK -> new AgentMessage.Lock(clock, id(in), path(in), mode(in), tag(in));
        case SURRENDER -> new AgentMessage.Surrender(clock, id(in), path(in), nonNegative(in, "version"));
        case END -> new AgentMessage.End(clock, id(in));
        case RENEW -> new AgentMessage.Renew(clock, id(in), in.readLong(), in.readLong());
        case RENEWED -> new AgentMessage.Renewed(clock, id(in), in.readLong());
        case STAMP -> new AgentMessage.Stamp(clock, id(in), path(in), nonNegative(in, "token"), in.readBoolean());
        case STAMPED -> new AgentMessage.Stamped(clock, id(in), path(in), nonNegative(in, "token"), in.readBoolean(),
            nonNegative(in, "version"));
        case RESTATE -> {
          long v = nonNegative(in, "version");
          int n = count(in, MIN_CLAIMED_BYTES, "restated entries");
          List<AgentMessage.Claimed> entries = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            entries.add(new AgentMessage.Claimed(id(in), path(in), mode(in), held(in), tag(in)));
          }
          yield new AgentMessage.Restate(clock, v, entries);
        }
        case INFO -> {
          AgentId to = id(in);
          List<String> path = path(in);
          long v = nonNegative(in, "version");
          List<Entry> queue = queue(in);
          AgentId surrenderOf = in.readBoolean() ? id(in) : null;
          yield new AgentMessage.Info(clock, to, path, v, queue, surrenderOf);
        }
        case FORWARD -> new AgentMessage.Forward(clock, id(in), path(in), node(in), nonNegative(in, "version"),
            queue(in));
        default -> new AgentMessage.Surrendered(clock, id(in), id(in), path(in), node(in), nonNegative(in, "version"));
      };
      if (in.available() > 0) {
        throw new CodecException("agent message type " + type + " has " + in.available() + " trailing bytes");
      }
      return m;
    } catch (EOFException e) {
      throw new CodecException("truncated agent message (" + (bytes.length - offset) + " bytes)", e);
    } catch (IOException e) {
      throw new CodecException("malformed agent message: " + e.getMessage(), e);
    } catch (IllegalArgumentException e) {
      // a record refused what the fields say (an entry that holds with no grant version, say)
      throw new CodecException("malformed agent message: " + e.getMessage(), e);
    }
  }

  private static long nonNegative(DataInputStream in, String what) throws IOException {
    long v = in.readLong();
    if (v < 0) {
      throw new CodecException("negative " + what + " in agent message: " + v);
    }
    return v;
  }

  private static int count(DataInputStream in, int minBytes, String what) throws IOException {
    int n = in.readInt();
    if (n < 0 || n > in.available() / minBytes) {
      throw new CodecException("agent message claims " + n + " " + what + " in " + in.available() + " bytes");
    }
    return n;
  }

  private static AgentId id(DataInputStream in) throws IOException {
    long clock = in.readLong();
    int node = in.readInt();
    long seq = in.readLong();
    if (clock < 0 || node < 0 || seq < 0) {
      throw new CodecException("agent id with a negative part in agent message: " + clock + "." + node + "." + seq);
    }
    return new AgentId(clock, node, seq);
  }

  /** A held mode: 0 for none, else 1 + the mode's ordinal. */
  private static Mode held(DataInputStream in) throws IOException {
    int b = in.readUnsignedByte();
    if (b > Mode.values().length) {
      throw new CodecException("unknown held lock mode " + b + " in agent message");
    }
    return b == 0 ? null : Mode.values()[b - 1];
  }

  private static Mode mode(DataInputStream in) throws IOException {
    int b = in.readUnsignedByte();
    if (b >= Mode.values().length) {
      throw new CodecException("unknown lock mode " + b + " in agent message");
    }
    return Mode.values()[b];
  }

  private static List<String> path(DataInputStream in) throws IOException {
    int n = in.readUnsignedByte();
    if (n < 1 || n > Claim.MAX_DEPTH) {
      throw new CodecException("a path of " + n + " elements in agent message (1 to " + Claim.MAX_DEPTH + ")");
    }
    List<String> path = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      path.add(text(in, "path element"));
    }
    return path;
  }

  /** A claim's tag: empty, or at most {@link Claim#MAX_TAG_LENGTH} characters with no control character. */
  private static String tag(DataInputStream in) throws IOException {
    String s = in.readUTF();
    if (s.length() > Claim.MAX_TAG_LENGTH || s.chars().anyMatch(Character::isISOControl)) {
      throw new CodecException("a tag of " + s.length() + " characters, or with a control character, in agent message"
          + " (at most " + Claim.MAX_TAG_LENGTH + ", none)");
    }
    return s;
  }

  private static String node(DataInputStream in) throws IOException {
    return text(in, "node id");
  }

  private static String text(DataInputStream in, String what) throws IOException {
    String s = in.readUTF();
    if (s.isEmpty() || s.length() > MAX_ELEMENT_LENGTH) {
      throw new CodecException(what + " of " + s.length() + " characters in agent message");
    }
    for (int i = 0; i < s.length(); i++) {
      if (Character.isISOControl(s.charAt(i))) {
        throw new CodecException(what + " with a control character in agent message");
      }
    }
    return s;
  }

  private static List<Entry> queue(DataInputStream in) throws IOException {
    int n = count(in, MIN_ENTRY_BYTES, "queue entries");
    List<Entry> q = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      AgentId agent = id(in);
      List<String> path = path(in);
      Mode wants = mode(in);
      int h = in.readUnsignedByte();
      if (h > Mode.values().length) {
        throw new CodecException("unknown held mode " + h + " in agent message");
      }
      Mode holds = h == 0 ? null : Mode.values()[h - 1];
      q.add(new Entry(agent, path, wants, holds, in.readLong(), in.readLong(), in.readBoolean()));
    }
    return q;
  }
}
