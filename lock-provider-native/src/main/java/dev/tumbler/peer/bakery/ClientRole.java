package dev.tumbler.peer.bakery;

import static dev.tumbler.peer.bakery.Node.NONE;
import static dev.tumbler.peer.bakery.Node.earliest;

import dev.tumbler.peer.bakery.BakeryMessage.Key;
import dev.tumbler.peer.bakery.BakeryMessage.Mode;
import dev.tumbler.peer.bakery.BakeryMessage.ReqKey;
import dev.tumbler.peer.core.Agenda;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.QuorumWatch;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The client role (§3.2 client rules 1–8), which every node runs: this node's requests from {@code Acquire} to their
 * end. It picks each request's owner leader, sends {@code Lock} and keeps it alive with {@code Waiting}, turns the
 * owner's {@code Locked}, {@code LockFailed}, {@code Renewed} and {@code Unlocked} into outputs, relocks a request
 * whose owner left the view or stopped answering, ends waits once no quorum can form around this node, and answers
 * holder queries from a majority of the leaders. It keeps no leader state: what the leaders hold it learns only from
 * their answers.
 */
final class ClientRole {

  private final Node node;
  private final long trustNanos;
  private final long keepAliveNanos;
  /** Whether a quorum can still form around this node: what ends waits early. */
  private final QuorumWatch quorumWatch;
  private long nextReqSeq;

  private final Map<Long, Request> requests = new LinkedHashMap<>();
  /**
   * The requests the timer looks at: every request not held (as many as are in flight), and a held one once it is due
   * (its window ends, its renewal has waited long enough) or once something changed it (an answer, a renewal, a new
   * view whose leaders may not include its owner). A node holding 100,000 locks no longer walks them all on every
   * settle round; it visits the requests that can have something to do, in the order of before.
   */
  private final Agenda<Request> agenda = new Agenda<>();
  /** The leaders the held requests were last looked at with: a new list may leave an owner out. */
  private List<Leader> seenLeaders;
  private final Map<ReqKey, Request> byKey = new HashMap<>();
  /** Holder queries and listings waiting for the leaders' answers, by query id. */
  private final Map<Long, LeaderAsk> asks = new HashMap<>();

  ClientRole(Node node) {
    this.node = node;
    long lease = node.leaseNanos;
    this.trustNanos = lease / 4 * 3 + lease % 4 * 3 / 4;
    this.keepAliveNanos = Math.max(1, lease / 3);
    this.quorumWatch = new QuorumWatch(node.peers, node.peerTimeoutNanos);
  }

  // ---------------------------------------------------------------- the application's inputs

  void acquire(Input.Acquire<BakeryMessage> a) {
    if (requests.containsKey(a.requestId())) {
      throw new IllegalStateException("request id " + a.requestId() + " is already in use");
    }
    Claim c = a.claim();
    if (c.path().size() != 1 || c.mode() == Claim.Mode.PERMITS || a.txId() != 0) {
      node.out.add(new Output.Failed<>(a.requestId(), c.name(), Output.Failure.UNAVAILABLE, Set.of(),
          "bakery serves locks and read/write locks on one name, not " + c));
      return;
    }
    Request q = new Request(a.requestId(), a.session(), c, a.attempt());
    requests.put(q.id, q);
    agenda.add(q);
    dispatch(q, null);
  }

  void release(long requestId) {
    Request q = requests.get(requestId);
    if (q != null) {
      end(q);
    }
  }

  void cancel(long requestId) {
    Request q = requests.get(requestId);
    if (q != null) {
      if (q.state != Request.State.HELD) {
        // the leaders it could not reach, when they are what it waited for
        node.out.add(new Output.Failed<>(q.id, q.name(), Output.Failure.CANCELLED,
            node.connectedLeaders() < node.quorum() ? node.missingLeaders() : Set.of()));
      }
      end(q);
    }
  }

  void closeSession(String session) {
    for (Request q : List.copyOf(requests.values())) {
      if (q.session.equals(session)) {
        end(q);
      }
    }
  }

