package dev.tumbler.peer.bakery;

import static dev.tumbler.peer.bakery.Node.NONE;
import static dev.tumbler.peer.bakery.Node.earliest;

import dev.tumbler.peer.bakery.BakeryMessage.Entering;
import dev.tumbler.peer.bakery.BakeryMessage.Key;
import dev.tumbler.peer.bakery.BakeryMessage.ReqKey;
import dev.tumbler.peer.bakery.BakeryMessage.State;
import dev.tumbler.peer.bakery.BakeryMessage.Ticket;
import dev.tumbler.peer.bakery.Run.Phase;
import dev.tumbler.peer.core.Agenda;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Lazy;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The owner role (§3.2 "Owner flow"), which an acting leader runs for the requests clients sent it: each request's
 * run of phases P1 {@code LockEntering}, P2 {@code GetMaxTicket}, P3 {@code AddTicket} (each done at a quorum of
 * distinct leaders), P4 {@code LockExiting}, P5 {@code TicketReady} once every request that was entering has exited,
 * P6 {@code ActivateLock} to a quorum, then {@code Locked} to the client; renewals through {@code RenewTicket};
 * relocked grants it adopts; redraws (a new number) when a ticket cannot be activated where it stands. The tickets
 * themselves live in the {@link LeaderTables}, like every other leader's; this role keeps only where each run stands.
 */
final class OwnerRole {

  private final Node node;
  private final LeaderTables tables;
  /** How long an attempt waits for its owner to act again (a leader lease that lapsed for a moment). */
  private final long attemptPatienceNanos;

  private final Map<ReqKey, Run> runs = new LinkedHashMap<>();
  /**
   * The runs the timer looks at: every run not granted (there are as many as requests in flight), and a granted one
   * only once something could have changed what its tick does (its name's table changed, a renewal waits for this
   * leader to act). A granted run's tick looks for its ticket and for a renewal held back, nothing else, and a
   * granted run never goes back to an earlier phase: so a node holding 100,000 grants no longer walks them all on
   * every settle round, and the runs it visits it visits in the order of before.
   */
  private final Agenda<Run> agenda = new Agenda<>();
  /** Each name's runs, the last added first; the others follow through {@link Run#sameName}. */
  private final Map<String, Run> byName = new HashMap<>();
  /** The largest {@code H} this owner assigned per name in this term, so that it never repeats one. */
  private final Map<String, Long> ownerFloor = new HashMap<>();

  OwnerRole(Node node, LeaderTables tables, long attemptPatienceNanos) {
    this.node = node;
    this.tables = tables;
    this.attemptPatienceNanos = attemptPatienceNanos;
    tables.onTicketsChanged(this::ticketsChanged);
  }

  // ---------------------------------------------------------------- the client's messages

  void onLock(String from, BakeryMessage.Lock m) {
    if (!m.reqKey().client().equals(from)) {
      return;
    }
    Run r = runs.get(m.reqKey());
    if (r != null) {
      if (r.phase == Phase.GRANTED) {
        toClient(r, new BakeryMessage.Locked(r.reqKey, r.key, r.grantEcho)); // the first Locked may be lost
      } else {
        r.heard(m.seq(), node.now);
      }
      return;
    }
    if (m.supersedes() != null) {
      Run old = runs.get(m.supersedes());
      if (old != null) {
        dropRun(old, true);
      }
    }
    r = new Run(m.reqKey(), from, m.name(), m.mode(), m.waitNanos() == 0);
    r.tag = m.tag();
    r.supersedes = m.supersedes();
    r.heard(m.seq(), node.now);
    r.progressAt = node.now;
    addRun(r);
    // an attempt at an owner that cannot act right now (its leader lease lapsed for a moment, a view being
    // taken over) waits up to leaderTimeout for it to act again, then fails UNAVAILABLE (tick): failing
    // it at once turned a busy moment of a healthy cluster into ServiceUnavailable
  }

