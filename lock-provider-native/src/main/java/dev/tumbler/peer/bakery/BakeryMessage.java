package dev.tumbler.peer.bakery;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.PeerMessage;
import java.util.List;
import java.util.Objects;

/**
 * The messages of {@link BakeryCore} (NATIVE-ALGORITHMS §3.6 and Appendix B, channel 1). Client ↔ owner
 * messages name the request ({@link ReqKey}) and carry the client's sequence number ({@code seq}) or the
 * owner's echo of it (the echo rule, §2.3); every leader ↔ leader message carries the term it belongs to.
 * The records reject values a peer could not have meant (negative counters, a slot out of range, a quiet
 * period without a timed-soft writer), so a decoded message is always well formed. Immutable.
 */
public sealed interface BakeryMessage extends PeerMessage {

  /** The largest term a ticket key (and so a fencing token) can hold: {@code term < 2^29} (Appendix C). */
  long MAX_TERM = (1L << 29) - 1;

  /** The largest ticket number per name and term: {@code H < 2^32} (Appendix C). */
  long MAX_H = (1L << 32) - 1;

  /** The most leaders a view of the bakery has, so that an owner slot fits in 2 bits. */
  int MAX_SLOTS = 3;

  /**
   * One client request, unique for ever: the client's node, the incarnation of its core, and a number the
   * core never repeats.
   */
  record ReqKey(String client, long incarnation, long seq) implements Comparable<ReqKey> {
    public ReqKey {
      Objects.requireNonNull(client, "client");
      if (client.isEmpty() || incarnation < 0 || seq < 1) {
        throw new IllegalArgumentException("bad request key " + client + "/" + incarnation + "/" + seq);
      }
    }

    @Override
    public int compareTo(ReqKey o) {
      int c = client.compareTo(o.client);
      if (c != 0) {
        return c;
      }
      c = Long.compare(incarnation, o.incarnation);
      return c != 0 ? c : Long.compare(seq, o.seq);
    }

    @Override
    public String toString() {
      return client + "/" + Long.toHexString(incarnation) + "/" + seq;
    }
  }

  /**
   * A ticket's key, ordered lexicographically: the term it was drawn in, its number {@code H} and the owner's
   * slot in that term's leader list. Read as a number it is the fencing token (Appendix C).
   */
  record Key(long term, long h, int slot) implements Comparable<Key> {
    public Key {
      if (term < 1 || term > MAX_TERM || h < 1 || h > MAX_H || slot < 0 || slot >= MAX_SLOTS) {
        throw new IllegalArgumentException("bad ticket key " + term + "/" + h + "/" + slot);
      }
    }

    /** {@code term × 2^34 + H × 2^2 + slot}. */
    public long token() {
      return term << 34 | h << 2 | slot;
    }

    @Override
    public int compareTo(Key o) {
      int c = Long.compare(term, o.term);
      if (c != 0) {
        return c;
      }
      c = Long.compare(h, o.h);
      return c != 0 ? c : Integer.compare(slot, o.slot);
    }

    @Override
    public String toString() {
      return term + "." + h + "." + slot;
    }
  }

  /** Where a ticket is in its life at one leader. */
  enum State {
    /** Added (P3), still waiting for requests that were entering to exit. */
    ADDED,
    /** Every request that was entering when it was added has exited (P5). */
    READY,
    /** Activated: its client holds the claim (P6) until the deadline. */
    ACTIVE
  }

  /**
   * What a ticket claims.
   *
   * @param mode {@link Claim.Mode#EXCLUSIVE}, {@link Claim.Mode#READ} or {@link Claim.Mode#WRITE}
   * @param writer the writer policy; {@link Claim.Writer#HARD} unless a write
   * @param quietNanos the timed-soft quiet period; 0 otherwise
   */
  record Mode(Claim.Mode mode, Claim.Writer writer, long quietNanos) {
    public Mode {
      Objects.requireNonNull(mode, "mode");
      Objects.requireNonNull(writer, "writer");
      if (mode == Claim.Mode.PERMITS) {
        throw new IllegalArgumentException("the bakery serves no semaphores");
      }
      if (writer != Claim.Writer.HARD && mode != Claim.Mode.WRITE) {
        throw new IllegalArgumentException("a " + writer + " writer on a " + mode + " ticket");
      }
      if ((writer == Claim.Writer.TIMED_SOFT) != (quietNanos > 0)) {
        throw new IllegalArgumentException("a quiet period of " + quietNanos + " ns with a " + writer + " writer");
      }
    }

