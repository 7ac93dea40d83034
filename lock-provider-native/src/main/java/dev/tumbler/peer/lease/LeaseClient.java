package dev.tumbler.peer.lease;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.LostGrants;
import dev.tumbler.peer.core.Moments;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.election.ElectedServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The client side of {@code lease} (§5.2 C-1 to C-10), on every node: a helper per name holding the node's lease,
 * shared by its sessions (001:8), cached when released, renewed inactive every half term, granted again locally, given
 * back when recalled; the echo rule for the trust of a grant; lost leases kept a quarter term ({@link LostGrants}).
 * The {@link ElectedServer} machine keeps the requests that wait and restates to the server. Mutable; owned by one
 * {@link LeaseCore}.
 */
final class LeaseClient implements ElectedServer.Client<LeaseMessage, LeaseClient.Req> {

  private static final long NONE = Long.MAX_VALUE;
  private static final long NO_LEASE = -1;

  private final LeaseCore core;
  private final long term;
  private final boolean cache;
  private final Map<String, Helper> helpers = new TreeMap<>();
  /** Leases whose request was told it lost them, kept unused a quarter term before they go back. */
  private final LostGrants<Helper> lost;
  private long localGrants;
  /** The listings asked of the server and not yet answered: their prefixes, by query id. */
  private final Map<Long, List<String>> listings = new TreeMap<>();

  /*
   * The moments of the leases, kept as they change, as the server keeps its table's (LeaseServer): the leases a step
   * changed are indexed again before the side is next asked; the start of a step and a tick do the work of before on
   * the leases that are due, in name order, and the timer is set to the same moment.
   */
  /** Helpers whose lease changed in this step (once each), indexed again before the side is next asked. */
  private final List<Helper> changed = new ArrayList<>();
  /** By name, leases not kept lost: when the window closes (its request's, or the cached lease's trust). */
  private final Moments<String> windows = new Moments<>();
  /** By name, leases not kept lost: when a renewal is due (one unanswered again; a cached lease's at half term). */
  private final Moments<String> renewals = new Moments<>();

  /** A node's lease of one name, shared by its sessions (the seed's helper, 001:8). */
  private static final class Helper {
    final String name;
    long leaseId = NO_LEASE;
    long serverToken;
    int localGen;
    /** When the message the last grant or renewal answered was sent: the lease is trusted from then. */
    long anchor = Long.MIN_VALUE;
    /** The request that holds the lease now; null while it is cached. */
    Req active;
    boolean recallPending;
    /** When the inactive renewal in flight was sent, or {@link #NONE}. */
    long inactiveRenewSentAt = NONE;
    /**
     * The largest lease of the name this node gave back or disowned: a grant of it, or of an older one, that
     * arrives later is stale (a later grant to this node has a larger token), even for a request that waits.
     */
    long givenBack = NO_LEASE;
    /** This node's requests of the name, waiting or held: the helper is kept while there are any. */
    int requests;
    /** Its places in the client's indexes of moments, and whether it waits to be indexed again. */
    final Moments.Slot<String> windowSlot;
    final Moments.Slot<String> renewSlot;
    boolean changed;

    Helper(String name) {
      this.name = name;
      this.windowSlot = new Moments.Slot<>(name);
      this.renewSlot = new Moments.Slot<>(name);
    }

    boolean leased() {
      return leaseId != NO_LEASE;
    }
  }

  /** A request of this node's sessions. */
  static final class Req extends ElectedServer.Request {
    final String session;
    final String name;
    long validUntil;
    boolean renewAsked;
    /** When the pending renewal was last sent: unanswered, it is sent again ({@link ElectedServer#renewAgainAt}). */
    long renewSentAt;
    /** The token of its grant, once held. */
    long token;

    Req(long id, String session, Claim claim, boolean attempt) {
      super(id, claim, attempt);
      this.session = session;
      this.name = claim.name();
    }
  }

  LeaseClient(LeaseCore core, boolean cache) {
    this.core = core;
    this.term = core.term();
    this.cache = cache;
    this.lost = new LostGrants<>(term);
  }

  long localGrants() {
    return localGrants;
  }

  // ================================================================ the driver's inputs

