package dev.tumbler.peer.buckets;

import dev.tumbler.peer.core.Agenda;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.LostGrants;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.election.ElectedServer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The client side of {@code buckets} (§6.2), on every node: the node's sessions, each with one lease renewed by any of
 * its grants (L-8); the echo rule for a grant's trust; grants lost when their windows closed, kept a quarter term
 * ({@link LostGrants}); what the server last said of each name's permits ({@code availablePermits}, K-V8). The
 * {@link ElectedServer} machine keeps the requests that wait and restates to the server. Mutable; owned by one
 * {@link BucketsCore}.
 */
final class BucketsClient implements ElectedServer.Client<BucketsMessage, BucketsClient.Req> {

  private final BucketsCore core;
  private final BucketsServer server;
  private final int bucketSize;
  private final boolean locks;
  private final long term;

  private final Map<String, CSession> sessions = new LinkedHashMap<>();
  /**
   * The requests by the end of their window (held ones; the others rest with no moment), in the order they were
   * made: what a step's expiry and the wake-up look at, instead of every request the node has.
   */
  private final Agenda<Req> windows = new Agenda<>();
  /**
   * Grants lost when their windows closed: each is kept at the server (restated with the rest) a quarter term more, as
   * the server's own term would keep it, and released then, so that the holder's lost listeners run before another
   * can be granted its permits (DESIGN's lease rule).
   */
  private final LostGrants<Req> lost;
  /** The permits of each name out at the server, as it last said, less what this node released since. */
  private final Map<String, Long> lastTotal = new HashMap<>();

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

  /** A request of one of this node's sessions. */
  static final class Req extends ElectedServer.Request {
    final CSession session;
    /** Its name on the wire and at the server: the claim's, behind the lock or semaphore prefix. */
    final String name;
    long grantId;
    long token;
    /**
     * Until when the client was told it may trust the grant: its session's window when granted or last renewed for
     * it. The session may live longer (another grant of it renewed it); a grant not renewed still ends here.
     */
    long validUntil;

    Req(long id, CSession session, Claim claim, String name, boolean attempt) {
      super(id, claim, attempt);
      this.session = session;
      this.name = name;
    }
  }

  BucketsClient(BucketsCore core, BucketsServer server, int bucketSize, boolean locks) {
    this.core = core;
    this.server = server;
    this.bucketSize = bucketSize;
    this.locks = locks;
    this.term = core.term();
    this.lost = new LostGrants<>(term);
  }

  // ================================================================ the driver's inputs

  @Override
  public void acquire(Input.Acquire<BucketsMessage> in) {
    Claim c = in.claim();
    String name;
    Claim claim;
    if (c.mode() == Claim.Mode.PERMITS) {
      name = BucketsCore.SEMAPHORE_PREFIX + c.name();
      claim = c;
    } else if (locks && c.mode() == Claim.Mode.EXCLUSIVE) {
      name = BucketsCore.LOCK_PREFIX + c.name();
      claim = Claim.permits(c.name(), 1, 1).withTag(c.tag());
    } else {
      core.emit(new Output.Failed<>(in.requestId(), c.name(), Output.Failure.UNAVAILABLE, Set.of(),
          BucketsCore.ALGORITHM + " serves " + (locks ? "exclusive locks and " : "") + "semaphores, not " + c));
      return;
    }
    int size = bucketSize > 0 ? bucketSize : claim.limit();
    if (claim.limit() % size != 0 || claim.limit() / size > Buckets.MAX_BUCKETS) {
      core.emit(new Output.Failed<>(in.requestId(), c.name(), Output.Failure.REFUSED, Set.of(),
          server.refusal(name, claim.limit())));
      return;
    }
    CSession s = sessions.computeIfAbsent(in.session(), CSession::new);
    Req r = new Req(in.requestId(), s, claim, name, in.attempt());
    core.add(r);
    windows.add(r);
    windows.rest(r, Agenda.NONE); // no window until granted
    core.ask(r);
  }

  @Override
  public void forgot(Req r) {
    windows.remove(r);
  }

