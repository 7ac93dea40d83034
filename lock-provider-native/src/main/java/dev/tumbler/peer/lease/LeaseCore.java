package dev.tumbler.peer.lease;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.ProtocolCore;
import dev.tumbler.peer.core.QuorumWatch;
import dev.tumbler.peer.election.ServerView;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.random.RandomGenerator;

/**
 * The {@code lease} core (seed 001, NATIVE-ALGORITHMS §5): a lock service of leases on one elected server,
 * {@code leaders[0]} of the node's view, with locks cached on the client nodes and recalled. Every node runs it for
 * its clients; the node that leads also serves. Pure, like every core.
 *
 * <p><b>Server.</b> While this node is the view's server and its leader lease holds, it grants a free lock to the
 * first request that waits for it, as a lease of term {@code T} with a token {@code term·2^37 + counter·2^13}, larger
 * than every token of earlier terms and of this one. Requests for a held lock wait in arrival order, and the holder
 * is recalled, again every {@code recallInterval} while any waits (001:24). A lease not renewed for {@code T} ends
 * (001:22). A cached lease whose renewal comes while someone waits is not renewed: the waiter gets the lock (001:16).
 * A node that becomes the server of a new term without having served the one before starts with a grace of
 * {@code T + leaderTimeout} in which the clients restate what they hold: it takes those leases back, with their
 * tokens, and grants nothing new (S-8). The grace ends early once every member has restated.
 *
 * <p><b>Clients.</b> A node has at most one lease a name, shared by its sessions. A request goes to the server (a
 * call when this node is the server); a grant is trusted from the moment the message it answers was sent, for
 * {@code 3/4} of the term (the echo rule). When the request that holds the lease releases it, the node keeps it,
 * cached (001:16), renewing it itself every half term as inactive; a later request of the node takes it at once,
 * with no message, under the token of its grant plus one more each time (C-1). A recall gives a cached lease back
 * at once, and an active one when its request releases it (C-7, C-4). When the server changes, or its link comes up,
 * the node restates its leases and waiting requests to it. A request waits while no server is reachable, is not
 * elected yet, or is in its grace: that is a failover, and it rides it out. It fails ({@link Output.Failure#UNAVAILABLE})
 * only when the node can tell that no quorum can form around it ({@link QuorumWatch}: fewer members connected than an
 * election needs, for {@code peerTimeout}); a single attempt fails at once when no server is reachable.
 */
public final class LeaseCore implements ProtocolCore<LeaseMessage> {

  /** The name of the algorithm. */
  public static final String ALGORITHM = "lease";

  static final long TIMER = 1;
  private static final long NONE = Long.MAX_VALUE;
  /** A token's low bits: the local re-grants of a cached lease. */
  static final int LOCAL_BITS = 13;
  /** The server grants of a term a token can tell apart. */
  static final long MAX_COUNTER = (1L << (ServerView.TERM_SHIFT - LOCAL_BITS)) - 1;
  /** The local re-grants of one lease; at this many the lease goes back and the node asks anew (C-1). */
  static final int MAX_LOCAL = (1 << LOCAL_BITS) - 1;
  private static final long NO_LEASE = -1;

  /**
   * Test-only mutation: the client trusts a grant or renewal for a whole term from when it receives it, not for
   * {@code 3T/4} from when it sent what it answers (the naive reading of 001:44, with the margin dropped): a holder cut
   * off trusts its lease past the server's term.
   */
  boolean mutationTrustFromReceipt;
  /** Test-only mutation: the server gives the lock to the waiter as soon as it recalls it, without the reply. */
  boolean mutationGrantOnRecall;
  /** Test-only mutation: a new server grants at once, with no grace for the holders of the one before. */
  boolean mutationNoGrace;
  /** Test-only mutation: a cached lease is granted locally while its inactive renewal is in flight. */
  boolean mutationLocalGrantDuringInactiveRenew;
  /**
   * Test-only mutation: a lease whose holder's window closed goes back to the server in the step that tells the loss,
   * so that another node may be granted it while the holder's lost listeners still run.
   */
  public boolean mutationGiveBackOnLoss;
  /** Test-only mutation: the server decides whether or not its leader lease holds. */
  boolean mutationServeWithoutLeaderLease;

  /** For checkers (the simulator): counts the grants of every core it is given to, from a cache and from a server. */
  public LongAdder[] grantCounts;

  /**
   * A renewal unanswered for this fraction of a term is sent again. A new server that took a node's restatement before
   * its leader lease was active renewed nothing, and the lease ran out while the renewal asked of the server before
   * waited for an answer that could not come (a thin client's TCK, the server cut off by a partition).
   */
  static final int RENEW_RETRY = 12;

  private final String self;
  private final SortedSet<String> peers;
  private final long term;
  private final long trust;
  private final long peerTimeout;
  private final long leaderTimeout;
  private final long recallInterval;
  private final boolean cache;
  /** This core's incarnation: its leases are not those of an earlier life of the node. */
  private final long inc;

  private long now;
  private long startNow = Long.MIN_VALUE;
  private List<Output<LeaseMessage>> out;
  private final Deque<Local> local = new ArrayDeque<>();
  private final Set<String> up = new HashSet<>();
  private long timerAt = NONE;
  /** The view: who serves, whether this node does, its grace, and this node's restatement to the server. */
  private ServerView view;
  /** Whether a quorum can still form around this node: what ends waits early. */
  private final QuorumWatch quorum;

  // ---- the server role
  private long counter;
  private final Map<String, SLock> locks = new TreeMap<>();

  // ---- the client role
  private final Map<String, Helper> helpers = new TreeMap<>();
  private final Map<Long, CReq> reqs = new LinkedHashMap<>();
  /** Holder queries asked of the server, by id: the name and when asked. */
  private final Map<Long, Query> queries = new LinkedHashMap<>();
  private long localGrants;
  private long serverGrants;

