package dev.tumbler.peer.election;

import dev.tumbler.peer.core.Leader;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * What a single-server core ({@code lease}, {@code buckets}; NATIVE-ALGORITHMS §5.2, §6.2) takes from the election's
 * view, on both of its sides. The server is {@code leaders[0]} of the latest view; while this node is that server and
 * its leader lease holds, it decides. A node that becomes the server of a term without having served the term
 * before starts afresh, with a grace in which the clients restate what they hold; the grace ends early once every
 * member restated. A client restates to every new server, and on every new link to it, until the server says it took
 * the restatement. Mutable; belongs to one core, stepped with it.
 */
public final class ServerView {

  /** A token's low bits below the term, in the single-server token layouts (Appendix C). */
  public static final int TERM_SHIFT = 37;
  /** The largest term a token can carry: a server of a later term decides nothing. */
  public static final long MAX_TERM = (1L << (63 - TERM_SHIFT)) - 1;

  private final String self;
  private final SortedSet<String> peers;
  private final long graceNanos;
  private final long restateEveryNanos;

  private long viewTerm;
  private String server;
  private long activeUntil = Long.MIN_VALUE;

  private boolean serving;
  private long servingTerm;
  private long graceUntil;
  /** The nodes that restated to this server in its term, with their incarnation: it hears only from those. */
  private final Map<String, Long> restated = new HashMap<>();

  private boolean restatementTaken;
  private long restatementSentAt = Long.MIN_VALUE;

  /** What a new view changed, for the core to act on. */
  public record Change(boolean freshServer, boolean startedServing, boolean stoppedServing, boolean restate) {
    static final Change NONE = new Change(false, false, false, false);
  }

  /**
   * @param self this node
   * @param peers the other members
   * @param graceNanos a new server's grace: the term plus the leader timeout (0 for the no-grace test mutation)
   * @param restateEveryNanos how often an unanswered restatement is sent again
   * @param now the core's first step
   */
  public ServerView(String self, SortedSet<String> peers, long graceNanos, long restateEveryNanos, long now) {
    this.self = Objects.requireNonNull(self, "self");
    this.peers = new TreeSet<>(peers);
    this.graceNanos = graceNanos;
    this.restateEveryNanos = restateEveryNanos;
  }

  /**
   * The election's view of term {@code t}, with this node's leader lease until {@code until} when it leads. An older
   * term changes nothing; the same term moves the lease only.
   */
  public Change view(long now, long t, List<Leader> leaders, long until) {
    if (t < viewTerm) {
      return Change.NONE;
    }
    if (t == viewTerm) {
      activeUntil = self.equals(server) ? until : Long.MIN_VALUE;
      return Change.NONE;
    }
    boolean servedBefore = serving && servingTerm == viewTerm;
    boolean newTerm = t != servingTerm;
    String before = server;
    viewTerm = t;
    server = leaders.isEmpty() ? null : leaders.get(0).nodeId();
    activeUntil = self.equals(server) ? until : Long.MIN_VALUE;
    boolean fresh = false;
    boolean started = false;
    boolean stopped = false;
    if (self.equals(server)) {
      if (!serving || newTerm) {
        if (!servedBefore || servingTerm != t - 1) {
          fresh = true; // what the server before granted is known only to its holders, who restate it
          graceUntil = now + graceNanos;
        }
        serving = true;
        servingTerm = t;
        restated.clear(); // every node restates to the server of a new term
        started = true;
      }
    } else if (serving) {
      serving = false; // another serves: what this node kept is stale from now on
      restated.clear();
      stopped = true;
    }
    boolean restate = !Objects.equals(before, server) || newTerm;
    if (restate) {
      restatementTaken = false;
      restatementSentAt = Long.MIN_VALUE;
    }
    return new Change(fresh, started, stopped, restate);
  }

  // ---- the server side

  /** Whether this node is the server (it may still have to wait for its lease or its grace to decide). */
  public boolean serving() {
    return serving;
  }