  void onWaiting(String from, BakeryMessage.Waiting w) {
    Run r = runs.get(w.reqKey());
    if (r != null && r.client.equals(from)) {
      r.heard(w.seq(), node.now);
    } else if (r == null && w.reqKey().client().equals(from)) {
      // the client waits on a request this node no longer has (granted, and expired before the grant
      // reached the client): tell it, or it would wait for ever
      node.send(from, new BakeryMessage.Unlocked(w.reqKey(), "the owner leader " + node.self
          + " no longer knows the request"));
    }
  }

  void onRenew(String from, BakeryMessage.Renew m) {
    Run r = runs.get(m.reqKey());
    if (r == null || !r.client.equals(from)) {
      if (node.acting() && r == null) {
        node.send(from, new BakeryMessage.Unlocked(m.reqKey(), "the owner leader " + node.self
            + " does not know the grant"));
      }
      return;
    }
    r.heard(m.seq(), node.now);
    if (r.phase == Phase.GRANTED && m.key().equals(r.key)) {
      startRenewal(r, m.seq());
    } else if (r.phase == Phase.GRANTED) {
      toClient(r, new BakeryMessage.Unlocked(r.reqKey, "renewal of another ticket"));
    }
  }

  void onRelock(String from, BakeryMessage.Relock m) {
    if (!m.reqKey().client().equals(from)) {
      return;
    }
    Run r = runs.get(m.reqKey());
    if (r != null && r.phase == Phase.GRANTED && r.key.equals(m.key())) {
      r.heard(m.seq(), node.now);
      startRenewal(r, m.seq());
      return;
    }
    if (r != null && r.phase == Phase.ADOPT && r.key.equals(m.key())) {
      // the same relock again (restated): it waits to be adopted as before; dropping it would have told every
      // leader to drop the held lock (a restarted leader did, sim seed 261558, exclusion)
      r.heard(m.seq(), node.now);
      return;
    }
    if (r != null) {
      dropRun(r, true);
    }
    r = new Run(m.reqKey(), from, m.name(), null, false);
    r.phase = Phase.ADOPT;
    r.key = m.key();
    r.heard(m.seq(), node.now);
    r.progressAt = node.now;
    addRun(r);
  }

  void onUnlock(String from, BakeryMessage.Unlock u) {
    Run r = runs.get(u.reqKey());
    if (r != null && r.client.equals(from)) {
      dropRun(r, true);
    }
  }

  // ---------------------------------------------------------------- the other leaders' answers

  void onEntered(String from, BakeryMessage.LockEntered e) {
    Run r = runs.get(e.reqKey());
    if (r != null && r.phase == Phase.ENTERING && node.connected(from) && r.acks.add(e.term(), from)
        && r.acks.reached()) {
      startMaxing(r);
    }
  }

  void onMaxTicket(String from, BakeryMessage.MaxTicket mt) {
    Run r = runs.get(mt.reqKey());
    if (r != null && r.phase == Phase.MAXING && node.connected(from) && r.acks.add(mt.term(), from)) {
      r.maxSeen = Math.max(r.maxSeen, mt.max());
      if (r.acks.reached()) {
        startAdding(r);
      }
    }
  }

  void onTicketAdded(String from, BakeryMessage.TicketAdded a) {
    Run r = runs.get(a.reqKey());
    if (r != null && r.phase == Phase.ADDING && !a.added() && node.connected(from)) {
      redraw(r);
    } else if (r != null && r.phase == Phase.ADDING && node.connected(from) && r.acks.add(a.term(), from)) {
      for (ReqKey k : a.stillEntering()) {
        r.stillEntering = Lazy.add(r.stillEntering, k);
      }
      if (r.acks.reached()) {
        exit(r);
      }
    }
  }

