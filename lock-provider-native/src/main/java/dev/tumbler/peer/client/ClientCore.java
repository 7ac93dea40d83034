package dev.tumbler.peer.client;

import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.core.Agenda;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.LostGrants;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.ProtocolCore;
import dev.tumbler.peer.core.TxOptions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.random.RandomGenerator;

/**
 * A thin client's core (CLIENTS.md): it takes the inputs a member's core takes and gives the outputs it gives, so the
 * node runtime and the provider run on it unchanged, but it runs nothing itself: it holds a session with one member,
 * its home, which runs its requests, and fails over to another when the home is gone.
 *
 * <ul>
 *   <li><b>Trust.</b> A grant is trusted from when the client sent the message the member's reply echoes, for as long
 *       as the member vouches for the grant and for the session, less 1/32 for the two clocks' rates (D4). It is
 *       reported with {@code validUntil} that and {@code sentAt = validUntil − T·3/4}, the form every core reports,
 *       and is lost ({@code Lost}) by the step its window closes unless renewed.
 *   <li><b>Links.</b> The first message on every new link to the home is {@code Hello}, restating the session (D4b).
 *       A home down for {@code T/4}, or one that says {@code Gone}, is left for the next member that is up (D5):
 *       waiting requests are asked for again there, grants are lost, transactions aborted.
 *   <li><b>No member.</b> With no member up at all for {@code peerTimeout}, waits fail {@code UNAVAILABLE}; while
 *       one is, they go on (a home that is gone is left for it after {@code T/4}, whatever {@code peerTimeout} is),
 *       and the member ends them only when it can tell that no quorum can form. A single attempt or a query made with
 *       no home linked waits a quarter of a term for one (a new client links within a round trip), then fails (or
 *       answers unknown).
 * </ul>
 * Pure: no clock, no I/O; not thread safe, like every core.
 */
public final class ClientCore implements ProtocolCore<Envelope> {

  private static final long TICK = 1;
  private static final long EXPIRY = 2;

  private enum State { WAITING, HELD }

  private static final class Req extends Agenda.Item {
    final long id;
    final String localSession;
    final Claim claim;
    final boolean attempt;
    final long tx;
    State state = State.WAITING;
    long token;
    int permits;
    /** The grant's own end (the member vouches for it until then), by this client's clock. */
    long grantUntil;
    /** The end of the window last reported ({@code Granted} or {@code Renewed}). */
    long reportedUntil;
    boolean renewAsked;
    /**
     * The number of the message that last asked for it (its {@code Acquire}, or a {@code Hello} that restated it
     * waiting): a grant in a reply that echoes less answers an earlier asking, one this client gave back since.
     */
    long askedSeq;
    /**
     * A single attempt made while no home was linked: it waits for one until then (a quarter of a term, as for a home
     * that comes back), then fails {@code UNAVAILABLE}. A new client links within a round trip.
     */
    long giveUpAt = Long.MAX_VALUE;

    Req(long id, String localSession, Claim claim, boolean attempt, long tx) {
      this.id = id;
      this.localSession = localSession;
      this.claim = claim;
      this.attempt = attempt;
      this.tx = tx;
    }
  }

  private record Tx(String localSession, TxOptions options) {}

  /** A query, and when it was asked: unanswered while no home is linked, it is answered unknown a quarter term on. */
  /** A query in flight: who holds {@code name}, how many permits of it are free, or what is held ({@code prefixes}). */
  private record Query(Kind kind, String name, int limit, List<String> prefixes, long askedAt) {}

  private enum Kind { HOLDER, PERMITS, LIST }

  /** Test-only mutation: a grant is trusted from when its reply came, not from when the echoed message left. */
  public boolean mutationTrustFromReply;
  /**
   * Test-only mutation: a grant whose window closed is released in the step that tells the loss, so that the member may
   * grant it to another while the holder's lost listeners still run.
   */
  public boolean mutationReleaseOnLoss;
  /**
   * Grants lost when their windows closed, each released a quarter term on, as the member's own term would end it, so
   * that the holder's lost listeners run before another can be granted it (DESIGN's lease rule, {@link LostGrants});
   * restated as held on a new link meanwhile.
   */
  private final LostGrants<Req> lost;