  @Override
  public void acquire(Input.Acquire<LeaseMessage> in) {
    Claim c = in.claim();
    if (c.mode() != Claim.Mode.EXCLUSIVE) {
      core.emit(new Output.Failed<>(in.requestId(), c.name(), Output.Failure.UNAVAILABLE, Set.of(),
          LeaseCore.ALGORITHM + " serves exclusive locks, not " + c));
      return;
    }
    Req r = new Req(in.requestId(), in.session(), c, in.attempt());
    Helper h = helpers.computeIfAbsent(r.name, Helper::new);
    boolean othersWait = core.waiting().stream().anyMatch(q -> q.name.equals(r.name));
    core.add(r);
    h.requests++;
    if (!othersWait && grantsLocally(h)) {
      h.localGen++;
      localGrants++;
      if (core.grantCounts != null) {
        core.grantCounts[0].increment();
      }
      hold(h, r, h.serverToken + h.localGen);
    } else {
      core.ask(r);
    }
  }

  @Override
  public void release(Req r) {
    Helper h = helpers.get(r.name);
    if (h != null) {
      h.requests--;
    }
    if (r.held()) {
      if (h != null && h.active == r) {
        h.active = null;
        changed(h);
        if (h.recallPending) {
          core.toServer(new LeaseMessage.RecallReply(core.inc(), h.name, h.leaseId, true)); // recalled: back at once
          clearLease(h);
        } else if (!cache || h.localGen >= LeaseCore.MAX_LOCAL) {
          core.toServer(new LeaseMessage.Release(core.inc(), h.name, h.leaseId));
          clearLease(h);
        }
        // else cached (001:16): no message
      }
    } else {
      core.toServer(new LeaseMessage.Cancel(core.inc(), r.id(), r.name));
    }
    if (h != null) {
      forgetIfIdle(h);
    }
  }

  /** C-5: the driver renews the active request: the lease is renewed as active. */
  @Override
  public void renew(long id) {
    Req r = core.request(id);
    Helper h = r == null ? null : helpers.get(r.name);
    if (r == null || !r.held() || h == null || h.active != r) {
      core.emit(new Output.Lost<>(id, r == null ? "" : r.name, Output.LostReason.REVOKED, "not held"));
      return;
    }
    r.renewAsked = true;
    sendRenew(r, h);
  }

  private void sendRenew(Req r, Helper h) {
    r.renewSentAt = core.now();
    changed(h);
    core.toServer(new LeaseMessage.Renew(core.inc(), h.name, h.leaseId, true, r.claim().tag(), core.now()));
  }

  @Override
  public void closeSession(String session) {
    for (Req r : List.copyOf(core.requests())) {
      if (r.session.equals(session)) {
        core.release(r.id());
      }
    }
  }

  /** Asks the server who holds a lock in use; unknown at once with no server, or after {@code peerTimeout}. */
  @Override
  public void holderQuery(Input.HolderQuery<LeaseMessage> q) {
    core.askHolder(q, q.name(), new LeaseMessage.WhoHolds(core.inc(), q.queryId(), q.name()));
  }

  /**
   * Asks the server what is in use under the names asked about; unknown at once with no server, or after
   * {@code peerTimeout}. The answer lists this node's own leases as this node knows them ({@link #listed}).
   */
  @Override
  public void listQuery(Input.ListQuery<LeaseMessage> q) {
    listings.put(q.queryId(), q.prefixes());
    core.askListing(q, new LeaseMessage.ListHeld(core.inc(), q.queryId(), q.prefixes()),
        () -> listings.remove(q.queryId()));
  }

  /**
   * The server's listing, with this node's own leases as this node knows them: the lease of a name this node holds is
   * listed with its request's token and trust while a request uses it, and not at all while it is cached unused (the
   * server has not heard of that release).
   */
  private void listed(String from, LeaseMessage.Listing l) {
    List<String> prefixes = listings.get(l.queryId());
    if (prefixes == null || !core.listingAnswered(from, l)) {
      return;
    }
    listings.remove(l.queryId());
    long now = core.now();
    List<Output.Listed> held = new ArrayList<>();
    for (Output.Listed e : l.held()) {
      Helper h = helpers.get(e.name());
      if (h == null || !h.leased()) {
        held.add(e);
      }
    }
    for (Helper h : helpers.values()) {
      Req r = h.active;
      if (r != null && r.held() && Input.ListQuery.covers(prefixes, h.name)) {
        held.add(new Output.Listed(h.name, r.claim().mode(), 1, Output.Listed.holder(core.self(), r.claim().tag()),
            r.token, true, Math.max(0, r.validUntil - now)));
      }
    }
    core.emit(new Output.Listing<>(l.queryId(), true, held));
  }