  private record Local(String from, LeaseMessage message) {}

  private record Query(String name, long askedAt) {}

  /** A lease the server gave out: the node and incarnation holding it, the request it was granted to. */
  private static final class Holder {
    final String node;
    final long inc;
    final long leaseId;
    final long token;
    /** The request it was granted for, or -1 for one taken back from a restatement. */
    final long reqId;
    final long echo;
    boolean active;
    /** The tag of the request that uses it, as the holder last said. */
    String tag;
    long expiry;

    Holder(String node, long inc, long leaseId, long token, long reqId, long echo, boolean active, String tag,
        long expiry) {
      this.node = node;
      this.inc = inc;
      this.leaseId = leaseId;
      this.token = token;
      this.reqId = reqId;
      this.echo = echo;
      this.active = active;
      this.tag = tag;
      this.expiry = expiry;
    }

    boolean of(String node, long inc, long leaseId) {
      return this.node.equals(node) && this.inc == inc && this.leaseId == leaseId;
    }
  }

  private static final class SWait {
    final String node;
    final long inc;
    final long reqId;
    final boolean attempt;
    final String tag;
    /** Until when an attempt waits for the holder's answer to a recall. */
    final long deadline;
    long echo;
    long lastHeard;

    SWait(String node, long inc, long reqId, boolean attempt, String tag, long deadline, long echo, long lastHeard) {
      this.node = node;
      this.inc = inc;
      this.reqId = reqId;
      this.attempt = attempt;
      this.tag = tag;
      this.deadline = deadline;
      this.echo = echo;
      this.lastHeard = lastHeard;
    }

    boolean is(String node, long inc, long reqId) {
      return this.node.equals(node) && this.inc == inc && this.reqId == reqId;
    }
  }

  /** One lock on the server. */
  private static final class SLock {
    final String name;
    Holder holder;
    final Deque<SWait> queue = new ArrayDeque<>();
    long nextRecallAt = Long.MIN_VALUE;

    SLock(String name) {
      this.name = name;
    }
  }

  /** A node's lease of one name, shared by its sessions (the seed's helper, 001:8). */
  private static final class Helper {
    final String name;
    long leaseId = NO_LEASE;
    long serverToken;
    int localGen;
    /** When the message the last grant or renewal answered was sent: the lease is trusted from then. */
    long anchor = Long.MIN_VALUE;
    /** The request that holds the lease now; null while it is cached. */
    CReq active;
    boolean recallPending;
    /** When the inactive renewal in flight was sent, or {@link #NONE}. */
    long inactiveRenewSentAt = NONE;
    /**
     * The largest lease of the name this node gave back or disowned: a grant of it, or of an older one, that
     * arrives later is stale (a later grant to this node has a larger token), even for a request that waits.
     */
    long givenBack = NO_LEASE;
    /**
     * While not {@link #NONE}: the request that held the lease was told it lost it (its window closed), and the node
     * keeps the lease, unused, until then, a quarter term on, before it gives it back: the holder's lost listeners run
     * before the server can give the lock to another node, as the server's own term would have it (DESIGN's lease rule).
     */
    long lapseUntil = NONE;

    Helper(String name) {
      this.name = name;
    }

    boolean leased() {
      return leaseId != NO_LEASE;
    }
  }

  private enum State { WAITING, HELD }

  private static final class CReq {
    final long id;
    final String session;
    final Claim claim;
    final String name;
    final boolean attempt;
    State state = State.WAITING;
    long token;
    long lastSent;
    long validUntil;
    boolean renewAsked;
    /** When the pending renewal was last sent: it is sent again every {@link #RENEW_RETRY} of a term unanswered. */
    long renewSentAt;

    CReq(long id, String session, Claim claim, boolean attempt) {
      this.id = id;
      this.session = session;
      this.claim = claim;
      this.name = claim.name();
      this.attempt = attempt;
    }
  }

  /**
   * @param self this node's id
   * @param peers the other members
   * @param leaseNanos the term of a lease ({@code T})
   * @param peerTimeoutNanos how long the node may have fewer members connected than a quorum needs before its waits
   *     fail
   * @param leaderTimeoutNanos the election's leader timeout: a new server's grace is {@code T} plus it
   * @param recallIntervalNanos how often a holder is recalled while someone waits
   * @param cache whether a released lock stays on its node (else it goes back to the server at once)
   * @param random the source of this core's incarnation
   */
  public LeaseCore(String self, List<String> peers, long leaseNanos, long peerTimeoutNanos, long leaderTimeoutNanos,
      long recallIntervalNanos, boolean cache, RandomGenerator random) {
    this.self = Objects.requireNonNull(self, "self");
    this.peers = ProtocolCore.otherMembers(self, peers);
    if (leaseNanos <= 0) {
      throw new IllegalArgumentException("a lease has a term: leaseNanos " + leaseNanos);
    }
    if (peerTimeoutNanos <= 0 || leaderTimeoutNanos <= 0 || recallIntervalNanos <= 0) {
      throw new IllegalArgumentException("peerTimeout, leaderTimeout and recallInterval must be positive: "
          + peerTimeoutNanos + ", " + leaderTimeoutNanos + ", " + recallIntervalNanos);
    }
    this.term = leaseNanos;
    this.trust = leaseNanos / 4 * 3 + leaseNanos % 4 * 3 / 4;
    this.peerTimeout = peerTimeoutNanos;
    this.leaderTimeout = leaderTimeoutNanos;
    this.recallInterval = recallIntervalNanos;
    this.cache = cache;
    this.inc = random.nextLong() & Long.MAX_VALUE;
    this.quorum = new QuorumWatch(this.peers, peerTimeoutNanos);
  }

  @Override
  public String self() {
    return self;
  }