  private final String self;
  private final List<String> members;
  private final String algorithm;
  private final long leaseNanos;
  private final long trustNanos;
  private final long peerTimeoutNanos;
  private final RandomGenerator random;

  private final Set<String> up = new HashSet<>();
  /** Members that said they are stopping, until their link goes down: no home is sought there. */
  private final Set<String> stopping = new HashSet<>();
  private final Map<Long, Req> reqs = new LinkedHashMap<>();
  /**
   * The requests by the end of their reported window (held ones; waiting ones rest with no moment), in the order they
   * were made: what a step's expiry and its timer look at, instead of every request the client has.
   */
  private final Agenda<Req> windows = new Agenda<>();
  private final Map<Long, Tx> txs = new LinkedHashMap<>();
  private final Map<Long, Query> queries = new LinkedHashMap<>();
  /** Send times of this session's messages not yet echoed, and of the latest echoed one. */
  private final TreeMap<Long, Long> sent = new TreeMap<>();

  private String home;
  private long session;
  private long seq;
  private long sessionUntil = Long.MIN_VALUE;
  private long lastSent;
  /** Since when this client has had no home up; MIN while it has one. */
  private long homelessSince;
  /** Since when no member at all has been up (none it could make its home); MIN while one is. */
  private long memberlessSince;
  private boolean started;
  private boolean ticking;
  /** The member's last refusal, while it stands: new requests fail with it. */
  private String refused;
  private long now;
  private List<Output<Envelope>> out;

  /**
   * @param self this client's id
   * @param members the members it may use, in the order it tries them
   * @param algorithm the cluster's algorithm, which the members check
   * @param leaseNanos the cluster's lease term {@code T}, which the members check
   * @param peerTimeoutNanos how long waits wait for a member to be up
   * @param random for session numbers
   */
  public ClientCore(String self, List<String> members, String algorithm, long leaseNanos, long peerTimeoutNanos,
      RandomGenerator random) {
    this.self = Objects.requireNonNull(self, "self");
    this.members = List.copyOf(members);
    if (this.members.isEmpty() || this.members.contains(self)) {
      throw new IllegalArgumentException("a client names at least one member, and is none: " + members);
    }
    this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
    if (leaseNanos <= 0 || peerTimeoutNanos <= 0) {
      throw new IllegalArgumentException("a client's lease term and peer timeout are positive: " + leaseNanos + ", "
          + peerTimeoutNanos);
    }
    this.leaseNanos = leaseNanos;
    this.trustNanos = LostGrants.trustNanos(leaseNanos);
    this.lost = new LostGrants<>(leaseNanos);
    this.peerTimeoutNanos = peerTimeoutNanos;
    this.random = Objects.requireNonNull(random, "random");
  }

  @Override
  public String self() {
    return self;
  }

  @Override
  public String algorithm() {
    return algorithm;
  }

  /** The member this client's session is with, or null; for statistics and tests. */
  public String home() {
    return home;
  }

  @Override
  public List<Output<Envelope>> step(long now, Input<Envelope> input) {
    Objects.requireNonNull(input, "input");
    this.now = now;
    out = new ArrayList<>();
    try {
      expire();
      switch (input) {
        case Input.Start<Envelope> s -> start();
        case Input.Leave<Envelope> l -> send(new ClientMessage.Bye(session, ++seq)); // the member ends the session now
        case Input.PeerUp<Envelope> u -> peerUp(u.peer());
        case Input.PeerDown<Envelope> d -> peerDown(d.peer());
        case Input.TimerFired<Envelope> t -> {
          if (t.timerId() == TICK) {
            tick();
          }
        }
        case Input.Message<Envelope> m -> {
          if (m.message().channel() == Channel.CLIENT && m.from().equals(home)
              && m.message().body() instanceof ClientMessage.ToClient r && r.session() == session) {
            reply(r);
          }
        }
        case Input.Acquire<Envelope> a -> acquire(a);
        case Input.Release<Envelope> r -> release(r.requestId());
        case Input.Cancel<Envelope> c -> cancel(c.requestId());
        case Input.Renew<Envelope> r -> renew(r.requestId());
        case Input.Begin<Envelope> b -> begin(b);
        case Input.End<Envelope> e -> end(e.txId());
        case Input.HolderQuery<Envelope> q -> query(q.queryId(), new Query(Kind.HOLDER, q.name(), 0, List.of(), now));
        case Input.PermitsQuery<Envelope> q ->
            query(q.queryId(), new Query(Kind.PERMITS, q.name(), q.limit(), List.of(), now));
        case Input.ListQuery<Envelope> q -> query(q.queryId(), new Query(Kind.LIST, "", 0, q.prefixes(), now));
        case Input.CloseSession<Envelope> c -> closeSession(c.session());
        case Input.View<Envelope> v -> { }
      }
      noteMembers();
      armExpiry();
      armTick();
      return out;
    } finally {
      out = null;
    }
  }

