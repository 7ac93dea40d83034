package dev.tumbler.peer.bakery;

import dev.tumbler.peer.bakery.BakeryMessage.Entering;
import dev.tumbler.peer.bakery.BakeryMessage.Key;
import dev.tumbler.peer.bakery.BakeryMessage.Mark;
import dev.tumbler.peer.bakery.BakeryMessage.Mode;
import dev.tumbler.peer.bakery.BakeryMessage.ReqKey;
import dev.tumbler.peer.bakery.BakeryMessage.Ticket;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.WireCodec;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Binary encoding of {@link BakeryMessage}: {@code version(1) type(1) fields}, one line a message ({@link WireCodec}).
 * Strings (node ids, lock names, details) are modified UTF-8 with a 2-byte length; enums are one ordinal byte;
 * booleans one byte 0 or 1; an optional request key or key a presence byte then the key; lists an {@code int} count
 * then the elements (a view's leaders a count byte). A request key is {@code client incarnation(8) seq(8)}, a ticket
 * key {@code term(8) h(8) slot(1)}; a claim's tag (on requests and tickets) is a string that may be empty.
 *
 * <p>Decoding is strict: an unknown version or type, an ordinal out of range, a boolean other than 0 or 1, a node id
 * or name that is empty, too long or holds a control character, a count larger than the bytes left could hold, a
 * field out of the range its record allows, a truncated message and trailing bytes all throw {@link CodecException}.
 * Thread safe.
 */
public final class BakeryCodec extends WireCodec<BakeryMessage> {

  /** The encoding version this codec writes and reads (2: requests and tickets carry their claim's tag). */
  public static final byte VERSION = 3;

  /** The longest lock name on the wire, in characters (a namespace-qualified name, as in the Lamport codec). */
  static final int MAX_NAME_LENGTH = 3 + 1 + 256 + 1 + 256;

  /** The longest node id on the wire, in characters. */
  static final int MAX_ID_LENGTH = 255;

  /** The longest detail text on the wire, in characters. */
  static final int MAX_DETAIL_LENGTH = 1024;

  /**
   * The bytes a request key, a ticket, a mark, a pending and a held request and an entering record take at the least
   * (what a count is checked against).
   */
  private static final int REQ_KEY_BYTES = 3 + 8 + 8;
  private static final int TICKET_BYTES = 60;
  private static final int MARK_BYTES = 18;
  private static final int LOCK_BYTES = 53;
  private static final int RELOCK_BYTES = 45;
  private static final int ENTERING_BYTES = 24;

  private static final Table<BakeryMessage> TABLE = table("bakery", VERSION, BakeryMessage.class)
      .message(1, BakeryMessage.Lock.class, (m, o) -> lock(o, m), BakeryCodec::lock)
      .message(2, BakeryMessage.Waiting.class, (m, o) -> reqKey(o, m.reqKey()).number(m.seq()),
          i -> new BakeryMessage.Waiting(reqKey(i), i.number()))
      .message(3, BakeryMessage.Renew.class, (m, o) -> key(reqKey(o, m.reqKey()), m.key()).number(m.seq()),
          i -> new BakeryMessage.Renew(reqKey(i), key(i), i.number()))
      .message(4, BakeryMessage.Relock.class, (m, o) -> relock(o, m), BakeryCodec::relock)
      .message(5, BakeryMessage.Unlock.class, (m, o) -> reqKey(o, m.reqKey()),
          i -> new BakeryMessage.Unlock(reqKey(i)))
      .message(6, BakeryMessage.Locked.class, (m, o) -> key(reqKey(o, m.reqKey()), m.key()).echo(m.echo()),
          i -> new BakeryMessage.Locked(reqKey(i), key(i), i.echo()))
      .message(7, BakeryMessage.LockFailed.class,
          (m, o) -> reqKey(o, m.reqKey()).ordinal(m.failure()).text(m.detail()),
          i -> new BakeryMessage.LockFailed(reqKey(i), ordinal(i, Output.Failure.values(), "failure"), detail(i)))
      .message(8, BakeryMessage.Renewed.class, (m, o) -> reqKey(o, m.reqKey()).echo(m.echo()),
          i -> new BakeryMessage.Renewed(reqKey(i), i.echo()))
      .message(9, BakeryMessage.Unlocked.class, (m, o) -> reqKey(o, m.reqKey()).text(m.detail()),
          i -> new BakeryMessage.Unlocked(reqKey(i), detail(i)))
      .message(10, BakeryMessage.LockEntering.class, (m, o) -> reqKey(o.term(m.term()), m.reqKey()).name(m.name()),
          i -> new BakeryMessage.LockEntering(i.number(), reqKey(i), name(i)))
      .message(11, BakeryMessage.LockEntered.class, (m, o) -> reqKey(o.term(m.term()), m.reqKey()),
          i -> new BakeryMessage.LockEntered(i.number(), reqKey(i)))
      .message(12, BakeryMessage.GetMaxTicket.class, (m, o) -> reqKey(o.term(m.term()), m.reqKey()).name(m.name()),
          i -> new BakeryMessage.GetMaxTicket(i.number(), reqKey(i), name(i)))
      .message(13, BakeryMessage.MaxTicket.class, (m, o) -> reqKey(o.term(m.term()), m.reqKey()).number(m.max()),
          i -> new BakeryMessage.MaxTicket(i.number(), reqKey(i), i.number()))
      .message(14, BakeryMessage.AddTicket.class, (m, o) -> ticket(o.term(m.term()), m.ticket()),
          i -> new BakeryMessage.AddTicket(i.number(), ticket(i)))
      .message(15, BakeryMessage.TicketAdded.class,
          (m, o) -> reqKey(o.term(m.term()), m.reqKey()).flag(m.added())
              .list(m.stillEntering(), (k, x) -> reqKey(x, k)),
          i -> new BakeryMessage.TicketAdded(i.number(), reqKey(i), bool(i),
              i.list(REQ_KEY_BYTES, "entering requests", BakeryCodec::reqKey)))
      .message(16, BakeryMessage.LockExiting.class, (m, o) -> reqKey(o.term(m.term()), m.reqKey()).name(m.name()),
          i -> new BakeryMessage.LockExiting(i.number(), reqKey(i), name(i)))
      .message(17, BakeryMessage.TicketReady.class, (m, o) -> ticketOf(o, m.term(), m.name(), m.key()),
          i -> new BakeryMessage.TicketReady(i.number(), name(i), key(i)))
      .message(18, BakeryMessage.ActivateLock.class, (m, o) -> ticketOf(o, m.term(), m.name(), m.key()),
          i -> new BakeryMessage.ActivateLock(i.number(), name(i), key(i)))
      .message(19, BakeryMessage.LockActivated.class,
          (m, o) -> ticketOf(o, m.term(), m.name(), m.key()).flag(m.granted()),
          i -> new BakeryMessage.LockActivated(i.number(), name(i), key(i), bool(i)))
      .message(20, BakeryMessage.RenewTicket.class, (m, o) -> ticketOf(o, m.term(), m.name(), m.key()),
          i -> new BakeryMessage.RenewTicket(i.number(), name(i), key(i)))
      .message(21, BakeryMessage.TicketRenewed.class, (m, o) -> ticketOf(o, m.term(), m.name(), m.key()),
          i -> new BakeryMessage.TicketRenewed(i.number(), name(i), key(i)))
      .message(22, BakeryMessage.DropTicket.class, (m, o) -> reqKey(o.term(m.term()).name(m.name()), m.reqKey()),
          i -> new BakeryMessage.DropTicket(i.number(), name(i), reqKey(i)))
      .message(23, BakeryMessage.TablesRequest.class, (m, o) -> o.term(m.term()),
          i -> new BakeryMessage.TablesRequest(i.number()))
      .message(24, BakeryMessage.Tables.class,
          (m, o) -> leaders(o.term(m.term()).term(m.viewTerm()), m.viewLeaders()).flag(m.merged())
              .list(m.tickets(), (t, x) -> ticket(x, t))
              .list(m.marks(), (k, x) -> x.name(k.name()).number(k.highest()).number(k.lastReadAgoNanos())),
          i -> new BakeryMessage.Tables(i.number(), i.number(), leaders(i), bool(i),
              i.list(TICKET_BYTES, "tickets", BakeryCodec::ticket),
              i.list(MARK_BYTES, "marks", x -> new Mark(name(x), x.number(), x.number()))))
      .message(25, BakeryMessage.Restate.class,
          (m, o) -> o.term(m.term()).inc(m.incarnation()).flag(m.answer())
              .list(m.pending(), (l, x) -> lock(x, l))
              .list(m.held(), (r, x) -> relock(x, r))
              .list(m.tickets(), (t, x) -> ticket(x, t))
              .list(m.entering(), (e, x) -> reqKey(x.name(e.name()), e.reqKey()).text(e.owner())),
          i -> new BakeryMessage.Restate(i.number(), i.number(), bool(i),
              i.list(LOCK_BYTES, "pending requests", BakeryCodec::lock),
              i.list(RELOCK_BYTES, "held requests", BakeryCodec::relock),
              i.list(TICKET_BYTES, "tickets", BakeryCodec::ticket),
              i.list(ENTERING_BYTES, "entering records", x -> new Entering(name(x), reqKey(x), id(x)))))
      .message(26, BakeryMessage.WhoHolds.class, (m, o) -> o.number(m.queryId()).name(m.name()),
          i -> new BakeryMessage.WhoHolds(i.number(), name(i)))
      .message(27, BakeryMessage.Holds.class,
          (m, o) -> optional(o.number(m.queryId()).name(m.name()).flag(m.acting()), m.key()).tag(m.tag()),
          i -> new BakeryMessage.Holds(i.number(), name(i), bool(i), bool(i) ? key(i) : null, tag(i)))
      .message(28, BakeryMessage.TicketCheck.class, (m, o) -> ticketOf(o, m.term(), m.name(), m.key()),
          i -> new BakeryMessage.TicketCheck(i.number(), name(i), key(i)))
      .message(29, BakeryMessage.TicketGone.class, (m, o) -> ticketOf(o, m.term(), m.name(), m.key()),
          i -> new BakeryMessage.TicketGone(i.number(), name(i), key(i)))
      .message(30, BakeryMessage.ListTickets.class, (m, o) -> o.number(m.queryId()).strings(m.prefixes()),
          i -> new BakeryMessage.ListTickets(i.number(), i.prefixes()))
      .message(31, BakeryMessage.TicketList.class,
          (m, o) -> o.number(m.queryId()).flag(m.acting()).list(m.tickets(), (t, x) -> ticket(x, t)),
          i -> new BakeryMessage.TicketList(i.number(), bool(i), i.list(TICKET_BYTES, "tickets", BakeryCodec::ticket)));

  public BakeryCodec() {
    super(TABLE);
  }

  private static Out lock(Out o, BakeryMessage.Lock m) throws IOException {
    mode(reqKey(o, m.reqKey()).name(m.name()), m.mode()).number(m.leaseNanos()).number(m.waitNanos()).number(m.seq());
    return (m.supersedes() == null ? o.flag(false) : reqKey(o.flag(true), m.supersedes())).tag(m.tag());
  }

  private static BakeryMessage.Lock lock(In in) throws IOException {
    return new BakeryMessage.Lock(reqKey(in), name(in), mode(in), in.number(), in.number(), in.number(),
        bool(in) ? reqKey(in) : null, tag(in));
  }

  private static Out relock(Out o, BakeryMessage.Relock m) throws IOException {
    return key(reqKey(o, m.reqKey()).name(m.name()), m.key()).number(m.seq());
  }

  private static BakeryMessage.Relock relock(In in) throws IOException {
    return new BakeryMessage.Relock(reqKey(in), name(in), key(in), in.number());
  }

  /** A message about one ticket: its term, name and key. */
  private static Out ticketOf(Out o, long term, String name, Key key) throws IOException {
    return key(o.term(term).name(name), key);
  }

  private static Out reqKey(Out o, ReqKey k) throws IOException {
    return o.text(k.client()).inc(k.incarnation()).number(k.seq());
  }

  private static ReqKey reqKey(In in) throws IOException {
    return new ReqKey(id(in), in.number(), in.number());
  }

  private static Out key(Out o, Key k) throws IOException {
    return o.number(k.term()).number(k.h()).unsignedByte(k.slot());
  }

  /** A presence byte, then the key if there is one. */
  private static Out optional(Out o, Key k) throws IOException {
    return k == null ? o.flag(false) : key(o.flag(true), k);
  }

  private static Key key(In in) throws IOException {
    return new Key(in.number(), in.number(), in.unsignedByte());
  }

  private static Out mode(Out o, Mode m) throws IOException {
    return o.ordinal(m.mode()).ordinal(m.writer()).number(m.quietNanos());
  }

  private static Mode mode(In in) throws IOException {
    return new Mode(ordinal(in, Claim.Mode.values(), "mode"), ordinal(in, Claim.Writer.values(), "writer"),
        in.number());
  }

  private static Out ticket(Out o, Ticket t) throws IOException {
    return mode(reqKey(key(o.name(t.name()), t.key()), t.reqKey()).text(t.owner()), t.mode()).ordinal(t.state())
        .number(t.remainingNanos()).tag(t.tag());
  }

  private static Ticket ticket(In in) throws IOException {
    return new Ticket(name(in), key(in), reqKey(in), id(in), mode(in),
        ordinal(in, BakeryMessage.State.values(), "state"), in.number(), tag(in));
  }

  /** A view's leaders: a count byte, then each node id and incarnation. */
  private static Out leaders(Out o, List<Leader> leaders) throws IOException {
    o.unsignedByte(leaders.size());
    for (Leader l : leaders) {
      o.text(l.nodeId()).inc(l.incarnation());
    }
    return o;
  }

  private static List<Leader> leaders(In in) throws IOException {
    int n = in.unsignedByte();
    if (n > BakeryMessage.MAX_SLOTS) {
      throw new CodecException("bakery table reports " + n + " leaders");
    }
    List<Leader> leaders = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      leaders.add(new Leader(id(in), in.number()));
    }
    return leaders;
  }

  private static <E> E ordinal(In in, E[] values, String what) throws IOException {
    int o = in.unsignedByte();
    if (o >= values.length) {
      throw new CodecException("unknown " + what + " " + o + " in bakery message");
    }
    return values[o];
  }

  private static boolean bool(In in) throws IOException {
    int b = in.unsignedByte();
    if (b > 1) {
      throw new CodecException("boolean byte " + b + " in bakery message");
    }
    return b == 1;
  }

  private static String name(In in) throws IOException {
    return text(in, MAX_NAME_LENGTH, false, "lock name");
  }

  private static String id(In in) throws IOException {
    return text(in, MAX_ID_LENGTH, false, "node id");
  }

  private static String tag(In in) throws IOException {
    return text(in, Claim.MAX_TAG_LENGTH, true, "tag");
  }

  private static String detail(In in) throws IOException {
    return text(in, MAX_DETAIL_LENGTH, true, "detail");
  }

  private static String text(In in, int max, boolean mayBeEmpty, String what) throws IOException {
    String s = in.textOrEmpty(Integer.MAX_VALUE, what);
    if (s.isEmpty() && !mayBeEmpty || s.length() > max) {
      throw new CodecException(what + " of " + s.length() + " characters in bakery message");
    }
    if (s.chars().anyMatch(Character::isISOControl)) {
      throw new CodecException(what + " with a control character in bakery message");
    }
    return s;
  }
}