    /** The mode of {@code claim}. */
    public static Mode of(Claim claim) {
      return new Mode(claim.mode(), claim.writer(), claim.quietNanos());
    }

    /** Whether it excludes readers (exclusive or write). */
    public boolean writes() {
      return mode != Claim.Mode.READ;
    }
  }

  /**
   * A ticket as tables and restatements carry it.
   *
   * @param remainingNanos for an {@link State#ACTIVE} ticket, how long its deadline still runs at the sender;
   *     0 otherwise
   * @param tag the request's {@link Claim#tag()}, kept with the ticket so that any leader can say who holds the
   *     name ({@link WhoHolds}); empty for none
   */
  record Ticket(String name, Key key, ReqKey reqKey, String owner, Mode mode, State state, long remainingNanos,
      String tag) {
    public Ticket {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(key, "key");
      Objects.requireNonNull(reqKey, "reqKey");
      Objects.requireNonNull(owner, "owner");
      Objects.requireNonNull(mode, "mode");
      Objects.requireNonNull(state, "state");
      if (remainingNanos < 0) {
        throw new IllegalArgumentException("negative remaining time " + remainingNanos);
      }
      requireTag(tag);
    }

    /** A ticket without a tag. */
    public Ticket(String name, Key key, ReqKey reqKey, String owner, Mode mode, State state, long remainingNanos) {
      this(name, key, reqKey, owner, mode, state, remainingNanos, "");
    }
  }

  /** A request in P1–P3 at {@code owner}: others' tickets added meanwhile wait for it to exit. */
  record Entering(String name, ReqKey reqKey, String owner) {
    public Entering {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(reqKey, "reqKey");
      Objects.requireNonNull(owner, "owner");
    }
  }

  /**
   * A name's marks in a table: its high-water mark of the table's term, and how long ago a reader was last
   * activated ({@code -1}: never).
   */
  record Mark(String name, long highest, long lastReadAgoNanos) {
    public Mark {
      Objects.requireNonNull(name, "name");
      if (highest < 0 || highest > MAX_H || lastReadAgoNanos < -1) {
        throw new IllegalArgumentException("bad mark " + highest + "/" + lastReadAgoNanos);
      }
    }
  }

  // ---- client → owner

  /**
   * Client rule 1: a new request. {@code waitNanos} is {@code -1} for no deadline, {@code 0} for a single
   * attempt; {@code supersedes} names the earlier request this one replaces (its owner left the view), or is
   * null; {@code tag} is the claim's {@link Claim#tag()} (empty for none), which the owner puts on the ticket.
   */
  record Lock(ReqKey reqKey, String name, Mode mode, long leaseNanos, long waitNanos, long seq, ReqKey supersedes,
      String tag) implements BakeryMessage {
    public Lock {
      Objects.requireNonNull(reqKey, "reqKey");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(mode, "mode");
      if (leaseNanos < 1 || waitNanos < -1 || seq < 1) {
        throw new IllegalArgumentException("bad lock " + leaseNanos + "/" + waitNanos + "/" + seq);
      }
      requireTag(tag);
    }

    /** A request without a tag. */
    public Lock(ReqKey reqKey, String name, Mode mode, long leaseNanos, long waitNanos, long seq,
        ReqKey supersedes) {
      this(reqKey, name, mode, leaseNanos, waitNanos, seq, supersedes, "");
    }
  }

  /**
   * Who holds {@code name}? Sent by a client to every leader; answered with {@link Holds}. The client takes the
   * answer with the largest key from a majority, which meets every quorum that activated a ticket. Changes
   * nothing at the leader.
   */
  record WhoHolds(long queryId, String name) implements BakeryMessage {
    public WhoHolds {
      Objects.requireNonNull(name, "name");
    }
  }