  @Override
  public String algorithm() {
    return ALGORITHM;
  }

  /** Whether this node serves as the server now (for statistics and tests). */
  public boolean serving() {
    return view != null && view.deciding(now, false, up);
  }

  /** Grants this node's clients took from a cached lease, with no message (for statistics and the simulator). */
  public long localGrants() {
    return localGrants;
  }

  /** Grants this node's clients took from the server. */
  public long serverGrants() {
    return serverGrants;
  }

  /** Whether the server side of this node lists {@code node} as the holder of {@code name}, and whether active. */
  Boolean holderActive(String name, String node) {
    SLock l = locks.get(name);
    return l == null || l.holder == null || !l.holder.node.equals(node) ? null : l.holder.active;
  }

  @Override
  public List<Output<LeaseMessage>> step(long now, Input<LeaseMessage> input) {
    Objects.requireNonNull(input, "input");
    this.now = now;
    if (startNow == Long.MIN_VALUE) {
      startNow = now;
      view = new ServerView(self, peers, mutationNoGrace ? 0 : term + leaderTimeout, term / 3, now);
    }
    out = new ArrayList<>();
    try {
      expireAllDue();
      switch (input) {
        case Input.Message<LeaseMessage> m -> {
          if (peers.contains(m.from())) {
            local.add(new Local(m.from(), m.message()));
          }
        }
        case Input.TimerFired<LeaseMessage> t -> {
          if (t.timerId() == TIMER) {
            timerAt = NONE;
            tick();
          }
        }
        case Input.Start<LeaseMessage> s -> { }
        case Input.Leave<LeaseMessage> l -> { } // what it holds and serves ends by the rules of a crash
        case Input.PeerUp<LeaseMessage> u -> peerUp(u.peer());
        case Input.PeerDown<LeaseMessage> d -> {
          if (peers.contains(d.peer())) {
            up.remove(d.peer());
          }
        }
        case Input.View<LeaseMessage> v -> view(v.term(), v.leaders(), v.activeUntil());
        case Input.Acquire<LeaseMessage> a -> acquire(a);
        case Input.Release<LeaseMessage> r -> release(r.requestId());
        case Input.Cancel<LeaseMessage> c -> cancel(c.requestId());
        case Input.Renew<LeaseMessage> r -> renew(r.requestId());
        case Input.CloseSession<LeaseMessage> s -> closeSession(s.session());
        case Input.HolderQuery<LeaseMessage> q -> holderQuery(q);
        case Input.PermitsQuery<LeaseMessage> q -> out.add(Output.Permits.unknown(q)); // semaphores: buckets
        case Input.Begin<LeaseMessage> b -> out.add(new Output.TxAborted<>(b.txId(), Output.Failure.UNAVAILABLE,
            Set.of(), "the " + ALGORITHM + " core serves no transactions"));
        case Input.End<LeaseMessage> e -> { }
      }
      drain();
      settle();
      return out;
    } finally {
      out = null;
    }
  }

  private void drain() {
    while (!local.isEmpty()) {
      Local l = local.poll();
      receive(l.from, l.message);
    }
  }

  private void receive(String from, LeaseMessage m) {
    switch (m) {
      case LeaseMessage.Acquire a -> {
        if (view.heard(from, a.inc())) {
          request(from, a.inc(), a.reqId(), a.name(), a.attempt(), a.tag(), a.echo());
        }
      }
      case LeaseMessage.WhoHolds q -> serverWhoHolds(from, q);
      case LeaseMessage.Holds h -> clientHolds(from, h);
      case LeaseMessage.Cancel c -> serverCancel(from, c);
      case LeaseMessage.Renew r -> serverRenew(from, r);
      case LeaseMessage.RecallReply r -> serverRecallReply(from, r);
      case LeaseMessage.Release r -> serverRelease(from, r);
      case LeaseMessage.Restate r -> serverRestate(from, r);
      case LeaseMessage.Restated r -> view.restatementTaken(from, r.inc(), r.term(), inc);
      case LeaseMessage.Grant g -> clientGrant(from, g);
      case LeaseMessage.Busy b -> clientBusy(from, b);
      case LeaseMessage.Renewed r -> clientRenewed(from, r);
      case LeaseMessage.RenewDenied d -> clientRenewDenied(from, d);
      case LeaseMessage.Recall r -> clientRecall(from, r);
      case LeaseMessage.Revoked r -> clientRevoked(from, r);
    }
  }

  // ================================================================ the view

  private void view(long t, List<Leader> leaders, long until) {
    if (t < view.term()) {
      return;
    }
    ServerView.Change c = view.view(now, t, leaders, until);
    if (c.freshServer() || c.stoppedServing()) {
      locks.clear(); // a new server learns the leases from their holders; a former one forgets its stale table
    }
    if (c.startedServing()) {
      counter = 0;
      out.add(new Output.Fact<>(new Observation.Serving(self, view.servingTerm(), view.graceUntil())));
    }
    if (c.restate()) {
      restateToServer();
    }
    serveAll();
  }

  private boolean deciding() {
    return view.deciding(now, mutationServeWithoutLeaderLease, up);
  }

  private boolean granting() {
    return deciding() && !view.inGrace(now);
  }

  // ================================================================ the server

  /**
   * Request {@code reqId} of incarnation {@code inc} of {@code from} for {@code name} (S-1): granted when the lock is
   * free and nobody waits; else it waits, and the holder is recalled. An attempt waits only for the answer to that
   * recall: a lock cached on another node is free to the application, so it is recalled rather than refused. The same
   * request again is a keep-alive.
   */
  private void request(String from, long inc, long reqId, String name, boolean attempt, String tag, long echo) {
    SLock l = locks.computeIfAbsent(name, SLock::new);
    if (again(l, from, inc, reqId, echo)) {
      return;
    }
    if (attempt && (!granting() || !l.queue.isEmpty())) {
      sendTo(from, new LeaseMessage.Busy(view.servingTerm(), reqId, name));
      forgetIfIdle(l);
      return;
    }
    l.queue.addLast(new SWait(from, inc, reqId, attempt, tag, now + recallInterval, echo, now));
    serve(l);
  }