  // ------------------------------------------------------------------ links and sessions

  private void start() {
    started = true;
    homelessSince = now;
    memberlessSince = now;
    newSession();
  }

  /** Notes whether a member is up now, home or not: waits end only after none has been for {@code peerTimeout}. */
  private void noteMembers() {
    if (!started) {
      return;
    }
    if (linked() || nextHome() != null) {
      memberlessSince = Long.MIN_VALUE;
    } else if (memberlessSince == Long.MIN_VALUE) {
      memberlessSince = now;
    }
  }

  /**
   * The timer runs while the client has something in its session (requests, transactions, queries): it keeps the
   * session alive and fails over. An idle client sets no timer (its session lapses at the member, and the next request
   * opens another), so that a process holding an idle client costs its member nothing.
   */
  private void armTick() {
    if (!ticking && started && (!reqs.isEmpty() || !txs.isEmpty() || !queries.isEmpty() || !lost.isEmpty())) {
      ticking = true;
      out.add(new Output.SetTimer<>(TICK, now + tickNanos()));
    }
  }

  private long tickNanos() {
    return Math.max(1, leaseNanos / 16);
  }

  private void newSession() {
    long s;
    do {
      s = random.nextLong();
    } while (s == 0 || s == session);
    session = s;
    seq = 0;
    sent.clear();
    sessionUntil = Long.MIN_VALUE;
    lost.clear(); // the old session's grants end with it, a term after its last message
  }

  /** Whether the client has a home whose link is up: what it asks for now goes out at once. */
  public boolean linked() {
    return home != null && up.contains(home);
  }

  private void peerUp(String p) {
    if (!members.contains(p)) {
      return;
    }
    up.add(p);
    if (home == null) {
      home = p;
    }
    if (p.equals(home)) {
      homelessSince = Long.MIN_VALUE;
      hello();
    }
  }

  private void peerDown(String p) {
    up.remove(p);
    stopping.remove(p);
    if (p.equals(home) && homelessSince == Long.MIN_VALUE) {
      homelessSince = now;
    }
  }

  /** The first message on a new link to the home: the session, and everything in it. */
  private void hello() {
    List<ClientMessage.Asked> asked = new ArrayList<>();
    for (Req r : reqs.values()) {
      asked.add(new ClientMessage.Asked(r.id, r.claim, r.attempt, r.tx, r.state == State.HELD));
    }
    for (Req r : lost.grants()) {
      // still held at the member until its release: not listed, the member would release it now
      asked.add(new ClientMessage.Asked(r.id, r.claim, r.attempt, 0, true));
    }
    List<ClientMessage.Open> open = new ArrayList<>();
    txs.forEach((id, t) -> open.add(new ClientMessage.Open(id, t.options())));
    send(new ClientMessage.Hello(session, ++seq, algorithm, leaseNanos, asked, open));
    for (Req r : reqs.values()) {
      if (r.state == State.WAITING) {
        r.askedSeq = seq; // a grant the member has is told again in answer to this
      }
    }
    // what waits for an answer that may have been lost with the old link
    for (Req r : reqs.values()) {
      if (r.renewAsked) {
        send(new ClientMessage.Renew(session, ++seq, r.id));
      }
    }
    queries.forEach(this::askQuery);
  }

  private void send(ClientMessage.ToMember m) {
    if (!linked()) {
      return;
    }
    sent.put(m.seq(), now);
    lastSent = now;
    out.add(new Output.Send<>(home, new Envelope(Channel.CLIENT, m)));
  }