  void onActivated(String from, BakeryMessage.LockActivated a) {
    TableTicket t = tables.peek(a.name(), a.key());
    Run r = t == null ? null : runs.get(t.reqKey);
    if (r == null || r.phase != Phase.ACTIVATING || !r.key.equals(a.key()) || !node.connected(from)) {
      return;
    }
    if (a.granted()) {
      r.refusals = Lazy.remove(r.refusals, from);
      if (r.acks.add(a.term(), from) && r.acks.reached()) {
        grant(r);
      }
    } else {
      r.refusals = Lazy.add(r.refusals, from);
      if (r.refusals.size() > node.leaders.size() - node.quorum()) {
        if (r.attempt) {
          failRun(r, Output.Failure.CONTENDED, "");
        } else if (r.mode.writes() && r.mode.writer() != Claim.Writer.HARD) {
          redraw(r); // refused by a quorum: a later ticket may be known there
        }
      }
    }
  }

  void onTicketRenewed(String from, BakeryMessage.TicketRenewed m) {
    TableTicket t = tables.peek(m.name(), m.key());
    Run run = t == null ? null : runs.get(t.reqKey);
    if (run != null && run.renewAcks != null && node.connected(from) && run.renewAcks.add(m.term(), from)
        && run.renewAcks.reached()) {
      run.renewAcks = null;
      fact(run, "RENEWED");
      toClient(run, new BakeryMessage.Renewed(run.reqKey, run.renewEcho));
    }
  }

  // ---------------------------------------------------------------- the phases

  /** Starts P1 for a run that is waiting for this leader to act. */
  private void startEntering(Run r) {
    long term = node.term;
    r.term = term;
    if (r.supersedes != null) {
      node.broadcastOthers(new BakeryMessage.DropTicket(term, r.name, r.supersedes));
      tables.dropRecords(r.name, r.supersedes);
      r.supersedes = null;
    }
    r.phase = Phase.ENTERING;
    r.progressAt = node.now;
    r.acks = node.newAcks();
    node.broadcast(new BakeryMessage.LockEntering(term, r.reqKey, r.name));
  }

  private void startMaxing(Run r) {
    r.phase = Phase.MAXING;
    r.progressAt = node.now;
    r.acks = node.newAcks();
    r.maxSeen = 0;
    node.broadcast(new BakeryMessage.GetMaxTicket(node.term, r.reqKey, r.name));
  }

  private void startAdding(Run r) {
    long floor = node.mutations.numberFromLiveTickets ? 0 : ownerFloor.getOrDefault(r.name, 0L);
    long h = Math.max(r.maxSeen, floor) + 1;
    if (h > BakeryMessage.MAX_H) {
      failRun(r, Output.Failure.UNAVAILABLE, "ticket numbers of " + r.name + " are exhausted until the next term");
      return;
    }
    ownerFloor.put(r.name, h);
    r.key = new Key(node.term, h, node.slotOf(node.self));
    r.phase = Phase.ADDING;
    r.progressAt = node.now;
    r.acks = node.newAcks();
    r.stillEntering = Set.of();
    fact(r, "ADDED");
    node.broadcast(new BakeryMessage.AddTicket(node.term, ticketOf(r, State.ADDED)));
  }

  /** P4, then P5 if nothing was entering. */
  private void exit(Run r) {
    Table t = tables.table(r.name);
    for (ReqKey k : t.entering.keySet()) {
      if (!k.equals(r.reqKey)) {
        r.stillEntering = Lazy.add(r.stillEntering, k);
      }
    }
    r.stillEntering = Lazy.remove(r.stillEntering, r.reqKey);
    r.phase = Phase.WAIT_READY;
    r.acks = null;
    node.broadcast(new BakeryMessage.LockExiting(node.term, r.reqKey, r.name));
    tables.touch(r.name);
  }

  /** The table of {@code name} changed: its runs waiting for entering requests check again, then P6. */
  void tableChanged(String name) {
    for (Run r : runsOf(name)) {
      if (r.phase == Phase.WAIT_READY && runs.get(r.reqKey) == r) {
        checkReady(r);
      }
    }
    evaluate(name);
  }

  private void checkReady(Run r) {
    Table t = tables.table(r.name);
    if (!node.mutations.skipEnteringWait) {
      for (ReqKey k : r.stillEntering) {
        if (t.entering.containsKey(k)) {
          return;
        }
      }
    }
    r.phase = Phase.READY;
    fact(r, "READY");
    node.broadcast(new BakeryMessage.TicketReady(node.term, r.name, r.key));
  }