  /**
   * A request the server has already: a keep-alive. A queued one answers this message when granted; a granted one
   * gets its grant again (lost on a link that broke). Returns whether it was known.
   */
  private boolean again(SLock l, String from, long inc, long reqId, long echo) {
    for (SWait w : l.queue) {
      if (w.is(from, inc, reqId)) {
        w.echo = Math.max(w.echo, echo);
        w.lastHeard = now;
        return true;
      }
    }
    Holder h = l.holder;
    if (h != null && h.node.equals(from) && h.inc == inc && h.reqId == reqId) {
      sendTo(from, new LeaseMessage.Grant(view.servingTerm(), reqId, l.name, h.leaseId, h.token, h.echo));
      return true;
    }
    return false;
  }

  private void serverCancel(String from, LeaseMessage.Cancel c) {
    if (!view.heard(from, c.inc())) {
      return;
    }
    SLock l = locks.get(c.name());
    if (l != null && l.queue.removeIf(w -> w.is(from, c.inc(), c.reqId()))) {
      serve(l);
    }
  }

  /** S-3: a renewal of the current lease; a cached one is not renewed while someone waits. */
  private void serverRenew(String from, LeaseMessage.Renew r) {
    if (!view.heard(from, r.inc()) || !deciding()) {
      return; // an answer would extend a trust this server may not stand for now; the client's window runs out
    }
    SLock l = locks.get(r.name());
    Holder h = l == null ? null : l.holder;
    if (h == null || !h.of(from, r.inc(), r.leaseId())) {
      sendTo(from, new LeaseMessage.Revoked(view.servingTerm(), r.name(), r.leaseId()));
      return;
    }
    if (!r.active() && !l.queue.isEmpty()) {
      sendTo(from, new LeaseMessage.RenewDenied(view.servingTerm(), r.name(), r.leaseId()));
      free(l);
      serve(l);
      return;
    }
    h.expiry = now + term;
    h.active = r.active();
    if (r.active()) {
      h.tag = r.tag();
    }
    sendTo(from, new LeaseMessage.Renewed(view.servingTerm(), r.name(), r.leaseId(), r.echo()));
  }

  /** S-4: accepted, the lease is back and the next waiter gets the lock; denied, its holder uses it. */
  private void serverRecallReply(String from, LeaseMessage.RecallReply r) {
    if (!view.heard(from, r.inc())) {
      return;
    }
    SLock l = locks.get(r.name());
    if (l == null || l.holder == null || !l.holder.of(from, r.inc(), r.leaseId())) {
      return; // about another lease
    }
    if (r.accepted()) {
      free(l);
    } else {
      l.holder.active = true;
      // an attempt waits no longer: the lock is in use
      for (SWait w : List.copyOf(l.queue)) {
        if (w.attempt) {
          l.queue.remove(w);
          sendTo(w.node, new LeaseMessage.Busy(view.servingTerm(), w.reqId, l.name));
        }
      }
    }
    serve(l);
  }

  private void serverRelease(String from, LeaseMessage.Release r) {
    if (!view.heard(from, r.inc())) {
      return;
    }
    SLock l = locks.get(r.name());
    if (l != null && l.holder != null && l.holder.of(from, r.inc(), r.leaseId())) {
      free(l);
      serve(l);
    }
  }

  /** Who holds a lock in use, as far as this server knows: nobody while it does not decide. */
  private void serverWhoHolds(String from, LeaseMessage.WhoHolds q) {
    if (!view.heard(from, q.inc())) {
      return; // the client answers that it does not know when no answer comes
    }
    SLock l = locks.get(q.name());
    Holder h = l == null ? null : l.holder;
    String tag = deciding() && h != null && h.active ? h.tag : "";
    sendTo(from, new LeaseMessage.Holds(view.servingTerm(), q.queryId(), q.name(), tag));
  }

  /**
   * A client node restates (S-7, S-8): the leases and requests of its earlier incarnations are gone; a lease of this
   * incarnation it no longer has was released on a link that broke; the leases it holds are taken back in the grace
   * of a new server, renewed if this server has them, and revoked otherwise; the requests it waits for are queued if
   * they are not.
   */
  private void serverRestate(String from, LeaseMessage.Restate r) {
    if (!view.takesRestatement(r.term())) {
      return; // the node sends it again once its view has this server's term
    }
    view.restated(from, r.inc());
    sendTo(from, new LeaseMessage.Restated(r.inc(), view.servingTerm()));
    Set<Long> held = new HashSet<>();
    for (LeaseMessage.Held h : r.held()) {
      held.add(h.leaseId());
    }
    Set<Long> wanted = new HashSet<>();
    for (LeaseMessage.Wanted w : r.wanted()) {
      wanted.add(w.reqId());
    }
    Set<SLock> changed = new LinkedHashSet<>();
    for (SLock l : locks.values()) {
      Holder h = l.holder;
      if (h != null && h.node.equals(from)
          && (h.inc != r.inc() || !held.contains(h.leaseId) && !wanted.contains(h.reqId))) {
        free(l); // another life of the node's, or given back on a link that broke (a grant on its way is kept)
        changed.add(l);
      }
      if (l.queue.removeIf(w -> w.node.equals(from) && (w.inc != r.inc() || !wanted.contains(w.reqId)))) {
        changed.add(l);
      }
    }
    for (LeaseMessage.Held h : r.held()) {
      SLock l = locks.computeIfAbsent(h.name(), SLock::new);
      changed.add(l);
      if (l.holder != null && l.holder.of(from, r.inc(), h.leaseId())) {
        l.holder.active = h.active();
        l.holder.tag = h.tag();
      } else if (l.holder == null && view.inGrace(now)) {
        // a lease of the server before, with its token: a new token would be below none granted since
        l.holder = new Holder(from, r.inc(), h.leaseId(), h.token(), -1, r.echo(), h.active(), h.tag(), now + term);
      } else {
        sendTo(from, new LeaseMessage.Revoked(view.servingTerm(), h.name(), h.leaseId()));
        continue;
      }
      if (deciding()) {
        l.holder.expiry = now + term;
        sendTo(from, new LeaseMessage.Renewed(view.servingTerm(), h.name(), h.leaseId(), r.echo()));
      }
    }
    for (LeaseMessage.Wanted w : r.wanted()) {
      request(from, r.inc(), w.reqId(), w.name(), w.attempt(), w.tag(), r.echo());
    }
    if (view.endGraceIfAllRestated(now)) {
      serveAll(); // every member restated what it holds: nothing the server before granted is unknown here
    }
    for (SLock l : changed) {
      serve(l);
    }
  }

