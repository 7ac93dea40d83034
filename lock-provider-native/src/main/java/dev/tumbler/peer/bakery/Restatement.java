package dev.tumbler.peer.bakery;

import static dev.tumbler.peer.bakery.Node.NONE;

import dev.tumbler.peer.bakery.BakeryMessage.Entering;
import dev.tumbler.peer.bakery.BakeryMessage.ReqKey;
import dev.tumbler.peer.bakery.BakeryMessage.Ticket;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Links and their restatement (§2.5): the first message on every link that comes up is a {@link
 * BakeryMessage.Restate}, with the sender's requests owned by the receiver and, as an owner leader, its tickets and
 * entering records; it replaces what the receiver knew of them, in each role. Nothing from a peer counts until its
 * restatement on the current link arrived; phase messages it may have missed are sent again then. A peer that
 * restarted (a new incarnation) loses what its earlier process's clients had.
 */
final class Restatement {

  private final Node node;
  private final ClientRole client;
  private final OwnerRole owner;
  private final LeaderTables tables;
  private final HeldMessages held;

  Restatement(Node node, ClientRole client, OwnerRole owner, LeaderTables tables, HeldMessages held) {
    this.node = node;
    this.client = client;
    this.owner = owner;
    this.tables = tables;
    this.held = held;
  }

  void up(String peer) {
    Node.Link l = node.links.get(peer);
    if (l == null) {
      return;
    }
    if (l.up) {
      down(peer);
    }
    l.up = true;
    send(peer, true);
  }

  void down(String peer) {
    Node.Link l = node.links.get(peer);
    if (l != null) {
      if (l.downSince == NONE) {
        l.downSince = node.now;
      }
      l.up = false;
      l.synced = false;
    }
    if (node.acting() && node.isLeader(peer)) {
      owner.leaderDown();
    }
  }

  private void send(String peer, boolean answer) {
    List<BakeryMessage.Lock> pending = new ArrayList<>();
    List<BakeryMessage.Relock> heldLocks = new ArrayList<>();
    client.restate(peer, pending, heldLocks);
    List<Ticket> tickets = new ArrayList<>();
    List<Entering> entering = new ArrayList<>();
    if (node.isLeader(node.self)) {
      owner.restate(tickets, entering);
    }
    node.send(peer, new BakeryMessage.Restate(Math.min(node.term, BakeryMessage.MAX_TERM), node.incarnation, answer,
        pending, heldLocks, tickets, entering));
  }

  void onRestate(String from, BakeryMessage.Restate m) {
    Node.Link l = node.links.get(from);
    if (l.incarnation != NONE && l.incarnation != m.incarnation()) {
      owner.forgetIncarnation(from, l.incarnation);
      tables.forgetIncarnation(from, l.incarnation);
    }
    l.incarnation = m.incarnation();
    l.synced = true;
    l.downSince = NONE;
    // what the peer sent on its earlier link and this node kept for later (not acting yet, or a term ahead)
    // is replaced by this restatement
    held.forget(from);
    // as owner: the client's requests here are exactly those it lists
    Set<ReqKey> listed = new LinkedHashSet<>();
    for (BakeryMessage.Lock k : m.pending()) {
      listed.add(k.reqKey());
    }
    for (BakeryMessage.Relock r : m.held()) {
      listed.add(r.reqKey());
    }
    if (m.answer()) {
      // answered before anything this restatement sets off (a grant sent again, a phase message): the peer
      // counts nothing from this node until this answer arrived, and would drop them
      send(from, false);
    }
    owner.clientRestated(from, listed);
    for (BakeryMessage.Lock k : m.pending()) {
      owner.onLock(from, k);
    }
    for (BakeryMessage.Relock r : m.held()) {
      owner.onRelock(from, r);
    }
    // as leader: the sender's tickets and entering records are exactly those it lists, but for active tickets
    if (m.term() == node.term && node.isLeader(from) && node.isLeader(node.self)) {
      tables.replaceRestated(from, m, l);
    }
    owner.resendPhases(from);
  }
}