  void renew(long requestId) {
    Request q = requests.get(requestId);
    if (q == null) {
      node.out.add(new Output.Lost<>(requestId, "", Output.LostReason.REVOKED, "not held"));
      return;
    }
    agenda.watch(q);
    if (q.state != Request.State.HELD) {
      return; // not granted yet: nothing to renew
    }
    if (!node.connected(q.owner) && ownerFor(q.name()) != null) {
      // its owner is cut off (a leader of the view still, so nobody relocks it for us): another leader takes
      // the active ticket over and renews it, so that a holder beside a majority keeps its lock
      relockHeld(q);
      return;
    }
    if (q.renewSentAt == NONE) {
      q.renewSentAt = node.now;
    }
    toOwner(q, new BakeryMessage.Renew(q.key, q.ticket, q.nextSeq(node.now)));
  }

  /**
   * Asks every reachable leader who holds the name, and answers from a majority of them ({@link HolderAsk});
   * unknown at once if no majority is reachable. One leader alone may not yet know the latest grant: a quorum
   * activated it, but the leader's own copy of the ticket before it may still run for a while.
   */
  void whoHolds(Input.HolderQuery<BakeryMessage> q) {
    askLeaders(q.queryId(), new HolderAsk(q.queryId(), q.name()), new BakeryMessage.WhoHolds(q.queryId(), q.name()));
  }

  /**
   * Asks every reachable leader for its active tickets under the names asked about, and answers from a majority of
   * them ({@link ListAsk}); unknown at once if no majority is reachable, as {@link #whoHolds}. This node's own
   * requests are listed as it knows them: a release is gone from its listing at once, though the leaders drop the
   * ticket a moment later.
   */
  void list(Input.ListQuery<BakeryMessage> q) {
    askLeaders(q.queryId(), new ListAsk(q), new BakeryMessage.ListTickets(q.queryId(), q.prefixes()));
  }

  /** Sends {@code question} to every reachable leader for {@code ask}; unknown at once if they are too few. */
  private void askLeaders(long queryId, LeaderAsk ask, BakeryMessage question) {
    Set<String> reachable = new HashSet<>();
    for (Leader l : node.leaders) {
      if (node.connected(l.nodeId())) {
        reachable.add(l.nodeId());
      }
    }
    if (node.leaders.isEmpty() || reachable.size() < node.quorum()) {
      node.out.add(ask.unknown());
      return;
    }
    ask.start(reachable, node.mutations.listFromOneLeader && ask instanceof ListAsk ? 1 : node.quorum(), node.now);
    asks.put(queryId, ask);
    for (String l : reachable) {
      node.send(l, question);
    }
  }

  // ---------------------------------------------------------------- the owner's answers

  void onLocked(String from, BakeryMessage.Locked m) {
    Request q = byKey(m.reqKey());
    if (q == null || q.state != Request.State.PENDING || !from.equals(q.owner)) {
      if (q == null || q.state == Request.State.ENDED) {
        node.send(from, new BakeryMessage.Unlock(m.reqKey())); // superseded or ended: the owner must not keep it
      }
      return;
    }
    long sentAt = q.sentAt(m.echo());
    if (sentAt == NONE) {
      return; // not an echo of ours: a peer's bug, never a grant
    }
    q.pruneSentAt(m.echo());
    if (node.now >= sentAt + trustNanos) {
      // the grant is trusted from a message sent before the leaders were asked, and the activation took so
      // long that its window has closed already. Renewing and reporting it now would break F2: readers with
      // larger keys may have been granted and ended meanwhile. The client gives the ticket up and draws
      // again, above every key added since (seeds 108906 and 268309).
      toOwner(q, new BakeryMessage.Unlock(q.key));
      dispatch(q, q.key);
      return;
    }
    q.state = Request.State.HELD;
    q.ticket = m.key();
    q.token = m.key().token();
    q.reported = sentAt;
    q.validUntil = sentAt + trustNanos;
    q.renewSentAt = NONE;
    node.out.add(new Output.Granted<>(q.id, q.name(), q.token, 1, sentAt, q.validUntil));
  }