  /** The term this node serves (or last served). */
  public long servingTerm() {
    return servingTerm;
  }

  /** When this server's grace ends. */
  public long graceUntil() {
    return graceUntil;
  }

  /**
   * Whether the server may decide now: it is the view's server, its leader lease holds and its links reach a
   * majority of the members (unless {@code ignoreLease}, a test mutation), and its term fits in a token. A server
   * cut off from the majority stops at once rather than at the end of its lease: whatever it grants then, its
   * holders could not renew.
   */
  public boolean deciding(long now, boolean ignoreLease, Set<String> up) {
    if (!serving || servingTerm > MAX_TERM) {
      return false;
    }
    return ignoreLease || now < activeUntil && 2 * (upCount(up) + 1) > peers.size() + 1;
  }

  private int upCount(Set<String> up) {
    int n = 0;
    for (String p : up) {
      if (peers.contains(p)) {
        n++;
      }
    }
    return n;
  }

  /** Whether the server is in its grace: it takes restated grants back and grants nothing new. */
  public boolean inGrace(long now) {
    return now < graceUntil;
  }

  /**
   * Whether the server hears from incarnation {@code inc} of {@code node}: it serves, and that incarnation restated
   * to it in its term (before that, it may lack what the node holds, and the node sends its restatement again).
   */
  public boolean heard(String node, long inc) {
    Long i = restated.get(node);
    return serving && i != null && i == inc;
  }

  /**
   * Whether this server takes a restatement made for {@code term}: it serves, and serves that term. A restatement
   * made in an earlier term may lack a grant of that term still on its way to the node; counted here, it could end
   * the grace while that grant is unknown (lease seed 706552). The node restates again once it sees this term, and
   * from then on takes no grant of an earlier one.
   */
  public boolean takesRestatement(long term) {
    return serving && term == servingTerm;
  }

  /** Incarnation {@code inc} of {@code node} restated to this server: the server hears from it from now on. */
  public void restated(String node, long inc) {
    restated.put(node, inc);
  }

  /**
   * Ends the grace once every member has restated what it holds (call after taking a restatement in): nothing the
   * server before granted is unknown here. Returns whether it ended it now.
   */
  public boolean endGraceIfAllRestated(long now) {
    if (inGrace(now) && restated.containsKey(self) && restated.keySet().containsAll(peers)) {
      graceUntil = now;
      return true;
    }
    return false;
  }

  // ---- the client side

  /** The server of the latest view, or null. */
  public String server() {
    return server;
  }

  /** The term of the latest view. */
  public long term() {
    return viewTerm;
  }

  /** Whether a message from {@code from} about {@code term} comes from the server of this node's view. */
  public boolean fromServer(String from, long term) {
    return from.equals(server) && term == viewTerm;
  }

  /** Whether the server is this node or a peer whose link is up. */
  public boolean reachable(Set<String> up) {
    return server != null && (server.equals(self) || up.contains(server));
  }

  /** The members a request that found no server names: the server, or every peer while there is none. */
  public Set<String> unreachable(Set<String> up) {
    if (server == null) {
      return new TreeSet<>(peers);
    }
    return reachable(up) ? Set.of() : Set.of(server);
  }

  /** The link to the server came up: what went on the old one may be lost, so the restatement goes again. */
  public void linkUp() {
    restatementTaken = false;
  }

  /** The restatement was sent now. */
  public void restatementSent(long now) {
    restatementSentAt = now;
  }

  /** The server of {@code term} took the restatement of incarnation {@code inc} (this node's is {@code ownInc}). */
  public void restatementTaken(String from, long inc, long term, long ownInc) {
    if (from.equals(server) && inc == ownInc && term == viewTerm) {
      restatementTaken = true;
    }
  }

  /** When the unanswered restatement is due again, or {@link Long#MAX_VALUE}. */
  public long restateDue(Set<String> up) {
    return reachable(up) && !restatementTaken ? restatementSentAt + restateEveryNanos : Long.MAX_VALUE;
  }
}
