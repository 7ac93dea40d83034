package dev.tumbler.peer.agent;

import dev.tumbler.peer.agent.LockTable.Entry;
import dev.tumbler.peer.agent.LockTable.Mode;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.WireCodec;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Binary encoding of {@link AgentMessage}: {@code version(1) type(1) clock(8) fields}, one line a message
 * ({@link WireCodec}). A path is a count byte and its elements, each modified UTF-8 with a 2-byte length; an agent id
 * is {@code clock(8) node(4) seq(8)}; a queue is a count and its entries. Decoding checks the version, the type,
 * every path, id, mode and version, counts against the bytes left (a corrupt count is refused, never allocated), and
 * that nothing trails. Thread safe.
 */
public final class AgentCodec extends WireCodec<AgentMessage> {

  /** The encoding version this codec writes and reads. */
  public static final byte VERSION = 1;

  /**
   * The longest path element or node id on the wire: the provider's qualified name ({@code <length>:<namespace>/
   * <name>}) with a 3-digit length and a namespace and a name of 256 characters each.
   */
  static final int MAX_ELEMENT_LENGTH = 3 + 1 + 256 + 1 + 256;

  /** The fewest bytes of an agent id, a path, and a queue entry: what a count is checked against. */
  private static final int ID_BYTES = 8 + 4 + 8;
  private static final int MIN_PATH_BYTES = 1 + 2 + 1;
  private static final int MIN_ENTRY_BYTES = ID_BYTES + MIN_PATH_BYTES + 1 + 1 + 8 + 8 + 1;
  private static final int MIN_CLAIMED_BYTES = ID_BYTES + MIN_PATH_BYTES + 1 + 1 + 2;
  /** The fewest bytes of a listed claim and of a listed part (a one-character node id before it). */
  private static final int MIN_LISTED_BYTES = In.MIN_LISTED_BYTES;
  private static final int MIN_PART_BYTES = 2 + 1 + MIN_LISTED_BYTES;
  /**
   * The longest name a listing carries: a path of {@link Claim#MAX_DEPTH} elements joined by {@code /}, as
   * {@link Claim#name()} gives a transaction's claim.
   */
  static final int MAX_LISTED_NAME_LENGTH = Claim.MAX_DEPTH * (MAX_ELEMENT_LENGTH + 1) - 1;

  private static final Table<AgentMessage> TABLE = table("agent", VERSION, AgentMessage.class)
      .names(MAX_LISTED_NAME_LENGTH)
      .message(1, AgentMessage.Lock.class,
          (m, o) -> path(id(o.number(m.clock()), m.agent()), m.path()).ordinal(m.mode()).tag(m.tag()),
          i -> new AgentMessage.Lock(clock(i), id(i), path(i), mode(i), tag(i)))
      .message(2, AgentMessage.Surrender.class,
          (m, o) -> path(id(o.number(m.clock()), m.agent()), m.path()).number(m.version()),
          i -> new AgentMessage.Surrender(clock(i), id(i), path(i), i.id("version")))
      .message(3, AgentMessage.End.class, (m, o) -> id(o.number(m.clock()), m.agent()),
          i -> new AgentMessage.End(clock(i), id(i)))
      .message(4, AgentMessage.Renew.class,
          (m, o) -> id(o.number(m.clock()), m.agent()).number(m.term()).echo(m.echo()),
          i -> new AgentMessage.Renew(clock(i), id(i), i.number(), i.echo()))
      .message(5, AgentMessage.Renewed.class, (m, o) -> id(o.number(m.clock()), m.agent()).echo(m.echo()),
          i -> new AgentMessage.Renewed(clock(i), id(i), i.echo()))
      .message(6, AgentMessage.Stamp.class,
          (m, o) -> path(id(o.number(m.clock()), m.agent()), m.path()).number(m.t()).flag(m.fresh()),
          i -> new AgentMessage.Stamp(clock(i), id(i), path(i), i.id("token"), i.flag()))
      .message(7, AgentMessage.Stamped.class,
          (m, o) -> path(id(o.number(m.clock()), m.agent()), m.path()).number(m.t()).flag(m.ok())
              .number(m.version()),
          i -> new AgentMessage.Stamped(clock(i), id(i), path(i), i.id("token"), i.flag(), i.id("version")))
      .message(8, AgentMessage.Restate.class,
          (m, o) -> o.number(m.clock()).number(m.version()).list(m.entries(),
              (c, x) -> held(path(id(x, c.agent()), c.path()).ordinal(c.mode()), c.held()).tag(c.tag())),
          i -> new AgentMessage.Restate(clock(i), i.id("version"), i.list(MIN_CLAIMED_BYTES, "restated entries",
              x -> new AgentMessage.Claimed(id(x), path(x), mode(x), held(x, "held lock mode"), tag(x)))))
      .message(9, AgentMessage.Info.class,
          (m, o) -> {
            queue(path(id(o.number(m.clock()), m.to()), m.path()).number(m.version()), m.queue())
                .flag(m.surrenderOf() != null);
            if (m.surrenderOf() != null) {
              id(o, m.surrenderOf());
            }
          },
          i -> new AgentMessage.Info(clock(i), id(i), path(i), i.id("version"), queue(i), i.flag() ? id(i) : null))
      .message(10, AgentMessage.Forward.class,
          (m, o) -> queue(path(id(o.number(m.clock()), m.to()), m.path()).text(m.server()).number(m.version()),
              m.queue()),
          i -> new AgentMessage.Forward(clock(i), id(i), path(i), text(i, "node id"), i.id("version"), queue(i)))
      .message(11, AgentMessage.Surrendered.class,
          (m, o) -> path(id(id(o.number(m.clock()), m.to()), m.by()), m.path()).text(m.server()).number(m.version()),
          i -> new AgentMessage.Surrendered(clock(i), id(i), id(i), path(i), text(i, "node id"), i.id("version")))
      .message(12, AgentMessage.ListHeld.class,
          (m, o) -> o.number(m.clock()).id(m.queryId()).strings(m.prefixes()),
          i -> new AgentMessage.ListHeld(clock(i), i.id("query id"), i.prefixes()))
      .message(13, AgentMessage.Listing.class,
          (m, o) -> o.number(m.clock()).id(m.queryId()).flag(m.ready()).list(m.held(), (l, x) -> x.listed(l))
              .list(m.parts(), (p, x) -> x.text(p.node()).listed(p.claim())),
          i -> new AgentMessage.Listing(clock(i), i.id("query id"), i.flag(),
              i.list(MIN_LISTED_BYTES, "listed claims", In::listed),
              i.list(MIN_PART_BYTES, "listed parts", x -> new AgentMessage.Part(text(x, "node id"), x.listed()))));

