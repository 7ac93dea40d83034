package dev.tumbler.peer.lamport;

import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Lazy;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.ProtocolCore;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Lamport's mutual exclusion with logical clocks ("Time, Clocks, and the Ordering of Events in a
 * Distributed System", 1978), and optionally Ricart and Agrawala's refinement, as a pure
 * {@link ProtocolCore}. One core serves every lock name of one node; each name has its own queue, and the
 * node's one logical clock stamps everything.
 *
 * <h2>Lamport ({@link Variant#LAMPORT}), the five rules</h2>
 * <ol>
 *   <li>To ask for a lock, stamp a request {@code (ts, me)}, put it on the name's queue and send it to
 *       every peer.
 *   <li>On a request, put it on the queue and acknowledge it (the acknowledgement's only content is its
 *       later timestamp).
 *   <li>To release, take the request off the queue and tell every peer.
 *   <li>On a release, take the sender's request off the queue.
 *   <li>Enter when the request is first on the queue in the total order (clock, node index) <em>and</em>
 *       a message stamped later than the request has come from every peer. With FIFO links, the second
 *       condition means every earlier request of every peer is already on the queue.
 * </ol>
 * 3(N−1) messages per entry. Grants of a name follow the total order of their requests.
 *
 * <p>A release goes at once to a peer that has a request of its own on the name's queue; to any other peer it
 * is held back and sent just before the next message to that peer (rule 3 with a slower link, which the
 * algorithm allows). Such a peer needs the release only for a request of its own, and the acknowledgement of
 * that request follows the release on the same link. A client that locks the same name again and again then
 * sends each release in the same write as its next request, and an idle peer wakes once per entry, not twice.
 * A release held back for 10 ms ({@link #RELEASE_HOLD_NANOS}) is sent on its own (a timer), so that a peer's
 * queue does not keep a released request for long.
 *
 * <h2>Ricart–Agrawala ({@link Variant#RICART_AGRAWALA})</h2>
 * A peer answers a request at once unless it holds the lock or has an earlier pending request for it, in
 * which case it defers the reply until it leaves; the requester enters when every peer has replied. The
 * release is folded into the deferred replies: 2(N−1) messages per entry.
 *
 * <h2>Fencing</h2>
 * The token of a grant is {@code ts × 2^10 + node index}, where {@code ts} is the request's timestamp and
 * the node index is the node's position among the sorted ids of all members; hence at most
 * {@value #MAX_NODES} nodes. Successive grants of a name strictly increase: a request granted after
 * another was either already known to the earlier holder (and ordered after it) or made by a node that had
 * heard from the earlier holder's node after its request, so its clock was past it.
 *
 * <h2>Every peer must be up</h2>
 * Neither variant tolerates faults: a request can only be granted once every peer has answered, so while
 * any peer is unreachable no new grant is made anywhere (grants already made stay held until released).
 * A waiting request never grants unsafely; after {@code peerTimeout} of waiting with a peer unreachable
 * it fails with {@link Output.Failure#UNAVAILABLE} naming the missing peers. A grant has no expiry: a
 * node cannot free a lock held by a crashed peer, until that peer restarts.
 *
 * <h2>Links that break, nodes that restart</h2>
 * Links lose messages when they break (the transport then reports the peer down). Whenever a link comes
 * up, each side first sends {@link LamportMessage.Sync}: the complete list of its live requests, which
 * replaces what the other side knew of them (requests and releases lost in the break are repaired, and the
 * entries of a peer that crashed and restarted with empty state are dropped — its holders died with it).
 * The receiver answers with a Sync of its own, so each side gets a Sync sent after it saw the link come
 * back, in whatever order the transport reported the two directions (TCP connects them separately).
 * Until a peer's {@code Sync} has arrived after the link was reported down, nothing from it counts as
 * "stamped later". Requests that arrive from a peer before its link is reported up are kept and answered
 * when it is.
 * A node stamps requests only once it has heard a {@code Sync} from every peer since it started, so a
 * restarted node's clock is past every request it could have seen before the crash (which keeps fencing
 * tokens increasing as long as not every node restarts at once).
 *
 * <p>Not thread safe, like every core.
 */
public final class LamportCore implements ProtocolCore<LamportMessage> {

  /** The two algorithms this core runs. */
  public enum Variant {
    /** Lamport 1978: request, acknowledge, release; 3(N−1) messages per entry. */
    LAMPORT("lamport"),
    /** Ricart–Agrawala 1981: request, deferred reply; 2(N−1) messages per entry. */
    RICART_AGRAWALA("ricart-agrawala");

    private final String urlName;

    Variant(String urlName) {
      this.urlName = urlName;
    }

    /** The name used in URLs. */
    public String urlName() {
      return urlName;
    }
  }

  /** Bits of the fencing token that hold the node index. */
  public static final int NODE_BITS = 10;

  /** The most members a cluster may have, so that a node index fits in {@value #NODE_BITS} bits. */
  public static final int MAX_NODES = 1 << NODE_BITS;

  /** The largest logical clock value, so that a fencing token fits in a positive long. */
  public static final long MAX_CLOCK = (1L << (63 - NODE_BITS)) - 1;

  /** The id of the timer for the earliest peer timeout of a waiting request. */
  static final long PEER_TIMER = 1;

  /** The id of the timer that sends the releases still held back (Lamport; see the class comment). */
  static final long RELEASE_TIMER = 2;

  /** How long a release is held back at most before it is sent on its own. */
  static final long RELEASE_HOLD_NANOS = 10_000_000;

  private static final long NO_TIMER = Long.MIN_VALUE;

  private final String self;
  private final int selfIndex;
  private final Variant variant;
  /** The one place the two algorithms differ: what a request, a Sync, a grant and a release mean. */
  private final Rules rules;
  private final long peerTimeoutNanos;
  private final Map<String, Peer> peers = new TreeMap<>();
  private final Map<Long, Own> own = new LinkedHashMap<>();
  /**
   * The requests not granted yet, in the order they came: all that a step's settling looks at (a granted request
   * never goes back to waiting). It walked every request, held ones included, three times a step: with 100,000 locks
   * held each step copied them all.
   */
  private final Map<Long, Own> waiting = new LinkedHashMap<>();
  private final Map<String, NameState> names = new LinkedHashMap<>();
  private long clock;
  private long timerAt = NO_TIMER;
  private boolean releaseTimerSet;
  private long now;
  private List<Output<LamportMessage>> out;

  /**
   * Test-only mutation: grant as soon as the request is first on the local queue, without waiting for a
   * later-stamped message from every peer (Lamport's fifth rule). The simulator must find the violation.
   */
  boolean mutationSkipLaterMessageCheck;

  /** Test-only mutation: Ricart–Agrawala grants without waiting for every peer's reply. */
  boolean mutationSkipReplies;

  /**
   * Test-only mutation: Lamport loses the releases it holds back. The simulator must find the peer that waits
   * for ever behind a released request.
   */
  boolean mutationLoseHeldBackReleases;

  /**
   * @param self this node's id
   * @param peers the other members' ids (fixed membership, at most {@value #MAX_NODES} members in all)
   * @param variant Lamport or Ricart–Agrawala
   * @param peerTimeoutNanos how long a request waits with a peer unreachable before it fails
   * @param initialClock the logical clock to start from (0, or a wall-clock reading so that tokens keep
   *     increasing over a restart of the whole cluster)
   */
  public LamportCore(String self, Collection<String> peers, Variant variant, long peerTimeoutNanos,
      long initialClock) {
    this.self = Objects.requireNonNull(self, "self");
    this.variant = Objects.requireNonNull(variant, "variant");
    this.rules = switch (variant) {
      case LAMPORT -> new LamportRules();
      case RICART_AGRAWALA -> new RicartAgrawalaRules();
    };
    if (peerTimeoutNanos <= 0) {
      throw new IllegalArgumentException("peerTimeoutNanos must be positive: " + peerTimeoutNanos);
    }
    if (initialClock < 0 || initialClock > MAX_CLOCK / 2) {
      throw new IllegalArgumentException("initialClock out of range: " + initialClock);
    }
    this.peerTimeoutNanos = peerTimeoutNanos;
    this.clock = initialClock;
    TreeSet<String> members = new TreeSet<>(ProtocolCore.otherMembers(self, peers));
    members.add(self);
    if (members.size() > MAX_NODES) {
      throw new IllegalArgumentException("at most " + MAX_NODES + " members: " + members.size());
    }
    int i = 0;
    int me = -1;
    for (String id : members) {
      if (id.equals(self)) {
        me = i;
      } else {
        this.peers.put(id, new Peer(id, i));
      }
      i++;
    }
    this.selfIndex = me;
  }

  @Override
  public String self() {
    return self;
  }

  @Override
  public String algorithm() {
    return variant.urlName();
  }

  /** The fencing token of a request stamped {@code ts} by the node of index {@code nodeIndex}. */
  public static long fencingToken(long ts, int nodeIndex) {
    return ts << NODE_BITS | nodeIndex;
  }

  @Override
  public List<Output<LamportMessage>> step(long now, Input<LamportMessage> input) {
    Objects.requireNonNull(input, "input");
    out = new ArrayList<>();
    this.now = now;
    try {
      switch (input) {
        case Input.Message<LamportMessage> m -> receive(m.from(), m.message());
        case Input.TimerFired<LamportMessage> t -> {
          if (t.timerId() == PEER_TIMER) {
            timerAt = NO_TIMER;
          } else if (t.timerId() == RELEASE_TIMER) {
            releaseTimerSet = false;
            for (Peer p : peers.values()) {
              flush(p);
            }
          }
        }
        case Input.PeerUp<LamportMessage> u -> up(u.peer());
        case Input.PeerDown<LamportMessage> d -> down(d.peer());
        case Input.Acquire<LamportMessage> a -> acquire(a);
        case Input.Release<LamportMessage> r -> {
          Own o = own.get(r.requestId());
          if (o != null) {
            end(o);
          }
        }
        case Input.Cancel<LamportMessage> c -> {
          Own o = own.get(c.requestId());
          if (o != null) {
            if (o.held) {
              end(o);
            } else {
              fail(o, Output.Failure.CANCELLED, missingPeers());
            }
          }
        }
        case Input.Renew<LamportMessage> r -> {
          // grants have no term: a held one is renewed for ever, anything else is not a grant any more
          Own o = own.get(r.requestId());
          if (o != null && o.held) {
            out.add(new Output.Renewed<>(o.id, Long.MIN_VALUE, Long.MAX_VALUE));
          } else {
            out.add(new Output.Lost<>(r.requestId(), o == null ? "" : o.name, Output.LostReason.REVOKED,
                "not held"));
          }
        }
        case Input.View<LamportMessage> v -> { } // no elections: every member takes part in every grant
        case Input.HolderQuery<LamportMessage> q -> out.add(Output.Holder.unknown(q)); // a node knows its own grants only
        case Input.PermitsQuery<LamportMessage> q -> out.add(Output.Permits.unknown(q)); // no semaphores here
        case Input.ListQuery<LamportMessage> q -> out.add(Output.Listing.unknown(q)); // a node knows its own grants only
        case Input.Start<LamportMessage> st -> { } // nothing to do before a link comes up
        case Input.Leave<LamportMessage> l -> { } // what it holds and serves ends by the rules of a crash
        case Input.Begin<LamportMessage> b -> out.add(new Output.TxAborted<>(b.txId(), Output.Failure.UNAVAILABLE, Set.of(),
            "the " + algorithm() + " core serves no transactions"));
        case Input.End<LamportMessage> e -> { }
        case Input.CloseSession<LamportMessage> s -> {
          for (Own o : List.copyOf(own.values())) {
            if (o.session.equals(s.session())) {
              end(o);
            }
          }
        }
      }
      settle(now);
      return out;
    } finally {
      out = null;
    }
  }

  // ---- inputs

  private void acquire(Input.Acquire<LamportMessage> a) {
    if (own.containsKey(a.requestId())) {
      throw new IllegalStateException("request id " + a.requestId() + " is already in use");
    }
    if (!a.claim().isPlainLock() || a.txId() != 0) {
      out.add(new Output.Failed<>(a.requestId(), a.claim().name(), Output.Failure.UNAVAILABLE, Set.of(),
          algorithm() + " serves exclusive locks on one name only, not " + a.claim()));
      return;
    }
    Own o = new Own(a.requestId(), a.session(), a.claim().name(), a.attempt());
    own.put(o.id, o);
    waiting.put(o.id, o);
    name(o.name).own.add(o);
  }

  private void receive(String from, LamportMessage m) {
    Peer p = peers.get(from);
    if (p == null) {
      return; // not a member: the transport should not let it in; ignore rather than corrupt state
    }
    observe(m.ts());
    if (p.synced) {
      p.lastSeen = Math.max(p.lastSeen, m.ts());
    }
    switch (m) {
      case LamportMessage.Request r -> rules.onRequest(p, r.name(), r.ts(), r.attempt());
      case LamportMessage.Ack a -> { }
      case LamportMessage.Release r -> {
        NameState n = names.get(r.name());
        if (n != null) {
          n.queue.remove(new Stamp(r.requestTs(), p.index));
          tidy(r.name());
        }
      }
      case LamportMessage.Reply r -> {
        Own o = pendingOwn(r.name(), r.requestTs());
        if (o != null) {
          o.replies = Lazy.add(o.replies, p.id);
        }
      }
      case LamportMessage.Busy b -> {
        Own o = pendingOwn(b.name(), b.requestTs());
        if (o != null && o.attempt) {
          fail(o, Output.Failure.CONTENDED, Set.of());
        }
      }
      case LamportMessage.Sync s -> onSync(p, s);
    }
  }

  private void onSync(Peer p, LamportMessage.Sync s) {
    p.synced = true;
    p.everSynced = true;
    // set, not max: a peer that restarted starts its clock again, and its old timestamps mean nothing now
    p.lastSeen = s.ts();
    rules.onSync(p, s);
  }

  private void up(String id) {
    Peer p = peers.get(id);
    if (p == null) {
      return;
    }
    if (p.up) {
      down(id); // a reconnect whose down we never saw: messages may have been lost all the same
    }
    p.up = true;
    sendSync(p, true);
    rules.afterUp(p);
  }

  private void sendSync(Peer p, boolean answer) {
    List<LamportMessage.Entry> entries = new ArrayList<>();
    for (Own o : own.values()) {
      if (o.ts >= 0 && rules.restates(o)) {
        entries.add(new LamportMessage.Entry(o.name, o.ts, o.attempt));
      }
    }
    send(p, new LamportMessage.Sync(tick(), entries, answer));
  }

  private void down(String id) {
    Peer p = peers.get(id);
    if (p == null) {
      return;
    }
    p.up = false;
    p.synced = false;
    p.heldBack.clear(); // the Sync after the link is up again restates what is still live
    for (Own o : own.values()) {
      // a restarted peer's permission is not its predecessor's; it restates it after Sync
      o.replies = Lazy.remove(o.replies, id);
    }
  }

  // ---- the decision, after every input

  private void settle(long now) {
    boolean changed = true;
    while (changed) {
      changed = false;
      if (allEverSynced()) {
        for (Own o : waiting.values()) {
          if (o.ts < 0) {
            stamp(o);
          }
        }
      }
      Set<String> missing = missingPeers();
      for (Own o : List.copyOf(waiting.values())) {
        if (!own.containsKey(o.id)) {
          continue;
        }
        if (o.ts >= 0 && rules.canGrant(o)) {
          o.held = true;
          waiting.remove(o.id);
          o.missingSince = -1;
          out.add(new Output.Granted<>(o.id, o.name, fencingToken(o.ts, selfIndex)));
          changed = true;
        } else if (o.attempt && !missing.isEmpty()) {
          fail(o, Output.Failure.UNAVAILABLE, missing);
          changed = true;
        } else if (o.attempt && o.ts >= 0 && rules.contended(o)) {
          fail(o, Output.Failure.CONTENDED, Set.of());
          changed = true;
        } else if (missing.isEmpty()) {
          o.missingSince = -1;
        } else if (o.missingSince < 0) {
          o.missingSince = now;
        } else if (now - o.missingSince >= peerTimeoutNanos) {
          fail(o, Output.Failure.UNAVAILABLE, missing);
          changed = true;
        }
      }
    }
    long next = NO_TIMER;
    for (Own o : waiting.values()) {
      if (o.missingSince >= 0) {
        long at = o.missingSince + peerTimeoutNanos;
        next = next == NO_TIMER ? at : Math.min(next, at);
      }
    }
    if (next != timerAt) {
      out.add(next == NO_TIMER ? new Output.CancelTimer<>(PEER_TIMER) : new Output.SetTimer<>(PEER_TIMER, next));
      timerAt = next;
    }
  }

  private void stamp(Own o) {
    o.ts = tick();
    rules.stamped(o);
    LamportMessage.Request r = new LamportMessage.Request(o.name, o.ts, o.attempt);
    for (Peer p : peers.values()) {
      send(p, r);
    }
  }

  private boolean heardAfter(long ts) {
    for (Peer p : peers.values()) {
      if (!p.up || !p.synced || p.lastSeen <= ts) {
        return false;
      }
    }
    return true;
  }

  private boolean allEverSynced() {
    for (Peer p : peers.values()) {
      if (!p.everSynced) {
        return false;
      }
    }
    return true;
  }

  private Set<String> missingPeers() {
    Set<String> missing = new LinkedHashSet<>();
    for (Peer p : peers.values()) {
      if (!p.up || !p.synced) {
        missing.add(p.id);
      }
    }
    return missing;
  }

  // ---- ending a request

  private void fail(Own o, Output.Failure failure, Set<String> missing) {
    out.add(new Output.Failed<>(o.id, o.name, failure, missing, missing.isEmpty() ? ""
        : "the " + algorithm() + " algorithm grants only while every peer is up"));
    end(o);
  }

  private void end(Own o) {
    own.remove(o.id);
    waiting.remove(o.id);
    NameState n = names.get(o.name);
    n.own.remove(o);
    if (o.ts >= 0) {
      rules.ended(o, n);
    }
    tidy(o.name);
  }

  // ---- the two rule sets

  /** What differs between Lamport and Ricart–Agrawala; everything else (clock, links, Sync, timeouts) is shared. */
  private abstract class Rules {
    /** A peer's request {@code (ts, p)} on {@code name} arrived (or was restated). */
    abstract void onRequest(Peer p, String name, long ts, boolean attempt);

    /** A peer's Sync arrived (the peer is marked synced already): replace what we knew of its requests. */
    abstract void onSync(Peer p, LamportMessage.Sync s);

    /** The link to {@code p} is up and our Sync is sent. */
    void afterUp(Peer p) { }

    /** Whether our Sync lists this stamped request of ours. */
    abstract boolean restates(Own o);

    /** Our request {@code o} was just stamped (and is about to be sent to every peer). */
    void stamped(Own o) { }

    /** Whether our stamped request {@code o} may enter now. */
    abstract boolean canGrant(Own o);

    /** Whether our stamped single attempt {@code o} is known to be contended. */
    abstract boolean contended(Own o);

    /** Our stamped request {@code o} ended (released, cancelled, failed): tell the peers what they need. */
    abstract void ended(Own o, NameState n);
  }

  /** Lamport 1978: every node keeps every request on its queues; acknowledgements and releases. */
  private final class LamportRules extends Rules {
    @Override
    void onRequest(Peer p, String name, long ts, boolean attempt) {
      name(name).queue.add(new Stamp(ts, p.index));
      send(p, new LamportMessage.Ack(tick()));
    }

    @Override
    void onSync(Peer p, LamportMessage.Sync s) {
      for (String n : List.copyOf(names.keySet())) {
        names.get(n).queue.removeIf(st -> st.node == p.index);
      }
      for (LamportMessage.Entry e : s.entries()) {
        name(e.name()).queue.add(new Stamp(e.requestTs(), p.index));
      }
      for (String n : List.copyOf(names.keySet())) {
        tidy(n);
      }
      if (s.answer()) {
        sendSync(p, false); // stamped after these entries: it acknowledges them too
      } else if (!s.entries().isEmpty()) {
        // our own Sync may have gone out before these requests were stamped: acknowledge them
        send(p, new LamportMessage.Ack(tick()));
      }
    }

    @Override
    boolean restates(Own o) {
      return true; // held or not: the peers keep held requests on their queues too
    }

    @Override
    void stamped(Own o) {
      name(o.name).queue.add(new Stamp(o.ts, selfIndex));
    }

    @Override
    boolean canGrant(Own o) {
      if (!names.get(o.name).queue.first().equals(new Stamp(o.ts, selfIndex))) {
        return false;
      }
      return mutationSkipLaterMessageCheck || heardAfter(o.ts);
    }

    @Override
    boolean contended(Own o) {
      // once every peer has spoken after our request, the queue before it is complete
      return heardAfter(o.ts) && !names.get(o.name).queue.first().equals(new Stamp(o.ts, selfIndex));
    }

    @Override
    void ended(Own o, NameState n) {
      n.queue.remove(new Stamp(o.ts, selfIndex));
      LamportMessage.Release r = new LamportMessage.Release(o.name, o.ts, tick());
      for (Peer p : peers.values()) {
        if (waiting(n, p)) {
          send(p, r);
        } else if (p.up) {
          p.heldBack.add(r); // sent before the next message to p, or by the release timer (class comment)
          if (!releaseTimerSet) {
            releaseTimerSet = true;
            out.add(new Output.SetTimer<>(RELEASE_TIMER, now + RELEASE_HOLD_NANOS));
          }
        }
      }
    }

    /** Whether {@code p} has a request of its own on {@code n}'s queue, which our release may let in. */
    private boolean waiting(NameState n, Peer p) {
      for (Stamp st : n.queue) {
        if (st.node == p.index) {
          return true;
        }
      }
      return false;
    }
  }

  /** Ricart–Agrawala 1981: a peer replies at once or defers its reply until it leaves. */
  private final class RicartAgrawalaRules extends Rules {
    @Override
    void onRequest(Peer p, String name, long ts, boolean attempt) {
      if (!p.up) {
        // A transport may deliver a peer's messages before it reports the link to that peer up (TCP: the
        // two directions connect separately). No answer can go out yet: keep the request, answer on up.
        defer(name(name), new Deferred(p.id, ts), attempt);
        return;
      }
      if (defers(name, ts, p.index)) {
        if (attempt) {
          send(p, new LamportMessage.Busy(name, ts, tick()));
          tidy(name);
        } else {
          defer(name(name), new Deferred(p.id, ts), false);
        }
      } else {
        send(p, new LamportMessage.Reply(name, ts, tick()));
        tidy(name);
      }
    }

    @Override
    void onSync(Peer p, LamportMessage.Sync s) {
      Set<Listed> listed = new LinkedHashSet<>();
      for (LamportMessage.Entry e : s.entries()) {
        listed.add(new Listed(e.name(), e.requestTs()));
      }
      for (Map.Entry<String, NameState> e : List.copyOf(names.entrySet())) {
        if (!e.getValue().deferred.isEmpty()) {
          e.getValue().deferred.keySet().removeIf(d -> d.peer.equals(p.id)
              && !listed.contains(new Listed(e.getKey(), d.ts)));
        }
      }
      for (LamportMessage.Entry e : s.entries()) {
        NameState n = names.get(e.name());
        if (n == null || !n.deferred.containsKey(new Deferred(p.id, e.requestTs()))) {
          onRequest(p, e.name(), e.requestTs(), e.attempt());
        }
      }
      for (String n : List.copyOf(names.keySet())) {
        tidy(n);
      }
      if (s.answer()) {
        sendSync(p, false);
      }
    }

    /** Answers what {@code p} is owed (requests kept while it was down, or no longer deferred). */
    @Override
    void afterUp(Peer p) {
      for (Map.Entry<String, NameState> e : List.copyOf(names.entrySet())) {
        String name = e.getKey();
        NameState n = e.getValue();
        for (Map.Entry<Deferred, Boolean> d : List.copyOf(n.deferred.entrySet())) {
          if (!d.getKey().peer.equals(p.id)) {
            continue;
          }
          long ts = d.getKey().ts;
          if (!defers(name, ts, p.index)) {
            n.deferred.remove(d.getKey());
            send(p, new LamportMessage.Reply(name, ts, tick()));
          } else if (d.getValue()) {
            n.deferred.remove(d.getKey());
            send(p, new LamportMessage.Busy(name, ts, tick()));
          }
        }
        tidy(name);
      }
    }

    @Override
    boolean restates(Own o) {
      return !o.held; // a held request needs nothing more from the peers: they are answered on release
    }

    @Override
    boolean canGrant(Own o) {
      if (o.replies.size() < peers.size() && !mutationSkipReplies) {
        return false;
      }
      return !aheadOfUs(o); // one local holder at a time, and local requests in timestamp order
    }

    @Override
    boolean contended(Own o) {
      return aheadOfUs(o);
    }

    @Override
    void ended(Own o, NameState n) {
      for (Deferred d : List.copyOf(n.deferred.keySet())) {
        Peer p = peers.get(d.peer);
        if (p.up && !defers(o.name, d.ts, p.index)) {
          n.deferred.remove(d);
          send(p, new LamportMessage.Reply(o.name, d.ts, tick()));
        }
        // a peer that is down keeps its entry: it is answered when the link is up again
      }
    }

    /** Whether another local request of {@code o}'s name holds it or was stamped before {@code o}. */
    private boolean aheadOfUs(Own o) {
      for (Own other : names.get(o.name).own) {
        if (other != o && (other.held || other.ts >= 0 && other.ts < o.ts)) {
          return true;
        }
      }
      return false;
    }

    /** Whether a peer's request {@code (ts, node)} must wait for us. */
    private boolean defers(String name, long ts, int node) {
      NameState n = names.get(name);
      if (n == null) {
        return false;
      }
      for (Own o : n.own) {
        if (o.held || o.ts >= 0 && (o.ts < ts || o.ts == ts && selfIndex < node)) {
          return true;
        }
      }
      return false;
    }
  }

  // ---- small helpers

  /** Sends {@code m} to {@code p} if its link is up, after the releases held back for it. */
  private void send(Peer p, LamportMessage m) {
    if (p.up) {
      flush(p);
      out.add(new Output.Send<>(p.id, m));
    }
  }

  /** Sends the releases held back for {@code p}. */
  private void flush(Peer p) {
    if (p.up && !mutationLoseHeldBackReleases) {
      for (LamportMessage r : p.heldBack) {
        out.add(new Output.Send<>(p.id, r));
      }
    }
    p.heldBack.clear();
  }

  private long tick() {
    if (clock < MAX_CLOCK) {
      clock++;
    }
    return clock;
  }

  private void observe(long ts) {
    clock = Math.min(MAX_CLOCK, Math.max(clock, ts) + 1);
  }

  private NameState name(String name) {
    return names.computeIfAbsent(name, k -> new NameState());
  }

  private void tidy(String name) {
    NameState n = names.get(name);
    if (n != null && n.queue.isEmpty() && n.own.isEmpty() && n.deferred.isEmpty()) {
      names.remove(name);
    }
  }

  private Own pendingOwn(String name, long ts) {
    NameState n = names.get(name);
    if (n != null) {
      for (Own o : n.own) {
        if (o.ts == ts && !o.held) {
          return o;
        }
      }
    }
    return null;
  }

  /** Lock names with state on this node (queues, own requests, deferred replies); for tests and stats. */
  int activeNames() {
    return names.size();
  }

  /** Requests of this node's clients not yet ended. */
  public int openRequests() {
    return own.size();
  }

  /** The logical clock. */
  public long clock() {
    return clock;
  }

  private static final class Peer {
    final String id;
    final int index;
    boolean up;
    boolean synced;
    boolean everSynced;
    long lastSeen = -1;
    /** Releases not sent yet: this peer has no request they could let in (see the class comment). */
    final List<LamportMessage> heldBack = new ArrayList<>();

    Peer(String id, int index) {
      this.id = id;
      this.index = index;
    }
  }

  private static final class Own {
    final long id;
    final String session;
    final String name;
    final boolean attempt;
    long ts = -1;
    boolean held;
    long missingSince = -1;
    /** The peers that replied; shared and empty until one does (a node alone, or a held lock, keeps none). */
    Set<String> replies = Set.of();

    Own(long id, String session, String name, boolean attempt) {
      this.id = id;
      this.session = session;
      this.name = name;
      this.attempt = attempt;
    }
  }

  private static final class NameState {
    final TreeSet<Stamp> queue = new TreeSet<>();
    final Set<Own> own = new LinkedHashSet<>(2); // one for every name held: small until it grows
    /** Requests of peers not answered yet, and whether each is a single attempt; shared and empty until one is. */
    Map<Deferred, Boolean> deferred = Map.of();
  }

  private static void defer(NameState n, Deferred d, boolean attempt) {
    n.deferred = Lazy.put(n.deferred, d, attempt);
  }

  /** A request's place in the total order. */
  private record Stamp(long ts, int node) implements Comparable<Stamp> {
    @Override
    public int compareTo(Stamp o) {
      int c = Long.compare(ts, o.ts);
      return c != 0 ? c : Integer.compare(node, o.node);
    }
  }

  /** A peer's request (within one name) whose reply we hold back. */
  private record Deferred(String peer, long ts) {}

  /** A request restated by a Sync. */
  private record Listed(String name, long ts) {}
}
