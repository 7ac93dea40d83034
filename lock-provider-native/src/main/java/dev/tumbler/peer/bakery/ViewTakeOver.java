package dev.tumbler.peer.bakery;

import dev.tumbler.peer.bakery.BakeryMessage.Mark;
import dev.tumbler.peer.bakery.BakeryMessage.Ticket;
import dev.tumbler.peer.core.Acks;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Leader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The view take-over (§3.2 "View change and hand-over"): what a new term changes, and how a new leader comes to act
 * in it. On a new term every leader of it is recovering: it asks every connected member for its previous view and
 * table ({@code TablesRequest}); an old leader that answers stops acting below that term. With the tables of a
 * quorum of the previous view's leaders it merges them, passes the merge to the other new leaders, and is ready. A
 * node that knows no previous view is ready at once only when every other member answered that it knows none either
 * (a whole cluster starting: no grant can exist), otherwise after the grace of {@code T + leaderTimeout}, when every
 * grant of the old term it does not know has expired. Only active tickets are handed over; the others are requested
 * again in the new term.
 */
final class ViewTakeOver {

  private final Node node;
  private final LeaderTables tables;
  private final OwnerRole owner;
  private final HeldMessages held;

  private long viewAdoptedAt;
  private long prevTerm;
  private List<Leader> prevLeaders = List.of();
  private final Map<String, BakeryMessage.Tables> answers = new HashMap<>();

  ViewTakeOver(Node node, LeaderTables tables, OwnerRole owner, HeldMessages held) {
    this.node = node;
    this.tables = tables;
    this.owner = owner;
    this.held = held;
  }

  /**
   * The election core's view: a new term is adopted, the same term's leader lease extended, an older one ignored.
   *
   * @return the messages kept for the new term, which the core handles now (empty unless a new term was adopted)
   */
  List<Input.Message<BakeryMessage>> view(long t, List<Leader> list, long until) {
    if (t < node.term) {
      return List.of();
    }
    if (t == node.term) {
      boolean was = node.acting();
      node.activeUntil = until;
      if (!was && node.acting()) {
        // acting again (its leader lease had lapsed): phase messages lost in a break it restated across meanwhile
        // were not sent again then (resendPhases needs it acting), so they go now
        for (Leader l : node.leaders) {
          if (!l.nodeId().equals(node.self) && node.connected(l.nodeId())) {
            owner.resendPhases(l.nodeId());
          }
        }
      }
      return List.of();
    }
    if (node.term > 0) {
      prevTerm = node.term;
      prevLeaders = node.leaders;
    }
    node.term = t;
    node.leaders = List.copyOf(list);
    node.activeUntil = until;
    viewAdoptedAt = node.now;
    held.dropUntilActing();
    answers.clear();
    tables.newView();
    owner.newView();
    // the client side (requests whose owner left the view go to a leader of this one) follows in ClientRole.tick
    node.ready = false;
    List<Input.Message<BakeryMessage>> replay = held.takeAhead(t);
    if (node.isLeader(node.self) && node.term <= BakeryMessage.MAX_TERM) {
      for (String p : node.peers) {
        if (node.connected(p)) {
          node.send(p, new BakeryMessage.TablesRequest(node.term));
        }
      }
      checkRecovered();
    }
    replay.removeIf(m -> ((BakeryMessage.Termed) m.message()).term() != t);
    return replay;
  }

  /** A new leader asks for this node's previous view and, if this node led in it, its table. */
  void onTablesRequest(String from, BakeryMessage.TablesRequest m) {
    if (m.term() < node.term) {
      return;
    }
    long vt = m.term() == node.term ? prevTerm : node.term;
    List<Leader> vl = m.term() == node.term ? prevLeaders : node.leaders;
    if (vt >= m.term() || vt > BakeryMessage.MAX_TERM) {
      return;
    }
    node.retiredBelow = Math.max(node.retiredBelow, m.term());
    boolean led = false;
    for (Leader l : vl) {
      led |= l.nodeId().equals(node.self);
    }
    node.send(from, tablesMessage(m.term(), vt, vt == 0 ? List.of() : vl, false, led));
  }

  void onTables(String from, BakeryMessage.Tables m) {
    if (m.term() != node.term || !node.isLeader(node.self)) {
      return;
    }
    if (m.merged()) {
      tables.merge(m);
      becomeReady(false);
      return;
    }
    answers.put(from, m);
    checkRecovered();
  }

  /** A new leader that could not take the tables over acts once the grace has passed. */
  void checkGrace() {
    if (node.isLeader(node.self) && !node.ready && node.now - viewAdoptedAt >= node.graceNanos
        && node.term <= BakeryMessage.MAX_TERM) {
      becomeReady(false);
    }
  }

  /** When the grace of a new leader that is not ready ends, or {@link Node#NONE}. */
  long nextWakeUp() {
    return node.isLeader(node.self) && !node.ready ? viewAdoptedAt + node.graceNanos : Node.NONE;
  }

  private BakeryMessage.Tables tablesMessage(long t, long vt, List<Leader> vl, boolean merged, boolean withTables) {
    List<Ticket> tickets = new ArrayList<>();
    List<Mark> marks = new ArrayList<>();
    if (withTables) {
      tables.handOver(tickets, marks);
    }
    return new BakeryMessage.Tables(t, vt, vl, merged, tickets, marks);
  }

  /** Whether the tables gathered make this new leader ready (§3.2 "View change and hand-over"). */
  private void checkRecovered() {
    if (node.ready) {
      return;
    }
    long best = prevTerm;
    List<Leader> bestLeaders = prevLeaders;
    for (BakeryMessage.Tables a : answers.values()) {
      if (a.viewTerm() > best) {
        best = a.viewTerm();
        bestLeaders = a.viewLeaders();
      }
    }
    if (best == 0) {
      if (answers.size() == node.peers.size()) {
        becomeReady(true); // every member knows no earlier view: the cluster is starting, no grant exists
      }
      return;
    }
    List<String> from = new ArrayList<>();
    boolean selfCounts = best == prevTerm && Node.containsNode(prevLeaders, node.self);
    if (selfCounts) {
      from.add(node.self);
    }
    for (Map.Entry<String, BakeryMessage.Tables> a : answers.entrySet()) {
      if (a.getValue().viewTerm() == best && Node.containsNode(bestLeaders, a.getKey())) {
        from.add(a.getKey());
      }
    }
    if (from.size() >= Acks.majority(bestLeaders.size())) {
      for (String f : from) {
        if (!f.equals(node.self)) {
          tables.merge(answers.get(f));
        }
      }
      becomeReady(true);
    }
  }

  private void becomeReady(boolean tellOthers) {
    if (node.ready) {
      return;
    }
    node.ready = true;
    answers.clear();
    if (tellOthers) {
      BakeryMessage.Tables merged = tablesMessage(node.term, 0, List.of(), true, true);
      for (Leader l : node.leaders) {
        if (!l.nodeId().equals(node.self)) {
          node.send(l.nodeId(), merged);
        }
      }
    }
    tables.touchAll();
  }
}