  private void tick() {
    ticking = false;
    for (Req r : lost.due(now)) {
      send(new ClientMessage.Release(session, ++seq, r.id)); // in the order they were lost, a quarter term each
    }
    if (homelessSince != Long.MIN_VALUE) {
      String next = nextHome();
      if (next != null && (home == null || !up.contains(home)) && now - homelessSince >= leaseNanos / 4) {
        failover(next, "member " + home + " unreachable for " + (now - homelessSince) / 1_000_000 + " ms");
      } else if (next == null && memberlessSince != Long.MIN_VALUE && now - memberlessSince >= peerTimeoutNanos) {
        unavailable(); // no member at all: with another one up, the client moves there instead (above)
      }
    }
    if (linked() && now - lastSent >= leaseNanos / 4) {
      send(new ClientMessage.Ping(session, ++seq));
    }
    if (!linked()) {
      giveUp();
    }
  }

  /** With no home linked: attempts and queries that have waited a quarter of a term for one end now. */
  private void giveUp() {
    for (Req r : List.copyOf(reqs.values())) {
      if (r.state == State.WAITING && r.giveUpAt <= now) {
        drop(r.id);
        out.add(new Output.Failed<>(r.id, r.claim.name(), Output.Failure.UNAVAILABLE, Set.copyOf(members),
            "thin client " + self + ": no member reachable at the attempt"));
      }
    }
    for (Map.Entry<Long, Query> e : List.copyOf(queries.entrySet())) {
      Query q = e.getValue();
      if (now - q.askedAt() >= leaseNanos / 4) {
        queries.remove(e.getKey());
        out.add(switch (q.kind()) {
          case HOLDER -> new Output.Holder<>(e.getKey(), q.name(), "");
          case PERMITS -> new Output.Permits<>(e.getKey(), q.name(), q.limit());
          case LIST -> new Output.Listing<>(e.getKey(), false, List.of());
        });
      }
    }
  }

  /** The first member up after the home, in the order given; null when none is. */
  private String nextHome() {
    int from = home == null ? -1 : members.indexOf(home);
    for (int i = 1; i <= members.size(); i++) {
      String m = members.get(Math.floorMod(from + i, members.size()));
      if (up.contains(m) && !stopping.contains(m)) {
        return m;
      }
    }
    return null;
  }

  /**
   * Leaves the home for {@code next} (null: none is up yet) in a new session: grants are lost (nothing can renew
   * them now), transactions aborted; waiting requests and queries are asked again there.
   */
  private void failover(String next, String why) {
    String detail = "thin client " + self + ": " + why + (next == null ? "; no other member is up"
        : "; session moved to " + next);
    for (Req r : List.copyOf(reqs.values())) {
      if (r.state == State.HELD && r.tx == 0) {
        drop(r.id);
        out.add(new Output.Lost<>(r.id, r.claim.name(), Output.LostReason.CONNECTION_LOST, detail));
      }
    }
    for (Long tx : List.copyOf(txs.keySet())) {
      abortTx(tx, Output.Failure.UNAVAILABLE, Set.of(home == null ? next : home), detail);
    }
    home = next;
    newSession();
    if (next == null) {
      homelessSince = now; // the next member to come up is the home; none for peerTimeout, and waits fail
      return;
    }
    homelessSince = Long.MIN_VALUE;
    hello();
  }

  /** No home for {@code peerTimeout}: waits fail, transactions abort. */
  private void unavailable() {
    Set<String> missing = Set.copyOf(members);
    String detail = "thin client " + self + ": no member reachable for " + peerTimeoutNanos / 1_000_000 + " ms";
    for (Long tx : List.copyOf(txs.keySet())) {
      abortTx(tx, Output.Failure.UNAVAILABLE, missing, detail);
    }
    for (Req r : List.copyOf(reqs.values())) {
      if (r.state == State.WAITING) {
        drop(r.id);
        out.add(new Output.Failed<>(r.id, r.claim.name(), Output.Failure.UNAVAILABLE, missing, detail));
      }
    }
  }