  @Override
  public void release(Req r) {
    windows.remove(r);
    if (r.held()) {
      r.session.renewWaiting.remove(r.id());
      lastTotal.computeIfPresent(r.name, (k, v) -> Math.max(0, v - r.claim().permits()));
      core.toServer(new BucketsMessage.Release(core.inc(), r.session.name, r.name, r.grantId));
    } else {
      core.toServer(new BucketsMessage.Cancel(core.inc(), r.session.name, r.id()));
    }
  }

  @Override
  public void renew(long id) {
    Req r = core.request(id);
    if (r == null || !r.held()) {
      core.emit(new Output.Lost<>(id, r == null ? "" : r.claim().name(), Output.LostReason.REVOKED, "not held"));
      return;
    }
    CSession s = r.session;
    s.renewWaiting.add(id);
    // one renewal in flight serves every grant of the session; another goes only after a twelfth of the term
    if (s.renewSentAt == Long.MIN_VALUE || core.now() >= core.renewAgainAt(s.renewSentAt)) {
      s.renewSentAt = core.now();
      core.toServer(new BucketsMessage.SessionRenew(core.inc(), s.name, core.now()));
    }
  }

  @Override
  public void closeSession(String session) {
    CSession s = sessions.remove(session);
    if (s == null) {
      return;
    }
    for (Req r : List.copyOf(core.requests())) {
      if (r.session == s) {
        core.remove(r.id());
        windows.remove(r);
        if (r.held()) {
          core.toServer(new BucketsMessage.Release(core.inc(), s.name, r.name, r.grantId));
        } else {
          core.toServer(new BucketsMessage.Cancel(core.inc(), s.name, r.id()));
        }
      }
    }
  }

  /** Asks the server who holds a lock; unknown at once with no server, or after {@code peerTimeout}. */
  @Override
  public void holderQuery(Input.HolderQuery<BucketsMessage> q) {
    if (!locks) {
      core.emit(Output.Holder.unknown(q));
      return;
    }
    String name = BucketsCore.LOCK_PREFIX + q.name();
    core.askHolder(q, name, new BucketsMessage.WhoHolds(core.inc(), q.queryId(), name));
  }

  /**
   * Asks the server every grant under the names asked about: semaphores, and locks where this core serves them. Unknown
   * at once with no server, or after {@code peerTimeout}; the names come back without their prefix.
   */
  @Override
  public void listQuery(Input.ListQuery<BucketsMessage> q) {
    List<String> prefixes = new ArrayList<>();
    for (String p : q.prefixes()) {
      prefixes.add(BucketsCore.SEMAPHORE_PREFIX + p);
      if (locks) {
        prefixes.add(BucketsCore.LOCK_PREFIX + p);
      }
    }
    core.askListing(q, new BucketsMessage.ListHeld(core.inc(), q.queryId(), prefixes), () -> { });
  }

  private void listed(String from, BucketsMessage.Listing l) {
    if (!core.listingAnswered(from, l)) {
      return;
    }
    List<Output.Listed> held = new ArrayList<>();
    for (Output.Listed e : l.held()) {
      held.add(new Output.Listed(e.name().substring(1), e.mode(), e.permits(), e.holder(), e.token(),
          e.tokenIsHolders(), e.remainingNanos()));
    }
    core.emit(new Output.Listing<>(l.queryId(), true, held));
  }

  @Override
  public void permitsQuery(Input.PermitsQuery<BucketsMessage> q) {
    String name = BucketsCore.SEMAPHORE_PREFIX + q.name();
    int limit = q.limit();
    core.ask(q.queryId(), name, name, new BucketsMessage.Query(core.inc(), q.queryId(), name),
        () -> new Output.Permits<>(q.queryId(), name, available(name, limit)));
  }

  /** What is left of a handle of {@code limit} permits by the server's last word: its limit less the permits out. */
  private int available(String name, int limit) {
    long total = lastTotal.getOrDefault(name, 0L);
    return (int) Math.max(0, limit - total);
  }

  // ================================================================ the machine's hooks

  @Override
  public BucketsMessage ask(Req r) {
    return new BucketsMessage.Acquire(core.inc(), r.session.name, r.id(), r.name, r.claim().permits(),
        r.claim().limit(), r.attempt(), r.claim().tag(), core.now());
  }