  void onRenewed(String from, BakeryMessage.Renewed m) {
    Request q = byKey(m.reqKey());
    if (q == null || q.state != Request.State.HELD || !from.equals(q.owner)) {
      return;
    }
    long sentAt = q.sentAt(m.echo());
    if (sentAt == NONE || sentAt <= q.reported || node.now >= q.validUntil || node.now >= sentAt + trustNanos) {
      return; // never earlier than reported (L-5); never revives a grant whose window closed (L-6)
    }
    q.reported = sentAt;
    q.validUntil = sentAt + trustNanos;
    q.renewSentAt = NONE;
    q.pruneSentAt(m.echo());
    node.out.add(new Output.Renewed<>(q.id, sentAt, q.validUntil));
  }

  void onLockFailed(String from, BakeryMessage.LockFailed m) {
    Request q = byKey(m.reqKey());
    if (q != null && q.state == Request.State.PENDING && from.equals(q.owner)) {
      fail(q, m.failure(), m.detail());
    }
  }

  void onUnlocked(String from, BakeryMessage.Unlocked m) {
    Request q = byKey(m.reqKey());
    if (q != null && from.equals(q.owner)) {
      if (q.state == Request.State.HELD) {
        node.out.add(new Output.Lost<>(q.id, q.name(), Output.LostReason.REVOKED, m.detail()));
        forget(q);
      } else if (q.state == Request.State.PENDING && q.attempt) {
        fail(q, Output.Failure.UNAVAILABLE, m.detail());
      } else if (q.state == Request.State.PENDING) {
        // the owner no longer knows it (it restarted, or granted it and saw the grant expire before it came): a
        // wait asks again, as a new request, rather than end before its deadline
        relockPending(q);
      }
    }
  }

  /**
   * An answer to {@link #whoHolds}: once a majority of acting leaders has answered, the tag of the largest active
   * key among them; unknown (empty) as soon as too few of the leaders asked can still answer as acting ones.
   */
  void onHolds(String from, BakeryMessage.Holds h) {
    if (asks.get(h.queryId()) instanceof HolderAsk a && a.name.equals(h.name()) && a.take(from, h.acting())) {
      if (h.key() != null && (a.best == null || h.key().compareTo(a.best) > 0)) {
        a.best = h.key();
        a.tag = h.tag();
      }
      answerIfSettled(a);
    }
  }

  /** An answer to {@link #list}: merged once a majority of acting leaders has answered. */
  void onTicketList(String from, BakeryMessage.TicketList l) {
    if (asks.get(l.queryId()) instanceof ListAsk a && a.take(from, l.acting())) {
      for (BakeryMessage.Ticket t : l.tickets()) {
        if (!t.reqKey().client().equals(node.self)) { // this node's own: as it knows them (below)
          a.tickets.merge(t.reqKey(), t, (x, y) -> x.key().compareTo(y.key()) != 0
              ? (x.key().compareTo(y.key()) > 0 ? x : y) : (x.remainingNanos() >= y.remainingNanos() ? x : y));
        }
      }
      answerIfSettled(a);
    }
  }

  private void answerIfSettled(LeaderAsk a) {
    if (a.settled()) {
      asks.remove(a.queryId);
      node.out.add(a.known() ? a.answer() : a.unknown());
    }
  }

  // ---------------------------------------------------------------- time, links and restatement

  /**
   * Time-driven client work: dispatch, keep-alives, relocks, losses, and the end of waits when no quorum can form
   * here. A wait with no leaders elected yet, too few of them reachable, or an owner taking a view over is a failover
   * or an election under way, and goes on: it ends only at its deadline (the driver cancels it) or once this node has
   * had fewer members connected than a quorum needs for {@code peerTimeout} ({@link QuorumWatch}).
   */
  void tick() {
    expireAsks();
    watchQuorum();
    if (node.leaders != seenLeaders) {
      seenLeaders = node.leaders;
      requests.values().forEach(agenda::watch);
    }
    agenda.visit(node.now, this::tick);
  }

