package dev.tumbler.peer.election;

import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.MessageCodec;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Binary encoding of {@link ElectionMessage}: {@code version(1) type(1) fields}, big-endian. A view is
 * {@code term(8) count(1) leaders}, a leader {@code idLength(2) id(UTF-8) incarnation(8)}, a vote's reason
 * its ordinal (1 byte). A Hello's two booleans share one byte: bit 0 {@code informed}, bit 1 {@code answer};
 * the Hellos of this version before {@code answer} existed had 0 or 1 there, and decode as asking for an
 * answer, which is what they were.
 *
 * <p>Decoding is strict: unknown version or type, a reason ordinal out of range, a flag byte with other bits
 * set, a node id that is empty, longer than {@value #MAX_ID_BYTES} bytes, not valid UTF-8 or holding a control
 * character, more than {@value ElectionSettings#MAX_LEADER_COUNT} leaders, a field out of its range (see
 * the records of {@link ElectionMessage}), a truncated message and trailing bytes all throw
 * {@link CodecException}. Encoding a node id that could not be decoded throws
 * {@link IllegalArgumentException}. Thread safe.
 */
public final class ElectionCodec implements MessageCodec<ElectionMessage> {

  /** The encoding version this codec writes and reads. */
  public static final byte VERSION = 1;

  /** The longest node id on the wire, in UTF-8 bytes (as in the TCP handshake). */
  public static final int MAX_ID_BYTES = 255;

  static final byte HELLO = 1;
  static final byte PROPOSE = 2;
  static final byte VOTE = 3;
  static final byte LEADERS = 4;
  static final byte BEAT = 5;
  static final byte BEAT_ACK = 6;
  static final byte RETIRE = 7;

  /** The Hello flag bits. */
  static final int INFORMED = 1;
  static final int ANSWER = 2;

  private static final ElectionMessage.Reason[] REASONS = ElectionMessage.Reason.values();

  @Override
  public byte[] encode(ElectionMessage message) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(VERSION);
      switch (message) {
        case ElectionMessage.Hello h -> {
          out.writeByte(HELLO);
          out.writeLong(h.incarnation());
          out.writeByte(h.priority());
          out.writeInt(h.randomId());
          out.writeByte((h.informed() ? INFORMED : 0) | (h.answer() ? ANSWER : 0));
          out.writeLong(h.highestTerm());
          writeView(out, h.viewTerm(), h.viewLeaders());
        }
        case ElectionMessage.Propose p -> {
          out.writeByte(PROPOSE);
          writeView(out, p.term(), p.leaders());
        }
        case ElectionMessage.Vote v -> {
          out.writeByte(VOTE);
          out.writeLong(v.term());
          out.writeByte(v.reason().ordinal());
          out.writeLong(v.highestTerm());
          writeView(out, v.viewTerm(), v.viewLeaders());
        }
        case ElectionMessage.Leaders l -> {
          out.writeByte(LEADERS);
          writeView(out, l.term(), l.leaders());
        }
        case ElectionMessage.Beat b -> {
          out.writeByte(BEAT);
          out.writeLong(b.term());
          out.writeLong(b.seq());
        }
        case ElectionMessage.BeatAck a -> {
          out.writeByte(BEAT_ACK);
          out.writeLong(a.term());
          out.writeLong(a.seq());
        }
        case ElectionMessage.Retire r -> {
          out.writeByte(RETIRE);
          out.writeLong(r.term());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot happen writing to memory", e);
    }
    return bytes.toByteArray();
  }

  @Override
  public ElectionMessage decode(byte[] bytes) {
    if (bytes == null || bytes.length < 2) {
      throw new CodecException("election message too short: " + (bytes == null ? "null" : bytes.length + " bytes"));
    }
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
    try {
      byte version = in.readByte();
      if (version != VERSION) {
        throw new CodecException("election message version " + version + " is not supported (expected " + VERSION
            + ")");
      }
      byte type = in.readByte();
      ElectionMessage m = switch (type) {
        case HELLO -> {
          long incarnation = in.readLong();
          int priority = in.readUnsignedByte();
          int randomId = in.readInt();
          int flags = in.readUnsignedByte();
          if ((flags & ~(INFORMED | ANSWER)) != 0) {
            throw new CodecException("Hello flag byte " + flags + " in election message");
          }
          long highest = in.readLong();
          long term = in.readLong();
          yield new ElectionMessage.Hello(incarnation, priority, randomId, (flags & INFORMED) != 0, highest, term,
              leaders(in), (flags & ANSWER) != 0);
        }
        case PROPOSE -> {
          long term = in.readLong();
          yield new ElectionMessage.Propose(term, leaders(in));
        }
        case VOTE -> {
          long term = in.readLong();
          int reason = in.readUnsignedByte();
          if (reason >= REASONS.length) {
            throw new CodecException("unknown vote reason " + reason + " in election message");
          }
          long highest = in.readLong();
          long viewTerm = in.readLong();
          yield new ElectionMessage.Vote(term, REASONS[reason], highest, viewTerm, leaders(in));
        }
        case LEADERS -> {
          long term = in.readLong();
          yield new ElectionMessage.Leaders(term, leaders(in));
        }
        case BEAT -> new ElectionMessage.Beat(in.readLong(), in.readLong());
        case BEAT_ACK -> new ElectionMessage.BeatAck(in.readLong(), in.readLong());
        case RETIRE -> new ElectionMessage.Retire(in.readLong());
        default -> throw new CodecException("unknown election message type " + type);
      };
      if (in.available() > 0) {
        throw new CodecException("election message type " + type + " has " + in.available() + " trailing bytes");
      }
      return m;
    } catch (EOFException e) {
      throw new CodecException("truncated election message (" + bytes.length + " bytes)", e);
    } catch (IOException e) {
      throw new CodecException("malformed election message: " + e.getMessage(), e);
    } catch (IllegalArgumentException e) {
      throw new CodecException("invalid election message: " + e.getMessage(), e);
    }
  }

  private static void writeView(DataOutputStream out, long term, List<Leader> leaders) throws IOException {
    out.writeLong(term);
    out.writeByte(leaders.size());
    for (Leader l : leaders) {
      requireEncodable(l.nodeId());
      byte[] id = l.nodeId().getBytes(StandardCharsets.UTF_8);
      out.writeShort(id.length);
      out.write(id);
      out.writeLong(l.incarnation());
    }
  }

  private static List<Leader> leaders(DataInputStream in) throws IOException {
    int count = in.readUnsignedByte();
    if (count > ElectionSettings.MAX_LEADER_COUNT) {
      throw new CodecException("election message claims " + count + " leaders (at most "
          + ElectionSettings.MAX_LEADER_COUNT + ")");
    }
    List<Leader> leaders = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      leaders.add(new Leader(nodeId(in), in.readLong()));
    }
    return leaders;
  }

  private static String nodeId(DataInputStream in) throws IOException {
    int length = in.readUnsignedShort();
    if (length == 0 || length > MAX_ID_BYTES) {
      throw new CodecException("node id of " + length + " bytes in election message");
    }
    byte[] bytes = in.readNBytes(length);
    if (bytes.length < length) {
      throw new EOFException();
    }
    String id;
    try {
      id = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      throw new CodecException("node id that is not UTF-8 in election message", e);
    }
    if (!validId(id)) {
      throw new CodecException("node id with a control character in election message");
    }
    return id;
  }

  /**
   * Checks that {@code id} can be a node id in a message.
   *
   * @throws IllegalArgumentException if it is empty, holds a control character or an unpaired surrogate, or
   *     is longer than {@value #MAX_ID_BYTES} UTF-8 bytes
   */
  static void requireEncodable(String id) {
    byte[] bytes = id.getBytes(StandardCharsets.UTF_8);
    // an unpaired surrogate would be written as '?' and come back as another id
    if (!validId(id) || bytes.length > MAX_ID_BYTES || !new String(bytes, StandardCharsets.UTF_8).equals(id)) {
      throw new IllegalArgumentException("node id \"" + id + "\" cannot go into an election message: 1 to "
          + MAX_ID_BYTES + " UTF-8 bytes, no control characters");
    }
  }

  private static boolean validId(String id) {
    if (id.isEmpty()) {
      return false;
    }
    for (int i = 0; i < id.length(); i++) {
      if (Character.isISOControl(id.charAt(i))) {
        return false;
      }
    }
    return true;
  }
}