  @Override
  public BucketsMessage cancel(Req r) {
    return new BucketsMessage.Cancel(core.inc(), r.session.name, r.id());
  }

  /**
   * Every grant whose window has closed by now is lost, in whatever step comes first: an input at the very moment a
   * window closes (a renewal of another grant, say) is no reason to tell the loss a step later (buckets seed 219009 of
   * {@code SEMAPHORE_BUCKETS}: a Renew stepped at the instant a grant's window closed, before the timer). Lost grants
   * kept their quarter term go back.
   */
  @Override
  public void expire() {
    windows.visit(core.now(), r -> {
      if (r.held() && r.validUntil <= core.now()) {
        lose(r, Output.LostReason.EXPIRED, "");
      } else {
        windows.rest(r, r.held() ? r.validUntil : Agenda.NONE);
      }
    });
    for (Req r : lost.due(core.now())) {
      core.toServer(new BucketsMessage.Release(core.inc(), r.session.name, r.name, r.grantId));
    }
  }

  /** Session renewals left unanswered. */
  @Override
  public void tick(boolean reachable) {
    if (!reachable) {
      return;
    }
    for (CSession s : sessions.values()) {
      if (!s.renewWaiting.isEmpty() && core.now() >= core.renewAgainAt(s.renewSentAt)) {
        // unanswered: a server not yet active when it took this node's restatement, or one that is gone, answered
        // nothing; asked again, the server of the new view renews the session within its grants' windows
        s.renewSentAt = core.now();
        core.toServer(new BucketsMessage.SessionRenew(core.inc(), s.name, core.now()));
      }
    }
  }

  @Override
  public long next(long next, boolean reachable) {
    next = Math.min(next, lost.next());
    if (reachable) {
      for (CSession s : sessions.values()) {
        if (!s.renewWaiting.isEmpty()) {
          next = Math.min(next, core.renewAgainAt(s.renewSentAt));
        }
      }
    }
    return Math.min(next, windows.earliest(r -> r.held() ? r.validUntil : Agenda.NONE, Agenda.NONE));
  }

  /** The node's sessions, the grants they hold (lost ones kept included) and the requests they wait for. */
  @Override
  public BucketsMessage restatement(long viewTerm) {
    List<String> names = new ArrayList<>(sessions.keySet());
    List<BucketsMessage.Held> held = new ArrayList<>();
    List<BucketsMessage.Wanted> wanted = new ArrayList<>();
    for (Req r : lost.grants()) {
      held.add(held(r));
    }
    for (Req r : core.requests()) {
      if (r.held()) {
        held.add(held(r));
      } else {
        wanted.add(new BucketsMessage.Wanted(r.session.name, r.id(), r.name, r.claim().permits(), r.claim().limit(),
            r.claim().tag()));
      }
    }
    return new BucketsMessage.Restate(core.inc(), viewTerm, names, held, wanted, core.now());
  }

  private static BucketsMessage.Held held(Req r) {
    return new BucketsMessage.Held(r.session.name, r.name, r.grantId, r.claim().permits(), r.claim().limit(),
        r.claim().tag());
  }

  // ================================================================ the server's answers

  @Override
  public void receive(String from, BucketsMessage message) {
    switch ((BucketsMessage.ToClient) message) {
      case BucketsMessage.Grant g -> grant(from, g);
      case BucketsMessage.Busy b -> busy(from, b);
      case BucketsMessage.Refused r -> refused(from, r);
      case BucketsMessage.SessionRenewed r -> renewed(from, r);
      case BucketsMessage.Revoked r -> revoked(from, r);
      case BucketsMessage.Total t -> total(t);
      case BucketsMessage.Holds h -> core.holderAnswered(from, h.term(), h.queryId(), h.name(), h.tag());
      case BucketsMessage.Listing l -> listed(from, l);
      case BucketsMessage.Restated r -> core.restated(from, r.inc(), r.term());
    }
  }

