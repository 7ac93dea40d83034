package dev.tumbler.peer.bakery;

import dev.tumbler.peer.bakery.BakeryMessage.Entering;
import dev.tumbler.peer.bakery.BakeryMessage.Key;
import dev.tumbler.peer.bakery.BakeryMessage.Mark;
import dev.tumbler.peer.bakery.BakeryMessage.Mode;
import dev.tumbler.peer.bakery.BakeryMessage.ReqKey;
import dev.tumbler.peer.bakery.BakeryMessage.State;
import dev.tumbler.peer.bakery.BakeryMessage.Ticket;
import dev.tumbler.peer.core.Acks;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.ProtocolCore;
import dev.tumbler.peer.core.QuorumWatch;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.random.RandomGenerator;

/**
 * Snaplock's quorum bakery among the (up to) three elected leaders (NATIVE-ALGORITHMS §3, seed 003), as a
 * pure {@link ProtocolCore}: the client role runs on every node, the leader role on the active leaders of the
 * view the node's election core hands over as {@link Input.View}. One core serves every lock name of its node.
 *
 * <h2>What it guarantees</h2>
 * <ul>
 *   <li><b>Exclusion</b> by validity windows: a grant is activated only with {@code LockActivated(true)} from a
 *       quorum ({@code ⌊L/2⌋+1}) of distinct leaders of the term, each checking the activation rule on its own
 *       table; readers share, a writer or exclusive claim excludes everyone. A client trusts a grant until
 *       {@code sentAt[echo] + T·3/4} (echo rule, §2.3), the leaders hold it until {@code T} after their own
 *       decision, so the client's window closes first while clock rates differ by less than 1/7.
 *   <li><b>Fencing</b> (F1–F3): the token is the ticket key {@code term·2^34 + H·2^2 + ownerSlot}; {@code H}
 *       comes from a per-name high-water mark that is never lowered within a term and an owner floor, so keys
 *       are unique, and within a term conflicting tickets are activated in key order; a later term has a larger
 *       prefix. Renewals keep the token.
 *   <li><b>Fault tolerance</b>: with three leaders, one may be lost at any time; a new view takes over the
 *       active tickets from a quorum of the previous view's tables, or after a grace of
 *       {@code T + leaderTimeout} when no such quorum answers.
 *   <li><b>Leases</b>: {@link Output.Granted} and {@link Output.Renewed} carry the echo window; a grant whose
 *       window passes without a renewal is {@link Output.Lost} ({@code EXPIRED}) from a timer set at
 *       {@code validUntil}; a renewal refused by the owner is {@code Lost(REVOKED)}.
 * </ul>
 *
 * <h2>The protocol (§3.2)</h2>
 * Client: pick the owner {@code leaders[FNV-1a(self \0 name) mod L]} (the next connected leader if it is not
 * connected), send {@code Lock}, keep it alive with {@code Waiting} every T/3, and turn {@code Locked},
 * {@code LockFailed}, {@code Renewed}, {@code Unlocked} into outputs. Owner: P1 {@code LockEntering}, P2
 * {@code GetMaxTicket}, P3 {@code AddTicket} (each to a quorum), P4 {@code LockExiting}, P5 {@code TicketReady}
 * once every request that was entering when the ticket was added has exited, P6 {@code ActivateLock} to a
 * quorum, then {@code Locked}. A leader that refuses an activation remembers it and sends
 * {@code LockActivated(true)} on its own once its table allows it, so a refusal caused by a release that had
 * not reached it yet does not stall the ticket. A client whose owner is this node talks to it by function call,
 * never by message: the message counts of §3.6 hold exactly.
 *
 * <h2>Views</h2>
 * A leader acts only while {@code now < activeUntil} (V-3) and once its table is taken over: on a new term it
 * asks every connected node for its previous view and table ({@code TablesRequest}); with the tables of a quorum
 * of the previous view's leaders it merges them, passes the merge to the other new leaders, and is ready. A node
 * that knows no previous view is ready at once only when every other member answered that it knows none either
 * (a whole cluster starting: no grant can exist), otherwise after the grace. Tickets that were not active are
 * dropped at a change of view: their owners (or, when the owner left the view, their clients) request them
 * again in the new term. Leader messages that arrive while this node is a leader of their term but not acting
 * yet are kept and handled once it acts.
 *
 * <h2>Links</h2>
 * The first message on every link that comes up is {@link BakeryMessage.Restate} (§2.5): the sender's requests
 * owned by the receiver and, as an owner leader, its tickets and entering records; it replaces what the receiver
 * knew of them. Nothing from a peer counts as an acknowledgement until its restatement on the current link
 * arrived; phase messages it may have missed are sent again then.
 *
 * <h2>Where this core goes beyond §3.2, and why</h2>
 * <ul>
 *   <li>A soft or timed-soft writer activates at a leader only if that leader agreed to activate no larger key
 *       in the term; otherwise its owner drops the ticket and draws a new number. §3.2's table lets a soft
 *       writer keep the key it drew when it queued while later readers get in and end, so it would be granted
 *       with a token below theirs (F2/F3). (The first form of this rule, "only as the largest key added", made
 *       two soft writers queued together redraw in turn for ever.) A reader also waits for the readers before
 *       it that are not active yet.
 *   <li>A leader refuses to add a ticket below a key it agreed to activate in the term ({@code TicketAdded} with
 *       {@code added} false; the owner draws again). The owner's P5 wait sees only the entering records that
 *       reached it, so without this a request it never heard of, drawn at the same time, could be added below
 *       an activated key and granted later with a smaller token.
 *   <li>A leader keeps one live ticket per request: adding a request's new key drops its older ones.
 *   <li>A hard writer (or exclusive claim) does not wait for a soft or timed-soft writer before it that is not
 *       active: §3.2's table made it wait for every ticket before it, and with a soft writer first, then a hard
 *       writer, then a reader, the three waited on each other for ever (the soft writer for every reader, the
 *       reader for the hard writer before it, the hard writer for the soft writer). A soft writer keeps no
 *       place in the queue, so nothing behind it waits for it.
 *   <li>A leader that refused an activation answers {@code true} unasked when its table allows it: the
 *       owner's table may not change again, so "wait for the next change" could stall for ever.
 *   <li>At a change of view only active tickets are handed over; tickets that were added or ready are
 *       requested again in the new term (by their owner if it stays a leader, else by the client's relock).
 *       Fairness holds within a term.
 *   <li>A wait never fails because its leaders are not elected yet, too few are reachable, or its owner is taking a
 *       view over: that is an election or a failover, which a connected majority gets through. It fails
 *       {@code UNAVAILABLE} only when this node has had fewer members connected than a quorum needs for
 *       {@code peerTimeout} ({@link QuorumWatch}); its deadline is the driver's, which cancels it (a cancelled request
 *       names the leaders it could not reach). Without that rule a request on the minority side of a partition, whose
 *       leaders are connected but have no lease, would wait for ever. An attempt whose owner cannot act fails after
 *       {@code leaderTimeout}, and an attempt whose run makes no progress for {@code peerTimeout} fails with the
 *       reason. A pending request its owner no longer knows (the owner restarted, or saw its grant expire before
 *       the grant came) is asked for again, not failed.
 *   <li>Leader messages of a term this node has not adopted yet are kept and handled once it has.
 * </ul>
 *
 * <p>Requests have no obtention deadline of their own ({@code Input.Acquire} carries none): a client that stops
 * waiting cancels, so {@code TIMED_OUT} is never produced. Single attempts ({@code Input.Acquire.attempt}) fail
 * {@code CONTENDED} as soon as the owner's table or the leaders' answers rule the claim out. Not thread safe,
 * like every core.
 */
public final class BakeryCore implements ProtocolCore<BakeryMessage> {

  /** The name {@link #algorithm()} returns. */
  public static final String ALGORITHM = "bakery";

  /** The one timer this core uses: the earliest moment something may change without an input. */
  static final long TIMER = 1;

  private static final long NONE = Long.MIN_VALUE;

  private final String self;
  private final Set<String> peers;
  private final long leaseNanos;
  private final long trustNanos;
  private final long keepAliveNanos;
  private final long peerTimeoutNanos;
  /** Whether a quorum can still form around this node: what ends waits early. */
  private final QuorumWatch quorumWatch;
  private final long graceNanos;
  /** How long an attempt waits for its owner to act again (a leader lease that lapsed for a moment). */
  private final long attemptPatienceNanos;
  private final long incarnation;
  private long nextReqSeq;
  private long now;

  // links
  private final Map<String, Link> links = new TreeMap<>();

  // view
  private long term;
  private List<Leader> leaders = List.of();
  private long activeUntil = NONE;
  private long viewAdoptedAt;
  private long prevTerm;
  private List<Leader> prevLeaders = List.of();
  /** An old leader that answered a TablesRequest of term t acts in no term below t. */
  private long retiredBelow;

  // recovery of a new term
  private boolean ready;
  private final Map<String, BakeryMessage.Tables> answers = new HashMap<>();
  private final List<Input.Message<BakeryMessage>> inbox = new ArrayList<>();
  /** Leader messages of a term this node has not adopted yet, replayed when it does. */
  private final List<Input.Message<BakeryMessage>> ahead = new ArrayList<>();
  private static final int MAX_AHEAD = 10_000;

  // client role
  private final Map<Long, Req> requests = new LinkedHashMap<>();
  private final Map<ReqKey, Req> byKey = new HashMap<>();
  private final Map<Long, HolderAsk> holderAsks = new HashMap<>();

  // leader role
  private final Map<String, Table> tables = new TreeMap<>();
  private final Map<ReqKey, Run> runs = new LinkedHashMap<>();
  private final Map<String, Long> ownerFloor = new HashMap<>();
  private final Set<String> dirty = new LinkedHashSet<>();

  private final Deque<BakeryMessage> local = new ArrayDeque<>();
  private long timerAt = NONE;
  /** The clock at the end of the previous step. */
  private long settledAt = NONE;
  private List<Output<BakeryMessage>> out;

  /** Test-only mutation: the owner grants its first READY ticket on its own table, without the activation quorum. */
  boolean mutationActivateOnOwnTable;

  /** Test-only mutation: {@code H} is 1 + the largest live ticket (no high-water mark, no owner floor). */
  boolean mutationNumberFromLiveTickets;

  /** Test-only mutation: a ticket is READY right after the AddTicket quorum, without waiting for entering requests. */
  boolean mutationSkipEnteringWait;

  /** Test-only mutation: a phase completes on ⌊L/2⌋ acknowledgements, the owner's own included. */
  boolean mutationQuorumOffByOne;

  /** Test-only mutation: a leader adds a ticket below a key it already agreed to activate in the term. */
  boolean mutationAddBelowActivated;

