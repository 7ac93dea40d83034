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
import dev.tumbler.peer.core.MessageCodec;
import dev.tumbler.peer.core.Output;
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
 * Binary encoding of {@link BakeryMessage}: {@code version(1) type(1) fields}, big-endian. Strings (node ids,
 * lock names, details) are modified UTF-8 with a 2-byte length ({@link DataOutputStream#writeUTF}); enums are
 * one ordinal byte; booleans one byte 0 or 1; an optional request key a presence byte then the key; lists an
 * {@code int} count then the elements. A request key is {@code client incarnation(8) seq(8)}, a ticket key
 * {@code term(8) h(8) slot(1)}; a claim's tag (on requests and tickets) is a string that may be empty.
 *
 * <p>Decoding is strict: an unknown version or type, an ordinal out of range, a boolean other than 0 or 1, a
 * node id or name that is empty, too long or holds a control character, a count larger than the bytes left
 * could hold, a field out of the range its record allows, a truncated message and trailing bytes all throw
 * {@link CodecException}. Never Java serialization. Thread safe.
 */
public final class BakeryCodec implements MessageCodec<BakeryMessage> {

  /** The encoding version this codec writes and reads (2: requests and tickets carry their claim's tag). */
  public static final byte VERSION = 3;

  /** The longest lock name on the wire, in characters (a namespace-qualified name, as in the Lamport codec). */
  static final int MAX_NAME_LENGTH = 3 + 1 + 256 + 1 + 256;

  /** The longest node id on the wire, in characters. */
  static final int MAX_ID_LENGTH = 255;

  /** The longest detail text on the wire, in characters. */
  static final int MAX_DETAIL_LENGTH = 1024;

  static final byte LOCK = 1;
  static final byte WAITING = 2;
  static final byte RENEW = 3;
  static final byte RELOCK = 4;
  static final byte UNLOCK = 5;
  static final byte LOCKED = 6;
  static final byte LOCK_FAILED = 7;
  static final byte RENEWED = 8;
  static final byte UNLOCKED = 9;
  static final byte LOCK_ENTERING = 10;
  static final byte LOCK_ENTERED = 11;
  static final byte GET_MAX_TICKET = 12;
  static final byte MAX_TICKET = 13;
  static final byte ADD_TICKET = 14;
  static final byte TICKET_ADDED = 15;
  static final byte LOCK_EXITING = 16;
  static final byte TICKET_READY = 17;
  static final byte ACTIVATE_LOCK = 18;
  static final byte LOCK_ACTIVATED = 19;
  static final byte RENEW_TICKET = 20;
  static final byte TICKET_RENEWED = 21;
  static final byte DROP_TICKET = 22;
  static final byte TABLES_REQUEST = 23;
  static final byte TABLES = 24;
  static final byte RESTATE = 25;
  static final byte WHO_HOLDS = 26;
  static final byte HOLDS = 27;
  static final byte TICKET_CHECK = 28;
  static final byte TICKET_GONE = 29;

  private static final Claim.Mode[] MODES = Claim.Mode.values();
  private static final Claim.Writer[] WRITERS = Claim.Writer.values();
  private static final BakeryMessage.State[] STATES = BakeryMessage.State.values();
  private static final Output.Failure[] FAILURES = Output.Failure.values();

  @Override
  public byte[] encode(BakeryMessage message) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(VERSION);
      switch (message) {
        case BakeryMessage.Lock m -> {
          out.writeByte(LOCK);
          lock(out, m);
        }
        case BakeryMessage.Waiting m -> {
          out.writeByte(WAITING);
          reqKey(out, m.reqKey());
          out.writeLong(m.seq());
        }
        case BakeryMessage.Renew m -> {
          out.writeByte(RENEW);
          reqKey(out, m.reqKey());
          key(out, m.key());
          out.writeLong(m.seq());
        }
        case BakeryMessage.Relock m -> {
          out.writeByte(RELOCK);
          relock(out, m);
        }
        case BakeryMessage.Unlock m -> {
          out.writeByte(UNLOCK);
          reqKey(out, m.reqKey());
        }
        case BakeryMessage.Locked m -> {
          out.writeByte(LOCKED);
          reqKey(out, m.reqKey());
          key(out, m.key());
          out.writeLong(m.echo());
        }
        case BakeryMessage.LockFailed m -> {
          out.writeByte(LOCK_FAILED);
          reqKey(out, m.reqKey());
          out.writeByte(m.failure().ordinal());
          out.writeUTF(m.detail());
        }
        case BakeryMessage.Renewed m -> {
          out.writeByte(RENEWED);
          reqKey(out, m.reqKey());
          out.writeLong(m.echo());
        }
        case BakeryMessage.Unlocked m -> {
          out.writeByte(UNLOCKED);
          reqKey(out, m.reqKey());
          out.writeUTF(m.detail());
        }
        case BakeryMessage.LockEntering m -> {
          out.writeByte(LOCK_ENTERING);
          out.writeLong(m.term());
          reqKey(out, m.reqKey());
          out.writeUTF(m.name());
        }
        case BakeryMessage.LockEntered m -> {
          out.writeByte(LOCK_ENTERED);
          out.writeLong(m.term());
          reqKey(out, m.reqKey());
        }
        case BakeryMessage.GetMaxTicket m -> {
          out.writeByte(GET_MAX_TICKET);
          out.writeLong(m.term());
          reqKey(out, m.reqKey());
          out.writeUTF(m.name());
        }
        case BakeryMessage.MaxTicket m -> {
          out.writeByte(MAX_TICKET);
          out.writeLong(m.term());
          reqKey(out, m.reqKey());
          out.writeLong(m.max());
        }
        case BakeryMessage.AddTicket m -> {
          out.writeByte(ADD_TICKET);
          out.writeLong(m.term());
          ticket(out, m.ticket());
        }
        case BakeryMessage.TicketAdded m -> {
          out.writeByte(TICKET_ADDED);
          out.writeLong(m.term());
          reqKey(out, m.reqKey());
          out.writeBoolean(m.added());
          out.writeInt(m.stillEntering().size());
          for (ReqKey k : m.stillEntering()) {
            reqKey(out, k);
          }
        }
        case BakeryMessage.LockExiting m -> {
          out.writeByte(LOCK_EXITING);
          out.writeLong(m.term());
          reqKey(out, m.reqKey());
          out.writeUTF(m.name());
        }
        case BakeryMessage.TicketReady m -> nameKey(out, TICKET_READY, m.term(), m.name(), m.key());
        case BakeryMessage.TicketCheck m -> nameKey(out, TICKET_CHECK, m.term(), m.name(), m.key());
        case BakeryMessage.TicketGone m -> nameKey(out, TICKET_GONE, m.term(), m.name(), m.key());
        case BakeryMessage.ActivateLock m -> nameKey(out, ACTIVATE_LOCK, m.term(), m.name(), m.key());
        case BakeryMessage.LockActivated m -> {
          nameKey(out, LOCK_ACTIVATED, m.term(), m.name(), m.key());
          out.writeBoolean(m.granted());
        }
        case BakeryMessage.RenewTicket m -> nameKey(out, RENEW_TICKET, m.term(), m.name(), m.key());
        case BakeryMessage.TicketRenewed m -> nameKey(out, TICKET_RENEWED, m.term(), m.name(), m.key());
        case BakeryMessage.DropTicket m -> {
          out.writeByte(DROP_TICKET);
          out.writeLong(m.term());
          out.writeUTF(m.name());
          reqKey(out, m.reqKey());
        }
        case BakeryMessage.TablesRequest m -> {
          out.writeByte(TABLES_REQUEST);
          out.writeLong(m.term());
        }
        case BakeryMessage.Tables m -> {
          out.writeByte(TABLES);
          out.writeLong(m.term());
          out.writeLong(m.viewTerm());
          out.writeByte(m.viewLeaders().size());
          for (Leader l : m.viewLeaders()) {
            out.writeUTF(l.nodeId());
            out.writeLong(l.incarnation());
          }
          out.writeBoolean(m.merged());
          out.writeInt(m.tickets().size());
          for (Ticket t : m.tickets()) {
            ticket(out, t);
          }
          out.writeInt(m.marks().size());
          for (Mark k : m.marks()) {
            out.writeUTF(k.name());
            out.writeLong(k.highest());
            out.writeLong(k.lastReadAgoNanos());
          }
        }
        case BakeryMessage.Restate m -> {
          out.writeByte(RESTATE);
          out.writeLong(m.term());
          out.writeLong(m.incarnation());
          out.writeBoolean(m.answer());
          out.writeInt(m.pending().size());
          for (BakeryMessage.Lock l : m.pending()) {
            lock(out, l);
          }
          out.writeInt(m.held().size());
          for (BakeryMessage.Relock r : m.held()) {
            relock(out, r);
          }
          out.writeInt(m.tickets().size());
          for (Ticket t : m.tickets()) {
            ticket(out, t);
          }
          out.writeInt(m.entering().size());
          for (Entering e : m.entering()) {
            out.writeUTF(e.name());
            reqKey(out, e.reqKey());
            out.writeUTF(e.owner());
          }
        }
        case BakeryMessage.WhoHolds m -> {
          out.writeByte(WHO_HOLDS);
          out.writeLong(m.queryId());
          out.writeUTF(m.name());
        }
        case BakeryMessage.Holds m -> {
          out.writeByte(HOLDS);
          out.writeLong(m.queryId());
          out.writeUTF(m.name());
          out.writeBoolean(m.acting());
          out.writeBoolean(m.key() != null);
          if (m.key() != null) {
            key(out, m.key());
          }
          out.writeUTF(m.tag());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot happen writing to memory", e);
    }
    return bytes.toByteArray();
  }

  @Override
  public BakeryMessage decode(byte[] bytes) {
    if (bytes == null || bytes.length < 2) {
      throw new CodecException("bakery message too short: " + (bytes == null ? "null" : bytes.length + " bytes"));
    }
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
    try {
      byte version = in.readByte();
      if (version != VERSION) {
        throw new CodecException("bakery message version " + version + " is not supported (expected " + VERSION
            + ")");
      }
      byte type = in.readByte();
      BakeryMessage m = switch (type) {
        case LOCK -> lock(in);
        case WAITING -> new BakeryMessage.Waiting(reqKey(in), in.readLong());
        case RENEW -> new BakeryMessage.Renew(reqKey(in), key(in), in.readLong());
        case RELOCK -> relock(in);
        case UNLOCK -> new BakeryMessage.Unlock(reqKey(in));
        case LOCKED -> new BakeryMessage.Locked(reqKey(in), key(in), in.readLong());
        case LOCK_FAILED -> new BakeryMessage.LockFailed(reqKey(in), ordinal(in, FAILURES, "failure"), detail(in));
        case RENEWED -> new BakeryMessage.Renewed(reqKey(in), in.readLong());
        case UNLOCKED -> new BakeryMessage.Unlocked(reqKey(in), detail(in));
        case LOCK_ENTERING -> new BakeryMessage.LockEntering(in.readLong(), reqKey(in), name(in));
        case LOCK_ENTERED -> new BakeryMessage.LockEntered(in.readLong(), reqKey(in));
        case GET_MAX_TICKET -> new BakeryMessage.GetMaxTicket(in.readLong(), reqKey(in), name(in));
        case MAX_TICKET -> new BakeryMessage.MaxTicket(in.readLong(), reqKey(in), in.readLong());
        case ADD_TICKET -> new BakeryMessage.AddTicket(in.readLong(), ticket(in));
        case TICKET_ADDED -> {
          long term = in.readLong();
          ReqKey k = reqKey(in);
          boolean added = bool(in);
          int n = count(in, 19, "entering requests");
          List<ReqKey> entering = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            entering.add(reqKey(in));
          }
          yield new BakeryMessage.TicketAdded(term, k, added, entering);
        }
        case LOCK_EXITING -> new BakeryMessage.LockExiting(in.readLong(), reqKey(in), name(in));
        case TICKET_READY -> new BakeryMessage.TicketReady(in.readLong(), name(in), key(in));
        case TICKET_CHECK -> new BakeryMessage.TicketCheck(in.readLong(), name(in), key(in));
        case TICKET_GONE -> new BakeryMessage.TicketGone(in.readLong(), name(in), key(in));
        case ACTIVATE_LOCK -> new BakeryMessage.ActivateLock(in.readLong(), name(in), key(in));
        case LOCK_ACTIVATED -> new BakeryMessage.LockActivated(in.readLong(), name(in), key(in), bool(in));
        case RENEW_TICKET -> new BakeryMessage.RenewTicket(in.readLong(), name(in), key(in));
        case TICKET_RENEWED -> new BakeryMessage.TicketRenewed(in.readLong(), name(in), key(in));
        case DROP_TICKET -> new BakeryMessage.DropTicket(in.readLong(), name(in), reqKey(in));
        case TABLES_REQUEST -> new BakeryMessage.TablesRequest(in.readLong());
        case TABLES -> {
          long term = in.readLong();
          long viewTerm = in.readLong();
          int leaderCount = in.readUnsignedByte();
          if (leaderCount > BakeryMessage.MAX_SLOTS) {
            throw new CodecException("bakery table reports " + leaderCount + " leaders");
          }
          List<Leader> leaders = new ArrayList<>(leaderCount);
          for (int i = 0; i < leaderCount; i++) {
            leaders.add(new Leader(id(in), in.readLong()));
          }
          boolean merged = bool(in);
          int n = count(in, 60, "tickets");
          List<Ticket> tickets = new ArrayList<>(n);
          for (int i = 0; i < n; i++) {
            tickets.add(ticket(in));
          }
          int k = count(in, 18, "marks");
          List<Mark> marks = new ArrayList<>(k);
          for (int i = 0; i < k; i++) {
            marks.add(new Mark(name(in), in.readLong(), in.readLong()));
          }
          yield new BakeryMessage.Tables(term, viewTerm, leaders, merged, tickets, marks);
        }
        case RESTATE -> {
          long term = in.readLong();
          long incarnation = in.readLong();
          boolean answer = bool(in);
          int p = count(in, 53, "pending requests");
          List<BakeryMessage.Lock> pending = new ArrayList<>(p);
          for (int i = 0; i < p; i++) {
            pending.add(lock(in));
          }
          int h = count(in, 45, "held requests");
          List<BakeryMessage.Relock> held = new ArrayList<>(h);
          for (int i = 0; i < h; i++) {
            held.add(relock(in));
          }
          int t = count(in, 60, "tickets");
          List<Ticket> tickets = new ArrayList<>(t);
          for (int i = 0; i < t; i++) {
            tickets.add(ticket(in));
          }
          int e = count(in, 24, "entering records");
          List<Entering> entering = new ArrayList<>(e);
          for (int i = 0; i < e; i++) {
            entering.add(new Entering(name(in), reqKey(in), id(in)));
          }
          yield new BakeryMessage.Restate(term, incarnation, answer, pending, held, tickets, entering);
        }
        case WHO_HOLDS -> new BakeryMessage.WhoHolds(in.readLong(), name(in));
        case HOLDS -> new BakeryMessage.Holds(in.readLong(), name(in), bool(in), bool(in) ? key(in) : null, tag(in));
        default -> throw new CodecException("unknown bakery message type " + type);
      };
      if (in.available() > 0) {
        throw new CodecException("bakery message type " + type + " has " + in.available() + " trailing bytes");
      }
      return m;
    } catch (EOFException e) {
      throw new CodecException("truncated bakery message (" + bytes.length + " bytes)", e);
    } catch (IOException e) {
      throw new CodecException("malformed bakery message: " + e.getMessage(), e);
    } catch (IllegalArgumentException e) {
      throw new CodecException("invalid bakery message: " + e.getMessage(), e);
    }
  }

  // ---- writing

  private static void lock(DataOutputStream out, BakeryMessage.Lock m) throws IOException {
    reqKey(out, m.reqKey());
    out.writeUTF(m.name());
    mode(out, m.mode());
    out.writeLong(m.leaseNanos());
    out.writeLong(m.waitNanos());
    out.writeLong(m.seq());
    out.writeBoolean(m.supersedes() != null);
    if (m.supersedes() != null) {
      reqKey(out, m.supersedes());
    }
    out.writeUTF(m.tag());
  }

  private static void relock(DataOutputStream out, BakeryMessage.Relock m) throws IOException {
    reqKey(out, m.reqKey());
    out.writeUTF(m.name());
    key(out, m.key());
    out.writeLong(m.seq());
  }

  private static void nameKey(DataOutputStream out, byte type, long term, String name, Key key) throws IOException {
    out.writeByte(type);
    out.writeLong(term);
    out.writeUTF(name);
    key(out, key);
  }

  private static void reqKey(DataOutputStream out, ReqKey k) throws IOException {
    out.writeUTF(k.client());
    out.writeLong(k.incarnation());
    out.writeLong(k.seq());
  }

  private static void key(DataOutputStream out, Key k) throws IOException {
    out.writeLong(k.term());
    out.writeLong(k.h());
    out.writeByte(k.slot());
  }

  private static void mode(DataOutputStream out, Mode m) throws IOException {
    out.writeByte(m.mode().ordinal());
    out.writeByte(m.writer().ordinal());
    out.writeLong(m.quietNanos());
  }

  private static void ticket(DataOutputStream out, Ticket t) throws IOException {
    out.writeUTF(t.name());
    key(out, t.key());
    reqKey(out, t.reqKey());
    out.writeUTF(t.owner());
    mode(out, t.mode());
    out.writeByte(t.state().ordinal());
    out.writeLong(t.remainingNanos());
    out.writeUTF(t.tag());
  }

  // ---- reading

  private static BakeryMessage.Lock lock(DataInputStream in) throws IOException {
    ReqKey k = reqKey(in);
    String name = name(in);
    Mode mode = mode(in);
    long lease = in.readLong();
    long wait = in.readLong();
    long seq = in.readLong();
    ReqKey supersedes = bool(in) ? reqKey(in) : null;
    return new BakeryMessage.Lock(k, name, mode, lease, wait, seq, supersedes, tag(in));
  }

  private static BakeryMessage.Relock relock(DataInputStream in) throws IOException {
    return new BakeryMessage.Relock(reqKey(in), name(in), key(in), in.readLong());
  }

  private static ReqKey reqKey(DataInputStream in) throws IOException {
    return new ReqKey(id(in), in.readLong(), in.readLong());
  }

  private static Key key(DataInputStream in) throws IOException {
    return new Key(in.readLong(), in.readLong(), in.readUnsignedByte());
  }

  private static Mode mode(DataInputStream in) throws IOException {
    return new Mode(ordinal(in, MODES, "mode"), ordinal(in, WRITERS, "writer"), in.readLong());
  }

  private static Ticket ticket(DataInputStream in) throws IOException {
    return new Ticket(name(in), key(in), reqKey(in), id(in), mode(in), ordinal(in, STATES, "state"), in.readLong(),
        tag(in));
  }

  private static <E> E ordinal(DataInputStream in, E[] values, String what) throws IOException {
    int o = in.readUnsignedByte();
    if (o >= values.length) {
      throw new CodecException("unknown " + what + " " + o + " in bakery message");
    }
    return values[o];
  }

  /** A list's count, checked against the bytes left at {@code least} bytes per element. */
  private static int count(DataInputStream in, int least, String what) throws IOException {
    int n = in.readInt();
    if (n < 0 || n > in.available() / least) {
      throw new CodecException("bakery message claims " + n + " " + what + " in " + in.available() + " bytes");
    }
    return n;
  }

  private static String name(DataInputStream in) throws IOException {
    return text(in, MAX_NAME_LENGTH, false, "lock name");
  }

  private static String id(DataInputStream in) throws IOException {
    return text(in, MAX_ID_LENGTH, false, "node id");
  }

  private static String tag(DataInputStream in) throws IOException {
    return text(in, Claim.MAX_TAG_LENGTH, true, "tag");
  }

  private static String detail(DataInputStream in) throws IOException {
    return text(in, MAX_DETAIL_LENGTH, true, "detail");
  }

  private static String text(DataInputStream in, int max, boolean mayBeEmpty, String what) throws IOException {
    String s = in.readUTF();
    if (s.isEmpty() && !mayBeEmpty || s.length() > max) {
      throw new CodecException(what + " of " + s.length() + " characters in bakery message");
    }
    for (int i = 0; i < s.length(); i++) {
      if (Character.isISOControl(s.charAt(i))) {
        throw new CodecException(what + " with a control character in bakery message");
      }
    }
    return s;
  }

  private static boolean bool(DataInputStream in) throws IOException {
    int b = in.readUnsignedByte();
    if (b > 1) {
      throw new CodecException("boolean byte " + b + " in bakery message");
    }
    return b == 1;
  }
}
