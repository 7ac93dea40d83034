package dev.tumbler.peer.bakery;

import dev.tumbler.peer.bakery.BakeryMessage.ReqKey;
import dev.tumbler.peer.core.Acks;
import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.Output;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * This node as every role of {@link BakeryCore} sees it: who it is and its timing, the clock and the outputs of the
 * step under way, its links to the other members, and the view it acts in. Each role reads these here rather than
 * keeping a copy, so a link that breaks or a view that changes is the same for all of them within a step. Not
 * thread safe, like the core.
 */
final class Node {

  /** No time: a field that is not set, or no wake-up. */
  static final long NONE = Long.MIN_VALUE;

  final String self;
  final Set<String> peers;
  final long leaseNanos;
  final long peerTimeoutNanos;
  /** How long a new leader that cannot take the tables over waits before it acts: {@code T + leaderTimeout}. */
  final long graceNanos;
  final long incarnation;
  final Mutations mutations;

  /** The clock of the step under way. */
  long now;
  /** The outputs of the step under way; null between steps. */
  List<Output<BakeryMessage>> out;
  /** Messages to this node itself, handled before the step ends. */
  final Deque<BakeryMessage> local = new ArrayDeque<>();

  final Map<String, Link> links = new TreeMap<>();

  long term;
  List<Leader> leaders = List.of();
  long activeUntil = NONE;
  /** Whether this node, a leader of {@link #term}, has taken the previous view's tables over. */
  boolean ready;
  /** An old leader that answered a TablesRequest of term t acts in no term below t. */
  long retiredBelow;

  Node(String self, Set<String> peers, long leaseNanos, long peerTimeoutNanos, long graceNanos, long incarnation,
      Mutations mutations) {
    this.self = self;
    this.peers = peers;
    this.leaseNanos = leaseNanos;
    this.peerTimeoutNanos = peerTimeoutNanos;
    this.graceNanos = graceNanos;
    this.incarnation = incarnation;
    this.mutations = mutations;
    for (String p : peers) {
      links.put(p, new Link());
    }
  }

  /** Whether this node acts as a leader now (V-3): a leader of the view, within its lease, its table taken over. */
  boolean acting() {
    return ready && now < activeUntil && term >= retiredBelow && isLeader(self) && term <= BakeryMessage.MAX_TERM;
  }

  boolean isLeader(String id) {
    return id != null && containsNode(leaders, id);
  }

  static boolean containsNode(List<Leader> list, String id) {
    for (Leader l : list) {
      if (l.nodeId().equals(id)) {
        return true;
      }
    }
    return false;
  }

  int slotOf(String id) {
    for (int i = 0; i < leaders.size(); i++) {
      if (leaders.get(i).nodeId().equals(id)) {
        return i;
      }
    }
    throw new IllegalStateException(id + " is not a leader of term " + term);
  }

  int quorum() {
    int l = leaders.size();
    return mutations.quorumOffByOne ? Math.max(1, l / 2) : l / 2 + 1;
  }

  /** The acknowledgements of a phase of this term, counted per distinct leader. */
  Acks newAcks() {
    List<String> ids = new ArrayList<>();
    for (Leader l : leaders) {
      ids.add(l.nodeId());
    }
    return new Acks(term, ids, quorum());
  }

  /** Whether {@code id} is this node or a peer whose link is up and restated: only then does what it says count. */
  boolean connected(String id) {
    if (id.equals(self)) {
      return true;
    }
    Link l = links.get(id);
    return l != null && l.up && l.synced;
  }

  int connectedLeaders() {
    int c = 0;
    for (Leader l : leaders) {
      c += connected(l.nodeId()) ? 1 : 0;
    }
    return c;
  }

  /** The leaders this node cannot reach; with no view yet, every member it cannot reach. */
  Set<String> missingLeaders() {
    Set<String> m = new TreeSet<>();
    if (leaders.isEmpty()) {
      for (String p : peers) {
        if (!connected(p)) {
          m.add(p);
        }
      }
    }
    for (Leader l : leaders) {
      if (!connected(l.nodeId())) {
        m.add(l.nodeId());
      }
    }
    return m;
  }

  void send(String to, BakeryMessage m) {
    if (to.equals(self)) {
      local.add(m); // a local interaction is a call, handled before this step ends, never a message
      return;
    }
    Link l = links.get(to);
    if (l != null && l.up) {
      out.add(new Output.Send<>(to, m));
    }
  }

  void broadcast(BakeryMessage m) {
    for (Leader l : leaders) {
      send(l.nodeId(), m);
    }
  }

  void broadcastOthers(BakeryMessage m) {
    for (Leader l : leaders) {
      if (!l.nodeId().equals(self)) {
        send(l.nodeId(), m);
      }
    }
  }

  static long earliest(long a, long b) {
    return a == NONE ? b : b == NONE ? a : Math.min(a, b);
  }

  /** What this node knows of its link to one peer. */
  static final class Link {
    boolean up;
    boolean synced;
    long incarnation = NONE;
    /** Since when the link has been down, or {@link #NONE} while it is up and restated. */
    long downSince = NONE;
    /**
     * The waiting requests of this peer, as owner leader, that were dropped here because it stayed away for
     * T: they are not taken back from its next restatement (they could come back below grants made meanwhile).
     */
    final Set<ReqKey> forgotten = new LinkedHashSet<>();
  }
}
