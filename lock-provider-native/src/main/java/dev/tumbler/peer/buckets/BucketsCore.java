package dev.tumbler.peer.buckets;

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
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.random.RandomGenerator;

/**
 * The {@code buckets} core (seed 002, NATIVE-ALGORITHMS §6): counting semaphores whose counters sit on one elected
 * server, {@code leaders[0]} of the node's view, in buckets of a fixed size ({@link Buckets}). Every node runs it for
 * its clients; the node that leads also serves. Pure, like every core.
 *
 * <p><b>Server.</b> While this node is the view's server and its leader lease holds ({@code now < activeUntil}), it
 * grants requests in the order they came, each when its permits fit in its handle's buckets and no earlier request
 * of the name waits (no barging): {@code Grant} carries a token {@code term·2^37 + counter}, larger than every
 * token of earlier terms and of this one. Each client session has one lease on the server, renewed by
 * {@code SessionRenew}: a session not heard from for {@code T} loses every grant it holds (the seed's monitor).
 * Requests that wait are kept while their client asks again every third of the term. A node that becomes
 * the server of a new term without having served the one before starts with a grace of {@code T + leaderTimeout}
 * in which the clients restate what they hold: it takes those grants back and grants nothing new, so that no
 * grant of the previous server that a holder may still trust is given to another. The grace ends early once every
 * member has restated (at a cluster's start, or when no member is missing).
 *
 * <p><b>Clients.</b> A request goes to the server (a call when this node is the server); a grant is trusted from the
 * moment the message it answers was sent, for {@code 3/4} of the term (the echo rule), and every grant of a session
 * lives as long as the session's lease, renewed when the client renews any of them. When the server changes, or its
 * link comes up, the node restates its sessions, grants and waiting requests to it. A request waits while no server
 * is reachable, is not elected yet, or is in its grace: that is a failover, and it rides it out. It fails
 * ({@link Output.Failure#UNAVAILABLE}) only when the node can tell that no quorum can form around it
 * ({@link QuorumWatch}: fewer members connected than an election needs, for {@code peerTimeout}); a single attempt
 * fails at once when no server is reachable.
 *
 * <p>Semaphore names and lock names are apart: with {@link #locks} a {@link Claim.Mode#EXCLUSIVE} claim is one
 * permit of a one-permit semaphore of its own name space ({@code algorithm=buckets}).
 */
public final class BucketsCore implements ProtocolCore<BucketsMessage> {

  /**
   * A session renewal unanswered for this fraction of a term is sent again, whether or not a grant asks again: a new
   * server that took this node's restatement before its leader lease was active renewed nothing, and the permits ran
   * out while the renewal sent to the server before waited for an answer that could not come (a thin client's TCK,
   * the server cut off by a partition).
   */
  static final int RENEW_RETRY = 12;

  /** The name of the lock algorithm that serves locks as one-permit semaphores. */
  public static final String ALGORITHM = "buckets";

  static final long TIMER = 1;
  private static final long NONE = Long.MAX_VALUE;
  /** A token's low bits: the grant counter of its term. */
  static final int COUNTER_BITS = ServerView.TERM_SHIFT;
  private static final String LOCK_PREFIX = "L";
  private static final String SEMAPHORE_PREFIX = "S";

  /** Test-only mutation: the server frees a session's permits as soon as the link to its node goes down. */
  boolean mutationFreeOnPeerDown;
  /** Test-only mutation: a new server grants at once, with no grace for the holders of the one before. */
  boolean mutationNoGrace;
  /**
   * Test-only mutation: a grant whose window closed goes back to the server in the step that tells the loss, so that
   * its permits may go to another while the holder's lost listeners still run.
   */
  boolean mutationGiveBackOnLoss;
  /** Test-only mutation: a session whose client went silent keeps its permits for ever. */
  boolean mutationNoSessionExpiry;
  /** Test-only mutation, handed to every name's {@link Buckets}: a release empties the lowest buckets first. */
  boolean mutationReleaseLowestFirst;
  /** Test-only mutation, handed to every name's {@link Buckets}: a bucket takes one permit more than its size. */
  boolean mutationCeilingOffByOne;

  /**
   * For checkers (the simulator): publish the counters of a name ({@link Observation.Buckets}) whenever they change.
   * Off by default: with small buckets a name may have thousands.
   */
  public boolean reportBuckets;

  private final String self;
  private final SortedSet<String> peers;
  private final long term;
  private final long trust;
  private final long peerTimeout;
  private final long leaderTimeout;
  private final int bucketSize;
  private final boolean locks;
  /** This core's incarnation: its sessions are not those of an earlier life of the node. */
  private final long inc;

  private long now;
  private long startNow = Long.MIN_VALUE;
  /** Whether a quorum can still form around this node: what ends waits early. */
  private final QuorumWatch quorum;
  private List<Output<BucketsMessage>> out;
  private final Deque<Local> local = new ArrayDeque<>();
  private final Set<String> up = new HashSet<>();
  private long timerAt = NONE;

  /** The view: who serves, whether this node does, its grace, and this node's restatement to the server. */
  private ServerView view;

  // ---- the server role
  private long counter;
  private final Map<String, Sem> sems = new TreeMap<>();
  private final Map<SessionKey, SSession> sessions = new LinkedHashMap<>();

  // ---- the client role
  private final Map<String, CSession> csessions = new LinkedHashMap<>();
  private final Map<Long, CReq> reqs = new LinkedHashMap<>();
  /**
   * Grants lost when their windows closed, in the order they were: each is kept at the server (restated with the rest)
   * a quarter term more, as the server's own term would keep it, and released then, so that the holder's lost
   * listeners run before another can be granted its permits (DESIGN's lease rule).
   */
  private final Map<Long, CReq> lapsing = new LinkedHashMap<>();
  private final Map<Long, Query> queries = new LinkedHashMap<>();
  private final Map<Long, HolderAsk> holderAsks = new LinkedHashMap<>();
  /** The permits of each name out at the server, as it last said, less what this node released since. */
  private final Map<String, Long> lastTotal = new HashMap<>();