  @Override
  public void permitsQuery(Input.PermitsQuery<LeaseMessage> q) {
    core.emit(Output.Permits.unknown(q)); // semaphores: buckets
  }

  // ================================================================ the machine's hooks

  @Override
  public LeaseMessage ask(Req r) {
    return new LeaseMessage.Acquire(core.inc(), r.id(), r.name, r.attempt(), r.claim().tag(), core.now());
  }

  @Override
  public LeaseMessage cancel(Req r) {
    return new LeaseMessage.Cancel(core.inc(), r.id(), r.name);
  }

  @Override
  public void forgot(Req r) {
    Helper h = helpers.get(r.name);
    if (h != null) {
      h.requests--;
      forgetIfIdle(h);
    }
  }

  /**
   * {@link #expireIfDue} for every lease, in whatever step comes first: an input at the very moment a window closes is
   * no reason to tell the loss a step later (as buckets seed 219009 showed of that core).
   */
  @Override
  public void expire() {
    reindex();
    long now = core.now();
    Set<String> names = windows.due(now, new TreeSet<>());
    for (Helper h : lost.grants()) {
      if (!lost.over(h, now)) {
        break; // in the order they were lost, each kept as long
      }
      names.add(h.name);
    }
    for (String name : names) {
      expireIfDue(helpers.get(name));
    }
  }

  /** Renewals: the seed's inactive renewal of a cached lease (C-6), and an active renewal left unanswered. */
  @Override
  public void tick(boolean reachable) {
    if (!reachable) {
      return; // the step began with expire: what is due now without a server has been done
    }
    reindex();
    long now = core.now();
    for (String name : renewals.due(now, new TreeSet<>())) {
      Helper h = helpers.get(name);
      Req r = h.active;
      if (expireIfDue(h)) {
        continue;
      } else if (r == null && h.inactiveRenewSentAt == NONE && now >= h.anchor + term / 2 && reachable) {
        h.inactiveRenewSentAt = now; // C-6: the seed's renewal of a lock nobody uses
        changed(h);
        core.toServer(new LeaseMessage.Renew(core.inc(), h.name, h.leaseId, false, "", now));
      } else if (r != null && r.renewAsked && reachable && now >= core.renewAgainAt(r.renewSentAt)) {
        // unanswered: a server not yet active when it took this node's restatement, or one that is gone, answered
        // nothing; asked again, the server of the new view renews it within the window
        sendRenew(r, h);
      }
    }
  }

  @Override
  public long next(long next, boolean reachable) {
    reindex();
    next = Math.min(next, Math.min(lost.next(), windows.first()));
    return reachable ? Math.min(next, renewals.first()) : next;
  }

  /** Indexes the leases changed since the last time again. */
  private void reindex() {
    for (Helper h : changed) {
      h.changed = false;
      if (helpers.get(h.name) != h || !h.leased() || lost.kept(h)) {
        windows.set(h.windowSlot, Moments.NONE);
        renewals.set(h.renewSlot, Moments.NONE);
      } else if (h.active != null) {
        windows.set(h.windowSlot, h.active.validUntil);
        renewals.set(h.renewSlot, h.active.renewAsked ? core.renewAgainAt(h.active.renewSentAt) : Moments.NONE);
      } else {
        windows.set(h.windowSlot, h.anchor + trust());
        renewals.set(h.renewSlot, h.inactiveRenewSentAt == NONE ? h.anchor + term / 2 : Moments.NONE);
      }
    }
    changed.clear();
  }

  /** {@code h}'s lease changed: indexed again before the side is next asked. */
  private void changed(Helper h) {
    if (!h.changed) {
      h.changed = true;
      changed.add(h);
    }
  }

  /** The leases this node holds (lost ones kept included) and the requests it waits for. */
  @Override
  public LeaseMessage restatement(long viewTerm) {
    List<LeaseMessage.Held> held = new ArrayList<>();
    for (Helper h : helpers.values()) {
      if (h.leased()) {
        held.add(new LeaseMessage.Held(h.name, h.leaseId, h.serverToken, h.active != null,
            h.active == null ? "" : h.active.claim().tag()));
      }
    }
    List<LeaseMessage.Wanted> wanted = new ArrayList<>();
    for (Req r : core.requests()) {
      if (!r.held()) {
        wanted.add(new LeaseMessage.Wanted(r.id(), r.name, r.attempt(), r.claim().tag()));
      }
    }
    return new LeaseMessage.Restate(core.inc(), viewTerm, held, wanted, core.now());
  }

  // ================================================================ the server's answers