  /**
   * Gives the lock to the first waiter when it is free; recalls it from its holder, again every
   * {@code recallInterval}, while someone waits.
   */
  private void serve(SLock l) {
    if (l.holder == null && !l.queue.isEmpty() && granting()) {
      if (counter >= MAX_COUNTER) {
        return; // the term's tokens are used up: a new term (a new election) is needed
      }
      // the first waiter whose node this server can reach: a waiter on a node that is down keeps its place, and
      // is not granted a lease it could not hear of, which would keep the lock from every other waiter for a term
      SWait w = l.queue.stream().filter(x -> x.node.equals(self) || up.contains(x.node)).findFirst().orElse(null);
      if (w == null) {
        return;
      }
      l.queue.remove(w);
      long token = view.servingTerm() << ServerView.TERM_SHIFT | ++counter << LOCAL_BITS;
      l.holder = new Holder(w.node, w.inc, token, token, w.reqId, w.echo, true, w.tag, now + term);
      l.nextRecallAt = Long.MIN_VALUE;
      sendTo(w.node, new LeaseMessage.Grant(view.servingTerm(), w.reqId, l.name, token, token, w.echo));
    }
    if (l.holder != null && !l.queue.isEmpty() && deciding() && now >= l.nextRecallAt) {
      l.nextRecallAt = now + recallInterval;
      sendTo(l.holder.node, new LeaseMessage.Recall(view.servingTerm(), l.name, l.holder.leaseId));
      if (mutationGrantOnRecall && !view.inGrace(now)) {
        free(l);
        serve(l);
        return;
      }
    }
    forgetIfIdle(l);
  }

  private void serveAll() {
    for (SLock l : List.copyOf(locks.values())) {
      serve(l);
    }
  }

  private void free(SLock l) {
    l.holder = null;
    l.nextRecallAt = Long.MIN_VALUE;
  }

  private void forgetIfIdle(SLock l) {
    if (l.holder == null && l.queue.isEmpty()) {
      locks.remove(l.name);
    }
  }

  // ================================================================ the clients

  private void acquire(Input.Acquire<LeaseMessage> in) {
    if (reqs.containsKey(in.requestId())) {
      throw new IllegalStateException("request id " + in.requestId() + " is already in use");
    }
    Claim c = in.claim();
    if (c.mode() != Claim.Mode.EXCLUSIVE) {
      out.add(new Output.Failed<>(in.requestId(), c.name(), Output.Failure.UNAVAILABLE, Set.of(),
          ALGORITHM + " serves exclusive locks, not " + c));
      return;
    }
    CReq r = new CReq(in.requestId(), in.session(), c, in.attempt());
    Helper h = helpers.computeIfAbsent(r.name, Helper::new);
    boolean othersWait = reqs.values().stream().anyMatch(q -> q.state == State.WAITING && q.name.equals(r.name));
    reqs.put(r.id, r);
    if (!othersWait && grantsLocally(h)) {
      h.localGen++;
      localGrants++;
      if (grantCounts != null) {
        grantCounts[0].increment();
      }
      hold(h, r, h.serverToken + h.localGen);
    } else if (!r.attempt && quorum.lost(now)) {
      failNoQuorum(r);
    } else if (view.reachable(up)) {
      r.lastSent = now;
      toServer(new LeaseMessage.Acquire(inc, r.id, r.name, r.attempt, r.claim.tag(), now));
    } else if (r.attempt) {
      fail(r, Output.Failure.UNAVAILABLE, "no " + ALGORITHM + " server is reachable");
    }
    // else it waits for a server: restated to the next one the node sees, or failed once no quorum can form
  }

  /**
   * C-1: a cached lease is granted here, with no message, when nobody uses it, no recall is pending, no inactive
   * renewal is in flight (the server may deny it and give the lock away), its window is open, and its local
   * re-grants are not used up.
   */
  private boolean grantsLocally(Helper h) {
    return h.leased() && h.active == null && !h.recallPending && h.lapseUntil == NONE
        && (h.inactiveRenewSentAt == NONE || mutationLocalGrantDuringInactiveRenew)
        && now < h.anchor + trust() && h.localGen < MAX_LOCAL;
  }

  private void hold(Helper h, CReq r, long token) {
    r.state = State.HELD;
    r.token = token;
    r.validUntil = h.anchor + trust();
    h.active = r;
    out.add(new Output.Granted<>(r.id, r.name, token, 1, h.anchor, r.validUntil));
  }

  /** The anchor of a grant or renewal that answers the message sent at {@code echo}: the echo rule. */
  private long anchorOf(long echo) {
    return mutationTrustFromReceipt ? now : echo;
  }