  private record Local(String from, BucketsMessage message) {}

  /** A session on the server: the node it lives on, that node's incarnation, and its name there. */
  private record SessionKey(String node, long inc, String session) {}

  private static final class SSession {
    long expiry;
  }

  private record SessionRequest(SessionKey session, long reqId) {}

  private record SGrant(SessionKey session, long reqId, long grantId, int permits, int resources, String tag,
      long echo) {}

  private static final class SWait {
    final SessionKey session;
    final long reqId;
    final int permits;
    final int limit;
    final String tag;
    long echo;
    long lastHeard;

    SWait(SessionKey session, long reqId, int permits, int limit, String tag, long echo, long lastHeard) {
      this.session = session;
      this.reqId = reqId;
      this.permits = permits;
      this.limit = limit;
      this.tag = tag;
      this.echo = echo;
      this.lastHeard = lastHeard;
    }
  }

  /** One name on the server. */
  private final class Sem {
    final String name;
    final Buckets buckets;
    final Map<Long, SGrant> grants = new LinkedHashMap<>();
    final Deque<SWait> queue = new ArrayDeque<>();
    /** The token of this server's latest grant of the name (0 before the first). */
    long lastToken;

    Sem(String name, int size) {
      this.name = name;
      this.buckets = new Buckets(size);
      buckets.mutationReleaseLowestFirst = mutationReleaseLowestFirst;
      buckets.mutationCeilingOffByOne = mutationCeilingOffByOne;
    }

    boolean idle() {
      return grants.isEmpty() && queue.isEmpty();
    }
  }

  private static final class CSession {
    final String name;
    /** Until when its grants may be trusted, unless renewed. */
    long window = Long.MIN_VALUE;
    long renewSentAt = Long.MIN_VALUE;
    final Set<Long> renewWaiting = new TreeSet<>();

    CSession(String name) {
      this.name = name;
    }
  }

  private enum State { WAITING, HELD }

  private static final class CReq {
    final long id;
    final CSession session;
    final Claim claim;
    final String name;
    final boolean attempt;
    State state = State.WAITING;
    long grantId;
    long token;
    long lastSent;
    /**
     * Until when the client was told it may trust the grant: its session's window when granted or last renewed for
     * it. The session may live longer (another grant of it renewed it); a grant not renewed still ends here.
     */
    long validUntil;
    /** For a grant lost when its window closed: when it goes back to the server ({@link #lapsing}). */
    long lapseUntil;

    CReq(long id, CSession session, Claim claim, String name, boolean attempt) {
      this.id = id;
      this.session = session;
      this.claim = claim;
      this.name = name;
      this.attempt = attempt;
    }
  }

  private record Query(long id, String name, int limit) {}

  /** A holder query asked of the server: the lock's name as the user gave it, and when asked. */
  private record HolderAsk(String name, long askedAt) {}