  /** P6 at the owner: its READY tickets of {@code name} in key order, each activated when its rule holds. */
  private void evaluate(String name) {
    Table table = tables.find(name);
    if (table == null) {
      return;
    }
    long term = node.term;
    for (TableTicket t : List.copyOf(table.tickets.values())) {
      Run r = runs.get(t.reqKey);
      if (r == null || r.phase != Phase.READY || !t.owner.equals(node.self) || !r.key.equals(t.key)) {
        continue;
      }
      if (t.state == State.ADDED) {
        t.state = State.READY; // our own TicketReady is still in the local queue
      }
      if (tables.rule(table, t) && tables.softBehindLater(table, t)) {
        redraw(r); // a later ticket was added: a soft writer keeps no place, it takes a new number
        continue;
      }
      if (tables.mayActivate(table, t)) {
        tables.markActive(table, t);
        r.phase = Phase.ACTIVATING;
        // the client's window is trusted from a message of its that arrived before the leaders were asked:
        // their agreements expire T after they got ActivateLock, and a later keep-alive's send time could
        // put the window's end after that (sim seed 505507, exclusion)
        r.activationEcho = r.echo;
        r.acks = node.newAcks();
        r.acks.add(term, node.self);
        r.refusals = Set.of();
        if (node.mutations.activateOnOwnTable) {
          grant(r);
          node.broadcastOthers(new BakeryMessage.ActivateLock(term, name, t.key));
        } else {
          node.broadcastOthers(new BakeryMessage.ActivateLock(term, name, t.key));
          if (r.acks.reached()) {
            grant(r);
          }
        }
      } else if (r.attempt) {
        failRun(r, Output.Failure.CONTENDED, "");
      }
    }
  }

  private void grant(Run r) {
    TableTicket t = tables.ticket(r.name, r.key);
    if (t != null) {
      t.state = State.ACTIVE;
      t.deadline = Math.max(t.deadline, node.now + node.leaseNanos);
    }
    r.phase = Phase.GRANTED;
    r.acks = null;
    r.grantEcho = r.activationEcho;
    fact(r, "ACTIVE");
    toClient(r, new BakeryMessage.Locked(r.reqKey, r.key, r.grantEcho));
  }

  private void startRenewal(Run r, long echo) {
    if (!node.acting()) {
      r.renewWanted = echo;
      agenda.watch(r);
      return;
    }
    TableTicket t = tables.ticket(r.name, r.key);
    if (t == null || t.state != State.ACTIVE) {
      dropRun(r, true);
      toClient(r, new BakeryMessage.Unlocked(r.reqKey, "the grant expired at the owner leader " + node.self));
      return;
    }
    t.deadline = Math.max(t.deadline, node.now + node.leaseNanos);
    r.renewWanted = 0;
    r.renewEcho = echo;
    r.renewAcks = node.newAcks();
    r.renewAcks.add(node.term, node.self);
    node.broadcastOthers(new BakeryMessage.RenewTicket(node.term, r.name, r.key));
    if (r.renewAcks.reached()) {
      r.renewAcks = null;
      toClient(r, new BakeryMessage.Renewed(r.reqKey, echo));
    }
  }

  /** A relocked grant, once this leader acts: adopt the active ticket, or refuse it. */
  private void adopt(Run r) {
    TableTicket t = tables.ticket(r.name, r.key);
    if (t == null || t.state != State.ACTIVE || !t.reqKey.equals(r.reqKey)) {
      removeRun(r);
      toClient(r, new BakeryMessage.Unlocked(r.reqKey, "the leaders of term " + node.term
          + " do not know the grant"));
      return;
    }
    t.owner = node.self;
    r.mode = t.mode;
    r.tag = t.tag;
    r.phase = Phase.GRANTED;
    r.grantEcho = r.echo;
    startRenewal(r, r.echo);
  }