  private void tick(Request q) {
    long now = node.now;
    switch (q.state) {
      case NEW -> {
        if (!node.leaders.isEmpty() && node.connectedLeaders() >= node.quorum()) {
          dispatch(q, q.supersedes);
        } else if (quorumWatch.lost(now)) {
          failNoQuorum(q);
        }
      }
      case PENDING -> {
        if (quorumWatch.lost(now)) {
          toOwner(q, new BakeryMessage.Unlock(q.key));
          failNoQuorum(q);
          return;
        }
        if (!node.isLeader(q.owner) || !node.connected(q.owner) && q.ownerLostSince != NONE
            && now - q.ownerLostSince >= node.graceNanos - node.leaseNanos) {
          relockPending(q);
        } else if (!node.connected(q.owner)) {
          if (q.ownerLostSince == NONE) {
            q.ownerLostSince = now;
          }
        } else {
          q.ownerLostSince = NONE;
          if (now >= q.nextKeepAlive) {
            q.nextKeepAlive = now + keepAliveNanos;
            toOwner(q, new BakeryMessage.Waiting(q.key, q.nextSeq(now)));
          }
        }
      }
      case HELD -> {
        if (now >= q.validUntil) {
          node.out.add(new Output.Lost<>(q.id, q.name(), Output.LostReason.EXPIRED, "no renewal within the lease"));
          // not given back: the leaders keep the ticket until their own expiry, up to T/4 later, and that is
          // the time the holder's lost listeners have to run before anyone else is granted (an Unlock here
          // let a client of another node in within milliseconds, before the holder's listeners had run)
          forget(q);
        } else if (!node.isLeader(q.owner)) {
          relockHeld(q);
        } else if (q.renewSentAt != NONE && now - q.renewSentAt >= renewPatienceNanos()) {
          // its owner has not answered a renewal for a quarter of the lease while its link still looks up
          // (a partition that drops bytes is found only by the idle timeout, which may end after the
          // holder's window): another leader takes the active ticket over
          String other = ownerFor(q.name(), q.owner);
          q.renewSentAt = now; // patience again, with the new owner or (none other reachable) the same
          if (other != null) {
            q.owner = other;
            toOwner(q, new BakeryMessage.Relock(q.key, q.name(), q.ticket, q.nextSeq(now)));
          }
        }
      }
      case ENDED -> { }
    }
    if (q.state == Request.State.HELD && node.isLeader(q.owner)) {
      agenda.rest(q, heldWakeUp(q) == NONE ? Agenda.NONE : heldWakeUp(q)); // nothing to do before then, unless an answer, a renewal or a view comes
    }
  }

  /** When a held request next has something to do on its own: its window ends, or its renewal waited enough. */
  private long heldWakeUp(Request q) {
    return earliest(q.validUntil, q.renewSentAt == NONE ? NONE : q.renewSentAt + renewPatienceNanos());
  }

  /** The request of {@code key}, watched: an answer of its owner may change what its tick does. */
  private Request byKey(ReqKey key) {
    Request q = byKey.get(key);
    if (q != null) {
      agenda.watch(q);
    }
    return q;
  }

  /** What this node restates to {@code peer} as its client: its requests that {@code peer} owns. */
  void restate(String peer, List<BakeryMessage.Lock> pending, List<BakeryMessage.Relock> held) {
    for (Request q : requests.values()) {
      if (peer.equals(q.owner) && q.state == Request.State.PENDING) {
        pending.add(lockMessage(q, null));
      } else if (peer.equals(q.owner) && q.state == Request.State.HELD) {
        held.add(new BakeryMessage.Relock(q.key, q.name(), q.ticket, q.nextSeq(node.now)));
      }
    }
  }

  /** When the client role next has something to do without an input, or {@link Node#NONE}. */
  long nextWakeUp() {
    long next = NONE;
    for (LeaderAsk a : asks.values()) {
      next = earliest(next, a.sentAt + node.peerTimeoutNanos);
    }
    return earliest(next, agenda.earliest(q -> switch (q.state) {
      case NEW -> noQuorumAt();
      case PENDING -> earliest(noQuorumAt(),
          q.ownerLostSince != NONE ? q.ownerLostSince + node.graceNanos - node.leaseNanos : q.nextKeepAlive);
      case HELD -> heldWakeUp(q);
      case ENDED -> NONE;
    }, NONE));
  }

  // ---------------------------------------------------------------- owners and dispatch

  /** The owner of this node's requests on {@code name} (§3.2 client rule 1), or null if none is connected. */
  String ownerFor(String name) {
    return ownerFor(name, null);
  }