  /**
   * @param self this node's id
   * @param peers the other members' ids
   * @param leaseNanos the term {@code T} of a grant; positive
   * @param peerTimeoutNanos how long the node may have fewer members connected than a quorum needs before its waits
   *     fail (and how long an attempt or a holder query waits for the leaders)
   * @param leaderTimeoutNanos the election's leader timeout (the grace of a hand-over is {@code T} plus it)
   * @param random the core's only source of randomness (its incarnation)
   * @throws IllegalArgumentException if {@code leaseNanos} or {@code peerTimeoutNanos} is not positive
   */
  public BakeryCore(String self, Collection<String> peers, long leaseNanos, long peerTimeoutNanos,
      long leaderTimeoutNanos, RandomGenerator random) {
    this.self = Objects.requireNonNull(self, "self");
    if (leaseNanos <= 0) {
      throw new IllegalArgumentException("the bakery's grants have a term: leaseNanos must be positive, not "
          + leaseNanos);
    }
    if (peerTimeoutNanos <= 0 || leaderTimeoutNanos < 0) {
      throw new IllegalArgumentException("bad timeouts " + peerTimeoutNanos + "/" + leaderTimeoutNanos);
    }
    this.peers = ProtocolCore.otherMembers(self, peers);
    for (String p : this.peers) {
      links.put(p, new Link());
    }
    this.leaseNanos = leaseNanos;
    this.trustNanos = leaseNanos / 4 * 3 + leaseNanos % 4 * 3 / 4;
    this.keepAliveNanos = Math.max(1, leaseNanos / 3);
    this.peerTimeoutNanos = peerTimeoutNanos;
    this.graceNanos = leaseNanos + leaderTimeoutNanos;
    this.attemptPatienceNanos = Math.min(peerTimeoutNanos, Math.max(1, leaderTimeoutNanos));
    this.incarnation = random.nextLong() & Long.MAX_VALUE;
    this.quorumWatch = new QuorumWatch(this.peers, peerTimeoutNanos);
  }

  @Override
  public String self() {
    return self;
  }

  @Override
  public String algorithm() {
    return ALGORITHM;
  }

  /** The fencing token of a ticket key (Appendix C). */
  public static long token(long term, long h, int slot) {
    return new Key(term, h, slot).token();
  }

  @Override
  public List<Output<BakeryMessage>> step(long now, Input<BakeryMessage> input) {
    Objects.requireNonNull(input, "input");
    this.now = now;
    out = new ArrayList<>();
    try {
      switch (input) {
        case Input.Message<BakeryMessage> m -> receive(m.from(), m.message());
        case Input.TimerFired<BakeryMessage> t -> {
          if (t.timerId() == TIMER) {
            timerAt = NONE;
          }
        }
        case Input.PeerUp<BakeryMessage> u -> up(u.peer());
        case Input.PeerDown<BakeryMessage> d -> down(d.peer());
        case Input.Acquire<BakeryMessage> a -> acquire(a);
        case Input.Release<BakeryMessage> r -> {
          Req q = requests.get(r.requestId());
          if (q != null) {
            end(q);
          }
        }
        case Input.Cancel<BakeryMessage> c -> {
          Req q = requests.get(c.requestId());
          if (q != null) {
            if (q.state != ReqState.HELD) {
              // the leaders it could not reach, when they are what it waited for
              out.add(new Output.Failed<>(q.id, q.name(), Output.Failure.CANCELLED,
                  connectedLeaders() < quorum() ? missingLeaders() : Set.of()));
            }
            end(q);
          }
        }
        case Input.Renew<BakeryMessage> r -> renew(r.requestId());
        case Input.CloseSession<BakeryMessage> s -> {
          for (Req q : List.copyOf(requests.values())) {
            if (q.session.equals(s.session())) {
              end(q);
            }
          }
        }
        case Input.View<BakeryMessage> v -> view(v.term(), v.leaders(), v.activeUntil());
        case Input.HolderQuery<BakeryMessage> q -> whoHolds(q);
        case Input.PermitsQuery<BakeryMessage> q -> out.add(Output.Permits.unknown(q)); // no semaphores here
        case Input.Start<BakeryMessage> st -> { }
        case Input.Leave<BakeryMessage> l -> { } // what it holds and serves ends by the rules of a crash
        case Input.Begin<BakeryMessage> b -> out.add(new Output.TxAborted<>(b.txId(), Output.Failure.UNAVAILABLE, Set.of(),
            "the " + algorithm() + " core serves no transactions"));
        case Input.End<BakeryMessage> e -> { }
      }
      settle();
      return out;
    } finally {
      out = null;
    }
  }

  // ---------------------------------------------------------------- client role

  private void acquire(Input.Acquire<BakeryMessage> a) {
    if (requests.containsKey(a.requestId())) {
      throw new IllegalStateException("request id " + a.requestId() + " is already in use");
    }
    Claim c = a.claim();
    if (c.path().size() != 1 || c.mode() == Claim.Mode.PERMITS || a.txId() != 0) {
      out.add(new Output.Failed<>(a.requestId(), c.name(), Output.Failure.UNAVAILABLE, Set.of(),
          "bakery serves locks and read/write locks on one name, not " + c));
      return;
    }
    Req q = new Req(a.requestId(), a.session(), c, a.attempt());
    requests.put(q.id, q);
    dispatch(q, null);
  }

  /** Sends a new request for {@code q} to the owner chosen now, if a quorum of leaders is reachable. */
  private void dispatch(Req q, ReqKey supersedes) {
    String owner = leaders.isEmpty() || connectedLeaders() < quorum() ? null : ownerFor(q.name());
    if (owner == null) {
      q.state = ReqState.NEW;
      q.supersedes = supersedes;
      if (q.attempt) {
        fail(q, Output.Failure.UNAVAILABLE, "no quorum of bakery leaders is reachable");
      }
      return;
    }
    if (q.key != null) {
      byKey.remove(q.key);
    }
    q.key = new ReqKey(self, incarnation, ++nextReqSeq);
    byKey.put(q.key, q);
    q.owner = owner;
    q.state = ReqState.PENDING;
    q.ownerLostSince = NONE;
    q.supersedes = null;
    q.nextKeepAlive = now + keepAliveNanos;
    toOwner(q, lockMessage(q, supersedes));
  }

  private BakeryMessage.Lock lockMessage(Req q, ReqKey supersedes) {
    return new BakeryMessage.Lock(q.key, q.name(), Mode.of(q.claim), leaseNanos, q.attempt ? 0 : -1, q.nextSeq(now),
        supersedes, q.claim.tag());
  }

  /**
   * Asks every reachable leader who holds the name, and answers from a majority of them ({@link HolderAsk});
   * unknown at once if no majority is reachable. One leader alone may not yet know the latest grant: a quorum
   * activated it, but the leader's own copy of the ticket before it may still run for a while.
   */
  private void whoHolds(Input.HolderQuery<BakeryMessage> q) {
    List<String> reachable = new ArrayList<>();
    for (Leader l : leaders) {
      if (connected(l.nodeId())) {
        reachable.add(l.nodeId());
      }
    }
    if (leaders.isEmpty() || reachable.size() < quorum()) {
      out.add(Output.Holder.unknown(q));
      return;
    }
    holderAsks.put(q.queryId(), new HolderAsk(q.name(), Set.copyOf(reachable), quorum(), now));
    for (String l : reachable) {
      send(l, new BakeryMessage.WhoHolds(q.queryId(), q.name()));
    }
  }

  /**
   * An answer to {@link #whoHolds}: once a majority of acting leaders has answered, the tag of the largest active
   * key among them; unknown (empty) as soon as too few of the leaders asked can still answer as acting ones.
   */
  private void onHolds(String from, BakeryMessage.Holds h) {
    HolderAsk a = holderAsks.get(h.queryId());
    if (a == null || !a.asked.contains(from) || !a.name.equals(h.name()) || !a.answered.add(from)) {
      return;
    }
    if (!h.acting()) {
      a.notActing++;
    } else if (h.key() != null && (a.best == null || h.key().compareTo(a.best) > 0)) {
      a.best = h.key();
      a.tag = h.tag();
    }
    int acting = a.answered.size() - a.notActing;
    if (acting >= a.needed || a.asked.size() - a.notActing < a.needed) {
      holderAsks.remove(h.queryId());
      out.add(new Output.Holder<>(h.queryId(), a.name, acting >= a.needed ? a.tag : ""));
    }
  }

  /** Holder queries without a majority of answers within the peer timeout are answered unknown and forgotten. */
  private void expireHolderAsks() {
    for (var i = holderAsks.entrySet().iterator(); i.hasNext(); ) {
      var e = i.next();
      if (now - e.getValue().sentAt >= peerTimeoutNanos) {
        i.remove();
        out.add(new Output.Holder<>(e.getKey(), e.getValue().name, ""));
      }
    }
  }

  /** The owner of this node's requests on {@code name} (§3.2 client rule 1), or null if none is connected. */
  String ownerFor(String name) {
    return ownerFor(name, null);
  }