  /** Drops the run's ticket everywhere and runs it again from P1, for a larger number. */
  private void redraw(Run r) {
    fact(r, "REDRAWN");
    node.broadcastOthers(new BakeryMessage.DropTicket(node.term, r.name, r.reqKey));
    tables.dropRecords(r.name, r.reqKey);
    r.phase = Phase.NEW;
    r.key = null;
    r.acks = null;
    r.refusals = Set.of();
    r.stillEntering = Set.of();
    startEntering(r);
  }

  private void failRun(Run r, Output.Failure failure, String detail) {
    dropRun(r, true);
    toClient(r, new BakeryMessage.LockFailed(r.reqKey, failure, detail));
  }

  /** Forgets a run and every record of its request; tells the other leaders when {@code tell}. */
  private void dropRun(Run r, boolean tell) {
    removeRun(r);
    if (r.key != null) {
      fact(r, "DROPPED");
    }
    tables.dropRecords(r.name, r.reqKey);
    long term = node.term;
    if (tell && node.isLeader(node.self) && term > 0 && term <= BakeryMessage.MAX_TERM) {
      node.broadcastOthers(new BakeryMessage.DropTicket(term, r.name, r.reqKey));
    }
  }

  // ---------------------------------------------------------------- time

  /** Time-driven owner work: silent clients, runs waiting to start, renewals held back, attempts out of patience. */
  void tick() {
    agenda.visit(node.now, this::tick);
  }

  private void tick(Run r) {
    long now = node.now;
    if (r.phase == Phase.GRANTED) {
      TableTicket t = tables.peek(r.name, r.key);
      if (t == null) {
        removeRun(r); // expired here: the client's window closed before
        fact(r, "DROPPED");
      } else if (r.renewWanted > 0 && node.acting()) {
        startRenewal(r, r.renewWanted);
      }
    } else if (r.attempt && r.phase == Phase.NEW && !node.acting() && now - r.progressAt >= attemptPatienceNanos) {
      failRun(r, Output.Failure.UNAVAILABLE, notActing()); // not back within leaderTimeout: not a busy moment
    } else if (now - r.lastHeard >= node.leaseNanos) {
      dropRun(r, true); // the client went silent for T: it died
    } else if (r.attempt && r.needsLeaders() && now - r.progressAt >= node.peerTimeoutNanos) {
      failRun(r, Output.Failure.UNAVAILABLE, !node.acting() ? notActing() : "no quorum of the leaders of term "
          + node.term + " answered within peerTimeout" + (r.acks == null ? "" : ", missing " + r.acks.missing()));
    } else if (r.asksLeaders() && now - r.progressAt >= node.peerTimeoutNanos && node.acting()) {
      // a wait is not failed here: it waits out a hand-over or an election, and its client ends it at its deadline
      // or once its own node can tell that no quorum can form (ClientRole.tick); the leaders are asked again
      askAgain(r);
    } else if (node.acting()) {
      if (r.phase == Phase.NEW) {
        startEntering(r);
      } else if (r.phase == Phase.ADOPT) {
        adopt(r);
      } else if (r.waiting() && r.term == node.term && tables.peek(r.name, r.key) == null) {
        // its ticket left this table (an activation that found no quorum for T expired here): a late
        // LockActivated would find nothing to count, so it draws a new number instead of waiting for ever
        redraw(r);
      }
    }
    if (r.phase == Phase.GRANTED && r.renewWanted == 0 && runs.get(r.reqKey) == r) {
      agenda.rest(r, Agenda.NONE); // until its table changes or a renewal waits
    }
  }

  /**
   * A waiting run that has had no answer it needs for {@code peerTimeout} while this leader acts: its phase message
   * goes again to the connected leaders that have not answered (one may have been lost in a break that this node
   * restated across while it could not act). It was failed here once, which ended a wait in a healthy cluster.
   */
  private void askAgain(Run r) {
    r.progressAt = node.now;
    BakeryMessage m = r.term == node.term && r.acks != null ? phaseMessage(r) : null;
    if (m == null) {
      return;
    }
    for (String p : r.acks.missing()) {
      if (!p.equals(node.self) && node.connected(p)) {
        node.send(p, m);
      }
    }
  }

