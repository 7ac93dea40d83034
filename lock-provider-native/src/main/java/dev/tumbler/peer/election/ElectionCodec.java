package dev.tumbler.peer.election;

import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.WireCodec;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Binary encoding of {@link ElectionMessage}: {@code version(1) type(1) fields}, one line a message
 * ({@link WireCodec}). A view is {@code term(8) count(1) leaders}, a leader {@code idLength(2) id(UTF-8)
 * incarnation(8)}, a vote's reason its ordinal (1 byte). A Hello's two booleans share one byte: bit 0
 * {@code informed}, bit 1 {@code answer}; the Hellos of this version before {@code answer} existed had 0 or 1 there,
 * and decode as asking for an answer, which is what they were.
 *
 * <p>Decoding is strict: unknown version or type, a reason ordinal out of range, a flag byte with other bits set, a
 * node id that is empty, longer than {@value #MAX_ID_BYTES} bytes, not valid UTF-8 or holding a control character,
 * more than {@value ElectionSettings#MAX_LEADER_COUNT} leaders, a field out of its range (see the records of
 * {@link ElectionMessage}), a truncated message and trailing bytes all throw {@link CodecException}. Encoding a node
 * id that could not be decoded throws {@link IllegalArgumentException}. Thread safe.
 */
public final class ElectionCodec extends WireCodec<ElectionMessage> {

  /** The encoding version this codec writes and reads. */
  public static final byte VERSION = 1;

  /** The longest node id on the wire, in UTF-8 bytes (as in the TCP handshake). */
  public static final int MAX_ID_BYTES = 255;

  /** The Hello flag bits. */
  private static final int INFORMED = 1;
  private static final int ANSWER = 2;

  private static final Table<ElectionMessage> TABLE = table("election", VERSION, ElectionMessage.class)
      .message(1, ElectionMessage.Hello.class,
          (m, o) -> view(o.inc(m.incarnation()).unsignedByte(m.priority()).number(m.randomId())
              .unsignedByte((m.informed() ? INFORMED : 0) | (m.answer() ? ANSWER : 0)).term(m.highestTerm()),
              m.viewTerm(), m.viewLeaders()),
          ElectionCodec::hello)
      .message(2, ElectionMessage.Propose.class, (m, o) -> view(o, m.term(), m.leaders()),
          i -> new ElectionMessage.Propose(i.number(), leaders(i)))
      .message(3, ElectionMessage.Vote.class,
          (m, o) -> view(o.term(m.term()).ordinal(m.reason()).term(m.highestTerm()), m.viewTerm(), m.viewLeaders()),
          i -> new ElectionMessage.Vote(i.number(), reason(i), i.number(), i.number(), leaders(i)))
      .message(4, ElectionMessage.Leaders.class, (m, o) -> view(o, m.term(), m.leaders()),
          i -> new ElectionMessage.Leaders(i.number(), leaders(i)))
      .message(5, ElectionMessage.Beat.class, (m, o) -> o.term(m.term()).number(m.seq()),
          i -> new ElectionMessage.Beat(i.number(), i.number()))
      .message(6, ElectionMessage.BeatAck.class, (m, o) -> o.term(m.term()).number(m.seq()),
          i -> new ElectionMessage.BeatAck(i.number(), i.number()))
      .message(7, ElectionMessage.Retire.class, (m, o) -> o.term(m.term()),
          i -> new ElectionMessage.Retire(i.number()));

  public ElectionCodec() {
    super(TABLE);
  }

  private static ElectionMessage.Hello hello(In in) throws IOException {
    long incarnation = in.number();
    int priority = in.unsignedByte();
    int randomId = in.integer();
    int flags = in.unsignedByte();
    if ((flags & ~(INFORMED | ANSWER)) != 0) {
      throw new CodecException("Hello flag byte " + flags + " in election message");
    }
    return new ElectionMessage.Hello(incarnation, priority, randomId, (flags & INFORMED) != 0, in.number(),
        in.number(), leaders(in), (flags & ANSWER) != 0);
  }

  private static ElectionMessage.Reason reason(In in) throws IOException {
    int reason = in.unsignedByte();
    if (reason >= ElectionMessage.Reason.values().length) {
      throw new CodecException("unknown vote reason " + reason + " in election message");
    }
    return ElectionMessage.Reason.values()[reason];
  }

  /**
   * A view: its term, a count byte and each leader. A node id is plain UTF-8 (as in the TCP handshake), not the
   * toolkit's modified UTF-8, so it goes byte by byte behind its 2-byte length.
   */
  private static Out view(Out out, long term, List<Leader> leaders) throws IOException {
    out.term(term).unsignedByte(leaders.size());
    for (Leader l : leaders) {
      requireEncodable(l.nodeId());
      byte[] id = l.nodeId().getBytes(StandardCharsets.UTF_8);
      out.unsignedByte(id.length >> 8).unsignedByte(id.length);
      for (byte b : id) {
        out.unsignedByte(b);
      }
      out.inc(l.incarnation());
    }
    return out;
  }

  private static List<Leader> leaders(In in) throws IOException {
    int count = in.unsignedByte();
    if (count > ElectionSettings.MAX_LEADER_COUNT) {
      throw new CodecException("election message claims " + count + " leaders (at most "
          + ElectionSettings.MAX_LEADER_COUNT + ")");
    }
    List<Leader> leaders = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      leaders.add(new Leader(nodeId(in), in.number()));
    }
    return leaders;
  }

  private static String nodeId(In in) throws IOException {
    int length = in.unsignedByte() << 8 | in.unsignedByte();
    if (length == 0 || length > MAX_ID_BYTES) {
      throw new CodecException("node id of " + length + " bytes in election message");
    }
    byte[] bytes = new byte[length];
    for (int i = 0; i < length; i++) {
      bytes[i] = (byte) in.unsignedByte();
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
   * @throws IllegalArgumentException if it is empty, holds a control character or an unpaired surrogate, or is
   *     longer than {@value #MAX_ID_BYTES} UTF-8 bytes
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
    return !id.isEmpty() && id.chars().noneMatch(Character::isISOControl);
  }
}