  /**
   * The answer to {@link WhoHolds} {@code queryId}: the active ticket of {@code name} with the largest key in the
   * sender's table, and its tag (empty when the ticket has none).
   *
   * @param acting whether the sender acts as a leader; one that does not may have missed grants, and its
   *     answer carries no ticket and counts for nothing
   * @param key that ticket's key; null, with an empty tag, when the sender has no active ticket of the name or
   *     does not act
   */
  record Holds(long queryId, String name, boolean acting, Key key, String tag) implements BakeryMessage {
    public Holds {
      Objects.requireNonNull(name, "name");
      requireTag(tag);
      if (key == null && !tag.isEmpty()) {
        throw new IllegalArgumentException("a tag without a ticket");
      }
      if (!acting && key != null) {
        throw new IllegalArgumentException("a ticket from a leader that does not act");
      }
    }
  }
  /**
   * What is held under the names that start with one of {@code prefixes}? Sent by a client to every leader for an
   * operator's listing; answered with {@link TicketList}. The client merges the answers of a majority, which meets
   * every quorum that activated a ticket. Changes nothing at the leader.
   */
  record ListTickets(long queryId, List<String> prefixes) implements BakeryMessage {
    public ListTickets {
      prefixes = List.copyOf(prefixes);
    }
  }

  /**
   * The answer to {@link ListTickets} {@code queryId}: the sender's active tickets under the names asked about, each
   * with the time its deadline still ran when it answered.
   *
   * @param acting whether the sender acts as a leader; one that does not may have missed grants, sends no tickets and
   *     counts for nothing
   */
  record TicketList(long queryId, boolean acting, List<Ticket> tickets) implements BakeryMessage {
    public TicketList {
      tickets = List.copyOf(tickets);
      if (!acting && !tickets.isEmpty()) {
        throw new IllegalArgumentException("tickets from a leader that does not act");
      }
    }
  }


  /** Client rule 2: the pending request is still wanted (every T/3). */
  record Waiting(ReqKey reqKey, long seq) implements BakeryMessage {
    public Waiting {
      Objects.requireNonNull(reqKey, "reqKey");
      requireSeq(seq);
    }
  }

  /** Client rule 5: keep the grant {@code key} for another term. */
  record Renew(ReqKey reqKey, Key key, long seq) implements BakeryMessage {
    public Renew {
      Objects.requireNonNull(reqKey, "reqKey");
      Objects.requireNonNull(key, "key");
      requireSeq(seq);
    }
  }

  /** Client rule 7: the held grant's owner left the view; the receiver is its owner from now on. */
  record Relock(ReqKey reqKey, String name, Key key, long seq) implements BakeryMessage {
    public Relock {
      Objects.requireNonNull(reqKey, "reqKey");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(key, "key");
      requireSeq(seq);
    }
  }

  /** Client rule 6: the request ended (released, cancelled, its session closed, its window passed). */
  record Unlock(ReqKey reqKey) implements BakeryMessage {
    public Unlock {
      Objects.requireNonNull(reqKey, "reqKey");
    }
  }

  // ---- owner → client

  /** The request holds {@code key}; the grant answers the client's message {@code echo}. */
  record Locked(ReqKey reqKey, Key key, long echo) implements BakeryMessage {
    public Locked {
      Objects.requireNonNull(reqKey, "reqKey");
      Objects.requireNonNull(key, "key");
      requireSeq(echo);
    }
  }

  /** The request ended without a grant: {@code CONTENDED}, {@code TIMED_OUT} or {@code UNAVAILABLE}. */
  record LockFailed(ReqKey reqKey, Output.Failure failure, String detail) implements BakeryMessage {
    public LockFailed {
      Objects.requireNonNull(reqKey, "reqKey");
      Objects.requireNonNull(failure, "failure");
      Objects.requireNonNull(detail, "detail");
    }
  }