  /** When the owner next has something to do without an input, or {@link Node#NONE}. */
  long nextWakeUp() {
    return agenda.earliest(r -> {
      long next = NONE;
      if (r.phase != Phase.GRANTED) {
        next = earliest(next, r.lastHeard + node.leaseNanos);
      }
      if (r.attempt && r.phase == Phase.NEW) {
        next = earliest(next, r.progressAt + attemptPatienceNanos);
      }
      if (r.attempt ? r.needsLeaders() : r.asksLeaders() && node.acting()) {
        next = earliest(next, r.progressAt + node.peerTimeoutNanos);
      }
      return next;
    }, NONE);
  }

  // ---------------------------------------------------------------- links, restatements, views

  /**
   * A leader's link went down. The other leaders drop this node's waiting tickets once it has been away from them
   * for T (they would block every later ticket for as long as it stays away); a ticket it would restate after that
   * could come back below grants made meanwhile. So a waiting ticket whose number a leader may lose is drawn again
   * now, with the leaders still reachable.
   */
  void leaderDown() {
    for (Run r : List.copyOf(runs.values())) {
      if (runs.containsKey(r.reqKey) && r.waiting()) {
        redraw(r);
      }
    }
  }

  /** Phase messages {@code peer} may have lost in a break: sent again once its restatement arrived. */
  void resendPhases(String peer) {
    if (!node.acting() || !node.isLeader(peer)) {
      return;
    }
    for (Run r : runs.values()) {
      if (r.term != node.term || r.acks == null || r.acks.missing().isEmpty() || !r.acks.missing().contains(peer)) {
        if (r.renewAcks != null && r.renewAcks.missing().contains(peer)) {
          node.send(peer, new BakeryMessage.RenewTicket(node.term, r.name, r.key));
        }
        continue;
      }
      BakeryMessage m = phaseMessage(r);
      if (m != null) {
        node.send(peer, m);
      }
    }
  }

  /** The message of the phase {@code r} waits for answers to, or null when it waits for none. */
  private BakeryMessage phaseMessage(Run r) {
    long term = node.term;
    return switch (r.phase) {
      case ENTERING -> new BakeryMessage.LockEntering(term, r.reqKey, r.name);
      case MAXING -> new BakeryMessage.GetMaxTicket(term, r.reqKey, r.name);
      case ADDING -> new BakeryMessage.AddTicket(term, ticketOf(r, State.ADDED));
      case ACTIVATING -> new BakeryMessage.ActivateLock(term, r.name, r.key);
      default -> null;
    };
  }

  /** What this node restates as an owner leader: its tickets and entering records, in every name's table. */
  void restate(List<Ticket> tickets, List<Entering> entering) {
    String self = node.self;
    for (Map.Entry<String, Table> e : tables.all().entrySet()) {
      for (TableTicket t : e.getValue().tickets.values()) {
        if (t.owner.equals(self)) {
          Ticket w = t.wire(e.getKey(), node.now);
          Run r = runs.get(t.reqKey);
          if (w.state() == State.ACTIVE && r != null && r.phase == Phase.ACTIVATING) {
            // marked active here while its activation waits for a quorum: restated as active, the peer
            // would take it as agreed and answer its ActivateLock with true whatever its own table holds
            w = new Ticket(w.name(), w.key(), w.reqKey(), w.owner(), w.mode(), State.READY, 0, w.tag());
          }
          tickets.add(w);
        }
      }
      for (Map.Entry<ReqKey, String> en : e.getValue().entering.entrySet()) {
        if (en.getValue().equals(self)) {
          entering.add(new Entering(e.getKey(), en.getKey(), self));
        }
      }
    }
  }

