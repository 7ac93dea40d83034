package dev.tumbler.peer.buckets;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.election.ElectedServer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The server's table of {@code buckets} (§6.2), on the node that serves: for every name, its counters
 * ({@link Buckets}), the grants out and the requests waiting in arrival order; the sessions of the clients, each with
 * one lease (the seed's monitor). The {@link ElectedServer} machine says when this node serves, decides and may grant,
 * and keeps the grace. Mutable; owned by one {@link BucketsCore}.
 */
final class BucketsServer implements ElectedServer.Server<BucketsMessage> {

  private final BucketsCore core;
  private final long term;
  private final int bucketSize;
  private final Map<String, Sem> sems = new TreeMap<>();
  /**
   * The names the server's walks look at, in name order: every name someone waits for, and every name made or freed
   * since the last {@link #serveAll} (which forgets it if nobody holds or wants it). Serving, expiring waiters and the
   * next wake-up did the same on every name the server knew, on every step: with 100,000 names held, each step walked
   * them all. A name outside this set has nobody waiting, so those walks would not have changed it.
   */
  private final Map<String, Sem> busy = new TreeMap<>();
  private final Map<SessionKey, SSession> sessions = new LinkedHashMap<>();

  /** A session on the server: the node it lives on, that node's incarnation, and its name there. */
  private record SessionKey(String node, long inc, String session) {}

  private static final class SSession {
    long expiry;
  }

  private record SessionRequest(SessionKey session, long reqId) {}

  private record SGrant(SessionKey session, long reqId, long grantId, int permits, String tag, long echo) {}

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
    final Map<Long, SGrant> grants = new LinkedHashMap<>(2);
    final Deque<SWait> queue = new ArrayDeque<>(0); // one per name held: small until someone waits
    /** The token of this server's latest grant of the name (0 before the first). */
    long lastToken;

    Sem(String name, int size) {
      this.name = name;
      this.buckets = new Buckets(size);
      buckets.mutationReleaseLowestFirst = core.mutationReleaseLowestFirst;
      buckets.mutationCeilingOffByOne = core.mutationCeilingOffByOne;
    }

    boolean idle() {
      return grants.isEmpty() && queue.isEmpty();
    }
  }

  BucketsServer(BucketsCore core, int bucketSize) {
    this.core = core;
    this.term = core.term();
    this.bucketSize = bucketSize;
  }

  /** The counters of {@code name} (with its prefix), or null. */
  Buckets buckets(String name) {
    Sem s = sems.get(name);
    return s == null ? null : s.buckets;
  }

  // ================================================================ the machine's hooks

  @Override
  public void forget() {
    sems.clear();
    busy.clear();
    sessions.clear();
  }

  @Override
  public void serveAll() {
    for (Sem s : List.copyOf(busy.values())) {
      serve(s);
    }
    busy.values().removeIf(s -> s.queue.isEmpty());
  }

  /** Sessions gone silent for a term, and waiters gone silent. */
  @Override
  public void tick() {
    long now = core.now();
    if (!core.mutationNoSessionExpiry) {
      for (Map.Entry<SessionKey, SSession> e : List.copyOf(sessions.entrySet())) {
        if (e.getValue().expiry <= now && !e.getKey().node().equals(core.self())) {
          endSession(e.getKey());
        }
      }
    }
    for (Sem s : List.copyOf(busy.values())) {
      if (s.queue.removeIf(w -> !w.session.node().equals(core.self()) && w.lastHeard + term <= now)) {
        serve(s);
      }
    }
    serveAll();
  }

  @Override
  public long next(long next) {
    if (!core.mutationNoSessionExpiry) {
      for (Map.Entry<SessionKey, SSession> e : sessions.entrySet()) {
        if (!e.getKey().node().equals(core.self())) {
          next = Math.min(next, e.getValue().expiry);
        }
      }
    }
    for (Sem s : busy.values()) {
      for (SWait w : s.queue) {
        if (!w.session.node().equals(core.self())) {
          next = Math.min(next, w.lastHeard + term);
        }
      }
      if (!s.queue.isEmpty() && core.inGrace()) {
        next = Math.min(next, core.graceUntil());
      }
    }
    return next;
  }

  @Override
  public void peerDown(String p) {
    if (core.mutationFreeOnPeerDown && core.isServer()) {
      for (SessionKey k : List.copyOf(sessions.keySet())) {
        if (k.node().equals(p)) {
          endSession(k);
        }
      }
    }
  }

  // ================================================================ the messages

  @Override
  public void receive(String from, BucketsMessage message) {
    switch ((BucketsMessage.ToServer) message) {
      case BucketsMessage.Acquire a -> acquire(from, a);
      case BucketsMessage.Cancel c -> cancel(from, c);
      case BucketsMessage.Release r -> release(from, r);
      case BucketsMessage.SessionRenew r -> renew(from, r);
      case BucketsMessage.Query q -> query(from, q);
      case BucketsMessage.Restate r -> restate(from, r);
      case BucketsMessage.WhoHolds q -> whoHolds(from, q);
      case BucketsMessage.ListHeld q ->
          core.answerListing(from, q, () -> held(q.prefixes()), BucketsMessage.Listing::new); // once it grants
    }
  }

  private void acquire(String from, BucketsMessage.Acquire a) {
    if (!core.heard(from, a.inc())) {
      return;
    }
    SessionKey key = new SessionKey(from, a.inc(), a.session());
    touch(key);
    Sem s = sem(a.name(), a.limit());
    if (s == null) {
      core.sendTo(from, new BucketsMessage.Refused(a.session(), a.reqId(), refusal(a.name(), a.limit())));
      return;
    }
    if (again(s, key, a.reqId(), a.echo())) {
      return;
    }
    SWait w = new SWait(key, a.reqId(), a.permits(), a.limit(), a.tag(), a.echo(), core.now());
    if (a.attempt() && !(core.granting() && s.queue.isEmpty() && fits(s, w))) {
      core.sendTo(from, new BucketsMessage.Busy(a.session(), a.reqId(), s.buckets.total()));
      forgetIfIdle(s);
      return;
    }
    s.queue.addLast(w);
    serve(s);
  }

  /**
   * A request the server has already: a keep-alive. A queued one answers this message when it is granted; a granted
   * one gets its grant again (lost on a link that broke). Returns whether it was known.
   */
  private boolean again(Sem s, SessionKey key, long reqId, long echo) {
    for (SWait w : s.queue) {
      if (w.session.equals(key) && w.reqId == reqId) {
        w.echo = Math.max(w.echo, echo);
        w.lastHeard = core.now();
        return true;
      }
    }
    for (SGrant g : s.grants.values()) {
      if (g.session().equals(key) && g.reqId() == reqId) {
        core.sendTo(key.node(), new BucketsMessage.Grant(core.servingTerm(), key.session(), reqId, s.name, g.grantId(),
            g.grantId(), s.buckets.total(), g.echo(), s.lastToken));
        return true;
      }
    }
    return false;
  }

  private void touch(SessionKey key) {
    sessions.computeIfAbsent(key, k -> new SSession()).expiry = core.now() + term;
  }

  private void cancel(String from, BucketsMessage.Cancel c) {
    if (!core.heard(from, c.inc())) {
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

  private void release(String from, BucketsMessage.Release r) {
    if (!core.heard(from, r.inc())) {
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

  private void renew(String from, BucketsMessage.SessionRenew r) {
    if (!core.heard(from, r.inc()) || !core.deciding()) {
      return; // an answer would extend a trust this server may not stand for now; the client tries again
    }
    SessionKey key = new SessionKey(from, r.inc(), r.session());
    if (!sessions.containsKey(key)) {
      return; // unknown here: its grants, if any, are revoked by the restatement the client sends this server
    }
    touch(key);
    core.sendTo(from, new BucketsMessage.SessionRenewed(r.session(), r.echo()));
  }

  /** Who holds a lock (a one-permit semaphore of the lock name space): nobody while this server does not decide. */
  private void whoHolds(String from, BucketsMessage.WhoHolds q) {
    if (!core.heard(from, q.inc())) {
      return; // the client answers that it does not know when no answer comes
    }
    Sem s = sems.get(q.name());
    String tag = core.deciding() && s != null && !s.grants.isEmpty() ? s.grants.values().iterator().next().tag() : "";
    core.sendTo(from, new BucketsMessage.Holds(core.servingTerm(), q.queryId(), q.name(), tag));
  }

  /** Every grant under {@code prefixes} (with their kind's prefix), by what this server decided, for a listing. */
  private List<Output.Listed> held(List<String> prefixes) {
    long now = core.now();
    List<Output.Listed> held = new ArrayList<>();
    for (Sem s : sems.values()) {
      if (!Input.ListQuery.covers(prefixes, s.name)) {
        continue;
      }
      for (SGrant g : s.grants.values()) {
        SSession session = sessions.get(g.session());
        long left = session == null || g.session().node().equals(core.self()) ? -1 : Math.max(0, session.expiry - now);
        Claim.Mode mode = s.name.startsWith(BucketsCore.LOCK_PREFIX) ? Claim.Mode.EXCLUSIVE : Claim.Mode.PERMITS;
        held.add(new Output.Listed(s.name, mode, g.permits(),
            Output.Listed.holder(g.session().node() + "#" + g.session().session(), g.tag()), g.grantId(), true, left));
      }
    }
    return held;
  }

  private void query(String from, BucketsMessage.Query q) {
    if (!core.heard(from, q.inc()) || !core.deciding()) {
      return; // the client answers with what it knows when no answer comes
    }
    Sem s = sems.get(q.name());
    core.sendTo(from, new BucketsMessage.Total(q.queryId(), q.name(), s == null ? 0 : s.buckets.total()));
  }

  /**
   * A client node restates: its sessions of an earlier incarnation, and the ones it no longer has, are gone with
   * their grants; the grants it holds are taken back in the grace period of a new server, and revoked once the server
   * serves (they were freed meanwhile); the requests it waits for are queued if they are not.
   */
  private void restate(String from, BucketsMessage.Restate r) {
    if (!core.takeRestatement(from, r.inc(), r.term())) {
      return;
    }
    core.sendTo(from, new BucketsMessage.Restated(r.inc(), core.servingTerm()));
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
      if (s != null && g == null && core.inGrace() && live.contains(key) && resources > 0) {
        // a grant of the previous server, taken back whatever handle it came through and in whatever order the
        // holders restate: the previous server's grants fitted together under its rule, so the ones restated do.
        // Laid out again in the canonical shape, in as many buckets as their total needs. (Fitted one by one into
        // each one's own handle's buckets, a grant restated after one of a larger handle did not fit, was revoked,
        // and its permits went to a waiter while its holder still trusted it: seed 849 of SEMAPHORE_BUCKETS with
        // re-elections that do not pause.)
        long needed = (s.buckets.total() + h.permits() + s.buckets.size() - 1) / s.buckets.size();
        int buckets = (int) Math.min(Buckets.MAX_BUCKETS, Math.max(needed, Math.max(resources, s.buckets.highest())));
        if (!s.buckets.fits(h.permits(), buckets)) {
          core.sendTo(from, new BucketsMessage.Revoked(h.session(), h.name(), h.grantId()));
          continue;
        }
        s.buckets.take(h.permits(), buckets);
        s.grants.put(h.grantId(), new SGrant(key, 0, h.grantId(), h.permits(), h.tag(), r.echo()));
        changed.add(h.name());
      } else {
        core.sendTo(from, new BucketsMessage.Revoked(h.session(), h.name(), h.grantId()));
      }
    }
    for (BucketsMessage.Wanted w : r.wanted()) {
      SessionKey key = new SessionKey(from, r.inc(), w.session());
      Sem s = sem(w.name(), w.limit());
      if (s == null) {
        core.sendTo(from, new BucketsMessage.Refused(w.session(), w.reqId(), refusal(w.name(), w.limit())));
        continue;
      }
      if (!again(s, key, w.reqId(), r.echo())) {
        s.queue.addLast(new SWait(key, w.reqId(), w.permits(), w.limit(), w.tag(), r.echo(), core.now()));
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
    core.restatementApplied();
    for (String n : changed) {
      Sem s = sems.get(n);
      if (s != null) {
        fact(s);
        serve(s);
      }
    }
  }

  // ================================================================ the table

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
    busy.put(name, s);
    return s.buckets.size() == size && limit % size == 0 && limit / size <= Buckets.MAX_BUCKETS ? s : null;
  }

  /** Why a handle of {@code name} (with its prefix) whose {@code maxPermits} is {@code limit} is refused. */
  String refusal(String name, int limit) {
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
    while (core.granting() && !s.queue.isEmpty() && fits(s, s.queue.peekFirst())) {
      if (!core.tokensLeft()) {
        break; // the term's tokens are used up: a new term (a new election) is needed
      }
      SWait w = s.queue.pollFirst();
      long token = core.nextToken();
      s.lastToken = token;
      int resources = resources(w.limit, s);
      s.buckets.take(w.permits, resources);
      s.grants.put(token, new SGrant(w.session, w.reqId, token, w.permits, w.tag, w.echo));
      touch(w.session);
      core.sendTo(w.session.node(), new BucketsMessage.Grant(core.servingTerm(), w.session.session(), w.reqId, s.name,
          token, token, s.buckets.total(), w.echo, token));
      fact(s);
    }
    forgetIfIdle(s);
  }

  private void free(Sem s, SGrant g) {
    busy.put(s.name, s);
    s.grants.remove(g.grantId());
    s.buckets.give(g.permits());
    fact(s);
  }

  private void forgetIfIdle(Sem s) {
    if (s.idle() && s.buckets.total() == 0) {
      sems.remove(s.name); // the next request fixes the name's bucket size again
      busy.remove(s.name);
    }
  }

  private void fact(Sem s) {
    if (core.reportBuckets && s.name.startsWith(BucketsCore.SEMAPHORE_PREFIX)) {
      core.emit(new Output.Fact<>(new Observation.Buckets(core.self(), shown(s.name), s.buckets.size(),
          s.buckets.counts(), s.buckets.highest(), s.buckets.total())));
    }
  }

  /** A name as the user gave it: without the prefix that keeps locks and semaphores apart. */
  private static String shown(String name) {
    return name.isEmpty() ? name : name.substring(1);
  }
}