  /** The grant was renewed by a quorum, answering the client's message {@code echo}. */
  record Renewed(ReqKey reqKey, long echo) implements BakeryMessage {
    public Renewed {
      Objects.requireNonNull(reqKey, "reqKey");
      requireSeq(echo);
    }
  }

  /** The owner no longer keeps the grant (client rule 8). */
  record Unlocked(ReqKey reqKey, String detail) implements BakeryMessage {
    public Unlocked {
      Objects.requireNonNull(reqKey, "reqKey");
      Objects.requireNonNull(detail, "detail");
    }
  }

  // ---- leader ↔ leader (each carries its term)

  /** The term a leader-to-leader message belongs to; a leader ignores those of another term. */
  sealed interface Termed extends BakeryMessage {
    long term();
  }

  /** P1: {@code reqKey} is entering on {@code name}. */
  record LockEntering(long term, ReqKey reqKey, String name) implements Termed {
    public LockEntering {
      requireTerm(term);
      Objects.requireNonNull(reqKey, "reqKey");
      Objects.requireNonNull(name, "name");
    }
  }

  /** P1 answer. */
  record LockEntered(long term, ReqKey reqKey) implements Termed {
    public LockEntered {
      requireTerm(term);
      Objects.requireNonNull(reqKey, "reqKey");
    }
  }

  /** P2: what is the largest ticket number of {@code name} you know? */
  record GetMaxTicket(long term, ReqKey reqKey, String name) implements Termed {
    public GetMaxTicket {
      requireTerm(term);
      Objects.requireNonNull(reqKey, "reqKey");
      Objects.requireNonNull(name, "name");
    }
  }

  /** P2 answer. */
  record MaxTicket(long term, ReqKey reqKey, long max) implements Termed {
    public MaxTicket {
      requireTerm(term);
      Objects.requireNonNull(reqKey, "reqKey");
      if (max < 0 || max > MAX_H) {
        throw new IllegalArgumentException("bad max ticket " + max);
      }
    }
  }

  /** P3: add the ticket (state {@link State#ADDED}). */
  record AddTicket(long term, Ticket ticket) implements Termed {
    public AddTicket {
      requireTerm(term);
      Objects.requireNonNull(ticket, "ticket");
    }
  }

  /**
   * P3 answer: the requests the sender still sees entering on the ticket's name, other than its own; or, with
   * {@code added} false, a refusal: the sender already agreed to activate a larger key of the name in this
   * term, so this ticket would be granted below it (F2). The owner then draws a new number.
   */
  record TicketAdded(long term, ReqKey reqKey, boolean added, List<ReqKey> stillEntering) implements Termed {
    public TicketAdded {
      requireTerm(term);
      Objects.requireNonNull(reqKey, "reqKey");
      stillEntering = List.copyOf(stillEntering);
    }
  }

  /** P4: {@code reqKey} has its ticket; it is not entering any more. */
  record LockExiting(long term, ReqKey reqKey, String name) implements Termed {
    public LockExiting {
      requireTerm(term);
      Objects.requireNonNull(reqKey, "reqKey");
      Objects.requireNonNull(name, "name");
    }
  }

  /** P5: the ticket is ready. */
  record TicketReady(long term, String name, Key key) implements Termed {
    public TicketReady {
      requireTicket(term, name, key);
    }
  }

  /**
   * Anti-entropy: the sender has kept {@code key}, a ticket of the receiver's that is not active, unchanged for a
   * whole lease; answered with {@link TicketGone} if the receiver, its owner, no longer has it.
   */
  record TicketCheck(long term, String name, Key key) implements Termed {
    public TicketCheck {
      requireTicket(term, name, key);
    }
  }

  /** The answer to {@link TicketCheck}: the owner has no ticket {@code key} (its drop was lost on the way). */
  record TicketGone(long term, String name, Key key) implements Termed {
    public TicketGone {
      requireTicket(term, name, key);
    }
  }

  /** P6: may the ticket be activated by your table? */
  record ActivateLock(long term, String name, Key key) implements Termed {
    public ActivateLock {
      requireTicket(term, name, key);
    }
  }