  /** A client restated its requests here: the runs of its requests that it no longer lists end. */
  void clientRestated(String from, Set<ReqKey> listed) {
    for (Run r : List.copyOf(runs.values())) {
      if (r.client.equals(from) && !listed.contains(r.reqKey)) {
        if (r.phase == Phase.GRANTED || r.phase == Phase.ADOPT) {
          // the client moved the lock to another owner (a renewal relock while this link was down) or released
          // it and the Unlock was lost with the link: this node stops owning it, but the ticket stays active in
          // every table until it expires or its new owner renews it; dropping it everywhere here once let a
          // reader in while the writer still held the lock through its new owner (sim seed 128), and so did
          // dropping a relock not adopted yet, which the client had moved on to another owner meanwhile (39176)
          removeRun(r);
        } else {
          dropRun(r, true);
        }
      }
    }
  }

  /**
   * Drops the runs of a peer's earlier incarnation: its clients died with it. The grants its earlier process made as
   * an owner stand (a restatement removes no active ticket): they expire, or their clients relock them (sim seed
   * 261558, exclusion).
   */
  void forgetIncarnation(String peer, long old) {
    for (Run r : List.copyOf(runs.values())) {
      if (r.client.equals(peer) && r.reqKey.incarnation() == old) {
        dropRun(r, true);
      }
    }
  }

  /**
   * A new term: phases in flight are abandoned and started again in it, after dropping what the old one left; a
   * node that no longer leads drops every run (its clients relock with a leader of the new view).
   */
  void newView() {
    ownerFloor.clear();
    boolean leader = node.isLeader(node.self);
    for (Run r : List.copyOf(runs.values())) {
      if (!leader) {
        removeRun(r);
      } else if (r.phase != Phase.GRANTED && r.phase != Phase.ADOPT) {
        if (r.key != null || r.phase != Phase.NEW) {
          r.supersedes = r.reqKey;
        }
        r.phase = Phase.NEW;
        r.progressAt = node.now;
        r.key = null;
        r.acks = null;
        r.refusals = Set.of();
        r.stillEntering = Set.of();
      } else if (r.phase == Phase.GRANTED) {
        r.renewAcks = null;
      }
    }
  }

  // ---------------------------------------------------------------- helpers

  private void addRun(Run r) {
    runs.put(r.reqKey, r);
    r.sameName = byName.put(r.name, r);
    agenda.add(r);
  }

  private void removeRun(Run r) {
    if (runs.get(r.reqKey) != r) {
      return;
    }
    runs.remove(r.reqKey);
    agenda.remove(r);
    Run first = byName.get(r.name);
    if (first == r) {
      if (r.sameName == null) {
        byName.remove(r.name);
      } else {
        byName.put(r.name, r.sameName);
      }
    } else {
      for (Run p = first; p != null; p = p.sameName) {
        if (p.sameName == r) {
          p.sameName = r.sameName;
          break;
        }
      }
    }
    r.sameName = null;
  }

  /** The runs of {@code name}, in the order they came. */
  private List<Run> runsOf(String name) {
    List<Run> of = new ArrayList<>(2);
    for (Run r = byName.get(name); r != null; r = r.sameName) {
      of.add(r);
    }
    if (of.size() > 1) {
      of.sort(Comparator.comparingLong(Run::order));
    }
    return of;
  }

  /** The tickets of {@code name} changed (null: of every name): its granted runs look for theirs again. */
  private void ticketsChanged(String name) {
    if (name == null) {
      runs.values().forEach(agenda::watch);
    } else {
      for (Run r = byName.get(name); r != null; r = r.sameName) {
        agenda.watch(r);
      }
    }
  }

  private String notActing() {
    return "the owner leader " + node.self + " is not an active bakery leader now ("
        + (!node.isLeader(node.self) ? "not a leader of term " + node.term
            : !node.ready ? "taking over term " + node.term : "its leader lease has lapsed") + ")";
  }

  private Ticket ticketOf(Run r, State state) {
    return new Ticket(r.name, r.key, r.reqKey, node.self, r.mode, state, 0, r.tag);
  }

  private void toClient(Run r, BakeryMessage m) {
    node.send(r.client, m);
  }

  private void fact(Run r, String state) {
    node.out.add(new Output.Fact<>(new Observation.Ticket(r.name, (r.key == null ? "-" : r.key.toString()) + " "
        + r.reqKey, state)));
  }
}