  /** Ends transaction {@code tx}: its held claims lost, its waiting ones failed, then the transaction aborted. */
  private void abortTx(long tx, Output.Failure failure, Set<String> missing, String detail) {
    if (txs.remove(tx) == null) {
      return;
    }
    Output.LostReason lost = failure == Output.Failure.DEADLOCK ? Output.LostReason.DEADLOCK
        : Output.LostReason.CONNECTION_LOST;
    // every loss before any failure, as the member's agent tells them (the node tells the transaction after the
    // step's lost listeners either way)
    for (Req r : List.copyOf(reqs.values())) {
      if (r.tx == tx && r.state == State.HELD) {
        drop(r.id);
        out.add(new Output.Lost<>(r.id, r.claim.name(), lost, detail));
      }
    }
    for (Req r : List.copyOf(reqs.values())) {
      if (r.tx == tx) {
        drop(r.id);
        out.add(new Output.Failed<>(r.id, r.claim.name(), failure, missing, detail));
      }
    }
    out.add(new Output.TxAborted<>(tx, failure, missing, detail));
  }

  // ------------------------------------------------------------------ trust

  /** Every grant whose reported window has closed by now is lost. */
  private void expire() {
    if (!started) {
      return;
    }
    windows.visit(now, r -> {
      if (r.state == State.HELD && r.reportedUntil <= now) {
        lose(r, linked() ? Output.LostReason.EXPIRED : Output.LostReason.CONNECTION_LOST,
            "thin client " + self + ": the grant was not renewed in time" + (linked() ? "" : " (member " + home
                + " unreachable)"));
      } else {
        windows.rest(r, r.state == State.HELD ? r.reportedUntil : Agenda.NONE);
      }
    });
  }

  private void lose(Req r, Output.LostReason reason, String detail) {
    drop(r.id);
    out.add(new Output.Lost<>(r.id, r.claim.name(), reason, detail));
    if (r.tx != 0) {
      return; // a transaction's claims go with its end
    }
    if (mutationReleaseOnLoss) {
      send(new ClientMessage.Release(session, ++seq, r.id));
    } else {
      lost.keep(r, now);
      armTick();
    }
  }

  private void armExpiry() {
    long at = windows.earliest(r -> r.state == State.HELD ? r.reportedUntil : Agenda.NONE, Agenda.NONE);
    out.add(at == Long.MAX_VALUE ? new Output.CancelTimer<>(EXPIRY) : new Output.SetTimer<>(EXPIRY, at));
  }

  /** Until when a reply echoing {@code echo} lets this client trust what it vouches for {@code vouched} nanoseconds. */
  private long trustedUntil(long echo, long vouched) {
    Map.Entry<Long, Long> e = sent.floorEntry(echo);
    if (e == null) {
      return Long.MIN_VALUE;
    }
    long v = vouched == Long.MAX_VALUE ? trustNanos : Math.min(vouched, trustNanos);
    return (mutationTrustFromReply ? now : e.getValue()) + v - v / 32;
  }

  // ------------------------------------------------------------------ replies