  /**
   * P6 answer: {@code granted} if the sender's table allowed the activation and it marked the ticket active.
   * A leader that refused sends {@code granted} later, unasked, once its table allows it.
   */
  record LockActivated(long term, String name, Key key, boolean granted) implements Termed {
    public LockActivated {
      requireTicket(term, name, key);
    }
  }

  /** Renewal: extend the active ticket's deadline to T from now. */
  record RenewTicket(long term, String name, Key key) implements Termed {
    public RenewTicket {
      requireTicket(term, name, key);
    }
  }

  /** Renewal answer. */
  record TicketRenewed(long term, String name, Key key) implements Termed {
    public TicketRenewed {
      requireTicket(term, name, key);
    }
  }

  /** Forget every record of {@code reqKey} (its entering record, its ticket). No answer. */
  record DropTicket(long term, String name, ReqKey reqKey) implements Termed {
    public DropTicket {
      requireTerm(term);
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(reqKey, "reqKey");
    }
  }

  /** Hand-over: a leader of {@code term} asks for the sender's view before it and its table. */
  record TablesRequest(long term) implements Termed {
    public TablesRequest {
      requireTerm(term);
    }
  }

  /**
   * Hand-over answer ({@code merged} clear), or a merged table a new leader passes to the other new leaders
   * ({@code merged} set).
   *
   * @param term the new term the table is for
   * @param viewTerm the term of the last view the sender adopted before {@code term}; 0 for none
   * @param viewLeaders that view's leaders
   * @param tickets the sender's tickets (of that view, when it led it; empty otherwise)
   * @param marks the sender's high-water marks (of {@code viewTerm}) and last reader activations
   */
  record Tables(long term, long viewTerm, List<Leader> viewLeaders, boolean merged, List<Ticket> tickets,
      List<Mark> marks) implements Termed {
    public Tables {
      requireTerm(term);
      if (viewTerm < 0 || viewTerm >= term) {
        throw new IllegalArgumentException("a table for term " + term + " reports view " + viewTerm);
      }
      viewLeaders = List.copyOf(viewLeaders);
      tickets = List.copyOf(tickets);
      marks = List.copyOf(marks);
      if (viewLeaders.size() > MAX_SLOTS || (viewTerm == 0) != viewLeaders.isEmpty()) {
        throw new IllegalArgumentException("view " + viewTerm + " with " + viewLeaders.size() + " leaders");
      }
    }
  }

  /**
   * The first message on every link that comes up (§2.5), and the answer to one ({@code answer} clear):
   * everything the sender is the only writer of that the receiver keeps. As a client, its live requests whose
   * owner is the receiver (pending as {@link Lock}, held as {@link Relock}); as an owner leader of
   * {@code term}, its tickets and entering records. It replaces what the receiver knew of them.
   *
   * @param term the sender's view's term (0 for none)
   * @param incarnation the sender core's incarnation: records of an earlier one are dropped
   */
  record Restate(long term, long incarnation, boolean answer, List<Lock> pending, List<Relock> held,
      List<Ticket> tickets, List<Entering> entering) implements BakeryMessage {
    public Restate {
      if (term < 0 || term > MAX_TERM || incarnation < 0) {
        throw new IllegalArgumentException("bad restatement " + term + "/" + incarnation);
      }
      pending = List.copyOf(pending);
      held = List.copyOf(held);
      tickets = List.copyOf(tickets);
      entering = List.copyOf(entering);
    }
  }

  private static void requireTag(String tag) {
    Objects.requireNonNull(tag, "tag");
    if (tag.length() > Claim.MAX_TAG_LENGTH) {
      throw new IllegalArgumentException("a tag of " + tag.length() + " characters");
    }
  }

  private static void requireSeq(long seq) {
    if (seq < 1) {
      throw new IllegalArgumentException("bad sequence number " + seq);
    }
  }

  /** The checks of a message about one ticket: a term in range, a name and a key. */
  private static void requireTicket(long term, String name, Key key) {
    requireTerm(term);
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(key, "key");
  }

  private static void requireTerm(long term) {
    if (term < 1 || term > MAX_TERM) {
      throw new IllegalArgumentException("bad term " + term);
    }
  }
}
