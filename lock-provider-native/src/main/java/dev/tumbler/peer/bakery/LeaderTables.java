package dev.tumbler.peer.bakery;

import static dev.tumbler.peer.bakery.Node.NONE;
import static dev.tumbler.peer.bakery.Node.earliest;

import dev.tumbler.peer.bakery.BakeryMessage.Entering;
import dev.tumbler.peer.bakery.BakeryMessage.Key;
import dev.tumbler.peer.bakery.BakeryMessage.Mark;
import dev.tumbler.peer.bakery.BakeryMessage.Mode;
import dev.tumbler.peer.bakery.BakeryMessage.ReqKey;
import dev.tumbler.peer.bakery.BakeryMessage.State;
import dev.tumbler.peer.bakery.BakeryMessage.Ticket;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * The leader table (§3.2 "Leader state"), which every acting leader keeps, whoever owns the requests: per name, the
 * entering records, the tickets in key order with their states and deadlines, the high-water mark of the term, and
 * the last read activation. It answers the owners' phase messages ({@code LockEntering}, {@code GetMaxTicket},
 * {@code AddTicket}, {@code LockExiting}, {@code TicketReady}, {@code ActivateLock}, {@code RenewTicket},
 * {@code DropTicket}), decides activations by the activation rule on its own table, expires active tickets, drops
 * the waiting tickets of owners away for T, checks stale tickets with their owners, and merges the tables that a
 * restatement or a hand-over brings. Names whose table changed are kept {@linkplain #dirtyNames dirty} until the
 * core has had their owners re-evaluate them.
 */
final class LeaderTables {

  private final Node node;
  private final Map<String, Table> tables = new TreeMap<>();
  private final Set<String> dirty = new LinkedHashSet<>();

  /** Told of every name whose tickets may have changed (null: every name's). */
  private Consumer<String> ticketsChanged = name -> { };

  LeaderTables(Node node) {
    this.node = node;
  }

  /** Whom to tell of every name whose tickets may have changed (null: every name's): the owner's granted runs. */
  void onTicketsChanged(Consumer<String> listener) {
    this.ticketsChanged = listener;
  }

  // ---------------------------------------------------------------- the owners' phase messages

  void onLockEntering(String from, BakeryMessage.LockEntering e) {
    table(e.name()).entering.put(e.reqKey(), from);
    node.send(from, new BakeryMessage.LockEntered(node.term, e.reqKey()));
  }

  void onGetMaxTicket(String from, BakeryMessage.GetMaxTicket g) {
    node.send(from, new BakeryMessage.MaxTicket(node.term, g.reqKey(), maxTicket(g.name())));
  }

  void onAddTicket(String from, BakeryMessage.AddTicket a) {
    long term = node.term;
    Ticket t = a.ticket();
    Table table = table(t.name());
    TableTicket known = table.tickets.get(t.key());
    if (!node.mutations.addBelowActivated && table.activatedAbove(term, t.key())
        && (known == null || known.state != State.ACTIVE)) {
      // a larger key was activated here: this one, drawn concurrently, would be granted after it with a
      // smaller token (F2); the owner draws again, above it
      node.send(from, new BakeryMessage.TicketAdded(term, t.reqKey(), false, List.of()));
      return;
    }
    if (!table.tickets.containsKey(t.key())
        && !table.put(new TableTicket(t.key(), t.reqKey(), t.owner(), t.mode(), State.ADDED, t.tag()))) {
      return; // the request has a larger key here already: this one is stale
    }
    table.raise(term, t.key());
    dirty.add(t.name());
    List<ReqKey> still = new ArrayList<>();
    for (ReqKey k : table.entering.keySet()) {
      if (!k.equals(t.reqKey())) {
        still.add(k);
      }
    }
    node.send(from, new BakeryMessage.TicketAdded(term, t.reqKey(), true, still));
  }

  void onLockExiting(BakeryMessage.LockExiting x) {
    Table t = changing(x.name());
    if (t != null && t.entering.remove(x.reqKey()) != null) {
      dirty.add(x.name());
    }
  }

  void onTicketCheck(String from, BakeryMessage.TicketCheck c) {
    if (ticket(c.name(), c.key()) == null) {
      node.send(from, new BakeryMessage.TicketGone(node.term, c.name(), c.key()));
    }
  }

  void onTicketGone(String from, BakeryMessage.TicketGone g) {
    Table table = changing(g.name());
    TableTicket t = table == null ? null : table.tickets.get(g.key());
    if (t != null && t.state != State.ACTIVE && t.owner.equals(from)) {
      table.tickets.remove(g.key());
      table.deferred.remove(g.key());
      dirty.add(g.name());
    }
  }

  void onTicketReady(BakeryMessage.TicketReady r) {
    TableTicket t = ticket(r.name(), r.key());
    if (t != null && t.state == State.ADDED) {
      t.state = State.READY;
      dirty.add(r.name());
    }
  }

  void onActivateLock(String from, BakeryMessage.ActivateLock a) {
    Table table = changing(a.name());
    TableTicket t = table == null ? null : table.tickets.get(a.key());
    if (t != null && (t.state == State.ACTIVE || mayActivate(table, t))) {
      markActive(table, t);
      node.send(from, new BakeryMessage.LockActivated(node.term, a.name(), a.key(), true));
    } else {
      if (t != null) {
        table.deferred.put(a.key(), from); // answered true later, once this table allows it
      }
      node.send(from, new BakeryMessage.LockActivated(node.term, a.name(), a.key(), false));
    }
  }

  void onRenewTicket(String from, BakeryMessage.RenewTicket r) {
    TableTicket t = ticket(r.name(), r.key());
    if (t != null && t.state == State.ACTIVE) {
      t.deadline = Math.max(t.deadline, node.now + node.leaseNanos);
      node.send(from, new BakeryMessage.TicketRenewed(node.term, r.name(), r.key()));
    }
  }

  /** Forgets every record of the request {@code k} on {@code name}: its entering record and its tickets. */
  void dropRecords(String name, ReqKey k) {
    Table t = changing(name);
    if (t == null) {
      return;
    }
    t.entering.remove(k);
    t.tickets.values().removeIf(x -> x.reqKey.equals(k));
    t.deferred.keySet().removeIf(key -> !t.tickets.containsKey(key));
    dirty.add(name);
  }

  /**
   * Who holds {@code name} by this leader's table: its active ticket with the largest key (a later grant has a
   * larger key). A leader that does not act says so: it may have missed grants, and the client counts only the
   * answers of acting ones.
   */
  void answerWhoHolds(String from, BakeryMessage.WhoHolds w) {
    if (!node.acting()) {
      node.send(from, new BakeryMessage.Holds(w.queryId(), w.name(), false, null, ""));
      return;
    }
    Table t = tables.get(w.name());
    if (t != null) {
      for (TableTicket k : t.tickets.descendingMap().values()) {
        if (k.state == State.ACTIVE && k.deadline > node.now) {
          node.send(from, new BakeryMessage.Holds(w.queryId(), w.name(), true, k.key, k.tag));
          return;
        }
      }
    }
    node.send(from, new BakeryMessage.Holds(w.queryId(), w.name(), true, null, ""));
  }

  /**
   * The active tickets under the names a listing asks about, by this leader's tables; like {@link #answerWhoHolds}, a
   * leader that does not act says so and lists nothing.
   */
  void answerListTickets(String from, BakeryMessage.ListTickets q) {
    List<Ticket> active = new ArrayList<>();
    if (node.acting()) {
      tables.forEach((name, t) -> {
        if (Input.ListQuery.covers(q.prefixes(), name)) {
          for (TableTicket k : t.tickets.values()) {
            if (k.state == State.ACTIVE && k.deadline > node.now) {
              active.add(k.wire(name, node.now));
            }
          }
        }
      });
    }
    node.send(from, new BakeryMessage.TicketList(q.queryId(), node.acting(), active));
  }

  // ---------------------------------------------------------------- numbers and activation

  private long maxTicket(String name) {
    Table t = tables.get(name);
    if (t == null) {
      return 0;
    }
    long term = node.term;
    long m = node.mutations.numberFromLiveTickets || t.highestTerm != term ? 0 : t.highest;
    for (TableTicket k : t.tickets.values()) {
      if (k.key.term() == term) {
        m = Math.max(m, k.key.h());
      }
    }
    return m;
  }

  /**
   * The activation rule (§3.2) for {@code k} on this leader's table, with two additions that keep F2/F3 for
   * claims activated out of key order: a reader waits for the readers before it, and a soft writer activates
   * only if this leader agreed to activate no larger key in the term (else its owner draws it a new number).
   */
  boolean mayActivate(Table table, TableTicket k) {
    return rule(table, k) && !softBehindLater(table, k);
  }

  boolean softBehindLater(Table table, TableTicket k) {
    return k.mode.writes() && k.mode.writer() != Claim.Writer.HARD && table.activatedAbove(node.term, k.key);
  }

  boolean rule(Table table, TableTicket k) {
    boolean activeWrite = false;
    boolean anyActive = false;
    boolean writeBefore = false;
    boolean hardWriteBefore = false;
    boolean anyBefore = false;
    boolean anyRead = false;
    boolean waitingReadBefore = false;
    for (TableTicket t : table.tickets.values()) {
      if (t == k) {
        continue;
      }
      boolean before = t.key.compareTo(k.key) < 0;
      if (t.state == State.ACTIVE) {
        anyActive = true;
        activeWrite |= t.mode.writes();
      }
      if (before) {
        // a soft writer keeps no place (§3.2): one still waiting holds back no hard writer behind it, or
        // soft writer (waits for every reader) -> reader (waits for the hard writer before it) -> hard writer
        // (waits for everything before it) would wait on each other for ever
        anyBefore |= t.state == State.ACTIVE || !t.mode.writes() || t.mode.writer() == Claim.Writer.HARD;
        writeBefore |= t.mode.writes();
        hardWriteBefore |= t.mode.writes() && t.mode.writer() == Claim.Writer.HARD;
        waitingReadBefore |= !t.mode.writes() && t.state != State.ACTIVE;
      }
      anyRead |= !t.mode.writes();
    }
    Mode m = k.mode;
    if (m.mode() == Claim.Mode.READ) {
      return !activeWrite && !hardWriteBefore && !waitingReadBefore;
    }
    if (m.writer() == Claim.Writer.HARD) {
      return !anyBefore && !anyActive;
    }
    boolean soft = !anyActive && !anyRead && !writeBefore;
    if (m.writer() == Claim.Writer.TIMED_SOFT) {
      return soft && (table.lastRead == NONE || node.now - table.lastRead >= m.quietNanos());
    }
    return soft;
  }

  void markActive(Table table, TableTicket t) {
    if (t.state != State.ACTIVE && !t.mode.writes()) {
      table.lastRead = node.now;
    }
    t.state = State.ACTIVE;
    t.deadline = Math.max(t.deadline, node.now + node.leaseNanos);
    table.deferred.remove(t.key);
    table.activated(node.term, t.key);
  }

  /** Leaders that refused an activation re-check it when their table changes, and answer {@code true} then. */
  void recheckDeferred(String name) {
    Table table = changing(name);
    if (table == null || table.deferred.isEmpty()) {
      return;
    }
    for (Map.Entry<Key, String> d : List.copyOf(table.deferred.entrySet())) {
      TableTicket t = table.tickets.get(d.getKey());
      if (t != null && mayActivate(table, t)) {
        markActive(table, t);
        node.send(d.getValue(), new BakeryMessage.LockActivated(node.term, name, t.key, true));
      }
    }
  }

  // ---------------------------------------------------------------- time

  /*
   * A node's tables hold every name locked in the term, and the time-driven work below (expiries, anti-entropy
   * checks, quiet periods, tidying, the next wake-up) used to walk all of them on every step: its cost per grant grew
   * with every name the node had seen. It now visits only the tables that may have something to do:
   *
   * - a table changes only through a name (table, find, ticket, changing) or a walk that says so (changedAll,
   *   changed): each such name waits for the next tick (pendingTick) and for the end of the step (pendingSettle);
   * - a table nobody changed has something to do only at a moment known in advance: its wake-up (the earliest
   *   expiry, anti-entropy check or end of a quiet period: the same expression as before) or the moment its last
   *   reader is old enough for it to be forgotten. Both are indexed by time, and computed again at the end of every
   *   step for the tables the step changed or visited;
   * - what changes every table's answer (a new term, this leader starting or stopping to act) makes one walk of all.
   *
   * The work done on a visited table is the one done before on every table, in the same name order, so a run goes
   * exactly as before (the simulation digest of the bakery's members and clients is the same line for line); a table
   * not visited would have been left unchanged.
   */

  /** Names changed since the last tick, whose time-driven work runs at the next one. */
  private final Set<String> pendingTick = new HashSet<>();
  /** Names changed or visited in this step, whose wake-up and tidiness are computed again at its end. */
  private final Set<String> pendingSettle = new HashSet<>();
  /** Whether every table may have changed since the last tick (a walk of all that changes some). */
  private boolean allPendingTick = true;
  /** Whether every table may have changed in this step. */
  private boolean allPendingSettle = true;
  /** The term and whether this leader acted, at the last tick and at the last tidy. */
  private long tickTerm = -1;
  private boolean tickActing;
  private long tidyTerm = -1;
  private boolean tidyActing;
  /** Each table's next wake-up and the moment it may be forgotten, by name and in time order. */
  private final Map<String, long[]> moments = new HashMap<>();
  private final TreeSet<Moment> wakes = new TreeSet<>();
  private final TreeSet<Moment> forgets = new TreeSet<>();

  /** A table's moment: by time, then name. */
  private record Moment(long at, String name) implements Comparable<Moment> {
    @Override
    public int compareTo(Moment o) {
      int c = Long.compare(at, o.at);
      return c != 0 ? c : name.compareTo(o.name);
    }
  }

  /** {@code name}'s table, which the caller may change; null if there is none. */
  private Table changing(String name) {
    Table t = tables.get(name);
    if (t != null) {
      changed(name);
    }
    return t;
  }

  /** Marks {@code name}'s table as (possibly) changed: its time-driven work is looked at again. */
  private void changed(String name) {
    pendingTick.add(name);
    pendingSettle.add(name);
    ticketsChanged.accept(name);
  }

  /** Marks every table as (possibly) changed. */
  private void changedAll() {
    allPendingTick = true;
    allPendingSettle = true;
    ticketsChanged.accept(null);
  }

  /** Time-driven table work: owners away for T, stale tickets, expiries, quiet periods that ended. */
  void tick(long settledAt) {
    forgetAbsentOwners();
    Collection<String> names;
    if (allPendingTick || tickTerm != node.term || tickActing != node.acting()) {
      names = tables.keySet();
      allPendingSettle = true;
    } else {
      TreeSet<String> due = new TreeSet<>();
      for (String n : pendingTick) {
        if (tables.containsKey(n)) {
          due.add(n);
        }
      }
      for (Moment m : wakes) {
        if (m.at > node.now) {
          break;
        }
        due.add(m.name);
      }
      pendingSettle.addAll(due);
      names = due;
    }
    allPendingTick = false;
    pendingTick.clear();
    tickTerm = node.term;
    tickActing = node.acting();
    checkStaleTickets(names);
    for (String name : names) {
      Table t = tables.get(name);
      boolean expired = t.tickets.values().removeIf(x -> x.state == State.ACTIVE && x.deadline <= node.now);
      if (expired) {
        dirty.add(name);
        ticketsChanged.accept(name);
      }
      long quiet = t.quietEndAfter(settledAt);
      if (quiet != NONE && quiet <= node.now) {
        dirty.add(name); // a timed-soft writer's quiet period ended since the last step
      }
    }
  }

  /**
   * Drops the waiting tickets and entering records of owner leaders that have been away for T: their owner
   * cannot activate them without this leader or the others, and they would hold every later ticket of their
   * names back for as long as it stays away. Active tickets stay until their deadline, as ever.
   */
  private void forgetAbsentOwners() {
    for (Map.Entry<String, Node.Link> e : node.links.entrySet()) {
      Node.Link l = e.getValue();
      if (l.downSince == NONE || node.now - l.downSince < node.leaseNanos) {
        continue;
      }
      String peer = e.getKey();
      for (Map.Entry<String, Table> te : tables.entrySet()) {
        Table t = te.getValue();
        boolean changed = t.tickets.values().removeIf(k -> {
          boolean drop = k.owner.equals(peer) && k.state != State.ACTIVE;
          if (drop) {
            l.forgotten.add(k.reqKey);
          }
          return drop;
        });
        changed |= t.entering.entrySet().removeIf(en -> en.getValue().equals(peer));
        if (changed) {
          t.deferred.keySet().removeIf(key -> !t.tickets.containsKey(key));
          dirty.add(te.getKey());
          changed(te.getKey());
        }
      }
    }
  }

  /**
   * Anti-entropy: a ticket of another owner that has waited here unchanged for a whole lease is checked with its
   * owner ({@code TicketCheck}), which answers {@code TicketGone} if it dropped it. A drop lost on the way
   * (a link break the ends saw differently, a message kept while this leader did not act) otherwise left a
   * ticket here that held back every ticket behind it for ever. One check per ticket and lease.
   */
  private void checkStaleTickets(Collection<String> names) {
    if (!node.acting()) {
      return;
    }
    long now = node.now;
    for (String name : names) {
      for (TableTicket t : tables.get(name).tickets.values()) {
        if (t.state == State.ACTIVE || t.owner.equals(node.self) || t.key.term() != node.term) {
          continue;
        }
        if (t.since == NONE) {
          t.since = now;
        } else if (now - t.since >= node.leaseNanos) {
          t.since = now; // checked again a lease later, whether it could be asked now or not
          if (node.connected(t.owner) && node.links.get(t.owner).synced) {
            node.send(t.owner, new BakeryMessage.TicketCheck(node.term, name, t.key));
          }
        }
      }
    }
  }

  /** When the tables next have something to do without an input, or {@link Node#NONE}: after {@link #tidy}. */
  long nextWakeUp() {
    return earliest(wakes.isEmpty() ? NONE : wakes.first().at, nextForget());
  }

  /** When {@code t} next has something to do without an input, or {@link Node#NONE}. */
  private long wakeUp(Table t) {
    long next = NONE;
    for (TableTicket k : t.tickets.values()) {
      if (k.state == State.ACTIVE) {
        next = earliest(next, k.deadline);
      } else if (k.since != NONE && node.acting()) {
        next = earliest(next, k.since + node.leaseNanos); // its anti-entropy check
      }
    }
    return earliest(next, t.quietEndAfter(node.now));
  }

  /** When {@link #forgetAbsentOwners} next has something to drop, or {@link Node#NONE}. */
  private long nextForget() {
    long next = NONE;
    for (Map.Entry<String, Node.Link> e : node.links.entrySet()) {
      Node.Link l = e.getValue();
      if (l.downSince == NONE) {
        continue;
      }
      String peer = e.getKey();
      for (Table t : tables.values()) {
        if (t.entering.containsValue(peer)
            || t.tickets.values().stream().anyMatch(k -> k.owner.equals(peer) && k.state != State.ACTIVE)) {
          next = earliest(next, l.downSince + node.leaseNanos);
          break;
        }
      }
    }
    return next;
  }

  /**
   * At the end of a step: forgets the tables that hold nothing a later request could need, and sets the moments of
   * those the step changed or visited.
   */
  void tidy() {
    if (allPendingSettle || tidyTerm != node.term || tidyActing != node.acting()) {
      moments.clear();
      wakes.clear();
      forgets.clear();
      tables.entrySet().removeIf(e -> forgettable(e.getValue()));
      for (Map.Entry<String, Table> e : tables.entrySet()) {
        schedule(e.getKey(), e.getValue());
      }
    } else {
      for (Moment m : forgets) {
        if (m.at > node.now) {
          break;
        }
        pendingSettle.add(m.name);
      }
      for (String name : pendingSettle) {
        Table t = tables.get(name);
        if (t != null && forgettable(t)) {
          tables.remove(name);
          unschedule(name);
        } else if (t != null) {
          schedule(name, t);
        }
      }
    }
    allPendingSettle = false;
    pendingSettle.clear();
    tidyTerm = node.term;
    tidyActing = node.acting();
  }

  /** Whether {@code t} holds nothing a later request could need (the high-water mark lives as long as its term). */
  private boolean forgettable(Table t) {
    return t.tickets.isEmpty() && t.entering.isEmpty() && t.deferred.isEmpty()
        && (t.lastRead == NONE || node.now - t.lastRead > BakerySettings.MAX_DURATION.toNanos())
        && (t.highest == 0 || t.highestTerm != node.term);
  }

  private void schedule(String name, Table t) {
    long wake = wakeUp(t);
    // only the last reader's age can make a table forgettable without a change: the moment it is old enough
    long forget = t.tickets.isEmpty() && t.entering.isEmpty() && t.deferred.isEmpty() && t.lastRead != NONE
        && (t.highest == 0 || t.highestTerm != node.term) ? t.lastRead + BakerySettings.MAX_DURATION.toNanos() + 1 : NONE;
    long[] was = moments.get(name);
    if (was != null && was[0] == wake && was[1] == forget) {
      return;
    }
    unschedule(name);
    moments.put(name, new long[] {wake, forget});
    if (wake != NONE) {
      wakes.add(new Moment(wake, name));
    }
    if (forget != NONE) {
      forgets.add(new Moment(forget, name));
    }
  }

  private void unschedule(String name) {
    long[] m = moments.remove(name);
    if (m != null) {
      if (m[0] != NONE) {
        wakes.remove(new Moment(m[0], name));
      }
      if (m[1] != NONE) {
        forgets.remove(new Moment(m[1], name));
      }
    }
  }

  // ---------------------------------------------------------------- restatements, incarnations, views

  /**
   * A leader's restatement of its own tickets and entering records (§2.5): they replace what this table knew of
   * them, but for active tickets, which stand until they expire here (T after the last renewal seen) or are dropped.
   * An active ticket the sender no longer lists may be held still through another owner (its client relocked it
   * while this link was down, and the renewals of the new owner have not reached this node yet, sim seed 189354), or
   * have been made by the sender's earlier process (261558); removing it let a writer in beside its holder.
   */
  void replaceRestated(String from, BakeryMessage.Restate m, Node.Link l) {
    // by name and key: keys repeat across names (a ticket of another name with the same key kept a dropped
    // one here for ever, sim seed 6551)
    Set<Map.Entry<String, Key>> keys = new LinkedHashSet<>();
    for (Ticket t : m.tickets()) {
      keys.add(Map.entry(t.name(), t.key()));
    }
    Set<ReqKey> entering = new LinkedHashSet<>();
    for (Entering e : m.entering()) {
      entering.add(e.reqKey());
    }
    for (Map.Entry<String, Table> e : tables.entrySet()) {
      Table t = e.getValue();
      if (t.tickets.values().removeIf(k -> k.owner.equals(from) && k.state != State.ACTIVE
          && !keys.contains(Map.entry(e.getKey(), k.key)))
          | t.entering.entrySet().removeIf(en -> en.getValue().equals(from) && !entering.contains(en.getKey()))) {
        dirty.add(e.getKey());
        changed(e.getKey());
      }
    }
    for (Ticket t : m.tickets()) {
      if (t.state() == State.ACTIVE || !l.forgotten.contains(t.reqKey())) {
        mergeTicket(t);
      }
    }
    l.forgotten.clear();
    for (Entering e : m.entering()) {
      table(e.name()).entering.put(e.reqKey(), e.owner());
      dirty.add(e.name());
    }
  }

  /** Drops the tickets of a peer's earlier incarnation's clients: they died with it. */
  void forgetIncarnation(String peer, long old) {
    for (Map.Entry<String, Table> e : tables.entrySet()) {
      if (e.getValue().tickets.values().removeIf(t -> t.reqKey.client().equals(peer)
          && t.reqKey.incarnation() == old)) {
        dirty.add(e.getKey());
        changed(e.getKey());
      }
    }
  }

  /** A new term: tickets that were not active are requested again in it; active ones stay until their deadline. */
  void newView() {
    changedAll();
    for (Map.Entry<String, Table> e : tables.entrySet()) {
      Table table = e.getValue();
      table.entering.clear();
      table.deferred.clear();
      table.tickets.values().removeIf(x -> x.state != State.ACTIVE);
      dirty.add(e.getKey());
    }
  }

  /** What this leader hands over to a new view: its active tickets and when each name last had a reader. */
  void handOver(List<Ticket> tickets, List<Mark> marks) {
    for (Map.Entry<String, Table> e : tables.entrySet()) {
      for (TableTicket k : e.getValue().tickets.values()) {
        if (k.state == State.ACTIVE && k.deadline > node.now) {
          tickets.add(k.wire(e.getKey(), node.now));
        }
      }
      Table table = e.getValue();
      if (table.lastRead != NONE) {
        marks.add(new Mark(e.getKey(), 0, Math.max(0, node.now - table.lastRead)));
      }
    }
  }

  /** Takes over a table handed over by a leader of the previous view, or merged by another new leader. */
  void merge(BakeryMessage.Tables m) {
    for (Ticket t : m.tickets()) {
      mergeTicket(t);
    }
    for (Mark k : m.marks()) {
      if (k.lastReadAgoNanos() >= 0) {
        Table table = table(k.name());
        long at = node.now - k.lastReadAgoNanos();
        table.lastRead = table.lastRead == NONE ? at : Math.max(table.lastRead, at);
      }
    }
  }

  private void mergeTicket(Ticket w) {
    long term = node.term;
    Table table = table(w.name());
    if (w.state() != State.ACTIVE && table.activatedAbove(term, w.key()) && !node.mutations.addBelowActivated) {
      return; // restated below a key activated here: its AddTicket is refused, and its owner draws again
    }
    TableTicket t = table.tickets.get(w.key());
    if (t == null) {
      t = new TableTicket(w.key(), w.reqKey(), w.owner(), w.mode(), w.state(), w.tag());
      if (!table.put(t)) {
        return;
      }
    } else if (w.state().ordinal() > t.state.ordinal()) {
      t.state = w.state();
    }
    if (w.state() == State.ACTIVE) {
      t.deadline = Math.max(t.deadline, node.now + w.remainingNanos());
    }
    if (w.key().term() == term) {
      table.raise(term, w.key());
    }
    dirty.add(w.name());
  }

  // ---------------------------------------------------------------- access

  /** Every name's table, in name order (the caller may change any of them). */
  Map<String, Table> all() {
    changedAll();
    return tables;
  }

  Table table(String name) {
    changed(name);
    return tables.computeIfAbsent(name, k -> new Table());
  }

  /** The table of {@code name}, or null if this leader keeps none. */
  Table find(String name) {
    return changing(name);
  }

  TableTicket ticket(String name, Key key) {
    Table t = changing(name);
    return t == null ? null : t.tickets.get(key);
  }

  /** The ticket {@code key} of {@code name}'s table, or null, for a caller that only reads it (the table is unmarked). */
  TableTicket peek(String name, Key key) {
    Table t = tables.get(name);
    return t == null ? null : t.tickets.get(key);
  }

  /** Marks {@code name}'s table changed: its owners re-evaluate it before the step ends. */
  void touch(String name) {
    dirty.add(name);
  }

  /** Marks every table changed: a new leader re-evaluates all once it is ready. */
  void touchAll() {
    dirty.addAll(tables.keySet());
  }

  /** The names whose table changed, in the order they did; each stays dirty until {@link #clean}. */
  List<String> dirtyNames() {
    return List.copyOf(dirty);
  }

  void clean(String name) {
    dirty.remove(name);
  }

  boolean anyDirty() {
    return !dirty.isEmpty();
  }

  /** The tickets this leader keeps for {@code name}, in key order, as text ({@code key state}). */
  List<String> tickets(String name) {
    Table t = tables.get(name);
    List<String> l = new ArrayList<>();
    if (t != null) {
      for (TableTicket k : t.tickets.values()) {
        l.add(k.key + " " + k.state);
      }
    }
    return l;
  }
}