  /** The owner leader of {@code name} as {@link #ownerFor(String)} chooses it, passing over {@code not}. */
  private String ownerFor(String name, String not) {
    List<Leader> leaders = node.leaders;
    int l = leaders.size();
    int first = (int) Long.remainderUnsigned(fnv1a(node.self + "\0" + name), l);
    for (int i = 0; i < l; i++) {
      String id = leaders.get((first + i) % l).nodeId();
      if (node.connected(id) && !id.equals(not)) {
        return id;
      }
    }
    return null;
  }

  /** FNV-1a, 64 bits, of the UTF-8 bytes of {@code s}. */
  static long fnv1a(String s) {
    long h = 0xcbf29ce484222325L;
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    return h;
  }

  /** Sends a new request for {@code q} to the owner chosen now, if a quorum of leaders is reachable. */
  private void dispatch(Request q, ReqKey supersedes) {
    String owner = node.leaders.isEmpty() || node.connectedLeaders() < node.quorum() ? null : ownerFor(q.name());
    if (owner == null) {
      q.state = Request.State.NEW;
      q.supersedes = supersedes;
      if (q.attempt) {
        fail(q, Output.Failure.UNAVAILABLE, "no quorum of bakery leaders is reachable");
      }
      return;
    }
    if (q.key != null) {
      byKey.remove(q.key);
    }
    q.key = new ReqKey(node.self, node.incarnation, ++nextReqSeq);
    byKey.put(q.key, q);
    q.owner = owner;
    q.state = Request.State.PENDING;
    q.ownerLostSince = NONE;
    q.supersedes = null;
    q.nextKeepAlive = node.now + keepAliveNanos;
    toOwner(q, lockMessage(q, supersedes));
  }

  private BakeryMessage.Lock lockMessage(Request q, ReqKey supersedes) {
    return new BakeryMessage.Lock(q.key, q.name(), Mode.of(q.claim), node.leaseNanos, q.attempt ? 0 : -1,
        q.nextSeq(node.now), supersedes, q.claim.tag());
  }

  /** Client rule 7 for a pending request: a new request, superseding the old one, to the owner chosen now. */
  private void relockPending(Request q) {
    ReqKey old = q.key;
    dispatch(q, old);
  }

  /** Client rule 7 for a held request whose owner left the view: its new owner adopts the ticket. */
  private void relockHeld(Request q) {
    String owner = node.leaders.isEmpty() ? null : ownerFor(q.name());
    if (owner != null) {
      q.owner = owner;
      q.renewSentAt = node.now;
      toOwner(q, new BakeryMessage.Relock(q.key, q.name(), q.ticket, q.nextSeq(node.now)));
    }
  }

  private void toOwner(Request q, BakeryMessage m) {
    node.send(q.owner, m);
  }

  // ---------------------------------------------------------------- ends

  /** Ends {@code q} here and tells its owner to drop its ticket: the client gave it up. */
  private void end(Request q) {
    if (q.key != null && q.state != Request.State.NEW) {
      toOwner(q, new BakeryMessage.Unlock(q.key));
    }
    forget(q);
  }

  /** Ends {@code q} here only: its ticket, if any, ends at the leaders by their own drop or expiry. */
  private void forget(Request q) {
    requests.remove(q.id);
    agenda.remove(q);
    if (q.key != null) {
      byKey.remove(q.key);
    }
    q.state = Request.State.ENDED;
  }

  private void fail(Request q, Output.Failure failure, String detail) {
    Set<String> missing = failure == Output.Failure.UNAVAILABLE ? node.missingLeaders() : Set.of();
    node.out.add(new Output.Failed<>(q.id, q.name(), failure, missing, detail));
    forget(q);
  }

  /** A wait ends: this node can tell that no quorum can form around it ({@link QuorumWatch}). */
  private void failNoQuorum(Request q) {
    node.out.add(new Output.Failed<>(q.id, q.name(), Output.Failure.UNAVAILABLE, quorumWatch.missing(),
        quorumWatch.detail()));
    forget(q);
  }

  /** Tells the quorum watch which peers are linked and whether this node has seen a view. */
  private void watchQuorum() {
    Set<String> up = new HashSet<>();
    node.links.forEach((p, l) -> {
      if (l.up) {
        up.add(p);
      }
    });
    quorumWatch.update(node.now, up, node.term > 0);
  }

