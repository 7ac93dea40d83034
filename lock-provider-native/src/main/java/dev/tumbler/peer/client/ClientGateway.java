package dev.tumbler.peer.client;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.LostGrants;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.RemoteSessions;
import dev.tumbler.peer.core.TxOptions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A member's side of the client channel (CLIENTS.md D1–D4b): the sessions of the thin clients whose home this member
 * is. It turns a client's messages into the inputs a local service would give the member's cores, each client session
 * one core session of its own, and the cores' outputs about those requests into replies; it expires a session it has
 * heard nothing from for the lease term {@code T}. Its request, transaction and query ids are {@link #FIRST_ID} and up,
 * which the node runtime's own never reach. Pure: no clock, no I/O. Not thread safe: owned by one composite core.
 */
public final class ClientGateway {

  /** The first id the gateway gives the cores; the node runtime's ids count up from 1 and stay below it. */
  public static final long FIRST_ID = 1L << 62;
  /** The most sessions one client id may have open at a member (a client has one; more is a client gone wrong). */
  static final int MAX_SESSIONS_PER_CLIENT = 16;
  /** The most sessions a member serves at once. */
  static final int MAX_SESSIONS = 10_000;
  /** The most requests and transactions one session may have at once. */
  static final int MAX_PER_SESSION = 10_000;

  /** A reply to send to client {@code to}. */
  public record Reply(String to, ClientMessage.ToClient message) {}

  /** What the gateway asks of one step: inputs for the member's cores (in order), and replies. */
  public record Work<M extends PeerMessage>(List<Input<M>> inputs, List<Reply> replies) {
    public Work() {
      this(new ArrayList<>(), new ArrayList<>());
    }
  }

  private record Key(String client, long session) {}

  /** A client's request, as the member's core knows it. */
  private static final class Req {
    final Session session;
    final long clientReq;
    final long memberReq;
    final Claim claim;
    final long clientTx;
    boolean held;
    long token;
    int permits;
    /** The member's core's {@code validUntil} of the grant, by this member's clock. */
    long validUntil;
    /**
     * A transaction's claim the core lost for good (its lease ran out), kept until the transaction ends so that a
     * restatement is told the loss again rather than asking for the claim anew in a transaction that can hold nothing
     * more (agent seed 4099 of a 25,000-seed client run: the loss went out on a link that broke, and the claim asked
     * for again waited for good).
     */
    Output.Lost<?> lost;

    Req(Session session, long clientReq, long memberReq, Claim claim, long clientTx) {
      this.session = session;
      this.clientReq = clientReq;
      this.memberReq = memberReq;
      this.claim = claim;
      this.clientTx = clientTx;
    }
  }

  private static final class Session {
    final Key key;
    final String coreSession;
    long lastHeard;
    long echo;
    final Map<Long, Req> reqs = new LinkedHashMap<>();
    /** Client transaction id to the member's. */
    final Map<Long, Long> txs = new LinkedHashMap<>();

    Session(Key key, String coreSession) {
      this.key = key;
      this.coreSession = coreSession;
    }
  }

  private final String self;
  private final Set<String> members;
  private final String algorithm;
  private final long leaseNanos;
  private final long trustNanos;
  /** Why this member takes no client sessions, or null when it does. */
  private final String refusal;
  private final Map<Key, Session> sessions = new HashMap<>();
  /** Whether the member is stopping ({@link #leave}): sessions are told Gone, and no new one opens. */
  private boolean leaving;
  private final Map<String, Integer> perClient = new HashMap<>();
  private final Map<Long, Req> byReq = new HashMap<>();
  private final Map<Long, Session> byTx = new HashMap<>();
  /** A query's member id to its session and the client's id. */
  private final Map<Long, Session> byQuery = new HashMap<>();
  private final Map<Long, Long> clientQuery = new HashMap<>();
  private long nextId = FIRST_ID;

  /**
   * @param self this member
   * @param peers the other members
   * @param algorithm the member's lock algorithm: a client must name the same one
   * @param leaseNanos the cluster's lease term {@code T}, the term of a client session
   * @param leased whether the lock algorithm's grants have a term: a member of an algorithm whose grants hold until
   *     released takes no client (one that died would hold its locks for ever)
   */
  public ClientGateway(String self, List<String> peers, String algorithm, long leaseNanos, boolean leased) {
    Set<String> m = new HashSet<>(peers);
    this.self = Objects.requireNonNull(self, "self");
    m.add(self);
    this.members = Set.copyOf(m);
    this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
    if (leaseNanos < 0) {
      throw new IllegalArgumentException("a lease term is not negative: " + leaseNanos);
    }
    this.leaseNanos = leaseNanos;
    this.trustNanos = LostGrants.trustNanos(leaseNanos);
    this.refusal = leased && leaseNanos > 0 ? null : "the cluster's algorithm " + algorithm
        + " grants locks until they are released: a client that died would hold its locks for ever, so its members "
        + "take no thin clients (choose bakery, agent, lease or buckets)";
  }

  /** Whether {@code id} is a member (else a client, whose messages and links are the gateway's alone). */
  public boolean isMember(String id) {
    return members.contains(id);
  }

  /** Whether {@code id} is one the gateway gave the cores (a request, transaction or query of a client). */
  public static boolean owns(long id) {
    return id >= FIRST_ID;
  }

  /** How often the gateway looks for sessions to expire: a quarter of the term. */
  public long tickNanos() {
    return Math.max(1, leaseNanos / 4);
  }

  /** The sessions open now, for statistics. */
  public int sessions() {
    return sessions.size();
  }

  /** A client's message. */
  public <M extends PeerMessage> void message(long now, String from, ClientMessage message, Work<M> work) {
    if (!(message instanceof ClientMessage.ToMember m)) {
      return; // a reply sent to a member: nothing a client sends
    }
    Key key = new Key(from, m.session());
    Session s = sessions.get(key);
    if (m instanceof ClientMessage.Hello h) {
      hello(now, key, s, h, work);
      return;
    }
    if (s == null) {
      work.replies().add(new Reply(from, new ClientMessage.Gone(m.session(), m.seq(), leaving, "member " + selfName()
          + " has no session " + Long.toHexString(m.session()) + " of this client (it restarted, or expired it)")));
      return;
    }
    heard(now, s, m.seq());
    switch (m) {
      case ClientMessage.Hello h -> throw new AssertionError("handled above");
      case ClientMessage.Acquire a -> acquire(now, s, a.req(), a.claim(), a.attempt(), a.tx(), work);
      case ClientMessage.Release r -> abandon(s, r.req(), work);
      case ClientMessage.Cancel c -> abandon(s, c.req(), work);
      case ClientMessage.Renew r -> {
        Req q = s.reqs.get(r.req());
        if (q == null) {
          work.replies().add(reply(now, s, new Lost(r.req(), "", Output.LostReason.REVOKED,
              "not held by this client's session at " + selfName())));
        } else {
          work.inputs().add(new Input.Renew<>(q.memberReq));
        }
      }
      case ClientMessage.Begin b -> begin(now, s, b.tx(), b.options(), work);
      case ClientMessage.End e -> end(s, e.tx(), work);
      case ClientMessage.HolderQuery q -> work.inputs().add(new Input.HolderQuery<>(query(s, q.q()), q.name()));
      case ClientMessage.PermitsQuery q ->
          work.inputs().add(new Input.PermitsQuery<>(query(s, q.q()), q.name(), q.limit()));
      case ClientMessage.ListQuery q -> work.inputs().add(new Input.ListQuery<>(query(s, q.q()), q.prefixes()));
      case ClientMessage.Ping p -> work.replies().add(new Reply(from, new ClientMessage.Pong(s.key.session(), s.echo,
          sessionFor(now, s))));
      case ClientMessage.Bye b -> close(s, work);
    }
  }

  private void heard(long now, Session s, long seq) {
    s.lastHeard = now;
    s.echo = Math.max(s.echo, seq);
  }

  /**
   * The member is stopping on purpose ({@code Input.Leave}): every session is told {@code Gone}, so that its client
   * fails over now rather than a quarter of a term after the link breaks, and so is every client that says Hello
   * from now on. Nothing is released: a client trusts its grants until the Gone reaches it, so they stay held here
   * and at the servers until they expire, as after a crash.
   */
  public <M extends PeerMessage> void leave(long now, Work<M> work) {
    leaving = true;
    for (Session s : sessions.values()) {
      work.replies().add(new Reply(s.key.client(), new ClientMessage.Gone(s.key.session(), s.echo, true, "member "
          + selfName() + " is stopping")));
    }
  }

  private <M extends PeerMessage> void hello(long now, Key key, Session s, ClientMessage.Hello h, Work<M> work) {
    if (leaving) {
      work.replies().add(new Reply(key.client(), new ClientMessage.Gone(h.session(), h.seq(), true, "member " + selfName()
          + " is stopping")));
      return;
    }
    String why = refusal;
    if (why == null && !h.algorithm().equals(algorithm)) {
      why = "this cluster runs algorithm " + algorithm + ", not " + h.algorithm();
    } else if (why == null && h.leaseNanos() != leaseNanos) {
      why = "this cluster's leaseTime is " + leaseNanos / 1_000_000 + " ms, not " + h.leaseNanos() / 1_000_000
          + " ms (the client's URL must give the members' leaseTime)";
    } else if (why == null && s == null && (sessions.size() >= MAX_SESSIONS
        || perClient.getOrDefault(key.client(), 0) >= MAX_SESSIONS_PER_CLIENT)) {
      why = "member " + selfName() + " serves " + sessions.size() + " sessions, " + perClient.getOrDefault(key.client(),
          0) + " of them this client's: no more";
    } else if (why == null && h.requests().size() + h.txs().size() > MAX_PER_SESSION) {
      why = "a session has at most " + MAX_PER_SESSION + " requests and transactions";
    }
    if (why != null) {
      work.replies().add(new Reply(key.client(), new ClientMessage.Refused(h.session(), h.seq(), why)));
      return;
    }
    if (s == null) {
      s = new Session(key, RemoteSessions.PREFIX + key.client() + " #" + Long.toHexString(key.session()));
      sessions.put(key, s);
      perClient.merge(key.client(), 1, Integer::sum);
    }
    heard(now, s, h.seq());
    // what the client no longer has: released, cancelled or ended while the link was down
    Set<Long> listedReqs = new HashSet<>();
    for (ClientMessage.Asked a : h.requests()) {
      listedReqs.add(a.req());
    }
    Set<Long> listedTxs = new HashSet<>();
    for (ClientMessage.Open o : h.txs()) {
      listedTxs.add(o.tx());
    }
    for (Req q : List.copyOf(s.reqs.values())) {
      if (!listedReqs.contains(q.clientReq) && q.clientTx == 0) {
        abandon(s, q.clientReq, work);
      }
    }
    for (Long tx : List.copyOf(s.txs.keySet())) {
      if (!listedTxs.contains(tx)) {
        end(s, tx, work);
      }
    }
    work.replies().add(new Reply(key.client(), new ClientMessage.Welcome(s.key.session(), s.echo,
        sessionFor(now, s))));
    // transactions it has and this member does not: begun again if nothing of them was held, else aborted
    Set<Long> heldTxs = new HashSet<>();
    for (ClientMessage.Asked a : h.requests()) {
      if (a.held() && a.tx() != 0) {
        heldTxs.add(a.tx());
      }
    }
    for (ClientMessage.Open o : h.txs()) {
      if (s.txs.containsKey(o.tx())) {
        continue;
      }
      if (heldTxs.contains(o.tx())) {
        work.replies().add(reply(now, s, new TxAborted(o.tx(), Output.Failure.UNAVAILABLE, Set.of(),
            "member " + selfName() + " no longer has this transaction (it restarted, or the session was new)")));
      } else {
        begin(now, s, o.tx(), o.options(), work);
      }
    }
    // requests: a known one told again as it stands; an unknown one asked for if waited on, lost if held
    for (ClientMessage.Asked a : h.requests()) {
      Req q = s.reqs.get(a.req());
      if (q != null && q.lost != null) {
        work.replies().add(reply(now, s, new Lost(a.req(), q.lost.name(), q.lost.reason(), q.lost.detail())));
      } else if (q != null) {
        if (q.held && !a.held()) {
          work.replies().add(reply(now, s, granted(now, q)));
        } else if (!q.held && a.held()) {
          work.replies().add(reply(now, s, new Lost(a.req(), a.claim().name(), Output.LostReason.DEADLOCK,
              "lost while the link to " + selfName() + " was down; asked for again")));
        }
      } else if (a.held()) {
        work.replies().add(reply(now, s, new Lost(a.req(), a.claim().name(), Output.LostReason.CONNECTION_LOST,
            "member " + selfName() + " no longer has this grant (it restarted, or the session was new)")));
      } else if (a.tx() == 0 || s.txs.containsKey(a.tx())) {
        acquire(now, s, a.req(), a.claim(), a.attempt(), a.tx(), work);
      }
    }
  }

  /**
   * The client no longer has the request (released it, or stopped waiting): a grant is released, a wait cancelled (the
   * core's answer to that, about an id the gateway no longer knows, is dropped).
   */
  private <M extends PeerMessage> void abandon(Session s, long clientReq, Work<M> work) {
    Req q = s.reqs.remove(clientReq);
    if (q != null) {
      byReq.remove(q.memberReq);
      work.inputs().add(q.held ? new Input.Release<>(q.memberReq) : new Input.Cancel<>(q.memberReq));
    }
  }

  private <M extends PeerMessage> void acquire(long now, Session s, long clientReq, Claim claim, boolean attempt,
      long clientTx, Work<M> work) {
    if (s.reqs.containsKey(clientReq)) {
      return; // asked already (a restatement crossed the request)
    }
    if (s.reqs.size() + s.txs.size() >= MAX_PER_SESSION) {
      work.replies().add(reply(now, s, new Failed(clientReq, claim.name(), Output.Failure.REFUSED, Set.of(),
          "a session has at most " + MAX_PER_SESSION + " requests and transactions")));
      return;
    }
    long memberTx = 0;
    if (clientTx != 0) {
      Long t = s.txs.get(clientTx);
      if (t == null) {
        work.replies().add(reply(now, s, new Failed(clientReq, claim.name(), Output.Failure.CANCELLED, Set.of(),
            "transaction " + clientTx + " has ended")));
        return;
      }
      memberTx = t;
    }
    Req q = new Req(s, clientReq, nextId++, claim, clientTx);
    s.reqs.put(clientReq, q);
    byReq.put(q.memberReq, q);
    work.inputs().add(new Input.Acquire<>(q.memberReq, s.coreSession, claim, attempt, memberTx));
  }

  private <M extends PeerMessage> void begin(long now, Session s, long clientTx, TxOptions options, Work<M> work) {
    if (s.txs.containsKey(clientTx)) {
      return;
    }
    long id = nextId++;
    s.txs.put(clientTx, id);
    byTx.put(id, s);
    work.inputs().add(new Input.Begin<>(id, s.coreSession, options));
  }

  private <M extends PeerMessage> void end(Session s, long clientTx, Work<M> work) {
    Long id = s.txs.remove(clientTx);
    if (id == null) {
      return;
    }
    byTx.remove(id);
    for (Req q : List.copyOf(s.reqs.values())) {
      if (q.clientTx == clientTx) {
        s.reqs.remove(q.clientReq);
        byReq.remove(q.memberReq);
      }
    }
    work.inputs().add(new Input.End<>(id));
  }

  private <M extends PeerMessage> void close(Session s, Work<M> work) {
    sessions.remove(s.key);
    perClient.computeIfPresent(s.key.client(), (k, v) -> v == 1 ? null : v - 1);
    for (Req q : s.reqs.values()) {
      byReq.remove(q.memberReq);
    }
    for (Long id : s.txs.values()) {
      byTx.remove(id);
    }
    byQuery.values().removeIf(x -> x == s);
    clientQuery.keySet().retainAll(byQuery.keySet());
    work.inputs().add(new Input.CloseSession<>(s.coreSession));
  }

  /**
   * The member's link to {@code client} came up: what it sent the client before may be lost (its replies to a
   * restatement that came ahead of the link's report, say), so each session of the client is asked to restate.
   */
  public <M extends PeerMessage> void linkUp(long now, String client, Work<M> work) {
    for (Session s : sessions.values()) {
      if (s.key.client().equals(client)) {
        work.replies().add(new Reply(client, new ClientMessage.Again(s.key.session(), s.echo, sessionFor(now, s))));
      }
    }
  }

  /** The timer: every session not heard from for a term is closed, and with it everything it has. */
  public <M extends PeerMessage> void tick(long now, Work<M> work) {
    for (Session s : List.copyOf(sessions.values())) {
      if (now - s.lastHeard >= leaseNanos) {
        close(s, work);
      }
    }
  }

  /**
   * An output of the member's cores about one of the gateway's ids ({@link #owns}): told to the client whose it is.
   * One about an id the gateway no longer knows (its session closed) is dropped, but a grant of one is released.
   */
  public <M extends PeerMessage> void output(long now, Output<M> output, Work<M> work) {
    switch (output) {
      case Output.Granted<M> g -> {
        Req q = byReq.get(g.requestId());
        Session s = q == null ? null : q.session;
        if (q == null) {
          work.inputs().add(new Input.Release<>(g.requestId()));
          return;
        }
        q.held = true;
        q.token = g.fencingToken();
        q.permits = g.permits();
        q.validUntil = g.validUntil();
        work.replies().add(reply(now, s, granted(now, q)));
      }
      case Output.Renewed<M> r -> {
        Req q = byReq.get(r.requestId());
        Session s = q == null ? null : q.session;
        if (q != null) {
          q.validUntil = r.validUntil();
          work.replies().add(reply(now, s, new Renewed(q.clientReq, validFor(now, q.validUntil))));
        }
      }
      case Output.Failed<M> f -> {
        Req q = byReq.get(f.requestId());
        Session s = q == null ? null : q.session;
        if (q != null) {
          s.reqs.remove(q.clientReq);
          byReq.remove(q.memberReq);
          work.replies().add(reply(now, s, new Failed(q.clientReq, f.name(), f.failure(), f.missingPeers(),
              f.detail())));
        }
      }
      case Output.Lost<M> l -> {
        Req q = byReq.get(l.requestId());
        Session s = q == null ? null : q.session;
        if (q != null) {
          if (l.reason() == Output.LostReason.DEADLOCK) {
            q.held = false; // a surrendered claim of a transaction is asked for again
          } else if (q.clientTx != 0) {
            q.held = false;
            q.lost = l;
            byReq.remove(q.memberReq);
          } else {
            s.reqs.remove(q.clientReq);
            byReq.remove(q.memberReq);
          }
          work.replies().add(reply(now, s, new Lost(q.clientReq, l.name(), l.reason(), l.detail())));
        }
      }
      case Output.TxAborted<M> a -> {
        Session s = byTx.remove(a.txId());
        if (s != null) {
          Long clientTx = null;
          for (Map.Entry<Long, Long> e : s.txs.entrySet()) {
            if (e.getValue() == a.txId()) {
              clientTx = e.getKey();
            }
          }
          if (clientTx != null) {
            long ct = clientTx;
            s.txs.remove(ct);
            s.reqs.values().removeIf(q -> {
              boolean of = q.clientTx == ct;
              if (of) {
                byReq.remove(q.memberReq);
              }
              return of;
            });
            work.replies().add(reply(now, s, new TxAborted(ct, a.failure(), a.missingPeers(), a.detail())));
          }
        }
      }
      case Output.Holder<M> h -> answered(now, h.queryId(), q -> new Holder(q, h.name(), h.tag()), work);
      case Output.Permits<M> p -> answered(now, p.queryId(), q -> new Permits(q, p.name(), p.available()), work);
      case Output.Listing<M> l -> answered(now, l.queryId(), q -> new Listing(q, l.known(), l.held()), work);
      default -> { }
    }
  }

  private Granted granted(long now, Req q) {
    return new Granted(q.clientReq, q.claim.name(), q.token, q.permits, validFor(now, q.validUntil));
  }

  private static long validFor(long now, long validUntil) {
    return validUntil == Long.MAX_VALUE ? Long.MAX_VALUE : Math.max(0, validUntil - now);
  }

  private long sessionFor(long now, Session s) {
    return Math.max(0, s.lastHeard + trustNanos - now);
  }

  private String selfName() {
    return self;
  }

  // replies without the session's header, completed by reply(): the same fields as the messages
  private sealed interface Body {}

  private record Granted(long req, String name, long token, int permits, long validFor) implements Body {}

  private record Renewed(long req, long validFor) implements Body {}

  private record Failed(long req, String name, Output.Failure failure, Set<String> missing, String detail)
      implements Body {}

  private record Lost(long req, String name, Output.LostReason reason, String detail) implements Body {}

  private record TxAborted(long tx, Output.Failure failure, Set<String> missing, String detail) implements Body {}

  private record Holder(long q, String name, String tag) implements Body {}

  private record Permits(long q, String name, int available) implements Body {}

  /** A client's query {@code clientQuery} of session {@code s}, under a new id of the member's core. */
  private long query(Session s, long clientQuery) {
    long id = nextId++;
    byQuery.put(id, s);
    this.clientQuery.put(id, clientQuery);
    return id;
  }

  /** The core answered query {@code id}: the answer, made by {@code body} for the client's query id, goes back. */
  private <M extends PeerMessage> void answered(long now, long id, java.util.function.LongFunction<Body> body,
      Work<M> work) {
    Session s = byQuery.remove(id);
    Long q = clientQuery.remove(id);
    if (s != null && q != null) {
      work.replies().add(reply(now, s, body.apply(q)));
    }
  }

  private record Listing(long q, boolean known, List<Output.Listed> held) implements Body {}

  private Reply reply(long now, Session s, Body b) {
    long id = s.key.session();
    long echo = s.echo;
    long sf = sessionFor(now, s);
    ClientMessage.ToClient m = switch (b) {
      case Granted g -> new ClientMessage.Granted(id, echo, sf, g.req(), g.name(), g.token(), g.permits(),
          g.validFor());
      case Renewed r -> new ClientMessage.Renewed(id, echo, sf, r.req(), r.validFor());
      case Failed f -> new ClientMessage.Failed(id, echo, sf, f.req(), f.name(), f.failure(), f.missing(),
          f.detail());
      case Lost l -> new ClientMessage.Lost(id, echo, sf, l.req(), l.name(), l.reason(), l.detail());
      case TxAborted a -> new ClientMessage.TxAborted(id, echo, sf, a.tx(), a.failure(), a.missing(), a.detail());
      case Holder h -> new ClientMessage.Holder(id, echo, sf, h.q(), h.name(), h.tag());
      case Permits p -> new ClientMessage.Permits(id, echo, sf, p.q(), p.name(), p.available());
      case Listing l -> new ClientMessage.Listing(id, echo, sf, l.q(), l.known(), l.held());
    };
    return new Reply(s.key.client(), m);
  }
}