  /** How long a grant or renewal is trusted from its anchor: {@code 3T/4} (001:44). */
  private long trust() {
    return mutationTrustFromReceipt ? term : trust;
  }

  private void clientGrant(String from, LeaseMessage.Grant g) {
    if (!view.fromServer(from, g.term())) {
      return; // not the server of this view's: what it granted is gone with its term
    }
    Helper h = helpers.computeIfAbsent(g.name(), Helper::new);
    if (h.leaseId == g.leaseId()) {
      return; // the same grant again: the answer to a keep-alive that crossed it
    }
    if (g.leaseId() <= h.givenBack) {
      return; // sent before this node gave it back or disowned it: the server has freed it, or will
    }
    CReq r = reqs.get(g.reqId());
    if (r == null || r.state != State.WAITING || !r.name.equals(g.name())) {
      // given up meanwhile, or a grant sent again after the lease went back: back at once (the server ignores it
      // when the lease is no longer the one it gave)
      toServer(new LeaseMessage.Release(inc, g.name(), g.leaseId()));
      forgetIfIdle(h);
      return;
    }
    long anchor = anchorOf(g.echo());
    if (anchor + trust() <= now) {
      // trusted for no time at all: the grant answers a message older than the trust it gives
      h.givenBack = Math.max(h.givenBack, g.leaseId());
      toServer(new LeaseMessage.Release(inc, g.name(), g.leaseId()));
      r.lastSent = now;
      toServer(new LeaseMessage.Acquire(inc, r.id, r.name, r.attempt, r.claim.tag(), now));
      return;
    }
    if (h.leased()) {
      // the server gave a new lease, so the one this node had is gone there (a message about it was lost)
      dropLease(h, "the " + ALGORITHM + " server " + from + " gave the lock out again");
    }
    h.leaseId = g.leaseId();
    h.serverToken = g.token();
    h.localGen = 0;
    h.anchor = anchor;
    serverGrants++;
    if (grantCounts != null) {
      grantCounts[1].increment();
    }
    hold(h, r, g.token());
  }

  private void clientBusy(String from, LeaseMessage.Busy b) {
    CReq r = reqs.get(b.reqId());
    if (view.fromServer(from, b.term()) && r != null && r.state == State.WAITING && r.name.equals(b.name())) {
      fail(r, Output.Failure.CONTENDED, "");
    }
  }

  /**
   * C-8 and C-6: a held lease whose window closed is lost (the seed's LockLost), a cached one no longer trusted goes
   * back; either way the lease is released in case the server still has it. Returns whether it did.
   */
  private boolean expireIfDue(Helper h) {
    CReq r = h.active;
    if (h.lapseUntil != NONE) {
      if (now >= h.lapseUntil) {
        giveBack(h);
      }
      return true;
    }
    if (r != null && now >= r.validUntil) {
      reqs.remove(r.id);
      out.add(new Output.Lost<>(r.id, r.name, Output.LostReason.EXPIRED, ""));
      h.active = null;
      if (!mutationGiveBackOnLoss) {
        h.lapseUntil = now + Math.max(1, term - trust);
        return true;
      }
    } else if (r != null || now < h.anchor + trust()) {
      return false;
    }
    giveBack(h);
    return true;
  }

  /** A lease nobody uses and nobody may: back to the server, as the answer to its recall if it asked for it. */
  private void giveBack(Helper h) {
    toServer(h.recallPending ? new LeaseMessage.RecallReply(inc, h.name, h.leaseId, true)
        : new LeaseMessage.Release(inc, h.name, h.leaseId));
    clearLease(h);
  }

  /**
   * {@link #expireIfDue} for every lease, in whatever step comes first: an input at the very moment a window closes is
   * no reason to tell the loss a step later (as buckets seed 219009 showed of that core).
   */
  private void expireAllDue() {
    for (Helper h : List.copyOf(helpers.values())) {
      if (h.leased()) {
        expireIfDue(h);
      }
    }
  }

  private void clientRenewed(String from, LeaseMessage.Renewed m) {
    Helper h = helpers.get(m.name());
    if (!view.fromServer(from, m.term()) || h == null || h.leaseId != m.leaseId()) {
      return;
    }
    if (expireIfDue(h)) {
      return; // the answer came after the window closed (a pause held it back): a lease lost is not brought back
    }
    if (m.echo() == h.inactiveRenewSentAt) {
      h.inactiveRenewSentAt = NONE;
    }
    long anchor = anchorOf(m.echo());
    if (anchor + trust() > now) {
      h.anchor = Math.max(h.anchor, anchor);
    }
    CReq r = h.active;
    if (r != null && r.renewAsked && h.anchor + trust() > r.validUntil) {
      r.renewAsked = false;
      r.validUntil = h.anchor + trust();
      out.add(new Output.Renewed<>(r.id, h.anchor, r.validUntil));
    }
  }

  private void clientRenewDenied(String from, LeaseMessage.RenewDenied d) {
    Helper h = helpers.get(d.name());
    if (view.fromServer(from, d.term()) && h != null && h.leaseId == d.leaseId()) {
      dropLease(h, "the " + ALGORITHM + " server " + from + " gave the lock to a waiter");
    }
  }

  /** C-7: a cached lease goes back at once; an active one when its request releases it. */
  private void clientRecall(String from, LeaseMessage.Recall m) {
    if (!view.fromServer(from, m.term())) {
      return;
    }
    Helper h = helpers.get(m.name());
    if (h == null || h.leaseId != m.leaseId()) {
      // not this node's (any more), or its grant is still on its way: disowned either way, so the grant is not
      // taken when it comes (the server gives the lock to the next waiter on this answer)
      if (h != null) {
        h.givenBack = Math.max(h.givenBack, m.leaseId());
      }
      toServer(new LeaseMessage.RecallReply(inc, m.name(), m.leaseId(), true));
      return;
    }
    if (h.active == null && h.lapseUntil == NONE) {
      toServer(new LeaseMessage.RecallReply(inc, m.name(), m.leaseId(), true));
      clearLease(h);
    } else {
      // held, or lost and lapsing: given back when its request releases it, or when the lapse ends
      h.recallPending = true;
      toServer(new LeaseMessage.RecallReply(inc, m.name(), m.leaseId(), false));
    }
  }