  @Override
  public void receive(String from, LeaseMessage message) {
    switch ((LeaseMessage.ToClient) message) {
      case LeaseMessage.Grant g -> grant(from, g);
      case LeaseMessage.Busy b -> busy(from, b);
      case LeaseMessage.Renewed r -> renewed(from, r);
      case LeaseMessage.RenewDenied d -> renewDenied(from, d);
      case LeaseMessage.Recall r -> recall(from, r);
      case LeaseMessage.Revoked r -> revoked(from, r);
      case LeaseMessage.Holds h -> core.holderAnswered(from, h.term(), h.queryId(), h.name(), h.tag());
      case LeaseMessage.Listing l -> listed(from, l);
      case LeaseMessage.Restated r -> core.restated(from, r.inc(), r.term());
    }
  }

  private void grant(String from, LeaseMessage.Grant g) {
    if (!core.fromServer(from, g.term())) {
      return; // not the server of this view's: what it granted is gone with its term
    }
    Helper h = helpers.computeIfAbsent(g.name(), Helper::new);
    if (h.leaseId == g.leaseId()) {
      return; // the same grant again: the answer to a keep-alive that crossed it
    }
    if (g.leaseId() <= h.givenBack) {
      return; // sent before this node gave it back or disowned it: the server has freed it, or will
    }
    Req r = core.request(g.reqId());
    if (r == null || r.held() || !r.name.equals(g.name())) {
      // given up meanwhile, or a grant sent again after the lease went back: back at once (the server ignores it
      // when the lease is no longer the one it gave)
      core.toServer(new LeaseMessage.Release(core.inc(), g.name(), g.leaseId()));
      forgetIfIdle(h);
      return;
    }
    long anchor = anchorOf(g.echo());
    if (anchor + trust() <= core.now()) {
      // trusted for no time at all: the grant answers a message older than the trust it gives
      h.givenBack = Math.max(h.givenBack, g.leaseId());
      core.toServer(new LeaseMessage.Release(core.inc(), g.name(), g.leaseId()));
      core.send(r);
      return;
    }
    if (h.leased()) {
      // the server gave a new lease, so the one this node had is gone there (a message about it was lost)
      dropLease(h, "the " + LeaseCore.ALGORITHM + " server " + from + " gave the lock out again");
    }
    h.leaseId = g.leaseId();
    h.serverToken = g.token();
    h.localGen = 0;
    h.anchor = anchor;
    if (core.grantCounts != null) {
      core.grantCounts[1].increment();
    }
    hold(h, r, g.token());
  }

  private void busy(String from, LeaseMessage.Busy b) {
    Req r = core.request(b.reqId());
    if (core.fromServer(from, b.term()) && r != null && !r.held() && r.name.equals(b.name())) {
      core.fail(r, Output.Failure.CONTENDED, "");
    }
  }

  private void renewed(String from, LeaseMessage.Renewed msg) {
    Helper h = helpers.get(msg.name());
    if (!core.fromServer(from, msg.term()) || h == null || h.leaseId != msg.leaseId()) {
      return;
    }
    if (expireIfDue(h)) {
      return; // the answer came after the window closed (a pause held it back): a lease lost is not brought back
    }
    changed(h);
    if (msg.echo() == h.inactiveRenewSentAt) {
      h.inactiveRenewSentAt = NONE;
    }
    long anchor = anchorOf(msg.echo());
    if (anchor + trust() > core.now()) {
      h.anchor = Math.max(h.anchor, anchor);
    }
    Req r = h.active;
    if (r != null && r.renewAsked && h.anchor + trust() > r.validUntil) {
      r.renewAsked = false;
      r.validUntil = h.anchor + trust();
      core.emit(new Output.Renewed<>(r.id(), h.anchor, r.validUntil));
    }
  }

  private void renewDenied(String from, LeaseMessage.RenewDenied d) {
    Helper h = helpers.get(d.name());
    if (core.fromServer(from, d.term()) && h != null && h.leaseId == d.leaseId()) {
      dropLease(h, "the " + LeaseCore.ALGORITHM + " server " + from + " gave the lock to a waiter");
    }
  }