  /** The owner leader of {@code name} as {@link #ownerFor(String)} chooses it, passing over {@code not}. */
  private String ownerFor(String name, String not) {
    int l = leaders.size();
    int first = (int) Long.remainderUnsigned(fnv1a(self + "\0" + name), l);
    for (int i = 0; i < l; i++) {
      String id = leaders.get((first + i) % l).nodeId();
      if (connected(id) && !id.equals(not)) {
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

  private void renew(long requestId) {
    Req q = requests.get(requestId);
    if (q == null) {
      out.add(new Output.Lost<>(requestId, "", Output.LostReason.REVOKED, "not held"));
      return;
    }
    if (q.state != ReqState.HELD) {
      return; // not granted yet: nothing to renew
    }
    if (!connected(q.owner) && ownerFor(q.name()) != null) {
      // its owner is cut off (a leader of the view still, so nobody relocks it for us): another leader takes
      // the active ticket over and renews it, so that a holder beside a majority keeps its lock
      relockHeld(q);
      return;
    }
    if (q.renewSentAt == NONE) {
      q.renewSentAt = now;
    }
    toOwner(q, new BakeryMessage.Renew(q.key, q.ticket, q.nextSeq(now)));
  }

  /** Ends {@code q} here and tells its owner to drop its ticket: the client gave it up. */
  private void end(Req q) {
    if (q.key != null && q.state != ReqState.NEW) {
      toOwner(q, new BakeryMessage.Unlock(q.key));
    }
    forget(q);
  }

  /** Ends {@code q} here only: its ticket, if any, ends at the leaders by their own drop or expiry. */
  private void forget(Req q) {
    requests.remove(q.id);
    if (q.key != null) {
      byKey.remove(q.key);
    }
    q.state = ReqState.ENDED;
  }

  private void fail(Req q, Output.Failure failure, String detail) {
    Set<String> missing = failure == Output.Failure.UNAVAILABLE ? missingLeaders() : Set.of();
    out.add(new Output.Failed<>(q.id, q.name(), failure, missing, detail));
    forget(q);
  }

  private void toOwner(Req q, BakeryMessage m) {
    send(q.owner, m);
  }

  private void onLocked(String from, BakeryMessage.Locked m) {
    Req q = byKey.get(m.reqKey());
    if (q == null || q.state != ReqState.PENDING || !from.equals(q.owner)) {
      if (q == null || q.state == ReqState.ENDED) {
        send(from, new BakeryMessage.Unlock(m.reqKey())); // superseded or ended: the owner must not keep it
      }
      return;
    }
    Long sentAt = q.sentAt.get(m.echo());
    if (sentAt == null) {
      return; // not an echo of ours: a peer's bug, never a grant
    }
    q.pruneSentAt(m.echo());
    if (now >= sentAt + trustNanos) {
      // the grant is trusted from a message sent before the leaders were asked, and the activation took so
      // long that its window has closed already. Renewing and reporting it now would break F2: readers with
      // larger keys may have been granted and ended meanwhile. The client gives the ticket up and draws
      // again, above every key added since (seeds 108906 and 268309).
      toOwner(q, new BakeryMessage.Unlock(q.key));
      dispatch(q, q.key);
      return;
    }
    q.state = ReqState.HELD;
    q.ticket = m.key();
    q.token = m.key().token();
    q.reported = sentAt;
    q.validUntil = sentAt + trustNanos;
    q.renewSentAt = NONE;
    out.add(new Output.Granted<>(q.id, q.name(), q.token, 1, sentAt, q.validUntil));
  }

  private void onRenewed(String from, BakeryMessage.Renewed m) {
    Req q = byKey.get(m.reqKey());
    if (q == null || q.state != ReqState.HELD || !from.equals(q.owner)) {
      return;
    }
    Long sentAt = q.sentAt.get(m.echo());
    if (sentAt == null || sentAt <= q.reported || now >= q.validUntil || now >= sentAt + trustNanos) {
      return; // never earlier than reported (L-5); never revives a grant whose window closed (L-6)
    }
    q.reported = sentAt;
    q.validUntil = sentAt + trustNanos;
    q.renewSentAt = NONE;
    q.pruneSentAt(m.echo());
    out.add(new Output.Renewed<>(q.id, sentAt, q.validUntil));
  }

  private void onLockFailed(String from, BakeryMessage.LockFailed m) {
    Req q = byKey.get(m.reqKey());
    if (q != null && q.state == ReqState.PENDING && from.equals(q.owner)) {
      fail(q, m.failure(), m.detail());
    }
  }

  private void onUnlocked(String from, BakeryMessage.Unlocked m) {
    Req q = byKey.get(m.reqKey());
    if (q != null && from.equals(q.owner)) {
      if (q.state == ReqState.HELD) {
        out.add(new Output.Lost<>(q.id, q.name(), Output.LostReason.REVOKED, m.detail()));
        forget(q);
      } else if (q.state == ReqState.PENDING && q.attempt) {
        fail(q, Output.Failure.UNAVAILABLE, m.detail());
      } else if (q.state == ReqState.PENDING) {
        // the owner no longer knows it (it restarted, or granted it and saw the grant expire before it came): a
        // wait asks again, as a new request, rather than end before its deadline
        relockPending(q);
      }
    }
  }

  /**
   * Time-driven client work: dispatch, keep-alives, relocks, losses, and the end of waits when no quorum can form
   * here. A wait with no leaders elected yet, too few of them reachable, or an owner taking a view over is a failover
   * or an election under way, and goes on: it ends only at its deadline (the driver cancels it) or once this node has
   * had fewer members connected than a quorum needs for {@code peerTimeout} ({@link QuorumWatch}).
   */
  private void clientTick() {
    expireHolderAsks();
    watchQuorum();
    for (Req q : List.copyOf(requests.values())) {
      switch (q.state) {
        case NEW -> {
          if (!leaders.isEmpty() && connectedLeaders() >= quorum()) {
            dispatch(q, q.supersedes);
          } else if (quorumWatch.lost(now)) {
            failNoQuorum(q);
          }
        }
        case PENDING -> {
          if (quorumWatch.lost(now)) {
            toOwner(q, new BakeryMessage.Unlock(q.key));
            failNoQuorum(q);
            continue;
          }
          if (!isLeader(q.owner) || !connected(q.owner) && q.ownerLostSince != NONE
              && now - q.ownerLostSince >= graceNanos - leaseNanos) {
            relockPending(q);
          } else if (!connected(q.owner)) {
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
            out.add(new Output.Lost<>(q.id, q.name(), Output.LostReason.EXPIRED, "no renewal within the lease"));
            // not given back: the leaders keep the ticket until their own expiry, up to T/4 later, and that is
            // the time the holder's lost listeners have to run before anyone else is granted (an Unlock here
            // let a client of another node in within milliseconds, before the holder's listeners had run)
            forget(q);
          } else if (!isLeader(q.owner)) {
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
    }
  }

  /** Client rule 7 for a pending request: a new request, superseding the old one, to the owner chosen now. */
  private void relockPending(Req q) {
    ReqKey old = q.key;
    dispatch(q, old);
  }

  /** A wait ends: this node can tell that no quorum can form around it ({@link QuorumWatch}). */
  private void failNoQuorum(Req q) {
    out.add(new Output.Failed<>(q.id, q.name(), Output.Failure.UNAVAILABLE, quorumWatch.missing(),
        quorumWatch.detail()));
    forget(q);
  }

  /** Tells the quorum watch which peers are linked and whether this node has seen a view. */
  private void watchQuorum() {
    Set<String> up = new HashSet<>();
    links.forEach((p, l) -> {
      if (l.up) {
        up.add(p);
      }
    });
    quorumWatch.update(now, up, term > 0);
  }

  /** Client rule 7 for a held request whose owner left the view: its new owner adopts the ticket. */
  private void relockHeld(Req q) {
    String owner = leaders.isEmpty() ? null : ownerFor(q.name());
    if (owner != null) {
      q.owner = owner;
      q.renewSentAt = now;
      toOwner(q, new BakeryMessage.Relock(q.key, q.name(), q.ticket, q.nextSeq(now)));
    }
  }

  // ---------------------------------------------------------------- links and restatement

  private void up(String peer) {
    Link l = links.get(peer);
    if (l == null) {
      return;
    }
    if (l.up) {
      down(peer);
    }
    l.up = true;
    sendRestate(peer, true);
  }

  private void down(String peer) {
    Link l = links.get(peer);
    if (l != null) {
      if (l.downSince == NONE) {
        l.downSince = now;
      }
      l.up = false;
      l.synced = false;
    }
    if (acting() && isLeader(peer)) {
      // The other leaders drop this node's waiting tickets once it has been away from them for T (they would
      // block every later ticket for as long as it stays away); a ticket it would restate after that could
      // come back below grants made meanwhile. So a waiting ticket whose number a leader may lose is drawn
      // again now, with the leaders still reachable.
      for (Run r : List.copyOf(runs.values())) {
        if (runs.containsKey(r.reqKey) && (r.phase == Phase.WAIT_READY || r.phase == Phase.READY
            || r.phase == Phase.ACTIVATING)) {
          redraw(r);
        }
      }
    }
  }

  /**
   * Drops the waiting tickets and entering records of owner leaders that have been away for T: their owner
   * cannot activate them without this leader or the others, and they would hold every later ticket of their
   * names back for as long as it stays away. Active tickets stay until their deadline, as ever.
   */
  private void forgetAbsentOwners() {
    for (Map.Entry<String, Link> e : links.entrySet()) {
      Link l = e.getValue();
      if (l.downSince == NONE || now - l.downSince < leaseNanos) {
        continue;
      }
      String peer = e.getKey();
      for (Map.Entry<String, Table> te : tables.entrySet()) {
        Table t = te.getValue();
        boolean changed = t.tickets.values().removeIf(k -> {
          boolean drop = k.owner.equals(peer) && k.state != State.ACTIVE;
          if (drop) {
            l.forgotten.add(k.reqKey);
          }
          return drop;
        });
        changed |= t.entering.entrySet().removeIf(en -> en.getValue().equals(peer));
        if (changed) {
          t.deferred.keySet().removeIf(key -> !t.tickets.containsKey(key));
          dirty.add(te.getKey());
        }
      }
    }
  }

  /** When {@link #forgetAbsentOwners} next has something to drop, or {@link #NONE}. */
  private long nextForget() {
    long next = NONE;
    for (Map.Entry<String, Link> e : links.entrySet()) {
      Link l = e.getValue();
      if (l.downSince == NONE) {
        continue;
      }
      String peer = e.getKey();
      for (Table t : tables.values()) {
        if (t.entering.containsValue(peer)
            || t.tickets.values().stream().anyMatch(k -> k.owner.equals(peer) && k.state != State.ACTIVE)) {
          next = earliest(next, l.downSince + leaseNanos);
          break;
        }
      }
    }
    return next;
  }

  private void sendRestate(String peer, boolean answer) {
    List<BakeryMessage.Lock> pending = new ArrayList<>();
    List<BakeryMessage.Relock> held = new ArrayList<>();
    for (Req q : requests.values()) {
      if (peer.equals(q.owner) && q.state == ReqState.PENDING) {
        pending.add(lockMessage(q, null));
      } else if (peer.equals(q.owner) && q.state == ReqState.HELD) {
        held.add(new BakeryMessage.Relock(q.key, q.name(), q.ticket, q.nextSeq(now)));
      }
    }
    List<Ticket> tickets = new ArrayList<>();
    List<Entering> entering = new ArrayList<>();
    if (isLeader(self)) {
      for (Map.Entry<String, Table> e : tables.entrySet()) {
        for (Tk t : e.getValue().tickets.values()) {
          if (t.owner.equals(self)) {
            Ticket w = t.wire(e.getKey(), now);
            Run r = runs.get(t.reqKey);
            if (w.state() == State.ACTIVE && r != null && r.phase == Phase.ACTIVATING) {
              // marked active here while its activation waits for a quorum: restated as active, the peer
              // would take it as agreed and answer its ActivateLock with true whatever its own table holds
              w = new Ticket(w.name(), w.key(), w.reqKey(), w.owner(), w.mode(), State.READY, 0, w.tag());
            }
            tickets.add(w);
          }
        }
        for (Map.Entry<ReqKey, String> en : e.getValue().entering.entrySet()) {
          if (en.getValue().equals(self)) {
            entering.add(new Entering(e.getKey(), en.getKey(), self));
          }
        }
      }
    }
    send(peer, new BakeryMessage.Restate(Math.min(term, BakeryMessage.MAX_TERM), incarnation, answer, pending, held,
        tickets, entering));
  }

  private void onRestate(String from, BakeryMessage.Restate m) {
    Link l = links.get(from);
    if (l.incarnation != NONE && l.incarnation != m.incarnation()) {
      forgetIncarnation(from, l.incarnation);
    }
    l.incarnation = m.incarnation();
    l.synced = true;
    l.downSince = NONE;
    // what the peer sent on its earlier link and this node kept for later (not acting yet, or a term ahead)
    // is replaced by this restatement: handled after it, a kept AddTicket would bring back a ticket the peer
    // has dropped since (its DropTicket was lost with the link) and hold the name for ever
    inbox.removeIf(k -> k.from().equals(from));
    ahead.removeIf(k -> k.from().equals(from));
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
      sendRestate(from, false);
    }
    for (Run r : List.copyOf(runs.values())) {
      if (r.client.equals(from) && !listed.contains(r.reqKey)) {
        if (r.phase == Phase.GRANTED || r.phase == Phase.ADOPT) {
          // the client moved the lock to another owner (a renewal relock while this link was down) or released
          // it and the Unlock was lost with the link: this node stops owning it, but the ticket stays active in
          // every table until it expires or its new owner renews it; dropping it everywhere here once let a
          // reader in while the writer still held the lock through its new owner (sim seed 128), and so did
          // dropping a relock not adopted yet, which the client had moved on to another owner meanwhile (39176)
          runs.remove(r.reqKey);
        } else {
          dropRun(r, true);
        }
      }
    }
    for (BakeryMessage.Lock k : m.pending()) {
      onLock(from, k);
    }
    for (BakeryMessage.Relock r : m.held()) {
      onRelock(from, r);
    }
    // as leader: the sender's tickets and entering records are exactly those it lists, but for active tickets:
    // those stand until they expire here (T after the last renewal seen) or are dropped. An active ticket the
    // sender no longer lists may be held still through another owner (its client relocked it while this link
    // was down, and the renewals of the new owner have not reached this node yet, sim seed 189354), or have been
    // made by the sender's earlier process (261558); removing it let a writer in beside its holder
    if (m.term() == term && isLeader(from) && isLeader(self)) {
      // by name and key: keys repeat across names (a ticket of another name with the same key kept a dropped
      // one here for ever, sim seed 6551)
      Set<Map.Entry<String, Key>> keys = new LinkedHashSet<>();
      for (Ticket t : m.tickets()) {
        keys.add(Map.entry(t.name(), t.key()));
      }
      Set<ReqKey> entering = new LinkedHashSet<>();
      for (Entering e : m.entering()) {
        entering.add(e.reqKey());
      }
      for (Map.Entry<String, Table> e : tables.entrySet()) {
        Table t = e.getValue();
        if (t.tickets.values().removeIf(k -> k.owner.equals(from) && k.state != State.ACTIVE
            && !keys.contains(Map.entry(e.getKey(), k.key)))
            | t.entering.entrySet().removeIf(en -> en.getValue().equals(from) && !entering.contains(en.getKey()))) {
          dirty.add(e.getKey());
        }
      }
      for (Ticket t : m.tickets()) {
        if (t.state() == State.ACTIVE || !l.forgotten.contains(t.reqKey())) {
          mergeTicket(t);
        }
      }
      l.forgotten.clear();
      for (Entering e : m.entering()) {
        table(e.name()).entering.put(e.reqKey(), e.owner());
        dirty.add(e.name());
      }
    }
    resendPhases(from);
  }

  /** Drops what a peer's earlier incarnation left: its clients died with it. */
  private void forgetIncarnation(String peer, long old) {
    // the grants its earlier process made as an owner stand (a restatement removes no active ticket): they
    // expire, or their clients relock them (sim seed 261558, exclusion)
    for (Run r : List.copyOf(runs.values())) {
      if (r.client.equals(peer) && r.reqKey.incarnation() == old) {
        dropRun(r, true);
      }
    }
    for (Map.Entry<String, Table> e : tables.entrySet()) {
      if (e.getValue().tickets.values().removeIf(t -> t.reqKey.client().equals(peer)
          && t.reqKey.incarnation() == old)) {
        dirty.add(e.getKey());
      }
    }
  }

  /** Phase messages {@code peer} may have lost in a break: sent again once its restatement arrived. */
  private void resendPhases(String peer) {
    if (!acting() || !isLeader(peer)) {
      return;
    }
    for (Run r : runs.values()) {
      if (r.term != term || r.acks == null || r.acks.missing().isEmpty() || !r.acks.missing().contains(peer)) {
        if (r.renewAcks != null && r.renewAcks.missing().contains(peer)) {
          send(peer, new BakeryMessage.RenewTicket(term, r.name, r.key));
        }
        continue;
      }
      BakeryMessage m = phaseMessage(r);
      if (m != null) {
        send(peer, m);
      }
    }
  }

  /** The message of the phase {@code r} waits for answers to, or null when it waits for none. */
  private BakeryMessage phaseMessage(Run r) {
    return switch (r.phase) {
      case ENTERING -> new BakeryMessage.LockEntering(term, r.reqKey, r.name);
      case MAXING -> new BakeryMessage.GetMaxTicket(term, r.reqKey, r.name);
      case ADDING -> new BakeryMessage.AddTicket(term, ticketOf(r, State.ADDED));
      case ACTIVATING -> new BakeryMessage.ActivateLock(term, r.name, r.key);
      default -> null;
    };
  }

  /**
   * A waiting run that has had no answer it needs for {@code peerTimeout} while this leader acts: its phase message
   * goes again to the connected leaders that have not answered (one may have been lost in a break that this node
   * restated across while it could not act). It was failed here once, which ended a wait in a healthy cluster.
   */
  private void askAgain(Run r) {
    r.progressAt = now;
    BakeryMessage m = r.term == term && r.acks != null ? phaseMessage(r) : null;
    if (m == null) {
      return;
    }
    for (String p : r.acks.missing()) {
      if (!p.equals(self) && connected(p)) {
        send(p, m);
      }
    }
  }

  // ---------------------------------------------------------------- messages

  private void receive(String from, BakeryMessage m) {
    if (!from.equals(self) && !links.containsKey(from)) {
      return; // not a member
    }
    if (!from.equals(self) && !(m instanceof BakeryMessage.Restate) && !links.get(from).synced) {
      // before the peer's restatement on this link: nothing counts; client messages are restated anyway
      return;
    }
    if (m instanceof BakeryMessage.Termed t && t.term() > term && !(m instanceof BakeryMessage.TablesRequest)) {
      if (ahead.size() < MAX_AHEAD) {
        ahead.add(new Input.Message<>(from, m)); // its view reaches this node soon: handled then
      }
      return;
    }
    switch (m) {
      case BakeryMessage.Restate r -> onRestate(from, r);
      // client → owner
      case BakeryMessage.Lock k -> onLock(from, k);
      case BakeryMessage.Waiting w -> {
        Run r = runs.get(w.reqKey());
        if (r != null && r.client.equals(from)) {
          r.heard(w.seq(), now);
        } else if (r == null && w.reqKey().client().equals(from)) {
          // the client waits on a request this node no longer has (granted, and expired before the grant
          // reached the client): tell it, or it would wait for ever
          send(from, new BakeryMessage.Unlocked(w.reqKey(), "the owner leader " + self
              + " no longer knows the request"));
        }
      }
      case BakeryMessage.Renew r -> onRenew(from, r);
      case BakeryMessage.Relock r -> onRelock(from, r);
      case BakeryMessage.Unlock u -> {
        Run r = runs.get(u.reqKey());
        if (r != null && r.client.equals(from)) {
          dropRun(r, true);
        }
      }
      // owner → client
      case BakeryMessage.Locked k -> onLocked(from, k);
      case BakeryMessage.LockFailed f -> onLockFailed(from, f);
      case BakeryMessage.Renewed r -> onRenewed(from, r);
      case BakeryMessage.Unlocked u -> onUnlocked(from, u);
      case BakeryMessage.WhoHolds w -> answerWhoHolds(from, w);
      case BakeryMessage.Holds h -> onHolds(from, h);
      // leader ↔ leader
      case BakeryMessage.TablesRequest t -> onTablesRequest(from, t);
      case BakeryMessage.Tables t -> onTables(from, t);
      case BakeryMessage.DropTicket d -> {
        if (d.term() == term) {
          dropRecords(d.name(), d.reqKey());
          if (!acting() && !inbox.isEmpty()) {
            // messages kept until this leader acts may still record the request (a LockEntering): the drop
            // is applied again after them, or the record would be left behind and hold back every ticket
            inbox.add(new Input.Message<>(from, m));
          }
        }
      }
      case BakeryMessage.Termed t -> {
        if (t.term() != term || !isLeader(from) || !isLeader(self)) {
          return; // another term's, or not between leaders of this one
        }
        if (!acting()) {
          inbox.add(new Input.Message<>(from, m)); // handled once this leader acts in the term
          return;
        }
        onLeaderMessage(from, t);
      }
    }
  }

  private void onLeaderMessage(String from, BakeryMessage.Termed m) {
    switch (m) {
      case BakeryMessage.LockEntering e -> {
        table(e.name()).entering.put(e.reqKey(), from);
        send(from, new BakeryMessage.LockEntered(term, e.reqKey()));
      }
      case BakeryMessage.LockEntered e -> {
        Run r = runs.get(e.reqKey());
        if (r != null && r.phase == Phase.ENTERING && countable(from) && r.acks.add(e.term(), from)
            && r.acks.reached()) {
          startMaxing(r);
        }
      }
      case BakeryMessage.GetMaxTicket g -> send(from, new BakeryMessage.MaxTicket(term, g.reqKey(), maxTicket(g.name())));
      case BakeryMessage.MaxTicket mt -> {
        Run r = runs.get(mt.reqKey());
        if (r != null && r.phase == Phase.MAXING && countable(from) && r.acks.add(mt.term(), from)) {
          r.maxSeen = Math.max(r.maxSeen, mt.max());
          if (r.acks.reached()) {
            startAdding(r);
          }
        }
      }
      case BakeryMessage.AddTicket a -> {
        Ticket t = a.ticket();
        Table table = table(t.name());
        Tk known = table.tickets.get(t.key());
        if (!mutationAddBelowActivated && table.activatedAbove(term, t.key())
            && (known == null || known.state != State.ACTIVE)) {
          // a larger key was activated here: this one, drawn concurrently, would be granted after it with a
          // smaller token (F2); the owner draws again, above it
          send(from, new BakeryMessage.TicketAdded(term, t.reqKey(), false, List.of()));
          return;
        }
        if (!table.tickets.containsKey(t.key())
            && !table.put(new Tk(t.key(), t.reqKey(), t.owner(), t.mode(), State.ADDED, t.tag()))) {
          return; // the request has a larger key here already: this one is stale
        }
        table.raise(term, t.key());
        dirty.add(t.name());
        List<ReqKey> still = new ArrayList<>();
        for (ReqKey k : table.entering.keySet()) {
          if (!k.equals(t.reqKey())) {
            still.add(k);
          }
        }
        send(from, new BakeryMessage.TicketAdded(term, t.reqKey(), true, still));
      }
      case BakeryMessage.TicketAdded a -> {
        Run r = runs.get(a.reqKey());
        if (r != null && r.phase == Phase.ADDING && !a.added() && countable(from)) {
          redraw(r);
        } else if (r != null && r.phase == Phase.ADDING && countable(from) && r.acks.add(a.term(), from)) {
          r.stillEntering.addAll(a.stillEntering());
          if (r.acks.reached()) {
            exit(r);
          }
        }
      }
      case BakeryMessage.LockExiting x -> {
        Table t = tables.get(x.name());
        if (t != null && t.entering.remove(x.reqKey()) != null) {
          dirty.add(x.name());
        }
      }
      case BakeryMessage.TicketCheck c -> {
        if (ticket(c.name(), c.key()) == null) {
          send(from, new BakeryMessage.TicketGone(term, c.name(), c.key()));
        }
      }
      case BakeryMessage.TicketGone g -> {
        Table table = tables.get(g.name());
        Tk t = table == null ? null : table.tickets.get(g.key());
        if (t != null && t.state != State.ACTIVE && t.owner.equals(from)) {
          table.tickets.remove(g.key());
          table.deferred.remove(g.key());
          dirty.add(g.name());
        }
      }
      case BakeryMessage.TicketReady r -> {
        Tk t = ticket(r.name(), r.key());
        if (t != null && t.state == State.ADDED) {
          t.state = State.READY;
          dirty.add(r.name());
        }
      }
      case BakeryMessage.ActivateLock a -> {
        Table table = tables.get(a.name());
        Tk t = table == null ? null : table.tickets.get(a.key());
        if (t != null && (t.state == State.ACTIVE || mayActivate(table, t))) {
          markActive(table, t);
          send(from, new BakeryMessage.LockActivated(term, a.name(), a.key(), true));
        } else {
          if (t != null) {
            table.deferred.put(a.key(), from); // answered true later, once this table allows it
          }
          send(from, new BakeryMessage.LockActivated(term, a.name(), a.key(), false));
        }
      }
      case BakeryMessage.LockActivated a -> onActivated(from, a);
      case BakeryMessage.DropTicket d -> dropRecords(d.name(), d.reqKey());
      case BakeryMessage.RenewTicket r -> {
        Tk t = ticket(r.name(), r.key());
        if (t != null && t.state == State.ACTIVE) {
          t.deadline = Math.max(t.deadline, now + leaseNanos);
          send(from, new BakeryMessage.TicketRenewed(term, r.name(), r.key()));
        }
      }
      case BakeryMessage.TicketRenewed r -> {
        Tk t = ticket(r.name(), r.key());
        Run run = t == null ? null : runs.get(t.reqKey);
        if (run != null && run.renewAcks != null && countable(from) && run.renewAcks.add(r.term(), from)
            && run.renewAcks.reached()) {
          run.renewAcks = null;
          fact(run, "RENEWED");
          toClient(run, new BakeryMessage.Renewed(run.reqKey, run.renewEcho));
        }
      }
      default -> { }
    }
  }

  // ---------------------------------------------------------------- owner role

  private void onLock(String from, BakeryMessage.Lock m) {
    if (!m.reqKey().client().equals(from)) {
      return;
    }
    Run r = runs.get(m.reqKey());
    if (r != null) {
      if (r.phase == Phase.GRANTED) {
        toClient(r, new BakeryMessage.Locked(r.reqKey, r.key, r.grantEcho)); // the first Locked may be lost
      } else {
        r.heard(m.seq(), now);
      }
      return;
    }
    if (m.supersedes() != null) {
      Run old = runs.get(m.supersedes());
      if (old != null) {
        dropRun(old, true);
      }
    }
    r = new Run(m.reqKey(), from, m.name(), m.mode(), m.waitNanos() == 0);
    r.tag = m.tag();
    r.supersedes = m.supersedes();
    r.heard(m.seq(), now);
    r.progressAt = now;
    runs.put(r.reqKey, r);
    // an attempt at an owner that cannot act right now (its leader lease lapsed for a moment, a view being
    // taken over) waits up to leaderTimeout for it to act again, then fails UNAVAILABLE (leaderTick): failing
    // it at once turned a busy moment of a healthy cluster into ServiceUnavailable
  }

  private String notActing() {
    return "the owner leader " + self + " is not an active bakery leader now ("
        + (!isLeader(self) ? "not a leader of term " + term : !ready ? "taking over term " + term
            : "its leader lease has lapsed") + ")";
  }

  /** Starts P1 for a run that is waiting for this leader to act. */
  private void startEntering(Run r) {
    r.term = term;
    if (r.supersedes != null) {
      broadcastOthers(new BakeryMessage.DropTicket(term, r.name, r.supersedes));
      dropRecords(r.name, r.supersedes);
      r.supersedes = null;
    }
    r.phase = Phase.ENTERING;
    r.progressAt = now;
    r.acks = newAcks();
    broadcast(new BakeryMessage.LockEntering(term, r.reqKey, r.name));
  }

  private void startMaxing(Run r) {
    r.phase = Phase.MAXING;
    r.progressAt = now;
    r.acks = newAcks();
    r.maxSeen = 0;
    broadcast(new BakeryMessage.GetMaxTicket(term, r.reqKey, r.name));
  }

  private void startAdding(Run r) {
    long floor = mutationNumberFromLiveTickets ? 0 : ownerFloor.getOrDefault(r.name, 0L);
    long h = Math.max(r.maxSeen, floor) + 1;
    if (h > BakeryMessage.MAX_H) {
      failRun(r, Output.Failure.UNAVAILABLE, "ticket numbers of " + r.name + " are exhausted until the next term");
      return;
    }
    ownerFloor.put(r.name, h);
    r.key = new Key(term, h, slotOf(self));
    r.phase = Phase.ADDING;
    r.progressAt = now;
    r.acks = newAcks();
    r.stillEntering.clear();
    fact(r, "ADDED");
    broadcast(new BakeryMessage.AddTicket(term, ticketOf(r, State.ADDED)));
  }

  /** P4, then P5 if nothing was entering. */
  private void exit(Run r) {
    Table t = table(r.name);
    for (ReqKey k : t.entering.keySet()) {
      if (!k.equals(r.reqKey)) {
        r.stillEntering.add(k);
      }
    }
    r.stillEntering.remove(r.reqKey);
    r.phase = Phase.WAIT_READY;
    r.acks = null;
    broadcast(new BakeryMessage.LockExiting(term, r.reqKey, r.name));
    dirty.add(r.name);
  }

  private void checkReady(Run r) {
    Table t = table(r.name);
    if (!mutationSkipEnteringWait) {
      for (ReqKey k : r.stillEntering) {
        if (t.entering.containsKey(k)) {
          return;
        }
      }
    }
    r.phase = Phase.READY;
    fact(r, "READY");
    broadcast(new BakeryMessage.TicketReady(term, r.name, r.key));
  }

  /** P6 at the owner: its READY tickets of {@code name} in key order, each activated when its rule holds. */
  private void evaluate(String name) {
    Table table = tables.get(name);
    if (table == null) {
      return;
    }
    for (Tk t : List.copyOf(table.tickets.values())) {
      Run r = runs.get(t.reqKey);
      if (r == null || r.phase != Phase.READY || !t.owner.equals(self) || !r.key.equals(t.key)) {
        continue;
      }
      if (t.state == State.ADDED) {
        t.state = State.READY; // our own TicketReady is still in the local queue
      }
      if (rule(table, t) && softBehindLater(table, t)) {
        redraw(r); // a later ticket was added: a soft writer keeps no place, it takes a new number
        continue;
      }
      if (mayActivate(table, t)) {
        markActive(table, t);
        r.phase = Phase.ACTIVATING;
        // the client's window is trusted from a message of its that arrived before the leaders were asked:
        // their agreements expire T after they got ActivateLock, and a later keep-alive's send time could
        // put the window's end after that (sim seed 505507, exclusion)
        r.activationEcho = r.echo;
        r.acks = newAcks();
        r.acks.add(term, self);
        r.refusals.clear();
        if (mutationActivateOnOwnTable) {
          grant(r);
          broadcastOthers(new BakeryMessage.ActivateLock(term, name, t.key));
        } else {
          broadcastOthers(new BakeryMessage.ActivateLock(term, name, t.key));
          if (r.acks.reached()) {
            grant(r);
          }
        }
      } else if (r.attempt) {
        failRun(r, Output.Failure.CONTENDED, "");
      }
    }
  }

  private void onActivated(String from, BakeryMessage.LockActivated a) {
    Tk t = ticket(a.name(), a.key());
    Run r = t == null ? null : runs.get(t.reqKey);
    if (r == null || r.phase != Phase.ACTIVATING || !r.key.equals(a.key()) || !countable(from)) {
      return;
    }
    if (a.granted()) {
      r.refusals.remove(from);
      if (r.acks.add(a.term(), from) && r.acks.reached()) {
        grant(r);
      }
    } else {
      r.refusals.add(from);
      if (r.refusals.size() > leaders.size() - quorum()) {
        if (r.attempt) {
          failRun(r, Output.Failure.CONTENDED, "");
        } else if (r.mode.writes() && r.mode.writer() != Claim.Writer.HARD) {
          redraw(r); // refused by a quorum: a later ticket may be known there
        }
      }
    }
  }

  private void grant(Run r) {
    Tk t = ticket(r.name, r.key);
    if (t != null) {
      t.state = State.ACTIVE;
      t.deadline = Math.max(t.deadline, now + leaseNanos);
    }
    r.phase = Phase.GRANTED;
    r.acks = null;
    r.grantEcho = r.activationEcho;
    fact(r, "ACTIVE");
    toClient(r, new BakeryMessage.Locked(r.reqKey, r.key, r.grantEcho));
  }

  private void onRenew(String from, BakeryMessage.Renew m) {
    Run r = runs.get(m.reqKey());
    if (r == null || !r.client.equals(from)) {
      if (acting() && r == null) {
        send(from, new BakeryMessage.Unlocked(m.reqKey(), "the owner leader " + self + " does not know the grant"));
      }
      return;
    }
    r.heard(m.seq(), now);
    if (r.phase == Phase.GRANTED && m.key().equals(r.key)) {
      startRenewal(r, m.seq());
    } else if (r.phase == Phase.GRANTED) {
      toClient(r, new BakeryMessage.Unlocked(r.reqKey, "renewal of another ticket"));
    }
  }

  private void startRenewal(Run r, long echo) {
    if (!acting()) {
      r.renewWanted = echo;
      return;
    }
    Tk t = ticket(r.name, r.key);
    if (t == null || t.state != State.ACTIVE) {
      dropRun(r, true);
      toClient(r, new BakeryMessage.Unlocked(r.reqKey, "the grant expired at the owner leader " + self));
      return;
    }
    t.deadline = Math.max(t.deadline, now + leaseNanos);
    r.renewWanted = 0;
    r.renewEcho = echo;
    r.renewAcks = newAcks();
    r.renewAcks.add(term, self);
    broadcastOthers(new BakeryMessage.RenewTicket(term, r.name, r.key));
    if (r.renewAcks.reached()) {
      r.renewAcks = null;
      toClient(r, new BakeryMessage.Renewed(r.reqKey, echo));
    }
  }

  private void onRelock(String from, BakeryMessage.Relock m) {
    if (!m.reqKey().client().equals(from)) {
      return;
    }
    Run r = runs.get(m.reqKey());
    if (r != null && r.phase == Phase.GRANTED && r.key.equals(m.key())) {
      r.heard(m.seq(), now);
      startRenewal(r, m.seq());
      return;
    }
    if (r != null && r.phase == Phase.ADOPT && r.key.equals(m.key())) {
      // the same relock again (restated): it waits to be adopted as before; dropping it would have told every
      // leader to drop the held lock (a restarted leader did, sim seed 261558, exclusion)
      r.heard(m.seq(), now);
      return;
    }
    if (r != null) {
      dropRun(r, true);
    }
    r = new Run(m.reqKey(), from, m.name(), null, false);
    r.phase = Phase.ADOPT;
    r.key = m.key();
    r.heard(m.seq(), now);
    r.progressAt = now;
    runs.put(r.reqKey, r);
  }

  /** A relocked grant, once this leader acts: adopt the active ticket, or refuse it. */
  private void adopt(Run r) {
    Tk t = ticket(r.name, r.key);
    if (t == null || t.state != State.ACTIVE || !t.reqKey.equals(r.reqKey)) {
      runs.remove(r.reqKey);
      toClient(r, new BakeryMessage.Unlocked(r.reqKey, "the leaders of term " + term + " do not know the grant"));
      return;
    }
    t.owner = self;
    r.mode = t.mode;
    r.tag = t.tag;
    r.phase = Phase.GRANTED;
    r.grantEcho = r.echo;
    startRenewal(r, r.echo);
  }

  /** Drops the run's ticket everywhere and runs it again from P1, for a larger number. */
  private void redraw(Run r) {
    fact(r, "REDRAWN");
    broadcastOthers(new BakeryMessage.DropTicket(term, r.name, r.reqKey));
    dropRecords(r.name, r.reqKey);
    r.phase = Phase.NEW;
    r.key = null;
    r.acks = null;
    r.refusals.clear();
    r.stillEntering.clear();
    startEntering(r);
  }

  private void failRun(Run r, Output.Failure failure, String detail) {
    dropRun(r, true);
    toClient(r, new BakeryMessage.LockFailed(r.reqKey, failure, detail));
  }

  /** Forgets a run and every record of its request; tells the other leaders when {@code tell}. */
  private void dropRun(Run r, boolean tell) {
    runs.remove(r.reqKey);
    if (r.key != null) {
      fact(r, "DROPPED");
    }
    dropRecords(r.name, r.reqKey);
    if (tell && isLeader(self) && term > 0 && term <= BakeryMessage.MAX_TERM) {
      broadcastOthers(new BakeryMessage.DropTicket(term, r.name, r.reqKey));
    }
  }

  private void dropRecords(String name, ReqKey k) {
    Table t = tables.get(name);
    if (t == null) {
      return;
    }
    t.entering.remove(k);
    t.tickets.values().removeIf(x -> x.reqKey.equals(k));
    t.deferred.keySet().removeIf(key -> !t.tickets.containsKey(key));
    dirty.add(name);
  }

  /** Time-driven leader work: expiries, silent clients, runs waiting to start, renewals held back. */
  private void leaderTick() {
    forgetAbsentOwners();
    checkStaleTickets();
    for (Map.Entry<String, Table> e : tables.entrySet()) {
      Table t = e.getValue();
      boolean expired = t.tickets.values().removeIf(x -> x.state == State.ACTIVE && x.deadline <= now);
      if (expired) {
        dirty.add(e.getKey());
      }
      long quiet = t.quietEndAfter(settledAt);
      if (quiet != NONE && quiet <= now) {
        dirty.add(e.getKey()); // a timed-soft writer's quiet period ended since the last step
      }
    }
    for (Run r : List.copyOf(runs.values())) {
      if (!runs.containsKey(r.reqKey)) {
        continue;
      }
      if (r.phase == Phase.GRANTED) {
        Tk t = ticket(r.name, r.key);
        if (t == null) {
          runs.remove(r.reqKey); // expired here: the client's window closed before
          fact(r, "DROPPED");
        } else if (r.renewWanted > 0 && acting()) {
          startRenewal(r, r.renewWanted);
        }
      } else if (r.attempt && r.phase == Phase.NEW && !acting() && now - r.progressAt >= attemptPatienceNanos) {
        failRun(r, Output.Failure.UNAVAILABLE, notActing()); // not back within leaderTimeout: not a busy moment
      } else if (now - r.lastHeard >= leaseNanos) {
        dropRun(r, true); // the client went silent for T: it died
      } else if (r.attempt && r.needsLeaders() && now - r.progressAt >= peerTimeoutNanos) {
        failRun(r, Output.Failure.UNAVAILABLE, !acting() ? notActing() : "no quorum of the leaders of term "
            + term + " answered within peerTimeout" + (r.acks == null ? "" : ", missing " + r.acks.missing()));
      } else if (r.asksLeaders() && now - r.progressAt >= peerTimeoutNanos && acting()) {
        // a wait is not failed here: it waits out a hand-over or an election, and its client ends it at its deadline
        // or once its own node can tell that no quorum can form (clientTick); the leaders are asked again
        askAgain(r);
      } else if (acting()) {
        if (r.phase == Phase.NEW) {
          startEntering(r);
        } else if (r.phase == Phase.ADOPT) {
          adopt(r);
        } else if ((r.phase == Phase.WAIT_READY || r.phase == Phase.READY || r.phase == Phase.ACTIVATING)
            && r.term == term && ticket(r.name, r.key) == null) {
          // its ticket left this table (an activation that found no quorum for T expired here): a late
          // LockActivated would find nothing to count, so it draws a new number instead of waiting for ever
          redraw(r);
        }
      }
    }
  }

  /**
   * Anti-entropy: a ticket of another owner that has waited here unchanged for a whole lease is checked with its
   * owner ({@code TicketCheck}), which answers {@code TicketGone} if it dropped it. A drop lost on the way
   * (a link break the ends saw differently, a message kept while this leader did not act) otherwise left a
   * ticket here that held back every ticket behind it for ever. One check per ticket and lease.
   */
  private void checkStaleTickets() {
    if (!acting()) {
      return;
    }
    for (Map.Entry<String, Table> e : tables.entrySet()) {
      for (Tk t : e.getValue().tickets.values()) {
        if (t.state == State.ACTIVE || t.owner.equals(self) || t.key.term() != term) {
          continue;
        }
        if (t.since == NONE) {
          t.since = now;
        } else if (now - t.since >= leaseNanos) {
          t.since = now; // checked again a lease later, whether it could be asked now or not
          if (connected(t.owner) && links.get(t.owner).synced) {
            send(t.owner, new BakeryMessage.TicketCheck(term, e.getKey(), t.key));
          }
        }
      }
    }
  }

  // ---------------------------------------------------------------- leader tables

  private long maxTicket(String name) {
    Table t = tables.get(name);
    if (t == null) {
      return 0;
    }
    long m = mutationNumberFromLiveTickets || t.highestTerm != term ? 0 : t.highest;
    for (Tk k : t.tickets.values()) {
      if (k.key.term() == term) {
        m = Math.max(m, k.key.h());
      }
    }
    return m;
  }

  /**
   * The activation rule (§3.2) for {@code k} on this leader's table, with two additions that keep F2/F3 for
   * claims activated out of key order: a reader waits for the readers before it, and a soft writer activates
   * only if this leader agreed to activate no larger key in the term (else its owner draws it a new number).
   */
  private boolean mayActivate(Table table, Tk k) {
    return rule(table, k) && !softBehindLater(table, k);
  }

  private boolean softBehindLater(Table table, Tk k) {
    return k.mode.writes() && k.mode.writer() != Claim.Writer.HARD && table.activatedAbove(term, k.key);
  }

  private boolean rule(Table table, Tk k) {
    boolean activeWrite = false;
    boolean anyActive = false;
    boolean writeBefore = false;
    boolean hardWriteBefore = false;
    boolean anyBefore = false;
    boolean anyRead = false;
    boolean waitingReadBefore = false;
    for (Tk t : table.tickets.values()) {
      if (t == k) {
        continue;
      }
      boolean before = t.key.compareTo(k.key) < 0;
      if (t.state == State.ACTIVE) {
        anyActive = true;
        activeWrite |= t.mode.writes();
      }
      if (before) {
        // a soft writer keeps no place (§3.2): one still waiting holds back no hard writer behind it, or
        // soft writer (waits for every reader) -> reader (waits for the hard writer before it) -> hard writer
        // (waits for everything before it) would wait on each other for ever
        anyBefore |= t.state == State.ACTIVE || !t.mode.writes() || t.mode.writer() == Claim.Writer.HARD;
        writeBefore |= t.mode.writes();
        hardWriteBefore |= t.mode.writes() && t.mode.writer() == Claim.Writer.HARD;
        waitingReadBefore |= !t.mode.writes() && t.state != State.ACTIVE;
      }
      anyRead |= !t.mode.writes();
    }
    Mode m = k.mode;
    if (m.mode() == Claim.Mode.READ) {
      return !activeWrite && !hardWriteBefore && !waitingReadBefore;
    }
    if (m.writer() == Claim.Writer.HARD) {
      return !anyBefore && !anyActive;
    }
    boolean soft = !anyActive && !anyRead && !writeBefore;
    if (m.writer() == Claim.Writer.TIMED_SOFT) {
      return soft && (table.lastRead == NONE || now - table.lastRead >= m.quietNanos());
    }
    return soft;
  }

  private void markActive(Table table, Tk t) {
    if (t.state != State.ACTIVE && !t.mode.writes()) {
      table.lastRead = now;
    }
    t.state = State.ACTIVE;
    t.deadline = Math.max(t.deadline, now + leaseNanos);
    table.deferred.remove(t.key);
    table.activated(term, t.key);
  }

  /** Leaders that refused an activation re-check it when their table changes, and answer {@code true} then. */
  private void recheckDeferred(String name) {
    Table table = tables.get(name);
    if (table == null || table.deferred.isEmpty()) {
      return;
    }
    for (Map.Entry<Key, String> d : List.copyOf(table.deferred.entrySet())) {
      Tk t = table.tickets.get(d.getKey());
      if (t != null && mayActivate(table, t)) {
        markActive(table, t);
        send(d.getValue(), new BakeryMessage.LockActivated(term, name, t.key, true));
      }
    }
  }

  private void mergeTicket(Ticket w) {
    Table table = table(w.name());
    if (w.state() != State.ACTIVE && table.activatedAbove(term, w.key()) && !mutationAddBelowActivated) {
      return; // restated below a key activated here: its AddTicket is refused, and its owner draws again
    }
    Tk t = table.tickets.get(w.key());
    if (t == null) {
      t = new Tk(w.key(), w.reqKey(), w.owner(), w.mode(), w.state(), w.tag());
      if (!table.put(t)) {
        return;
      }
    } else if (w.state().ordinal() > t.state.ordinal()) {
      t.state = w.state();
    }
    if (w.state() == State.ACTIVE) {
      t.deadline = Math.max(t.deadline, now + w.remainingNanos());
    }
    if (w.key().term() == term) {
      table.raise(term, w.key());
    }
    dirty.add(w.name());
  }

  /**
   * Who holds {@code name} by this leader's table: its active ticket with the largest key (a later grant has a
   * larger key). A leader that does not act says so: it may have missed grants, and the client counts only the
   * answers of acting ones.
   */
  private void answerWhoHolds(String from, BakeryMessage.WhoHolds w) {
    if (!acting()) {
      send(from, new BakeryMessage.Holds(w.queryId(), w.name(), false, null, ""));
      return;
    }
    Table t = tables.get(w.name());
    if (t != null) {
      for (Tk k : t.tickets.descendingMap().values()) {
        if (k.state == State.ACTIVE && k.deadline > now) {
          send(from, new BakeryMessage.Holds(w.queryId(), w.name(), true, k.key, k.tag));
          return;
        }
      }
    }
    send(from, new BakeryMessage.Holds(w.queryId(), w.name(), true, null, ""));
  }

  private Table table(String name) {
    return tables.computeIfAbsent(name, k -> new Table());
  }

  private Tk ticket(String name, Key key) {
    Table t = tables.get(name);
    return t == null ? null : t.tickets.get(key);
  }

  private Ticket ticketOf(Run r, State state) {
    return new Ticket(r.name, r.key, r.reqKey, self, r.mode, state, 0, r.tag);
  }

  // ---------------------------------------------------------------- views and hand-over

  private void view(long t, List<Leader> list, long until) {
    if (t < term) {
      return;
    }
    if (t == term) {
      boolean was = acting();
      activeUntil = until;
      if (!was && acting()) {
        // acting again (its leader lease had lapsed): phase messages lost in a break it restated across meanwhile
        // were not sent again then (resendPhases needs it acting), so they go now
        for (Leader l : leaders) {
          if (!l.nodeId().equals(self) && connected(l.nodeId())) {
            resendPhases(l.nodeId());
          }
        }
      }
      return;
    }
    if (term > 0) {
      prevTerm = term;
      prevLeaders = leaders;
    }
    term = t;
    leaders = List.copyOf(list);
    activeUntil = until;
    viewAdoptedAt = now;
    ownerFloor.clear();
    inbox.clear();
    answers.clear();
    // tickets that were not active are requested again in the new term; active ones stay until their deadline
    for (Map.Entry<String, Table> e : tables.entrySet()) {
      Table table = e.getValue();
      table.entering.clear();
      table.deferred.clear();
      table.tickets.values().removeIf(x -> x.state != State.ACTIVE);
      dirty.add(e.getKey());
    }
    boolean leader = isLeader(self);
    for (Run r : List.copyOf(runs.values())) {
      if (!leader) {
        runs.remove(r.reqKey); // the clients relock with a leader of the new view
      } else if (r.phase != Phase.GRANTED && r.phase != Phase.ADOPT) {
        // abandoned in the old term; started again in this one, after dropping what the old one left
        if (r.key != null || r.phase != Phase.NEW) {
          r.supersedes = r.reqKey;
        }
        r.phase = Phase.NEW;
        r.progressAt = now;
        r.key = null;
        r.acks = null;
        r.refusals.clear();
        r.stillEntering.clear();
      } else if (r.phase == Phase.GRANTED) {
        r.renewAcks = null;
      }
    }
    // the client side (requests whose owner left the view go to a leader of this one) follows in clientTick
    ready = false;
    List<Input.Message<BakeryMessage>> replay = new ArrayList<>();
    ahead.removeIf(m -> ((BakeryMessage.Termed) m.message()).term() <= t && replay.add(m));
    if (leader && term <= BakeryMessage.MAX_TERM) {
      for (String p : peers) {
        if (connected(p)) {
          send(p, new BakeryMessage.TablesRequest(term));
        }
      }
      checkRecovered();
    }
    for (Input.Message<BakeryMessage> m : replay) {
      if (((BakeryMessage.Termed) m.message()).term() == t) {
        receive(m.from(), m.message());
      }
    }
  }

  private void onTablesRequest(String from, BakeryMessage.TablesRequest m) {
    if (m.term() < term) {
      return;
    }
    long vt = m.term() == term ? prevTerm : term;
    List<Leader> vl = m.term() == term ? prevLeaders : leaders;
    if (vt >= m.term() || vt > BakeryMessage.MAX_TERM) {
      return;
    }
    retiredBelow = Math.max(retiredBelow, m.term());
    boolean led = false;
    for (Leader l : vl) {
      led |= l.nodeId().equals(self);
    }
    send(from, tablesMessage(m.term(), vt, vt == 0 ? List.of() : vl, false, led));
  }

  private BakeryMessage.Tables tablesMessage(long t, long vt, List<Leader> vl, boolean merged, boolean withTables) {
    List<Ticket> tickets = new ArrayList<>();
    List<Mark> marks = new ArrayList<>();
    if (withTables) {
      for (Map.Entry<String, Table> e : tables.entrySet()) {
        for (Tk k : e.getValue().tickets.values()) {
          if (k.state == State.ACTIVE && k.deadline > now) {
            tickets.add(k.wire(e.getKey(), now));
          }
        }
        Table table = e.getValue();
        if (table.lastRead != NONE) {
          marks.add(new Mark(e.getKey(), 0, Math.max(0, now - table.lastRead)));
        }
      }
    }
    return new BakeryMessage.Tables(t, vt, vl, merged, tickets, marks);
  }

  private void onTables(String from, BakeryMessage.Tables m) {
    if (m.term() != term || !isLeader(self)) {
      return;
    }
    if (m.merged()) {
      mergeTables(m);
      becomeReady(false);
      return;
    }
    answers.put(from, m);
    checkRecovered();
  }

  /** Whether the tables gathered make this new leader ready (§3.2 "View change and hand-over"). */
  private void checkRecovered() {
    if (ready) {
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
      if (answers.size() == peers.size()) {
        becomeReady(true); // every member knows no earlier view: the cluster is starting, no grant exists
      }
      return;
    }
    List<String> from = new ArrayList<>();
    boolean selfCounts = best == prevTerm && containsNode(prevLeaders, self);
    if (selfCounts) {
      from.add(self);
    }
    for (Map.Entry<String, BakeryMessage.Tables> a : answers.entrySet()) {
      if (a.getValue().viewTerm() == best && containsNode(bestLeaders, a.getKey())) {
        from.add(a.getKey());
      }
    }
    if (from.size() >= Acks.majority(bestLeaders.size())) {
      for (String f : from) {
        if (!f.equals(self)) {
          mergeTables(answers.get(f));
        }
      }
      becomeReady(true);
    }
  }

  private void mergeTables(BakeryMessage.Tables m) {
    for (Ticket t : m.tickets()) {
      mergeTicket(t);
    }
    for (Mark k : m.marks()) {
      if (k.lastReadAgoNanos() >= 0) {
        Table table = table(k.name());
        long at = now - k.lastReadAgoNanos();
        table.lastRead = table.lastRead == NONE ? at : Math.max(table.lastRead, at);
      }
    }
  }

  private void becomeReady(boolean tellOthers) {
    if (ready) {
      return;
    }
    ready = true;
    answers.clear();
    if (tellOthers) {
      BakeryMessage.Tables merged = tablesMessage(term, 0, List.of(), true, true);
      for (Leader l : leaders) {
        if (!l.nodeId().equals(self)) {
          send(l.nodeId(), merged);
        }
      }
    }
    dirty.addAll(tables.keySet());
  }

  // ---------------------------------------------------------------- the loop after every input

  private void settle() {
    boolean again = true;
    int rounds = 0;
    while (again) {
      again = false;
      while (!local.isEmpty()) {
        receive(self, local.poll());
      }
      if (isLeader(self) && !ready && now - viewAdoptedAt >= graceNanos && term <= BakeryMessage.MAX_TERM) {
        becomeReady(false);
      }
      if (acting() && !inbox.isEmpty()) {
        List<Input.Message<BakeryMessage>> held = List.copyOf(inbox);
        inbox.clear();
        for (Input.Message<BakeryMessage> m : held) {
          onLeaderMessage(m.from(), (BakeryMessage.Termed) m.message());
        }
      }
      leaderTick();
      clientTick();
      if (acting()) {
        for (String name : List.copyOf(dirty)) {
          dirty.remove(name);
          for (Run r : List.copyOf(runs.values())) {
            if (r.name.equals(name) && r.phase == Phase.WAIT_READY && runs.containsKey(r.reqKey)) {
              checkReady(r);
            }
          }
          evaluate(name);
          recheckDeferred(name);
        }
      }
      again = !local.isEmpty() || acting() && !dirty.isEmpty() || acting() && !inbox.isEmpty();
      if (++rounds > 10_000) {
        throw new IllegalStateException("the bakery core does not settle");
      }
    }
    tidy();
    settledAt = now;
    long next = nextWakeUp();
    if (next != timerAt) {
      out.add(next == NONE ? new Output.CancelTimer<>(TIMER) : new Output.SetTimer<>(TIMER, next));
      timerAt = next;
    }
  }

  private long nextWakeUp() {
    long next = NONE;
    for (Req q : requests.values()) {
      next = earliest(next, switch (q.state) {
        case NEW -> noQuorumAt();
        case PENDING -> earliest(noQuorumAt(),
            q.ownerLostSince != NONE ? q.ownerLostSince + graceNanos - leaseNanos : q.nextKeepAlive);
        case HELD -> earliest(q.validUntil, q.renewSentAt == NONE ? NONE : q.renewSentAt + renewPatienceNanos());
        case ENDED -> NONE;
      });
    }
    for (Table t : tables.values()) {
      for (Tk k : t.tickets.values()) {
        if (k.state == State.ACTIVE) {
          next = earliest(next, k.deadline);
        } else if (k.since != NONE && acting()) {
          next = earliest(next, k.since + leaseNanos); // its anti-entropy check
        }
      }
      next = earliest(next, t.quietEndAfter(now));
    }
    for (Run r : runs.values()) {
      if (r.phase != Phase.GRANTED) {
        next = earliest(next, r.lastHeard + leaseNanos);
      }
      if (r.attempt && r.phase == Phase.NEW) {
        next = earliest(next, r.progressAt + attemptPatienceNanos);
      }
      if (r.attempt ? r.needsLeaders() : r.asksLeaders() && acting()) {
        next = earliest(next, r.progressAt + peerTimeoutNanos);
      }
    }
    if (isLeader(self) && !ready) {
      next = earliest(next, viewAdoptedAt + graceNanos);
    }
    next = earliest(next, nextForget());
    if (next != NONE && next <= now) {
      next = now + 1;
    }
    return next;
  }

  /** When this node's waits end for want of a quorum, unless a link comes up first; {@link #NONE} while one can form. */
  private long noQuorumAt() {
    long at = quorumWatch.lostAt();
    return at == Long.MAX_VALUE ? NONE : at;
  }

  /** How long a holder waits for its owner to answer a renewal before it asks another leader. */
  private long renewPatienceNanos() {
    return leaseNanos / 4;
  }

  private static long earliest(long a, long b) {
    return a == NONE ? b : b == NONE ? a : Math.min(a, b);
  }

  private void tidy() {
    tables.values().removeIf(t -> t.tickets.isEmpty() && t.entering.isEmpty() && t.deferred.isEmpty()
        && (t.lastRead == NONE || now - t.lastRead > BakerySettings.MAX_DURATION.toNanos())
        && (t.highest == 0 || t.highestTerm != term)); // the high-water mark lives as long as its term
  }

  // ---------------------------------------------------------------- small helpers

  /** Whether this node acts as a leader now (V-3): a leader of the view, within its lease, its table taken over. */
  private boolean acting() {
    return ready && now < activeUntil && term >= retiredBelow && isLeader(self) && term <= BakeryMessage.MAX_TERM;
  }

  private boolean isLeader(String id) {
    return id != null && containsNode(leaders, id);
  }

  private static boolean containsNode(List<Leader> list, String id) {
    for (Leader l : list) {
      if (l.nodeId().equals(id)) {
        return true;
      }
    }
    return false;
  }

  private int slotOf(String id) {
    for (int i = 0; i < leaders.size(); i++) {
      if (leaders.get(i).nodeId().equals(id)) {
        return i;
      }
    }
    throw new IllegalStateException(id + " is not a leader of term " + term);
  }

  private int quorum() {
    int l = leaders.size();
    return mutationQuorumOffByOne ? Math.max(1, l / 2) : l / 2 + 1;
  }

  private Acks newAcks() {
    List<String> ids = new ArrayList<>();
    for (Leader l : leaders) {
      ids.add(l.nodeId());
    }
    return new Acks(term, ids, quorum());
  }

  private boolean connected(String id) {
    if (id.equals(self)) {
      return true;
    }
    Link l = links.get(id);
    return l != null && l.up && l.synced;
  }

  private boolean countable(String from) {
    return connected(from);
  }

  private int connectedLeaders() {
    int c = 0;
    for (Leader l : leaders) {
      c += connected(l.nodeId()) ? 1 : 0;
    }
    return c;
  }

  /** The leaders this node cannot reach; with no view yet, every member it cannot reach. */
  private Set<String> missingLeaders() {
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

  private void send(String to, BakeryMessage m) {
    if (to.equals(self)) {
      local.add(m); // a local interaction is a call, handled before this step ends, never a message
      return;
    }
    Link l = links.get(to);
    if (l != null && l.up) {
      out.add(new Output.Send<>(to, m));
    }
  }

  private void broadcast(BakeryMessage m) {
    for (Leader l : leaders) {
      send(l.nodeId(), m);
    }
  }

  private void broadcastOthers(BakeryMessage m) {
    for (Leader l : leaders) {
      if (!l.nodeId().equals(self)) {
        send(l.nodeId(), m);
      }
    }
  }

  private void toClient(Run r, BakeryMessage m) {
    send(r.client, m);
  }

  private void fact(Run r, String state) {
    out.add(new Output.Fact<>(new Observation.Ticket(r.name, (r.key == null ? "-" : r.key.toString()) + " "
        + r.reqKey, state)));
  }

  // ---------------------------------------------------------------- for tests and statistics

  /** This node's view's term (0 before the first). */
  public long term() {
    return term;
  }

  /** Whether this node is a leader of its view that has taken over the previous view's tables. */
  public boolean ready() {
    return ready;
  }

  /** Requests of this node's clients not yet ended. */
  public int openRequests() {
    return requests.size();
  }

  /** The key this node's request {@code requestId} has now, or null; for tests. */
  ReqKey reqKeyOf(long requestId) {
    Req q = requests.get(requestId);
    return q == null ? null : q.key;
  }

  /** Requests this node owns as a leader. */
  int ownedRuns() {
    return runs.size();
  }

  /** The tickets this leader keeps for {@code name}, in key order, as text ({@code key state}). */
  List<String> tickets(String name) {
    Table t = tables.get(name);
    List<String> l = new ArrayList<>();
    if (t != null) {
      for (Tk k : t.tickets.values()) {
        l.add(k.key + " " + k.state);
      }
    }
    return l;
  }

  // ---------------------------------------------------------------- state records

  private enum ReqState { NEW, PENDING, HELD, ENDED }

  /** A request of this node's client. */
  /** A holder query in flight ({@link #whoHolds}): the leaders asked, those that answered, the best answer yet. */
  private static final class HolderAsk {
    final String name;
    final Set<String> asked;
    final Set<String> answered = new HashSet<>();
    int notActing;
    final int needed;
    final long sentAt;
    Key best;
    String tag = "";

    HolderAsk(String name, Set<String> asked, int needed, long sentAt) {
      this.name = name;
      this.asked = asked;
      this.needed = needed;
      this.sentAt = sentAt;
    }
  }

  private static final class Req {
    final long id;
    final String session;
    final Claim claim;
    final boolean attempt;
    ReqState state = ReqState.NEW;
    ReqKey key;
    ReqKey supersedes;
    String owner;
    long seq;
    final TreeMap<Long, Long> sentAt = new TreeMap<>();
    long ownerLostSince = NONE;
    long nextKeepAlive;
    Key ticket;
    long token;
    long reported = NONE;
    long validUntil;
    /** When the oldest renewal the owner has not answered yet was asked for; NONE if none waits. */
    long renewSentAt = NONE;

    Req(long id, String session, Claim claim, boolean attempt) {
      this.id = id;
      this.session = session;
      this.claim = claim;
      this.attempt = attempt;
    }

    String name() {
      return claim.name();
    }

    long nextSeq(long now) {
      sentAt.put(++seq, now);
      return seq;
    }

    /** Sequence numbers below an echo that was used can never be echoed usefully again. */
    void pruneSentAt(long echo) {
      sentAt.headMap(echo).clear();
    }
  }

  private enum Phase { NEW, ENTERING, MAXING, ADDING, WAIT_READY, READY, ACTIVATING, GRANTED, ADOPT }

  /** A request this node owns as a leader. */
  private static final class Run {
    final ReqKey reqKey;
    final String client;
    final String name;
    Mode mode;
    final boolean attempt;
    Phase phase = Phase.NEW;
    long term;
    Acks acks;
    long maxSeen;
    final Set<ReqKey> stillEntering = new LinkedHashSet<>();
    final Set<String> refusals = new LinkedHashSet<>();
    Key key;
    ReqKey supersedes;
    /** The claim's tag, put on the ticket. */
    String tag = "";
    long echo;
    /** {@link #echo} when the activation was asked for: the grant's echo. */
    long activationEcho;
    long grantEcho;
    long lastHeard;
    Acks renewAcks;
    long renewEcho;
    long renewWanted;
    /** When the run last made progress through a phase that needs the leaders. */
    long progressAt;

    Run(ReqKey reqKey, String client, String name, Mode mode, boolean attempt) {
      this.reqKey = reqKey;
      this.client = client;
      this.name = name;
      this.mode = mode;
      this.attempt = attempt;
    }

    void heard(long seq, long now) {
      echo = Math.max(echo, seq);
      lastHeard = now;
    }

    /** Whether the run waits for the leaders' answers to a phase message it sent them (P1–P3). */
    boolean asksLeaders() {
      return phase == Phase.ENTERING || phase == Phase.MAXING || phase == Phase.ADDING;
    }

    /** Whether the run is waiting for the leaders themselves (not for holders or entering requests). */
    boolean needsLeaders() {
      return phase == Phase.NEW || phase == Phase.ADOPT || phase == Phase.ENTERING || phase == Phase.MAXING
          || phase == Phase.ADDING;
    }
  }

  /** One name's records at a leader. */
  private static final class Table {
    final Map<ReqKey, String> entering = new LinkedHashMap<>();
    final TreeMap<Key, Tk> tickets = new TreeMap<>();
    /** Activations this leader refused, by ticket key, and who asked. */
    final Map<Key, String> deferred = new LinkedHashMap<>();
    long highestTerm;
    long highest;
    long lastRead = NONE;

    void raise(long term, Key key) {
      if (highestTerm != term) {
        highestTerm = term;
        highest = 0;
      }
      highest = Math.max(highest, key.h());
    }

    /**
     * Adds {@code t} keeping one live key per request (BK-2): a request's keys only grow (a redraw takes a larger
     * number), so a smaller one left behind (its DropTicket lost with a link) is dropped, and one that arrives
     * after a larger (a stale restatement or a kept message) is not added. A key left behind would hold back
     * every ticket after it for ever.
     *
     * @return false when {@code t} is stale and was not added
     */
    boolean put(Tk t) {
      for (Tk x : tickets.values()) {
        if (x.reqKey.equals(t.reqKey) && x.key.compareTo(t.key) > 0) {
          return false;
        }
      }
      tickets.values().removeIf(x -> x.reqKey.equals(t.reqKey) && x.state != State.ACTIVE);
      tickets.put(t.key, t);
      return true;
    }

    /** The largest key this leader agreed to activate in {@link #activatedTerm}. */
    Key activatedTop;
    long activatedTerm;

    void activated(long term, Key key) {
      if (key.term() != term) {
        return; // handed over from an earlier term
      }
      if (activatedTerm != term) {
        activatedTerm = term;
        activatedTop = null;
      }
      if (activatedTop == null || key.compareTo(activatedTop) > 0) {
        activatedTop = key;
      }
    }

    /** Whether this leader agreed to activate a larger key than {@code key} in {@code term}. */
    boolean activatedAbove(long term, Key key) {
      return activatedTerm == term && activatedTop != null && activatedTop.compareTo(key) > 0;
    }


    /**
     * The earliest end, after {@code after}, of the quiet period of a waiting timed-soft writer; NONE if none.
     * Not the earliest end of all: once the shortest quiet period has passed, a writer with a longer one
     * (which may be the first in line) still needs a wake-up when its own ends (sim seed 796252: two timed-soft
     * writers, and the one with the longer period waited for ever once the last reader had gone).
     */
    long quietEndAfter(long after) {
      long at = NONE;
      if (lastRead == NONE) {
        return NONE;
      }
      for (Tk t : tickets.values()) {
        long end = lastRead + t.mode.quietNanos();
        if (t.state != State.ACTIVE && t.mode.writer() == Claim.Writer.TIMED_SOFT && end > after) {
          at = earliest(at, end);
        }
      }
      return at;
    }

  }

  /** A ticket at a leader. */
  private static final class Tk {
    final Key key;
    final ReqKey reqKey;
    String owner;
    final Mode mode;
    State state;
    long deadline = NONE;
    final String tag;
    /** Since when this leader has kept this ticket of another owner without checking it (anti-entropy). */
    long since = NONE;

    Tk(Key key, ReqKey reqKey, String owner, Mode mode, State state, String tag) {
      this.key = key;
      this.reqKey = reqKey;
      this.owner = owner;
      this.mode = mode;
      this.state = state;
      this.tag = tag;
    }

    Ticket wire(String name, long now) {
      return new Ticket(name, key, reqKey, owner, mode, state,
          state == State.ACTIVE ? Math.max(0, deadline - now) : 0, tag);
    }
  }

  private static final class Link {
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