  private void clientRevoked(String from, LeaseMessage.Revoked m) {
    Helper h = helpers.get(m.name());
    if (view.fromServer(from, m.term()) && h != null && h.leaseId == m.leaseId()) {
      dropLease(h, "the " + ALGORITHM + " server " + from + " no longer knows this lease");
    }
  }

  /** The lease is gone at the server: its request, if one holds it, lost it. */
  private void dropLease(Helper h, String why) {
    CReq r = h.active;
    clearLease(h);
    if (r != null) {
      reqs.remove(r.id);
      out.add(new Output.Lost<>(r.id, r.name, Output.LostReason.REVOKED, why));
    }
  }

  private void clearLease(Helper h) {
    h.givenBack = Math.max(h.givenBack, h.leaseId);
    h.leaseId = NO_LEASE;
    h.active = null;
    h.recallPending = false;
    h.inactiveRenewSentAt = NONE;
    h.lapseUntil = NONE;
    h.anchor = Long.MIN_VALUE;
    h.localGen = 0;
    forgetIfIdle(h);
  }

  private void forgetIfIdle(Helper h) {
    if (!h.leased() && reqs.values().stream().noneMatch(r -> r.name.equals(h.name))) {
      helpers.remove(h.name);
    }
  }

  private void release(long id) {
    CReq r = reqs.get(id);
    if (r == null) {
      return;
    }
    reqs.remove(id);
    Helper h = helpers.get(r.name);
    if (r.state == State.HELD) {
      if (h != null && h.active == r) {
        h.active = null;
        if (h.recallPending) {
          toServer(new LeaseMessage.RecallReply(inc, h.name, h.leaseId, true)); // recalled: back at once
          clearLease(h);
        } else if (!cache || h.localGen >= MAX_LOCAL) {
          toServer(new LeaseMessage.Release(inc, h.name, h.leaseId));
          clearLease(h);
        }
        // else cached (001:16): no message
      }
    } else {
      toServer(new LeaseMessage.Cancel(inc, id, r.name));
    }
    if (h != null) {
      forgetIfIdle(h);
    }
  }

  private void cancel(long id) {
    CReq r = reqs.get(id);
    if (r == null) {
      return;
    }
    if (r.state == State.HELD) {
      release(id); // granted meanwhile: the driver drops the grant it has seen
      return;
    }
    fail(r, Output.Failure.CANCELLED, "");
    toServer(new LeaseMessage.Cancel(inc, id, r.name));
  }

  /** C-5: the driver renews the active request: the lease is renewed as active. */
  private void renew(long id) {
    CReq r = reqs.get(id);
    Helper h = r == null ? null : helpers.get(r.name);
    if (r == null || r.state != State.HELD || h == null || h.active != r) {
      out.add(new Output.Lost<>(id, r == null ? "" : r.name, Output.LostReason.REVOKED, "not held"));
      return;
    }
    r.renewAsked = true;
    sendRenew(r, h);
  }

  private void sendRenew(CReq r, Helper h) {
    r.renewSentAt = now;
    toServer(new LeaseMessage.Renew(inc, h.name, h.leaseId, true, r.claim.tag(), now));
  }

  /** Asks the server who holds a lock in use; unknown at once with no server, or after {@code peerTimeout}. */
  private void holderQuery(Input.HolderQuery<LeaseMessage> q) {
    if (!view.reachable(up)) {
      out.add(Output.Holder.unknown(q));
      return;
    }
    queries.put(q.queryId(), new Query(q.name(), now));
    toServer(new LeaseMessage.WhoHolds(inc, q.queryId(), q.name()));
  }

  private void clientHolds(String from, LeaseMessage.Holds h) {
    Query q = queries.get(h.queryId());
    if (q != null && view.fromServer(from, h.term()) && q.name().equals(h.name())) {
      queries.remove(h.queryId());
      out.add(new Output.Holder<>(h.queryId(), h.name(), h.tag()));
    }
  }

  private void closeSession(String session) {
    for (CReq r : List.copyOf(reqs.values())) {
      if (r.session.equals(session)) {
        release(r.id);
      }
    }
  }

  private void fail(CReq r, Output.Failure failure, String detail) {
    fail(r, failure, failure == Output.Failure.UNAVAILABLE ? view.unreachable(up) : Set.of(), detail);
  }

  /** A wait ends: the node can tell that no quorum can form around it ({@link QuorumWatch}). */
  private void failNoQuorum(CReq r) {
    fail(r, Output.Failure.UNAVAILABLE, quorum.missing(), quorum.detail());
    toServer(new LeaseMessage.Cancel(inc, r.id, r.name)); // a server still linked forgets it
  }

  private void fail(CReq r, Output.Failure failure, Set<String> missing, String detail) {
    reqs.remove(r.id);
    out.add(new Output.Failed<>(r.id, r.name, failure, missing, detail));
    Helper h = helpers.get(r.name);
    if (h != null) {
      forgetIfIdle(h);
    }
  }

  /**
   * Everything this node has at the server, first on every new link to it and whenever the server changes, and
   * again every third of the term until the server says it took it.
   */
  private void restateToServer() {
    if (!view.reachable(up)) {
      return;
    }
    view.restatementSent(now);
    List<LeaseMessage.Held> held = new ArrayList<>();
    for (Helper h : helpers.values()) {
      if (h.leased()) {
        held.add(new LeaseMessage.Held(h.name, h.leaseId, h.serverToken, h.active != null,
            h.active == null ? "" : h.active.claim.tag()));
      }
    }
    List<LeaseMessage.Wanted> wanted = new ArrayList<>();
    for (CReq r : reqs.values()) {
      if (r.state == State.WAITING) {
        r.lastSent = now;
        wanted.add(new LeaseMessage.Wanted(r.id, r.name, r.attempt, r.claim.tag()));
      }
    }
    toServer(new LeaseMessage.Restate(inc, view.term(), held, wanted, now));
  }