  /**
   * @param self this node's id
   * @param peers the other members
   * @param leaseNanos the term of a session's lease ({@code T})
   * @param peerTimeoutNanos how long the node may have fewer members connected than a quorum needs before its waits
   *     fail
   * @param leaderTimeoutNanos the election's leader timeout: a new server's grace is {@code T} plus it
   * @param bucketSize the permits of a bucket, the same on every node; 0 for buckets as large as each handle's
   *     {@code maxPermits} (one bucket a name, and handles of one name must then agree on it)
   * @param locks whether locks ({@link Claim.Mode#EXCLUSIVE} claims) are served too, as one-permit semaphores
   * @param random the source of this core's incarnation
   */
  public BucketsCore(String self, List<String> peers, long leaseNanos, long peerTimeoutNanos,
      long leaderTimeoutNanos, int bucketSize, boolean locks, RandomGenerator random) {
    this.self = Objects.requireNonNull(self, "self");
    this.peers = ProtocolCore.otherMembers(self, peers);
    if (leaseNanos <= 0) {
      throw new IllegalArgumentException("a semaphore's permits have a term: leaseNanos " + leaseNanos);
    }
    if (peerTimeoutNanos <= 0 || leaderTimeoutNanos <= 0) {
      throw new IllegalArgumentException("peerTimeout and leaderTimeout must be positive: " + peerTimeoutNanos + ", "
          + leaderTimeoutNanos);
    }
    if (bucketSize < 0) {
      throw new IllegalArgumentException("bucketSize must be 0 (one bucket a handle) or positive: " + bucketSize);
    }
    this.term = leaseNanos;
    this.trust = leaseNanos / 4 * 3 + leaseNanos % 4 * 3 / 4;
    this.peerTimeout = peerTimeoutNanos;
    this.leaderTimeout = leaderTimeoutNanos;
    this.bucketSize = bucketSize;
    this.locks = locks;
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

  /** The counters of {@code name} on this node's server, or null: for tests. */
  Buckets buckets(String name) {
    Sem s = sems.get(SEMAPHORE_PREFIX + name);
    return s == null ? null : s.buckets;
  }

  @Override
  public List<Output<BucketsMessage>> step(long now, Input<BucketsMessage> input) {
    Objects.requireNonNull(input, "input");
    this.now = now;
    if (startNow == Long.MIN_VALUE) {
      startNow = now;
      view = new ServerView(self, peers, mutationNoGrace ? 0 : term + leaderTimeout, term / 3, now);
    }
    out = new ArrayList<>();
    try {
      loseExpired();
      switch (input) {
        case Input.Message<BucketsMessage> m -> {
          if (peers.contains(m.from())) {
            local.add(new Local(m.from(), m.message()));
          }
        }
        case Input.TimerFired<BucketsMessage> t -> {
          if (t.timerId() == TIMER) {
            timerAt = NONE;
            tick();
          }
        }
        case Input.Start<BucketsMessage> s -> { }
        case Input.Leave<BucketsMessage> l -> { } // what it holds and serves ends by the rules of a crash
        case Input.PeerUp<BucketsMessage> u -> peerUp(u.peer());
        case Input.PeerDown<BucketsMessage> d -> peerDown(d.peer());
        case Input.View<BucketsMessage> v -> view(v.term(), v.leaders(), v.activeUntil());
        case Input.Acquire<BucketsMessage> a -> acquire(a);
        case Input.Release<BucketsMessage> r -> release(r.requestId());
        case Input.Cancel<BucketsMessage> c -> cancel(c.requestId());
        case Input.Renew<BucketsMessage> r -> renew(r.requestId());
        case Input.CloseSession<BucketsMessage> s -> closeSession(s.session());
        case Input.HolderQuery<BucketsMessage> q -> holderQuery(q);
        case Input.PermitsQuery<BucketsMessage> q -> permitsQuery(q);
        case Input.Begin<BucketsMessage> b -> out.add(new Output.TxAborted<>(b.txId(), Output.Failure.UNAVAILABLE,
            Set.of(), "the " + ALGORITHM + " core serves no transactions"));
        case Input.End<BucketsMessage> e -> { }
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

  private void receive(String from, BucketsMessage m) {
    switch (m) {
      case BucketsMessage.Acquire a -> serverAcquire(from, a);
      case BucketsMessage.Cancel c -> serverCancel(from, c);
      case BucketsMessage.Release r -> serverRelease(from, r);
      case BucketsMessage.SessionRenew r -> serverRenew(from, r);
      case BucketsMessage.Query q -> serverQuery(from, q);
      case BucketsMessage.Restate r -> serverRestate(from, r);
      case BucketsMessage.Grant g -> clientGrant(from, g);
      case BucketsMessage.Busy b -> clientBusy(from, b);
      case BucketsMessage.Refused r -> clientRefused(from, r);
      case BucketsMessage.SessionRenewed r -> clientRenewed(from, r);
      case BucketsMessage.Revoked r -> clientRevoked(from, r);
      case BucketsMessage.Total t -> clientTotal(from, t);
      case BucketsMessage.WhoHolds q -> serverWhoHolds(from, q);
      case BucketsMessage.Holds h -> clientHolds(from, h);
      case BucketsMessage.Restated r -> view.restatementTaken(from, r.inc(), r.term(), inc);
    }
  }

  // ================================================================ the view

  private void view(long t, List<Leader> leaders, long until) {
    if (t < view.term()) {
      return;
    }
    ServerView.Change c = view.view(now, t, leaders, until);
    if (c.freshServer() || c.stoppedServing()) {
      sems.clear();
      sessions.clear();
    }
    if (c.startedServing()) {
      counter = 0;
      out.add(new Output.Fact<>(new Observation.Serving(self, view.servingTerm(), view.graceUntil())));
    }
    if (c.restate()) {
      restateToServer();
    }
    serveQueues();
  }

  /** Whether the server may decide now: it is the view's server and its leader lease holds. */
  private boolean deciding() {
    return view.deciding(now, false, up);
  }

  private boolean inGrace() {
    return view.inGrace(now);
  }

  // ================================================================ the server

  private void serverAcquire(String from, BucketsMessage.Acquire a) {
    if (!heard(from, a.inc())) {
      return;
    }
    SessionKey key = new SessionKey(from, a.inc(), a.session());
    touch(key);
    Sem s = sem(a.name(), a.limit());
    if (s == null) {
      sendTo(from, new BucketsMessage.Refused(a.session(), a.reqId(), refusal(a.name(), a.limit())));
      return;
    }
    if (again(s, key, a.reqId(), a.echo())) {
      return;
    }
    SWait w = new SWait(key, a.reqId(), a.permits(), a.limit(), a.tag(), a.echo(), now);
    if (a.attempt() && !(deciding() && !inGrace() && s.queue.isEmpty() && fits(s, w))) {
      sendTo(from, new BucketsMessage.Busy(a.session(), a.reqId(), s.buckets.total()));
      forgetIfIdle(s);
      return;
    }
    s.queue.addLast(w);
    serve(s);
  }

  private boolean heard(String from, long inc) {
    return view.heard(from, inc);
  }

  /**
   * A request the server has already: a keep-alive. A queued one answers this message when it is granted; a granted
   * one gets its grant again (lost on a link that broke). Returns whether it was known.
   */
  private boolean again(Sem s, SessionKey key, long reqId, long echo) {
    for (SWait w : s.queue) {
      if (w.session.equals(key) && w.reqId == reqId) {
        w.echo = Math.max(w.echo, echo);
        w.lastHeard = now;
        return true;
      }
    }
    for (SGrant g : s.grants.values()) {
      if (g.session().equals(key) && g.reqId() == reqId) {
        sendTo(key.node(), new BucketsMessage.Grant(view.servingTerm(), key.session(), reqId, s.name, g.grantId(), g.grantId(),
            s.buckets.total(), g.echo(), s.lastToken));
        return true;
      }
    }
    return false;
  }

  private void touch(SessionKey key) {
    sessions.computeIfAbsent(key, k -> new SSession()).expiry = now + term;
  }

  private void serverCancel(String from, BucketsMessage.Cancel c) {
    if (!heard(from, c.inc())) {
      return;
    }
    SessionKey key = new SessionKey(from, c.inc(), c.session());
    for (Sem s : List.copyOf(sems.values())) {
      if (s.queue.removeIf(x -> x.session.equals(key) && x.reqId == c.reqId())) {
        serve(s);
        return;
      }
      // granted, but the client gave up before it heard: its grant was lost with a link, or is on its way (and is
      // given back when it comes). Kept, the permits of a live session would be out for good (seed 172828)
      for (SGrant g : List.copyOf(s.grants.values())) {
        if (g.session().equals(key) && g.reqId() == c.reqId()) {
          free(s, g);
          fact(s);
          serve(s);
          return;
        }
      }
    }
  }

  private void serverRelease(String from, BucketsMessage.Release r) {
    if (!heard(from, r.inc())) {
      return;
    }
    Sem s = sems.get(r.name());
    if (s == null) {
      return;
    }
    SGrant g = s.grants.get(r.grantId());
    if (g != null && g.session().node().equals(from) && g.session().inc() == r.inc()
        && g.session().session().equals(r.session())) {
      free(s, g);
      serve(s);
    }
  }

  private void serverRenew(String from, BucketsMessage.SessionRenew r) {
    if (!heard(from, r.inc()) || !deciding()) {
      return; // an answer would extend a trust this server may not stand for now; the client tries again
    }
    SessionKey key = new SessionKey(from, r.inc(), r.session());
    if (!sessions.containsKey(key)) {
      return; // unknown here: its grants, if any, are revoked by the restatement the client sends this server
    }
    touch(key);
    sendTo(from, new BucketsMessage.SessionRenewed(r.session(), r.echo()));
  }

  /** Who holds a lock (a one-permit semaphore of the lock name space): nobody while this server does not decide. */
  private void serverWhoHolds(String from, BucketsMessage.WhoHolds q) {
    if (!heard(from, q.inc())) {
      return; // the client answers that it does not know when no answer comes
    }
    Sem s = sems.get(q.name());
    String tag = deciding() && s != null && !s.grants.isEmpty() ? s.grants.values().iterator().next().tag() : "";
    sendTo(from, new BucketsMessage.Holds(view.servingTerm(), q.queryId(), q.name(), tag));
  }

  private void serverQuery(String from, BucketsMessage.Query q) {
    if (!heard(from, q.inc()) || !deciding()) {
      return; // the client answers with what it knows when no answer comes
    }
    Sem s = sems.get(q.name());
    sendTo(from, new BucketsMessage.Total(q.queryId(), q.name(), s == null ? 0 : s.buckets.total()));
  }

  /**
   * A client node restates: its sessions of an earlier incarnation, and the ones it no longer has, are gone with
   * their grants; the grants it holds are taken back in the grace period of a new server, and revoked once the server
   * serves (they were freed meanwhile); the requests it waits for are queued if they are not.
   */
  private void serverRestate(String from, BucketsMessage.Restate r) {
    if (!view.takesRestatement(r.term())) {
      return; // the node sends it again once its view has this server's term
    }
    view.restated(from, r.inc());
    sendTo(from, new BucketsMessage.Restated(r.inc(), view.servingTerm()));
    Set<SessionKey> live = new HashSet<>();
    for (String s : r.sessions()) {
      live.add(new SessionKey(from, r.inc(), s));
    }
    for (SessionKey k : List.copyOf(sessions.keySet())) {
      if (k.node().equals(from) && !live.contains(k)) {
        endSession(k);
      }
    }
    for (SessionKey k : live) {
      touch(k);
    }
    Set<String> changed = new TreeSet<>();
    // grants of the live sessions that the node neither holds nor waits for: their release was lost with a link (a
    // grant of a request it still waits for is on its way to it, and is sent again below)
    Set<Long> held = new HashSet<>();
    for (BucketsMessage.Held h : r.held()) {
      held.add(h.grantId());
    }
    Set<SessionRequest> waited = new HashSet<>();
    for (BucketsMessage.Wanted w : r.wanted()) {
      waited.add(new SessionRequest(new SessionKey(from, r.inc(), w.session()), w.reqId()));
    }
    for (Sem s : List.copyOf(sems.values())) {
      for (SGrant g : List.copyOf(s.grants.values())) {
        if (live.contains(g.session()) && !held.contains(g.grantId())
            && !waited.contains(new SessionRequest(g.session(), g.reqId()))) {
          free(s, g);
          changed.add(s.name);
        }
      }
    }
    for (BucketsMessage.Held h : r.held()) {
      SessionKey key = new SessionKey(from, r.inc(), h.session());
      Sem s = sem(h.name(), h.limit());
      SGrant g = s == null ? null : s.grants.get(h.grantId());
      if (g != null && g.session().equals(key)) {
        continue;
      }
      int resources = resources(h.limit(), s);
      if (s != null && g == null && inGrace() && live.contains(key) && resources > 0) {
        // a grant of the previous server, taken back whatever handle it came through and in whatever order the
        // holders restate: the previous server's grants fitted together under its rule, so the ones restated do.
        // Laid out again in the canonical shape, in as many buckets as their total needs. (Fitted one by one into
        // each one's own handle's buckets, a grant restated after one of a larger handle did not fit, was revoked,
        // and its permits went to a waiter while its holder still trusted it: seed 849 of SEMAPHORE_BUCKETS with
        // re-elections that do not pause.)
        long needed = (s.buckets.total() + h.permits() + s.buckets.size() - 1) / s.buckets.size();
        int buckets = (int) Math.min(Buckets.MAX_BUCKETS, Math.max(needed, Math.max(resources, s.buckets.highest())));
        if (!s.buckets.fits(h.permits(), buckets)) {
          sendTo(from, new BucketsMessage.Revoked(h.session(), h.name(), h.grantId()));
          continue;
        }
        s.buckets.take(h.permits(), buckets);
        s.grants.put(h.grantId(), new SGrant(key, 0, h.grantId(), h.permits(), resources, h.tag(), r.echo()));
        changed.add(h.name());
      } else {
        sendTo(from, new BucketsMessage.Revoked(h.session(), h.name(), h.grantId()));
      }
    }
    for (BucketsMessage.Wanted w : r.wanted()) {
      SessionKey key = new SessionKey(from, r.inc(), w.session());
      Sem s = sem(w.name(), w.limit());
      if (s == null) {
        sendTo(from, new BucketsMessage.Refused(w.session(), w.reqId(), refusal(w.name(), w.limit())));
        continue;
      }
      if (!again(s, key, w.reqId(), r.echo())) {
        s.queue.addLast(new SWait(key, w.reqId(), w.permits(), w.limit(), w.tag(), r.echo(), now));
      }
      changed.add(w.name());
    }
    // requests of the restated sessions that are not wanted any more
    for (Sem s : sems.values()) {
      Set<Long> wanted = new HashSet<>();
      for (BucketsMessage.Wanted w : r.wanted()) {
        if (w.name().equals(s.name)) {
          wanted.add(w.reqId());
        }
      }
      if (s.queue.removeIf(x -> live.contains(x.session) && !wanted.contains(x.reqId))) {
        changed.add(s.name);
      }
    }
    if (view.endGraceIfAllRestated(now)) {
      serveQueues(); // every member restated what it holds: nothing the server before granted is unknown here
    }
    for (String n : changed) {
      Sem s = sems.get(n);
      if (s != null) {
        fact(s);
        serve(s);
      }
    }
  }

  /** The session {@code key} is gone: its grants come back, its requests leave the queues. */
  private void endSession(SessionKey key) {
    sessions.remove(key);
    for (Sem s : List.copyOf(sems.values())) {
      boolean changed = false;
      for (SGrant g : List.copyOf(s.grants.values())) {
        if (g.session().equals(key)) {
          free(s, g);
          changed = true;
        }
      }
      changed |= s.queue.removeIf(x -> x.session.equals(key));
      if (changed) {
        serve(s);
      }
    }
  }

  /** The name's record, made when first asked; null when {@code limit} disagrees with its bucket size. */
  private Sem sem(String name, int limit) {
    int size = bucketSize > 0 ? bucketSize : limit;
    Sem s = sems.get(name);
    if (s == null) {
      if (limit < 1 || limit % size != 0 || limit / size > Buckets.MAX_BUCKETS) {
        return null;
      }
      s = new Sem(name, size);
      sems.put(name, s);
    }
    return s.buckets.size() == size && limit % size == 0 && limit / size <= Buckets.MAX_BUCKETS ? s : null;
  }

  private String refusal(String name, int limit) {
    Sem s = sems.get(name);
    String shown = shown(name);
    if (bucketSize > 0) {
      return "maxPermits " + limit + " of " + shown + " is not a multiple of the cluster's bucketSize " + bucketSize
          + " (at most " + Buckets.MAX_BUCKETS + " buckets)";
    }
    return "maxPermits " + limit + " of " + shown + " differs from the " + (s == null ? "?" : s.buckets.size())
        + " of the handles that hold or wait for it now; with no bucketSize, the handles of a name must agree on "
        + "maxPermits (set bucketSize for handles that differ)";
  }

  private static int resources(int limit, Sem s) {
    return s == null || limit % s.buckets.size() != 0 ? 0 : limit / s.buckets.size();
  }

  private boolean fits(Sem s, SWait w) {
    return s.buckets.fits(w.permits, resources(w.limit, s));
  }

  /** Grants the waiters of {@code s} in order while the first fits: no later one passes it. */
  private void serve(Sem s) {
    while (deciding() && !inGrace() && !s.queue.isEmpty() && fits(s, s.queue.peekFirst())) {
      SWait w = s.queue.pollFirst();
      if (++counter >= 1L << COUNTER_BITS) {
        counter--;
        s.queue.addFirst(w); // the term's tokens are used up: a new term (a new election) is needed
        break;
      }
      long token = view.servingTerm() << COUNTER_BITS | counter;
      s.lastToken = token;
      int resources = resources(w.limit, s);
      s.buckets.take(w.permits, resources);
      s.grants.put(token, new SGrant(w.session, w.reqId, token, w.permits, resources, w.tag, w.echo));
      touch(w.session);
      sendTo(w.session.node(), new BucketsMessage.Grant(view.servingTerm(), w.session.session(), w.reqId, s.name, token, token,
          s.buckets.total(), w.echo, token));
      fact(s);
    }
    forgetIfIdle(s);
  }

  private void serveQueues() {
    for (Sem s : List.copyOf(sems.values())) {
      serve(s);
    }
  }

  private void free(Sem s, SGrant g) {
    s.grants.remove(g.grantId());
    s.buckets.give(g.permits());
    fact(s);
  }

  private void forgetIfIdle(Sem s) {
    if (s.idle() && s.buckets.total() == 0) {
      sems.remove(s.name); // the next request fixes the name's bucket size again
    }
  }

  private void fact(Sem s) {
    if (reportBuckets && s.name.startsWith(SEMAPHORE_PREFIX)) {
      out.add(new Output.Fact<>(new Observation.Buckets(self, shown(s.name), s.buckets.size(), s.buckets.counts(),
          s.buckets.highest(), s.buckets.total())));
    }
  }

  // ================================================================ the clients

  private void acquire(Input.Acquire<BucketsMessage> in) {
    if (reqs.containsKey(in.requestId())) {
      throw new IllegalStateException("request id " + in.requestId() + " is already in use");
    }
    Claim c = in.claim();
    String name;
    Claim claim;
    if (c.mode() == Claim.Mode.PERMITS) {
      name = SEMAPHORE_PREFIX + c.name();
      claim = c;
    } else if (locks && c.mode() == Claim.Mode.EXCLUSIVE) {
      name = LOCK_PREFIX + c.name();
      claim = Claim.permits(c.name(), 1, 1).withTag(c.tag());
    } else {
      out.add(new Output.Failed<>(in.requestId(), c.name(), Output.Failure.UNAVAILABLE, Set.of(),
          ALGORITHM + " serves " + (locks ? "exclusive locks and " : "") + "semaphores, not " + c));
      return;
    }
    int size = bucketSize > 0 ? bucketSize : claim.limit();
    if (claim.limit() % size != 0 || claim.limit() / size > Buckets.MAX_BUCKETS) {
      out.add(new Output.Failed<>(in.requestId(), c.name(), Output.Failure.REFUSED, Set.of(), refusal(name,
          claim.limit())));
      return;
    }
    CSession s = csessions.computeIfAbsent(in.session(), CSession::new);
    CReq r = new CReq(in.requestId(), s, claim, name, in.attempt());
    reqs.put(r.id, r);
    if (!r.attempt && quorum.lost(now)) {
      failNoQuorum(r);
    } else if (serverReachable()) {
      r.lastSent = now;
      toServer(new BucketsMessage.Acquire(inc, s.name, r.id, name, claim.permits(), claim.limit(), r.attempt,
          claim.tag(), now));
    } else if (r.attempt) {
      fail(r, Output.Failure.UNAVAILABLE, "no " + ALGORITHM + " server is reachable");
    }
    // else it waits for a server: restated to the next one the node sees, or failed once no quorum can form
  }

  private void clientGrant(String from, BucketsMessage.Grant g) {
    if (!view.fromServer(from, g.term())) {
      return; // not the server of this view's: what it granted is gone with its term (it restarted, or started over)
    }
    CReq r = reqs.get(g.reqId());
    if (r != null && r.state == State.HELD && r.grantId == g.grantId()) {
      return; // the same grant again: the answer to a keep-alive that crossed it
    }
    if (r == null || r.state != State.WAITING || !r.session.name.equals(g.session())) {
      // given up meanwhile: the permits go back at once
      toServer(new BucketsMessage.Release(inc, g.session(), g.name(), g.grantId()));
      return;
    }
    if (g.token() < g.floor()) {
      // sent again after later grants of the name, some of which may have ended: told now, its token would not be
      // above theirs (seed 92099 of SEMAPHORE). Given back, and asked for again: the next grant takes a new token
      toServer(new BucketsMessage.Release(inc, g.session(), g.name(), g.grantId()));
      r.lastSent = now;
      toServer(new BucketsMessage.Acquire(inc, r.session.name, r.id, r.name, r.claim.permits(), r.claim.limit(),
          r.attempt, r.claim.tag(), now));
      return;
    }
    CSession s = r.session;
    s.window = Math.max(s.window, g.echo() + trust);
    if (s.window <= now) {
      // trusted for no time at all: the grant answers a message older than the trust it gives
      toServer(new BucketsMessage.Release(inc, s.name, r.name, g.grantId()));
      r.lastSent = now;
      toServer(new BucketsMessage.Acquire(inc, s.name, r.id, r.name, r.claim.permits(), r.claim.limit(), r.attempt,
          r.claim.tag(), now));
      return;
    }
    r.state = State.HELD;
    r.grantId = g.grantId();
    r.token = g.token();
    r.validUntil = s.window;
    lastTotal.put(r.name, g.total());
    out.add(new Output.Granted<>(r.id, r.claim.name(), r.token, r.claim.permits(), s.window - trust, s.window));
  }

  private void clientBusy(String from, BucketsMessage.Busy b) {
    CReq r = reqs.get(b.reqId());
    if (!from.equals(view.server()) || r == null || r.state != State.WAITING) {
      return;
    }
    lastTotal.put(r.name, b.total());
    fail(r, Output.Failure.CONTENDED, "");
  }

  private void clientRefused(String from, BucketsMessage.Refused f) {
    CReq r = reqs.get(f.reqId());
    if (!from.equals(view.server()) || r == null || r.state != State.WAITING) {
      return;
    }
    fail(r, Output.Failure.REFUSED, f.detail());
  }

  private void clientRenewed(String from, BucketsMessage.SessionRenewed r) {
    CSession s = csessions.get(r.session());
    if (!from.equals(view.server()) || s == null) {
      return;
    }
    if (r.echo() + trust > now) {
      s.window = Math.max(s.window, r.echo() + trust);
    }
    for (long id : List.copyOf(s.renewWaiting)) {
      CReq q = reqs.get(id);
      if (q != null && q.state == State.HELD && q.validUntil > now && s.window > q.validUntil) {
        q.validUntil = s.window;
        out.add(new Output.Renewed<>(id, s.window - trust, s.window));
      }
    }
    s.renewWaiting.clear();
  }

  private void clientRevoked(String from, BucketsMessage.Revoked v) {
    if (!from.equals(view.server())) {
      return;
    }
    for (CReq r : List.copyOf(reqs.values())) {
      if (r.state == State.HELD && r.grantId == v.grantId() && r.name.equals(v.name())
          && r.session.name.equals(v.session())) {
        lose(r, Output.LostReason.REVOKED, "the " + ALGORITHM + " server " + from + " no longer knows this grant");
      }
    }
  }

  private void clientTotal(String from, BucketsMessage.Total t) {
    lastTotal.put(t.name(), t.total());
    Query q = queries.remove(t.queryId());
    if (q != null) {
      out.add(new Output.Permits<>(q.id(), q.name(), available(q)));
    }
  }

  /** Asks the server who holds a lock; unknown at once with no server, or after {@code peerTimeout}. */
  private void holderQuery(Input.HolderQuery<BucketsMessage> q) {
    if (!locks || !serverReachable()) {
      out.add(Output.Holder.unknown(q));
      return;
    }
    holderAsks.put(q.queryId(), new HolderAsk(q.name(), now));
    toServer(new BucketsMessage.WhoHolds(inc, q.queryId(), LOCK_PREFIX + q.name()));
  }

  private void clientHolds(String from, BucketsMessage.Holds h) {
    HolderAsk a = holderAsks.get(h.queryId());
    if (a != null && view.fromServer(from, h.term()) && h.name().equals(LOCK_PREFIX + a.name())) {
      holderAsks.remove(h.queryId());
      out.add(new Output.Holder<>(h.queryId(), a.name(), h.tag()));
    }
  }

  private void permitsQuery(Input.PermitsQuery<BucketsMessage> q) {
    Query query = new Query(q.queryId(), SEMAPHORE_PREFIX + q.name(), q.limit());
    if (serverReachable()) {
      queries.put(q.queryId(), query);
      toServer(new BucketsMessage.Query(inc, q.queryId(), query.name()));
    } else {
      out.add(new Output.Permits<>(q.queryId(), query.name(), available(query)));
    }
  }

  /** What is left of {@code q}'s handle's permits by the server's last word: its limit less the permits out. */
  private int available(Query q) {
    long total = lastTotal.getOrDefault(q.name(), 0L);
    return (int) Math.max(0, q.limit() - total);
  }

  private void release(long id) {
    CReq r = reqs.get(id);
    if (r == null) {
      return;
    }
    if (r.state == State.HELD) {
      reqs.remove(id);
      r.session.renewWaiting.remove(id);
      lastTotal.computeIfPresent(r.name, (k, v) -> Math.max(0, v - r.claim.permits()));
      toServer(new BucketsMessage.Release(inc, r.session.name, r.name, r.grantId));
    } else {
      reqs.remove(id);
      toServer(new BucketsMessage.Cancel(inc, r.session.name, id));
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
    toServer(new BucketsMessage.Cancel(inc, r.session.name, id));
  }

  private void renew(long id) {
    CReq r = reqs.get(id);
    if (r == null || r.state != State.HELD) {
      out.add(new Output.Lost<>(id, r == null ? "" : r.claim.name(), Output.LostReason.REVOKED, "not held"));
      return;
    }
    CSession s = r.session;
    s.renewWaiting.add(id);
    // one renewal in flight serves every grant of the session; another goes only after a twelfth of the term
    if (s.renewSentAt == Long.MIN_VALUE || now - s.renewSentAt >= term / RENEW_RETRY) {
      s.renewSentAt = now;
      toServer(new BucketsMessage.SessionRenew(inc, s.name, now));
    }
  }

  private void closeSession(String session) {
    CSession s = csessions.remove(session);
    if (s == null) {
      return;
    }
    for (CReq r : List.copyOf(reqs.values())) {
      if (r.session == s) {
        reqs.remove(r.id);
        if (r.state == State.HELD) {
          toServer(new BucketsMessage.Release(inc, s.name, r.name, r.grantId));
        } else {
          toServer(new BucketsMessage.Cancel(inc, s.name, r.id));
        }
      }
    }
  }

  private void fail(CReq r, Output.Failure failure, String detail) {
    reqs.remove(r.id);
    out.add(new Output.Failed<>(r.id, r.claim.name(), failure,
        failure == Output.Failure.UNAVAILABLE ? unreachable() : Set.of(), detail));
  }

  /** A wait ends: the node can tell that no quorum can form around it ({@link QuorumWatch}). */
  private void failNoQuorum(CReq r) {
    reqs.remove(r.id);
    out.add(new Output.Failed<>(r.id, r.claim.name(), Output.Failure.UNAVAILABLE, quorum.missing(), quorum.detail()));
    toServer(new BucketsMessage.Cancel(inc, r.session.name, r.id)); // a server still linked forgets it
  }

  /** Tells the quorum watch which peers are linked and whether the node has seen a view. */
  private void watchQuorum() {
    quorum.update(now, up, view.term() > 0);
  }

  private void lose(CReq r, Output.LostReason reason, String detail) {
    reqs.remove(r.id);
    r.session.renewWaiting.remove(r.id);
    out.add(new Output.Lost<>(r.id, r.claim.name(), reason, detail));
    if (reason == Output.LostReason.EXPIRED && mutationGiveBackOnLoss) {
      toServer(new BucketsMessage.Release(inc, r.session.name, r.name, r.grantId));
    } else if (reason == Output.LostReason.EXPIRED) {
      // the server frees them a term after the session's last renewal; if it is still renewed, it hears it then
      r.lapseUntil = now + Math.max(1, term - trust);
      lapsing.put(r.id, r);
    }
  }

  private Set<String> unreachable() {
    return view.unreachable(up);
  }

  /**
   * Everything this node has at the server, first on every new link to it and whenever the server changes, and
   * again every third of the term until the server says it took it.
   */
  private void restateToServer() {
    if (!serverReachable()) {
      return;
    }
    view.restatementSent(now);
    List<String> names = new ArrayList<>(csessions.keySet());
    List<BucketsMessage.Held> held = new ArrayList<>();
    List<BucketsMessage.Wanted> wanted = new ArrayList<>();
    for (CReq r : lapsing.values()) {
      held.add(new BucketsMessage.Held(r.session.name, r.name, r.grantId, r.claim.permits(), r.claim.limit(),
          r.claim.tag()));
    }
    for (CReq r : reqs.values()) {
      if (r.state == State.HELD) {
        held.add(new BucketsMessage.Held(r.session.name, r.name, r.grantId, r.claim.permits(), r.claim.limit(),
            r.claim.tag()));
      } else {
        r.lastSent = now;
        wanted.add(new BucketsMessage.Wanted(r.session.name, r.id, r.name, r.claim.permits(), r.claim.limit(),
            r.claim.tag()));
      }
    }
    toServer(new BucketsMessage.Restate(inc, view.term(), names, held, wanted, now));
  }

  private boolean serverReachable() {
    return view.reachable(up);
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
      serveQueues(); // a server that had lost its majority may decide again
    }
  }

  private void peerDown(String p) {
    if (!peers.contains(p)) {
      return;
    }
    up.remove(p);
    if (mutationFreeOnPeerDown && view.serving()) {
      for (SessionKey k : List.copyOf(sessions.keySet())) {
        if (k.node().equals(p)) {
          endSession(k);
        }
      }
    }
  }

  private void tick() {
    // the server: sessions gone silent, waiters gone silent
    if (view.serving()) {
      if (!mutationNoSessionExpiry) {
        for (Map.Entry<SessionKey, SSession> e : List.copyOf(sessions.entrySet())) {
          if (e.getValue().expiry <= now && !e.getKey().node().equals(self)) {
            endSession(e.getKey());
          }
        }
      }
      for (Sem s : List.copyOf(sems.values())) {
        if (s.queue.removeIf(w -> !w.session.node().equals(self) && w.lastHeard + term <= now)) {
          serve(s);
        }
      }
      serveQueues();
    }
    // the clients: the restatement until taken, trust running out, keep-alives, no server for too long
    boolean reachable = serverReachable();
    if (now >= view.restateDue(up)) {
      restateToServer();
    }
    watchQuorum();
    for (var i = holderAsks.entrySet().iterator(); i.hasNext(); ) {
      var e = i.next();
      if (now >= e.getValue().askedAt() + peerTimeout) {
        i.remove();
        out.add(new Output.Holder<>(e.getKey(), e.getValue().name(), ""));
      }
    }
    if (reachable) {
      for (CSession s : csessions.values()) {
        if (!s.renewWaiting.isEmpty() && now - s.renewSentAt >= term / RENEW_RETRY) {
          // unanswered: a server not yet active when it took this node's restatement, or one that is gone, answered
          // nothing; asked again, the server of the new view renews the session within its grants' windows
          s.renewSentAt = now;
          toServer(new BucketsMessage.SessionRenew(inc, s.name, now));
        }
      }
    }
    for (CReq r : List.copyOf(reqs.values())) {
      if (r.state == State.WAITING) {
        if (quorum.lost(now)) {
          failNoQuorum(r);
        } else if (reachable && now >= r.lastSent + term / 3) {
          r.lastSent = now;
          toServer(new BucketsMessage.Acquire(inc, r.session.name, r.id, r.name, r.claim.permits(), r.claim.limit(),
              r.attempt, r.claim.tag(), now));
        }
      }
    }
  }

  /**
   * Every grant whose window has closed by now is lost, in whatever step comes first: an input at the very moment a
   * window closes (a renewal of another grant, say) is no reason to tell the loss a step later (buckets seed 219009 of
   * {@code SEMAPHORE_BUCKETS}: a Renew stepped at the instant a grant's window closed, before the timer).
   */
  private void loseExpired() {
    for (CReq r : List.copyOf(reqs.values())) {
      if (r.state == State.HELD && r.validUntil <= now) {
        lose(r, Output.LostReason.EXPIRED, "");
      }
    }
    for (var i = lapsing.values().iterator(); i.hasNext(); ) {
      CReq r = i.next();
      if (r.lapseUntil > now) {
        break; // in the order they lapsed, a quarter term each
      }
      i.remove();
      toServer(new BucketsMessage.Release(inc, r.session.name, r.name, r.grantId));
    }
  }

  private void settle() {
    drain();
    watchQuorum();
    long next = lapsing.isEmpty() ? NONE : lapsing.values().iterator().next().lapseUntil;
    if (view.serving()) {
      if (!mutationNoSessionExpiry) {
        for (Map.Entry<SessionKey, SSession> e : sessions.entrySet()) {
          if (!e.getKey().node().equals(self)) {
            next = Math.min(next, e.getValue().expiry);
          }
        }
      }
      for (Sem s : sems.values()) {
        for (SWait w : s.queue) {
          if (!w.session.node().equals(self)) {
            next = Math.min(next, w.lastHeard + term);
          }
        }
        if (!s.queue.isEmpty() && inGrace()) {
          next = Math.min(next, view.graceUntil());
        }
      }
    }
    next = Math.min(next, view.restateDue(up));
    for (HolderAsk a : holderAsks.values()) {
      next = Math.min(next, a.askedAt() + peerTimeout);
    }
    if (serverReachable()) {
      for (CSession s : csessions.values()) {
        if (!s.renewWaiting.isEmpty()) {
          next = Math.min(next, s.renewSentAt + term / RENEW_RETRY);
        }
      }
    }
    for (CReq r : reqs.values()) {
      if (r.state == State.HELD) {
        next = Math.min(next, r.validUntil);
      } else {
        next = Math.min(next, serverReachable() ? Math.min(r.lastSent + term / 3, quorum.lostAt()) : quorum.lostAt());
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

  // ================================================================ sending

  private void toServer(BucketsMessage m) {
    if (view.server() != null) {
      sendTo(view.server(), m);
    }
  }

  private void sendTo(String node, BucketsMessage m) {
    if (node.equals(self)) {
      local.add(new Local(self, m));
    } else if (up.contains(node)) {
      out.add(new Output.Send<>(node, m));
    }
  }

  /** A name as the user gave it: without the prefix that keeps locks and semaphores apart. */
  private static String shown(String name) {
    return name.isEmpty() ? name : name.substring(1);
  }
}