  /** Queries without a majority of answers within the peer timeout are answered unknown and forgotten. */
  private void expireAsks() {
    if (asks.isEmpty()) {
      return; // the common case, every step: an iterator of an empty map still looks at its every slot
    }
    for (var i = asks.values().iterator(); i.hasNext(); ) {
      LeaderAsk a = i.next();
      if (node.now - a.sentAt >= node.peerTimeoutNanos) {
        i.remove();
        node.out.add(a.unknown());
      }
    }
  }

  /** When this node's waits end for want of a quorum, unless a link comes up first; NONE while one can form. */
  private long noQuorumAt() {
    long at = quorumWatch.lostAt();
    return at == Long.MAX_VALUE ? NONE : at;
  }

  /** How long a holder waits for its owner to answer a renewal before it asks another leader. */
  private long renewPatienceNanos() {
    return node.leaseNanos / 4;
  }

  // ---------------------------------------------------------------- for tests and statistics

  int openRequests() {
    return requests.size();
  }

  ReqKey reqKeyOf(long requestId) {
    Request q = requests.get(requestId);
    return q == null ? null : q.key;
  }

  /**
   * A question to every reachable leader in flight: the leaders asked and those that answered. It is settled once a
   * majority of acting leaders has answered (known), or once too few of those asked can still answer as acting ones.
   */
  private abstract static class LeaderAsk {
    final long queryId;
    Set<String> asked = Set.of();
    final Set<String> answered = new HashSet<>();
    int notActing;
    int needed;
    long sentAt;

    LeaderAsk(long queryId) {
      this.queryId = queryId;
    }

    void start(Set<String> asked, int needed, long sentAt) {
      this.asked = Set.copyOf(asked);
      this.needed = needed;
      this.sentAt = sentAt;
    }

    /** Counts the answer of {@code from}: false when it is not one this ask waits for (its content is then ignored). */
    boolean take(String from, boolean acting) {
      if (!asked.contains(from) || !answered.add(from)) {
        return false;
      }
      if (!acting) {
        notActing++;
      }
      return true;
    }

    boolean known() {
      return answered.size() - notActing >= needed;
    }

    boolean settled() {
      return known() || asked.size() - notActing < needed;
    }

    abstract Output<BakeryMessage> answer();

    abstract Output<BakeryMessage> unknown();
  }

  /** A holder query in flight ({@link #whoHolds}): the best answer yet. */
  private static final class HolderAsk extends LeaderAsk {
    final String name;
    Key best;
    String tag = "";

    HolderAsk(long queryId, String name) {
      super(queryId);
      this.name = name;
    }

    @Override
    Output<BakeryMessage> answer() {
      return new Output.Holder<>(queryId, name, tag);
    }

    @Override
    Output<BakeryMessage> unknown() {
      return new Output.Holder<>(queryId, name, "");
    }
  }

  /**
   * A listing in flight ({@link #list}): other nodes' active tickets so far, the largest key of each request (a redraw
   * takes a larger one); a request's tickets at several leaders are one grant.
   */
  private final class ListAsk extends LeaderAsk {
    final Input.ListQuery<BakeryMessage> query;
    final Map<ReqKey, BakeryMessage.Ticket> tickets = new HashMap<>();

    ListAsk(Input.ListQuery<BakeryMessage> query) {
      super(query.queryId());
      this.query = query;
    }

    @Override
    Output<BakeryMessage> answer() {
      List<Output.Listed> held = new ArrayList<>();
      for (BakeryMessage.Ticket t : tickets.values()) {
        held.add(new Output.Listed(t.name(), t.mode().mode(), 1, Output.Listed.holder(t.reqKey().client(), t.tag()),
            t.key().token(), true, t.remainingNanos()));
      }
      for (Request q : requests.values()) {
        if (q.state == Request.State.HELD && query.covers(q.name())) {
          held.add(new Output.Listed(q.name(), q.claim.mode(), 1, Output.Listed.holder(node.self, q.claim.tag()),
              q.token, true, Math.max(0, q.validUntil - node.now)));
        }
      }
      return new Output.Listing<>(queryId, true, held);
    }

    @Override
    Output<BakeryMessage> unknown() {
      return Output.Listing.unknown(query);
    }
  }
}