  private void grant(String from, BucketsMessage.Grant g) {
    if (!core.fromServer(from, g.term())) {
      return; // not the server of this view's: what it granted is gone with its term (it restarted, or started over)
    }
    Req r = core.request(g.reqId());
    if (r != null && r.held() && r.grantId == g.grantId()) {
      return; // the same grant again: the answer to a keep-alive that crossed it
    }
    if (r == null || r.held() || !r.session.name.equals(g.session())) {
      // given up meanwhile: the permits go back at once
      core.toServer(new BucketsMessage.Release(core.inc(), g.session(), g.name(), g.grantId()));
      return;
    }
    if (g.token() < g.floor()) {
      // sent again after later grants of the name, some of which may have ended: told now, its token would not be
      // above theirs (seed 92099 of SEMAPHORE). Given back, and asked for again: the next grant takes a new token
      core.toServer(new BucketsMessage.Release(core.inc(), g.session(), g.name(), g.grantId()));
      core.send(r);
      return;
    }
    CSession s = r.session;
    s.window = Math.max(s.window, g.echo() + core.trust());
    if (s.window <= core.now()) {
      // trusted for no time at all: the grant answers a message older than the trust it gives
      core.toServer(new BucketsMessage.Release(core.inc(), s.name, r.name, g.grantId()));
      core.send(r);
      return;
    }
    r.hold();
    r.grantId = g.grantId();
    r.token = g.token();
    r.validUntil = s.window;
    windows.rest(r, r.validUntil);
    lastTotal.put(r.name, g.total());
    core.emit(new Output.Granted<>(r.id(), r.claim().name(), r.token, r.claim().permits(), s.window - core.trust(),
        s.window));
  }

  private void busy(String from, BucketsMessage.Busy b) {
    Req r = core.request(b.reqId());
    if (!from.equals(core.server()) || r == null || r.held()) {
      return;
    }
    lastTotal.put(r.name, b.total());
    core.fail(r, Output.Failure.CONTENDED, "");
  }

  private void refused(String from, BucketsMessage.Refused f) {
    Req r = core.request(f.reqId());
    if (!from.equals(core.server()) || r == null || r.held()) {
      return;
    }
    core.fail(r, Output.Failure.REFUSED, f.detail());
  }

  private void renewed(String from, BucketsMessage.SessionRenewed msg) {
    CSession s = sessions.get(msg.session());
    if (!from.equals(core.server()) || s == null) {
      return;
    }
    if (msg.echo() + core.trust() > core.now()) {
      s.window = Math.max(s.window, msg.echo() + core.trust());
    }
    for (long id : List.copyOf(s.renewWaiting)) {
      Req q = core.request(id);
      if (q != null && q.held() && q.validUntil > core.now() && s.window > q.validUntil) {
        q.validUntil = s.window;
        windows.rest(q, q.validUntil);
        core.emit(new Output.Renewed<>(id, s.window - core.trust(), s.window));
      }
    }
    s.renewWaiting.clear();
  }

  private void revoked(String from, BucketsMessage.Revoked v) {
    if (!from.equals(core.server())) {
      return;
    }
    for (Req r : List.copyOf(core.requests())) {
      if (r.held() && r.grantId == v.grantId() && r.name.equals(v.name()) && r.session.name.equals(v.session())) {
        lose(r, Output.LostReason.REVOKED, "the " + BucketsCore.ALGORITHM + " server " + from
            + " no longer knows this grant");
      }
    }
  }

  private void total(BucketsMessage.Total t) {
    lastTotal.put(t.name(), t.total());
    core.answered(t.queryId(), t.name());
  }

  /** A held grant is lost; one whose window closed is kept a quarter term before it goes back ({@link LostGrants}). */
  private void lose(Req r, Output.LostReason reason, String detail) {
    core.remove(r.id());
    windows.remove(r);
    r.session.renewWaiting.remove(r.id());
    core.emit(new Output.Lost<>(r.id(), r.claim().name(), reason, detail));
    if (reason == Output.LostReason.EXPIRED && core.mutationGiveBackOnLoss) {
      core.toServer(new BucketsMessage.Release(core.inc(), r.session.name, r.name, r.grantId));
    } else if (reason == Output.LostReason.EXPIRED) {
      // the server frees them a term after the session's last renewal; if it is still renewed, it hears it then
      lost.keep(r, core.now());
    }
  }
}