  private void reply(ClientMessage.ToClient r) {
    long until = trustedUntil(r.echo(), r.sessionFor());
    sessionUntil = Math.max(sessionUntil, until);
    // keep the send time of the latest echoed message, forget the older ones
    sent.headMap(r.echo(), false).clear();
    switch (r) {
      case ClientMessage.Welcome w -> refused = null;
      case ClientMessage.Refused x -> {
        refused = "member " + home + " refused this client: " + x.reason();
        for (Long tx : List.copyOf(txs.keySet())) {
          abortTx(tx, Output.Failure.REFUSED, Set.of(), refused);
        }
        for (Req q : List.copyOf(reqs.values())) {
          drop(q.id);
          if (q.state == State.HELD) {
            out.add(new Output.Lost<>(q.id, q.claim.name(), Output.LostReason.REVOKED, refused));
          } else {
            out.add(new Output.Failed<>(q.id, q.claim.name(), Output.Failure.REFUSED, Set.of(), refused));
          }
        }
      }
      case ClientMessage.Gone g when g.stopping() -> {
        // the member is going away: another member, or none until one comes up (or this one comes back)
        stopping.add(home);
        String next = nextHome();
        failover(next, "member " + home + ": " + g.reason());
      }
      case ClientMessage.Gone g -> failover(home, "member " + home + ": " + g.reason()); // a new session there
      case ClientMessage.Granted g -> granted(g);
      case ClientMessage.Renewed n -> {
        Req q = reqs.get(n.req());
        if (q != null && q.state == State.HELD) {
          q.grantUntil = Math.max(q.grantUntil, trustedUntil(n.echo(), n.validFor()));
          q.renewAsked = false;
          // a window never shrinks (nor does its sentAt go back): an answer that vouches for less says so much
          q.reportedUntil = Math.max(q.reportedUntil, Math.min(q.grantUntil, sessionUntil));
          windows.rest(q, q.reportedUntil);
          out.add(new Output.Renewed<>(q.id, q.reportedUntil - trustNanos, q.reportedUntil));
        }
      }
      case ClientMessage.Failed f -> {
        Req q = drop(f.req());
        if (q != null) {
          out.add(new Output.Failed<>(q.id, q.claim.name(), f.failure(), f.missing(), f.detail()));
        }
      }
      case ClientMessage.Lost l -> {
        Req q = reqs.get(l.req());
        if (q != null && q.state == State.WAITING && l.reason() != Output.LostReason.DEADLOCK) {
          // granted and lost before this client could trust the grant (its reply was lost with a link, or slow): a
          // plain request is asked for again; a transaction's claim fails (its transaction can hold it no more)
          if (q.tx == 0) {
            ask(q);
          } else {
            drop(q.id);
            out.add(new Output.Failed<>(q.id, q.claim.name(), Output.Failure.UNAVAILABLE, Set.of(),
                "thin client " + self + ": " + l.reason() + " at member " + home + " before it was told: " + l.detail()));
          }
        } else if (q != null && q.state == State.HELD) {
          if (l.reason() == Output.LostReason.DEADLOCK && q.tx != 0) {
            q.state = State.WAITING; // surrendered: the member asks for it again
            windows.rest(q, Agenda.NONE);
            q.renewAsked = false;
            out.add(new Output.Lost<>(q.id, q.claim.name(), l.reason(), l.detail()));
          } else {
            drop(q.id);
            out.add(new Output.Lost<>(q.id, q.claim.name(), l.reason(), l.detail()));
          }
        }
      }
      case ClientMessage.TxAborted a -> abortTx(a.tx(), a.failure(), a.missing(), a.detail());
      case ClientMessage.Holder h -> {
        if (queries.remove(h.q()) != null) {
          out.add(new Output.Holder<>(h.q(), h.name(), h.tag()));
        }
      }
      case ClientMessage.Permits p -> {
        if (queries.remove(p.q()) != null) {
          out.add(new Output.Permits<>(p.q(), p.name(), p.available()));
        }
      }
      case ClientMessage.Listing l -> {
        if (queries.remove(l.q()) != null) {
          out.add(new Output.Listing<>(l.q(), l.known(), l.held()));
        }
      }
      case ClientMessage.Pong p -> { }
      case ClientMessage.Again a -> hello();
    }
  }

  private void granted(ClientMessage.Granted g) {
    Req q = reqs.get(g.req());
    if (q == null) {
      send(new ClientMessage.Release(session, ++seq, g.req())); // cancelled or released meanwhile
      return;
    }
    if (q.state == State.HELD || g.echo() < q.askedSeq) {
      return; // told already, or the answer to an asking given back since (the member had it released then)
    }
    q.token = g.token();
    q.permits = g.permits();
    q.grantUntil = trustedUntil(g.echo(), g.validFor());
    tell(q);
  }

  /**
   * Tells the driver of a grant the member made, if its window is still open by this client's clock. A grant that
   * came too late to trust (the member's window was nearly over when it told it, or the reply was slow) is not told
   * late with its old token, which a later grant may already have passed (F2, bakery seed 11503 of a 25,000-seed run:
   * told after a renewal, a read's token was below that of a read granted and ended meanwhile): a plain request gives
   * it back and asks again, for a new grant and token; a transaction's claim fails (given back, it would be lost from
   * its transaction for good: agent seed 314).
   */
  private void tell(Req q) {
    long until = Math.min(q.grantUntil, sessionUntil);
    if (until <= now) {
      if (q.tx == 0) {
        send(new ClientMessage.Release(session, ++seq, q.id));
        ask(q);
      } else {
        drop(q.id);
        out.add(new Output.Failed<>(q.id, q.claim.name(), Output.Failure.UNAVAILABLE, Set.of(home),
            "thin client " + self + ": granted by member " + home + " too late to trust"));
      }
      return;
    }
    q.state = State.HELD;
    q.reportedUntil = until;
    windows.rest(q, until);
    out.add(new Output.Granted<>(q.id, q.claim.name(), q.token, q.permits, until - trustNanos, until));
  }