  public AgentCodec() {
    super(TABLE);
  }

  private static long clock(In in) throws IOException {
    return in.id("clock");
  }

  private static Out id(Out out, AgentId id) throws IOException {
    return out.number(id.clock()).number(id.node()).number(id.seq());
  }

  private static AgentId id(In in) throws IOException {
    long clock = in.number();
    int node = in.integer();
    long seq = in.number();
    if (clock < 0 || node < 0 || seq < 0) {
      throw new CodecException("agent id with a negative part in agent message: " + clock + "." + node + "." + seq);
    }
    return new AgentId(clock, node, seq);
  }

  /** A held mode: 0 for none, else 1 + the mode's ordinal. */
  private static Out held(Out out, Mode held) throws IOException {
    return out.unsignedByte(held == null ? 0 : 1 + held.ordinal());
  }

  private static Mode held(In in, String what) throws IOException {
    int b = in.unsignedByte();
    if (b > Mode.values().length) {
      throw new CodecException("unknown " + what + " " + b + " in agent message");
    }
    return b == 0 ? null : Mode.values()[b - 1];
  }

  private static Mode mode(In in) throws IOException {
    int b = in.unsignedByte();
    if (b >= Mode.values().length) {
      throw new CodecException("unknown lock mode " + b + " in agent message");
    }
    return Mode.values()[b];
  }

  private static Out path(Out out, List<String> path) throws IOException {
    out.unsignedByte(path.size());
    for (String e : path) {
      out.text(e);
    }
    return out;
  }

  private static List<String> path(In in) throws IOException {
    int n = in.unsignedByte();
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
  private static String tag(In in) throws IOException {
    String s = in.textOrEmpty(Integer.MAX_VALUE, "tag");
    if (s.length() > Claim.MAX_TAG_LENGTH || s.chars().anyMatch(Character::isISOControl)) {
      throw new CodecException("a tag of " + s.length() + " characters, or with a control character, in agent message"
          + " (at most " + Claim.MAX_TAG_LENGTH + ", none)");
    }
    return s;
  }

  private static String text(In in, String what) throws IOException {
    String s = in.textOrEmpty(Integer.MAX_VALUE, what);
    if (s.isEmpty() || s.length() > MAX_ELEMENT_LENGTH) {
      throw new CodecException(what + " of " + s.length() + " characters in agent message");
    }
    if (s.chars().anyMatch(Character::isISOControl)) {
      throw new CodecException(what + " with a control character in agent message");
    }
    return s;
  }

  private static Out queue(Out out, List<Entry> queue) throws IOException {
    return out.list(queue, (e, x) -> held(path(id(x, e.agent()), e.path()).ordinal(e.wants()), e.holds())
        .number(e.seq()).number(e.grantedAt()).flag(e.surrendered()));
  }

  private static List<Entry> queue(In in) throws IOException {
    return in.list(MIN_ENTRY_BYTES, "queue entries", x -> new Entry(id(x), path(x), mode(x), held(x, "held mode"),
        x.number(), x.number(), x.flag()));
  }
}