  /** C-7: a cached lease goes back at once; an active one when its request releases it. */
  private void recall(String from, LeaseMessage.Recall msg) {
    if (!core.fromServer(from, msg.term())) {
      return;
    }
    Helper h = helpers.get(msg.name());
    if (h == null || h.leaseId != msg.leaseId()) {
      // not this node's (any more), or its grant is still on its way: disowned either way, so the grant is not
      // taken when it comes (the server gives the lock to the next waiter on this answer)
      if (h != null) {
        h.givenBack = Math.max(h.givenBack, msg.leaseId());
      }
      core.toServer(new LeaseMessage.RecallReply(core.inc(), msg.name(), msg.leaseId(), true));
      return;
    }
    if (h.active == null && !lost.kept(h)) {
      core.toServer(new LeaseMessage.RecallReply(core.inc(), msg.name(), msg.leaseId(), true));
      clearLease(h);
    } else {
      // held, or lost and kept: given back when its request releases it, or when its quarter term ends
      h.recallPending = true;
      core.toServer(new LeaseMessage.RecallReply(core.inc(), msg.name(), msg.leaseId(), false));
    }
  }

  private void revoked(String from, LeaseMessage.Revoked msg) {
    Helper h = helpers.get(msg.name());
    if (core.fromServer(from, msg.term()) && h != null && h.leaseId == msg.leaseId()) {
      dropLease(h, "the " + LeaseCore.ALGORITHM + " server " + from + " no longer knows this lease");
    }
  }

  // ================================================================ the helpers

  /**
   * C-1: a cached lease is granted here, with no message, when nobody uses it, no recall is pending, no inactive
   * renewal is in flight (the server may deny it and give the lock away), its window is open, and its local
   * re-grants are not used up.
   */
  private boolean grantsLocally(Helper h) {
    return h.leased() && h.active == null && !h.recallPending && !lost.kept(h)
        && (h.inactiveRenewSentAt == NONE || core.mutationLocalGrantDuringInactiveRenew)
        && core.now() < h.anchor + trust() && h.localGen < LeaseCore.MAX_LOCAL;
  }

  private void hold(Helper h, Req r, long token) {
    changed(h);
    r.hold();
    r.token = token;
    r.validUntil = h.anchor + trust();
    h.active = r;
    core.emit(new Output.Granted<>(r.id(), r.name, token, 1, h.anchor, r.validUntil));
  }

  /** The anchor of a grant or renewal that answers the message sent at {@code echo}: the echo rule. */
  private long anchorOf(long echo) {
    return core.mutationTrustFromReceipt ? core.now() : echo;
  }

  /** How long a grant or renewal is trusted from its anchor: {@code 3T/4} (001:44). */
  private long trust() {
    return core.mutationTrustFromReceipt ? term : core.trust();
  }

  /**
   * C-8 and C-6: a held lease whose window closed is lost (the seed's LockLost), and kept a quarter term before it goes
   * back ({@link LostGrants}); a cached one no longer trusted goes back at once; either way the lease is released in
   * case the server still has it. Returns whether it did.
   */
  private boolean expireIfDue(Helper h) {
    changed(h);
    Req r = h.active;
    long now = core.now();
    if (lost.kept(h)) {
      if (lost.over(h, now)) {
        giveBack(h);
      }
      return true;
    }
    if (r != null && now >= r.validUntil) {
      core.remove(r.id());
      h.requests--;
      core.emit(new Output.Lost<>(r.id(), r.name, Output.LostReason.EXPIRED, ""));
      h.active = null;
      if (!core.mutationGiveBackOnLoss) {
        lost.keep(h, now);
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
    core.toServer(h.recallPending ? new LeaseMessage.RecallReply(core.inc(), h.name, h.leaseId, true)
        : new LeaseMessage.Release(core.inc(), h.name, h.leaseId));
    clearLease(h);
  }

  /** The lease is gone at the server: its request, if one holds it, lost it. */
  private void dropLease(Helper h, String why) {
    Req r = h.active;
    clearLease(h); // r still counts while the lease is cleared: the helper is kept until it is next looked at
    if (r != null) {
      core.remove(r.id());
      h.requests--;
      core.emit(new Output.Lost<>(r.id(), r.name, Output.LostReason.REVOKED, why));
    }
  }

  private void clearLease(Helper h) {
    changed(h);
    h.givenBack = Math.max(h.givenBack, h.leaseId);
    h.leaseId = NO_LEASE;
    h.active = null;
    h.recallPending = false;
    h.inactiveRenewSentAt = NONE;
    lost.forget(h);
    h.anchor = Long.MIN_VALUE;
    h.localGen = 0;
    forgetIfIdle(h);
  }

  private void forgetIfIdle(Helper h) {
    if (!h.leased() && h.requests == 0) {
      helpers.remove(h.name);
      changed(h);
    }
  }
}