  // ================================================================ links and time

  private void peerUp(String p) {
    if (!peers.contains(p)) {
      return;
    }
    up.add(p);
    if (p.equals(view.server())) {
      view.linkUp(); // what went on the old link may be lost
      restateToServer();
    }
    if (view.serving()) {
      serveAll(); // a server that had lost its majority may decide again
    }
  }

  private void tick() {
    // the clients first: a window that closed is reported before the server side gives the lock away
    boolean reachable = view.reachable(up);
    watchQuorum();
    if (now >= view.restateDue(up)) {
      restateToServer();
    }
    for (Helper h : List.copyOf(helpers.values())) {
      if (!h.leased()) {
        continue;
      }
      CReq r = h.active;
      if (expireIfDue(h)) {
        continue;
      } else if (r == null && h.inactiveRenewSentAt == NONE && now >= h.anchor + term / 2 && reachable) {
        h.inactiveRenewSentAt = now; // C-6: the seed's renewal of a lock nobody uses
        toServer(new LeaseMessage.Renew(inc, h.name, h.leaseId, false, "", now));
      } else if (r != null && r.renewAsked && reachable && now >= r.renewSentAt + term / RENEW_RETRY) {
        // unanswered: a server not yet active when it took this node's restatement, or one that is gone, answered
        // nothing; asked again, the server of the new view renews it within the window
        sendRenew(r, h);
      }
    }
    for (var i = queries.entrySet().iterator(); i.hasNext(); ) {
      var e = i.next();
      if (now >= e.getValue().askedAt() + peerTimeout) {
        i.remove();
        out.add(new Output.Holder<>(e.getKey(), e.getValue().name(), ""));
      }
    }
    for (CReq r : List.copyOf(reqs.values())) {
      if (r.state != State.WAITING) {
        continue;
      }
      if (quorum.lost(now)) {
        failNoQuorum(r);
      } else if (reachable && now >= r.lastSent + term / 3) {
        r.lastSent = now; // C-10: the keep-alive
        toServer(new LeaseMessage.Acquire(inc, r.id, r.name, r.attempt, r.claim.tag(), now));
      }
    }
    // the server: leases not renewed for a term (S-6), silent waiters (S-2), attempts not answered, recalls again
    if (view.serving()) {
      for (SLock l : List.copyOf(locks.values())) {
        if (l.holder != null && now >= l.holder.expiry) {
          free(l);
        }
        l.queue.removeIf(w -> !w.attempt && now >= w.lastHeard + term);
        for (SWait w : List.copyOf(l.queue)) {
          if (w.attempt && now >= w.deadline) {
            l.queue.remove(w);
            sendTo(w.node, new LeaseMessage.Busy(view.servingTerm(), w.reqId, l.name));
          }
        }
        serve(l);
      }
    }
  }

  private void settle() {
    drain();
    watchQuorum();
    boolean reachable = view.reachable(up);
    long next = view.restateDue(up);
    for (Helper h : helpers.values()) {
      if (!h.leased()) {
        continue;
      }
      if (h.lapseUntil != NONE) {
        next = Math.min(next, h.lapseUntil);
      } else if (h.active != null) {
        next = Math.min(next, h.active.validUntil);
        if (h.active.renewAsked && reachable) {
          next = Math.min(next, h.active.renewSentAt + term / RENEW_RETRY);
        }
      } else {
        next = Math.min(next, h.anchor + trust());
        if (h.inactiveRenewSentAt == NONE && reachable) {
          next = Math.min(next, h.anchor + term / 2);
        }
      }
    }
    for (CReq r : reqs.values()) {
      if (r.state == State.WAITING) {
        next = Math.min(next, reachable ? Math.min(r.lastSent + term / 3, quorum.lostAt()) : quorum.lostAt());
      }
    }
    for (Query q : queries.values()) {
      next = Math.min(next, q.askedAt() + peerTimeout);
    }
    if (view.serving()) {
      for (SLock l : locks.values()) {
        if (l.holder != null) {
          next = Math.min(next, l.holder.expiry);
          if (!l.queue.isEmpty() && deciding()) {
            next = Math.min(next, l.nextRecallAt); // recalls wait for the lease (a new view serves them all)
          }
        }
        for (SWait w : l.queue) {
          next = Math.min(next, w.attempt ? w.deadline : w.lastHeard + term);
        }
        if (!l.queue.isEmpty() && view.inGrace(now)) {
          next = Math.min(next, view.graceUntil());
        }
      }
    }
    next = Math.max(next, now + 1);
    if (next >= NONE - 1) {
      if (timerAt != NONE) {
        out.add(new Output.CancelTimer<>(TIMER));
        timerAt = NONE;
      }
    } else if (next != timerAt) {
      out.add(new Output.SetTimer<>(TIMER, next));
      timerAt = next;
    }
  }

  /** Tells the quorum watch which peers are linked and whether the node has seen a view. */
  private void watchQuorum() {
    quorum.update(now, up, view.term() > 0);
  }

  // ================================================================ sending

  private void toServer(LeaseMessage m) {
    if (view.server() != null) {
      sendTo(view.server(), m);
    }
  }

  private void sendTo(String node, LeaseMessage m) {
    if (node.equals(self)) {
      local.add(new Local(self, m));
    } else if (up.contains(node)) {
      out.add(new Output.Send<>(node, m));
    }
  }
}