  // ------------------------------------------------------------------ the driver's inputs

  private void acquire(Input.Acquire<Envelope> a) {
    if (reqs.containsKey(a.requestId())) {
      throw new IllegalStateException("request id " + a.requestId() + " is already in use");
    }
    if (refused != null) {
      out.add(new Output.Failed<>(a.requestId(), a.claim().name(), Output.Failure.REFUSED, Set.of(), refused));
      return;
    }
    if (a.txId() != 0 && !txs.containsKey(a.txId())) {
      out.add(new Output.Failed<>(a.requestId(), a.claim().name(), Output.Failure.CANCELLED, Set.of(),
          "transaction " + a.txId() + " has ended"));
      return;
    }
    Req r = new Req(a.requestId(), a.session(), a.claim(), a.attempt(), a.txId());
    if (!linked() && a.attempt()) {
      r.giveUpAt = now + leaseNanos / 4;
    }
    reqs.put(r.id, r);
    windows.add(r);
    windows.rest(r, Agenda.NONE); // no window until granted
    ask(r);
  }

  /** Forgets request {@code id}; returns it, or null if there was none. */
  private Req drop(long id) {
    Req r = reqs.remove(id);
    if (r != null) {
      windows.remove(r);
    }
    return r;
  }

  /** Asks the home for {@code r} (again). */
  private void ask(Req r) {
    send(new ClientMessage.Acquire(session, ++seq, r.id, r.claim, r.attempt, r.tx));
    r.askedSeq = seq;
  }

  private void release(long id) {
    if (drop(id) != null) {
      send(new ClientMessage.Release(session, ++seq, id));
    }
  }

  /** A waiting request fails {@code CANCELLED}; one granted meanwhile is released, and nothing more is said. */
  private void cancel(long id) {
    Req r = drop(id);
    if (r == null) {
      return;
    }
    send(new ClientMessage.Release(session, ++seq, id)); // the member releases a grant, cancels a wait
    if (r.state == State.WAITING) {
      out.add(new Output.Failed<>(id, r.claim.name(), Output.Failure.CANCELLED,
          linked() ? Set.of() : Set.of(home == null ? members.get(0) : home), ""));
    }
  }

  private void renew(long id) {
    Req r = reqs.get(id);
    if (r == null || r.state != State.HELD) {
      out.add(new Output.Lost<>(id, r == null ? "" : r.claim.name(), Output.LostReason.REVOKED, "not held"));
      return;
    }
    r.renewAsked = true;
    send(new ClientMessage.Renew(session, ++seq, id));
  }

  private void begin(Input.Begin<Envelope> b) {
    if (refused != null) {
      out.add(new Output.TxAborted<>(b.txId(), Output.Failure.REFUSED, Set.of(), refused));
      return;
    }
    txs.put(b.txId(), new Tx(b.session(), b.options()));
    send(new ClientMessage.Begin(session, ++seq, b.txId(), b.options()));
  }

  private void end(long tx) {
    if (txs.remove(tx) != null) {
      for (Req r : List.copyOf(reqs.values())) {
        if (r.tx == tx) {
          drop(r.id);
        }
      }
      send(new ClientMessage.End(session, ++seq, tx));
    }
  }

  private void query(long id, Query q) {
    queries.put(id, q);
    askQuery(id, q);
  }

  private void askQuery(long id, Query q) {
    send(switch (q.kind()) {
      case HOLDER -> new ClientMessage.HolderQuery(session, ++seq, id, q.name());
      case PERMITS -> new ClientMessage.PermitsQuery(session, ++seq, id, q.name(), q.limit());
      case LIST -> new ClientMessage.ListQuery(session, ++seq, id, q.prefixes());
    });
  }

  private void closeSession(String local) {
    for (Map.Entry<Long, Tx> e : List.copyOf(txs.entrySet())) {
      if (e.getValue().localSession().equals(local)) {
        end(e.getKey());
      }
    }
    for (Req r : List.copyOf(reqs.values())) {
      if (r.localSession.equals(local)) {
        drop(r.id);
        send(new ClientMessage.Release(session, ++seq, r.id));
      }
    }
  }
}
