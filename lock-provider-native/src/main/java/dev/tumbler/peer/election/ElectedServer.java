package dev.tumbler.peer.election;

import dev.tumbler.peer.core.Agenda;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.LostGrants;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.ProtocolCore;
import dev.tumbler.peer.core.QuorumWatch;
import dev.tumbler.peer.core.WireCodec;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedSet;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * The core of an algorithm served by one elected server ({@code lease}, {@code buckets}; NATIVE-ALGORITHMS §5,
 * §6): the machine, written once; each algorithm's core extends it with its own rules, a {@link Server} (its table on
 * the server node) and a {@link Client} (what the node's own clients hold and ask for), each with the step function of
 * its role for the messages it takes. Every node runs both sides; the node that leads also serves. Pure, like every
 * core.
 *
 * <p>What it owns, so that no algorithm writes it again:
 * <ul>
 *   <li><b>The view</b> ({@link ServerView}): the server is {@code leaders[0]} of the election's latest view; it
 *       decides while its leader lease holds and it reaches a majority. A node that becomes the server of a term
 *       without having served the one before starts with an empty table and a <b>grace</b> of {@code T +
 *       leaderTimeout}, in which its clients restate what they hold and it grants nothing new (S-8); the grace ends
 *       early once every member has restated. A node that stops serving forgets its table.
 *   <li><b>Restatement.</b> A client node restates what it holds and waits for ({@link Client#restatement}) to every
 *       new server and on every new link to it, again every third of a term until the server says it took it.
 *   <li><b>Waiting requests</b> ({@link Request}): sent to the server, or taken at once as a call when this node
 *       serves (a local message, R-5); asked again every third of a term while they wait (the keep-alive, L-4); a
 *       single attempt fails at once when no server is reachable; a wait rides out a failover and fails
 *       {@code UNAVAILABLE} only once the node can tell that no quorum can form around it ({@link QuorumWatch}).
 *   <li><b>Queries</b> (who holds a name, how many permits are free), asked of the server and answered by what this
 *       node knows when no server is reachable or none answers within {@code peerTimeout}: every query ends.
 *   <li><b>One timer</b>, set to the earliest moment anything is due, on either side; and the tokens of a term
 *       ({@code term·2^37 + counter·2^low}, {@link #nextToken}).
 * </ul>
 * The lost-grant rule (a grant whose window closed is kept a quarter term before it goes back) is {@link LostGrants},
 * which each client keeps its lost grants in; the retry of an unanswered renewal is {@link #renewAgainAt}.
 *
 * <p>One step: the client's {@link Client#expire} (windows that closed are told first, whatever the input), the
 * input, then the local messages this step sent to this node's other side, then the timer. A timer tick runs the
 * server's {@link Server#tick} while this node serves, then the client side: the restatement if due, the client's
 * {@link Client#tick}, queries that timed out, and the waiting requests. Not thread safe, like every core.
 *
 * @param <M> the algorithm's messages
 * @param <R> its clients' requests
 */
public abstract class ElectedServer<M extends PeerMessage, R extends ElectedServer.Request>
    implements ProtocolCore<M> {

  /** The machine's one timer. */
  public static final long TIMER = 1;
  /**
   * A renewal unanswered for this fraction of a term is sent again. A new server that took a node's restatement before
   * its leader lease was active renewed nothing, and the grant ran out while the renewal asked of the server before
   * waited for an answer that could not come (a thin client's TCK, the server cut off by a partition).
   */
  public static final int RENEW_RETRY = 12;
  private static final long NONE = Long.MAX_VALUE;

  /**
   * The server side of an algorithm: its table, on the node that serves.
   *
   * @param <M> the algorithm's messages
   */
  public interface Server<M extends PeerMessage> {

    /** A message a client node sent the server (of the algorithm's kind for the server), or this node's client. */
    void receive(String from, M message);

    /** A fresh server (the one before may have granted what this node does not know), or one that stopped serving. */
    void forget();

    /** Gives whatever is free to whoever waits first, where the server may grant now ({@link #granting}). */
    void serveAll();

    /** The timer, while this node serves: leases or sessions not renewed for a term, waiters gone silent. */
    void tick();

    /** The earliest of {@code next} and what the table waits for, while this node serves. */
    long next(long next);

    /** The link to {@code peer} went down (after the machine noted it). */
    default void peerDown(String peer) { }
  }

  /**
   * The client side of an algorithm: what this node's clients hold and ask for. A request waits in the machine
   * ({@link #add}) until the client holds it ({@link Request#hold}) or it ends.
   *
   * @param <M> the algorithm's messages
   * @param <R> its requests
   */
  public interface Client<M extends PeerMessage, R extends Request> {

    /**
     * A message the server sent this node, or this node's own server side: the answers to a holder query and to a
     * restatement go on to the machine ({@link ElectedServer#holderAnswered}, {@link ElectedServer#restated}).
     */
    void receive(String from, M message);

    /** At the start of every step: grants whose windows have closed by now are lost. */
    void expire();

    void acquire(Input.Acquire<M> in);

    /**
     * The driver released {@code r}, or gave it up ({@code CloseSession}, or a cancel that came after its grant): the
     * machine has forgotten it; a grant goes back, a request that waits leaves the server's queue.
     */
    void release(R r);

    /** The driver renews held request {@code id}. */
    void renew(long id);

    void closeSession(String session);

    void holderQuery(Input.HolderQuery<M> query);

    void permitsQuery(Input.PermitsQuery<M> query);

    /** Answers {@link Input.ListQuery}: by asking the server ({@link #ask}), or at once that it cannot say. */
    void listQuery(Input.ListQuery<M> query);

    /** The timer: renewals unanswered or due. {@code reachable}: whether the server is this node or linked. */
    void tick(boolean reachable);

    /** The earliest of {@code next} and what the client side waits for (its lost grants included). */
    long next(long next, boolean reachable);

    /** Everything this node has at the server, for the server of {@code term}; the machine sends it. */
    M restatement(long term);

    /** The message that asks the server for {@code r}, or again for it (a keep-alive). */
    M ask(R r);

    /** The message that tells the server {@code r} is no longer wanted. */
    M cancel(R r);

    /** {@code r} ended before it was held (failed or cancelled); the machine forgot it. */
    default void forgot(R r) { }
  }

  /** A request of this node's clients: it waits at the server until held. Mutable; owned by the machine's core. */
  public static class Request extends Agenda.Item {
    private final long id;
    private final Claim claim;
    private final boolean attempt;
    private boolean held;
    long lastSent;

    /**
     * @param id the driver's request id
     * @param claim what it asks for, as the server serves it
     * @param attempt a single attempt (it does not wait)
     */
    protected Request(long id, Claim claim, boolean attempt) {
      this.id = id;
      this.claim = Objects.requireNonNull(claim, "claim");
      this.attempt = attempt;
    }

    public final long id() {
      return id;
    }

    public final Claim claim() {
      return claim;
    }

    public final boolean attempt() {
      return attempt;
    }

    /** Whether it was granted (it no longer waits). */
    public final boolean held() {
      return held;
    }

    /** It is granted: it no longer waits. */
    public final void hold() {
      held = true;
    }
  }

  private record Local<M>(String from, M message) {}

  /**
   * A query asked of the server: the name as asked, its name on the wire, when asked, and the answer by what this node
   * knows, given when the server does not answer in time.
   */
  private record Ask<M extends PeerMessage>(String name, String wireName, long askedAt, Supplier<Output<M>> byNode) {}

  /** Test-only mutation, read at the first step: a new server grants at once, with no grace for the holders before. */
  public boolean mutationNoGrace;
  /** Test-only mutation: the server decides whether or not its leader lease holds. */
  public boolean mutationServeWithoutLeaderLease;
  /** Test-only mutation: the server answers listings in its grace, its table still lacking what is not restated. */
  public boolean mutationListInGrace;
  /**
   * Test-only mutation, for the clients: a grant whose window closed goes back to the server in the step that tells
   * the loss (not a quarter term later, {@link LostGrants}), so that another may be granted it
   * while the holder's lost listeners still run.
   */
  public boolean mutationGiveBackOnLoss;

  private final String algorithm;
  private final String self;
  private final SortedSet<String> peers;
  private final long term;
  private final long peerTimeout;
  private final long leaderTimeout;
  private final int tokenLowBits;
  private final long maxCounter;
  private final long inc;
  private final QuorumWatch quorum;

  private final Class<? extends M> toServer;
  private Server<M> server;
  private Client<M, R> client;

  private long now;
  private List<Output<M>> out;
  private final Deque<Local<M>> local = new ArrayDeque<>();
  private final Set<String> up = new HashSet<>();
  private long timerAt = NONE;
  /** Made at the first step, when the test-only switches have been set. */
  private ServerView view;
  private long counter;
  private final Map<Long, R> reqs = new LinkedHashMap<>();
  /**
   * The requests not held yet, in the order they were made: what the keep-alives, the end of waits and the wake-up
   * look at (a walk of every request on every step grew with the grants held). A request leaves once it is held
   * (at the next walk: it is never unheld) or forgotten.
   */
  private final Map<Long, R> waiting = new LinkedHashMap<>();
  private final Map<Long, Ask<M>> asks = new LinkedHashMap<>();

  /**
   * @param algorithm the algorithm's name
   * @param toServer the type of the algorithm's messages to the server; every other goes to the client side
   * @param self this node's id
   * @param peers the other members
   * @param leaseNanos the term {@code T} of a grant
   * @param peerTimeoutNanos how long the node may have fewer members connected than a quorum needs before its waits
   *     fail, and how long a holder query waits for its answer
   * @param leaderTimeoutNanos the election's leader timeout: a new server's grace is {@code T} plus it
   * @param tokenLowBits a token's bits below the grant counter (0 when none)
   * @param random the source of this node's incarnation, drawn here
   * @throws IllegalArgumentException if a duration is not positive, or {@code peers} holds {@code self}
   */
  protected ElectedServer(String algorithm, Class<? extends M> toServer, String self, Collection<String> peers,
      long leaseNanos, long peerTimeoutNanos, long leaderTimeoutNanos, int tokenLowBits, RandomGenerator random) {
    this.algorithm = Objects.requireNonNull(algorithm, "algorithm");
    this.toServer = Objects.requireNonNull(toServer, "toServer");
    this.self = Objects.requireNonNull(self, "self");
    this.peers = ProtocolCore.otherMembers(self, peers);
    if (leaseNanos <= 0) {
      throw new IllegalArgumentException(algorithm + ": a grant has a term: leaseNanos " + leaseNanos);
    }
    if (peerTimeoutNanos <= 0 || leaderTimeoutNanos <= 0) {
      throw new IllegalArgumentException(algorithm + ": peerTimeout and leaderTimeout must be positive: "
          + peerTimeoutNanos + ", " + leaderTimeoutNanos);
    }
    if (tokenLowBits < 0 || tokenLowBits >= ServerView.TERM_SHIFT) {
      throw new IllegalArgumentException("a token's low bits: 0 to " + (ServerView.TERM_SHIFT - 1) + ", not "
          + tokenLowBits);
    }
    this.term = leaseNanos;
    this.peerTimeout = peerTimeoutNanos;
    this.leaderTimeout = leaderTimeoutNanos;
    this.tokenLowBits = tokenLowBits;
    this.maxCounter = (1L << (ServerView.TERM_SHIFT - tokenLowBits)) - 1;
    this.inc = random.nextLong() & Long.MAX_VALUE;
    this.quorum = new QuorumWatch(this.peers, peerTimeoutNanos);
  }

  /** Sets the algorithm's two sides, once, in its constructor. */
  protected final void run(Server<M> server, Client<M, R> client) {
    if (this.server != null) {
      throw new IllegalStateException("the machine runs one algorithm");
    }
    this.server = Objects.requireNonNull(server, "server");
    this.client = Objects.requireNonNull(client, "client");
  }

  @Override
  public final String self() {
    return self;
  }

  @Override
  public final String algorithm() {
    return algorithm;
  }

  // ================================================================ one step

  @Override
  public final List<Output<M>> step(long now, Input<M> input) {
    Objects.requireNonNull(input, "input");
    this.now = now;
    if (view == null) {
      view = new ServerView(self, peers, mutationNoGrace ? 0 : term + leaderTimeout, term / 3, now);
    }
    out = new ArrayList<>();
    try {
      client.expire();
      switch (input) {
        case Input.Message<M> m -> {
          if (peers.contains(m.from())) {
            local.add(new Local<>(m.from(), m.message()));
          }
        }
        case Input.TimerFired<M> t -> {
          if (t.timerId() == TIMER) {
            timerAt = NONE;
            tick();
          }
        }
        case Input.Start<M> s -> { }
        case Input.Leave<M> l -> { } // what it holds and serves ends by the rules of a crash
        case Input.PeerUp<M> u -> peerUp(u.peer());
        case Input.PeerDown<M> d -> peerDown(d.peer());
        case Input.View<M> v -> view(v.term(), v.leaders(), v.activeUntil());
        case Input.Acquire<M> a -> {
          if (reqs.containsKey(a.requestId())) {
            throw new IllegalStateException("request id " + a.requestId() + " is already in use");
          }
          client.acquire(a);
        }
        case Input.Release<M> r -> release(r.requestId());
        case Input.Cancel<M> c -> cancel(c.requestId());
        case Input.Renew<M> r -> client.renew(r.requestId());
        case Input.CloseSession<M> s -> client.closeSession(s.session());
        case Input.HolderQuery<M> q -> client.holderQuery(q);
        case Input.PermitsQuery<M> q -> client.permitsQuery(q);
        case Input.ListQuery<M> q -> client.listQuery(q);
        case Input.Begin<M> b -> out.add(new Output.TxAborted<>(b.txId(), Output.Failure.UNAVAILABLE, Set.of(),
            "the " + algorithm + " core serves no transactions"));
        case Input.End<M> e -> { }
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
      Local<M> l = local.poll();
      if (toServer.isInstance(l.message())) {
        server.receive(l.from(), l.message());
      } else {
        client.receive(l.from(), l.message());
      }
    }
  }

  // ================================================================ the view

  private void view(long t, List<Leader> leaders, long until) {
    if (t < view.term()) {
      return;
    }
    ServerView.Change c = view.view(now, t, leaders, until);
    if (c.freshServer() || c.stoppedServing()) {
      server.forget(); // a new server learns the grants from their holders; a former one forgets its stale table
    }
    if (c.startedServing()) {
      counter = 0;
      out.add(new Output.Fact<>(new Observation.Serving(self, view.servingTerm(), view.graceUntil())));
    }
    if (c.restate()) {
      restate();
    }
    server.serveAll();
  }

  /**
   * Everything this node has at the server, first on every new link to it and whenever the server changes, and
   * again every third of the term until the server says it took it.
   */
  private void restate() {
    if (!view.reachable(up)) {
      return;
    }
    view.restatementSent(now);
    M m = client.restatement(view.term());
    for (R r : waiting()) {
      r.lastSent = now; // restated: as good as asked again
    }
    toServer(m);
  }

  // ================================================================ links and time

  private void peerUp(String p) {
    if (!peers.contains(p)) {
      return;
    }
    up.add(p);
    if (p.equals(view.server())) {
      view.linkUp(); // what went on the old link may be lost
      restate();
    }
    if (view.serving()) {
      server.serveAll(); // a server that had lost its majority may decide again
    }
  }

  private void peerDown(String p) {
    if (!peers.contains(p)) {
      return;
    }
    up.remove(p);
    server.peerDown(p);
  }

  /**
   * The server's table first, then this node's clients. (A window that closed was told at the start of the step,
   * before either: a holder hears of its loss before the server side can give the lock away.)
   */
  private void tick() {
    if (view.serving()) {
      server.tick();
    }
    boolean reachable = view.reachable(up);
    watchQuorum();
    if (now >= view.restateDue(up)) {
      restate();
    }
    client.tick(reachable);
    for (var i = asks.entrySet().iterator(); i.hasNext(); ) {
      var e = i.next();
      if (now >= e.getValue().askedAt() + peerTimeout) {
        i.remove();
        out.add(e.getValue().byNode().get());
      }
    }
    for (R r : List.copyOf(waiting())) {
      if (quorum.lost(now)) {
        failNoQuorum(r);
      } else if (reachable && now >= r.lastSent + term / 3) {
        send(r); // C-10: the keep-alive
      }
    }
  }

  private void settle() {
    drain();
    watchQuorum();
    boolean reachable = view.reachable(up);
    long next = Math.min(view.restateDue(up), client.next(NONE, reachable));
    for (R r : waiting()) {
      next = Math.min(next, reachable ? Math.min(r.lastSent + term / 3, quorum.lostAt()) : quorum.lostAt());
    }
    for (Ask<M> a : asks.values()) {
      next = Math.min(next, a.askedAt() + peerTimeout);
    }
    if (view.serving()) {
      next = server.next(next);
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

  // ================================================================ for both sides

  /** The local time of the step being taken. */
  public final long now() {
    return now;
  }

  /** This node's incarnation: what it holds is not what an earlier life of the node held. */
  public final long inc() {
    return inc;
  }

  /** The term {@code T} of a grant. */
  public final long term() {
    return term;
  }

  /** How long a grant is trusted from the send time of the message its grant or renewal answers: {@code 3T/4}. */
  public final long trust() {
    return LostGrants.trustNanos(term);
  }

  /** When a renewal sent at {@code sentAt} and left unanswered is sent again ({@link #RENEW_RETRY}). */
  public final long renewAgainAt(long sentAt) {
    return sentAt + term / RENEW_RETRY;
  }

  /** An output of this step. */
  public final void emit(Output<M> output) {
    out.add(output);
  }

  /** Sends {@code m} to {@code node}: to this node's other side as a call, to a peer whose link is up. */
  public final void sendTo(String node, M m) {
    if (node.equals(self)) {
      local.add(new Local<>(self, m));
    } else if (up.contains(node)) {
      out.add(new Output.Send<>(node, m));
    }
  }

  /** Sends {@code m} to the server of this node's view, if there is one. */
  public final void toServer(M m) {
    if (view.server() != null) {
      sendTo(view.server(), m);
    }
  }

  /** Whether {@code node} is this node or a peer whose link is up. */
  public final boolean reaches(String node) {
    return node.equals(self) || up.contains(node);
  }

  // ================================================================ the server side

  /** Whether this node serves as the server now: it is the view's server and its leader lease holds. */
  public final boolean serving() {
    return view != null && view.deciding(now, false, up);
  }

  /** Whether this node is the view's server (it may still have to wait for its lease or its grace to decide). */
  public final boolean isServer() {
    return view.serving();
  }

  /** Whether the server may decide now (its leader lease holds, unless a test mutation ignores it). */
  public final boolean deciding() {
    return view.deciding(now, mutationServeWithoutLeaderLease, up);
  }

  /** Whether the server is in its grace: it takes restated grants back and grants nothing new. */
  public final boolean inGrace() {
    return view.inGrace(now);
  }

  /** Whether the server may grant now: it decides, and its grace is over. */
  public final boolean granting() {
    return deciding() && !inGrace();
  }

  /** When this server's grace ends. */
  public final long graceUntil() {
    return view.graceUntil();
  }

  /** The term this node serves (or last served): every server message names it. */
  public final long servingTerm() {
    return view.servingTerm();
  }

  /** Whether the server hears from incarnation {@code inc} of {@code node}: it restated to this server's term. */
  public final boolean heard(String node, long inc) {
    return view.heard(node, inc);
  }

  /**
   * Takes in the restatement of incarnation {@code inc} of {@code node}, made for {@code term}, when this server serves
   * that term ({@link ServerView#takesRestatement}): the server hears from it from now on, and the caller answers and
   * applies it, then calls {@link #restatementApplied}. Returns false for a restatement to ignore.
   */
  public final boolean takeRestatement(String node, long inc, long term) {
    if (!view.takesRestatement(term)) {
      return false; // the node sends it again once its view has this server's term
    }
    view.restated(node, inc);
    return true;
  }

  /** A restatement was applied: the grace ends once every member has restated, and the server serves. */
  public final void restatementApplied() {
    if (view.endGraceIfAllRestated(now)) {
      server.serveAll(); // every member restated what it holds: nothing the server before granted is unknown here
    }
  }

  /** Whether another grant of this term can have a token of its own; else a new term (an election) is needed. */
  public final boolean tokensLeft() {
    return counter < maxCounter;
  }

  /** The token of the next grant of this term: {@code term·2^37 + counter·2^low}, larger than every one before. */
  public final long nextToken() {
    if (!tokensLeft()) {
      throw new IllegalStateException("the tokens of term " + view.servingTerm() + " are used up");
    }
    return view.servingTerm() << ServerView.TERM_SHIFT | ++counter << tokenLowBits;
  }

  // ================================================================ the client side

  /** The server of this node's view, or null. */
  public final String server() {
    return view.server();
  }

  /** Whether the server is this node or a peer whose link is up. */
  public final boolean reachable() {
    return view.reachable(up);
  }

  /** Whether a message from {@code from} about {@code term} comes from the server of this node's view. */
  public final boolean fromServer(String from, long term) {
    return view.fromServer(from, term);
  }

  /** The server of {@code term} says it took this node's restatement of incarnation {@code inc}. */
  public final void restated(String from, long inc, long term) {
    view.restatementTaken(from, inc, term, this.inc);
  }

  /** A new request of this node's clients; its {@link Client#acquire} then asks for it ({@link #ask}) or holds it. */
  public final void add(R r) {
    reqs.put(r.id(), r);
    waiting.put(r.id(), r);
  }

  /** The requests not held yet, in the order they were made. */
  public final Collection<R> waiting() {
    waiting.values().removeIf(Request::held);
    return waiting.values();
  }

  /** The request {@code id}, or null. */
  public final R request(long id) {
    return reqs.get(id);
  }

  /** The requests, waiting and held, in the order they were made. */
  public final Collection<R> requests() {
    return reqs.values();
  }

  /** Forgets request {@code id} (lost). */
  public final void remove(long id) {
    reqs.remove(id);
    waiting.remove(id);
  }

  /** Request {@code id} is released or given up, held or waiting ({@link Client#release}). */
  public final void release(long id) {
    R r = reqs.remove(id);
    waiting.remove(id);
    if (r != null) {
      client.release(r);
    }
  }

  /**
   * Asks the server for {@code r}: a wait fails at once when no quorum can form; an attempt fails at once when no
   * server is reachable; a wait with no server waits for one: restated to the next one the node sees, or failed once
   * no quorum can form.
   */
  public final void ask(R r) {
    if (!r.attempt() && quorum.lost(now)) {
      failNoQuorum(r);
    } else if (view.reachable(up)) {
      send(r);
    } else if (r.attempt()) {
      fail(r, Output.Failure.UNAVAILABLE, "no " + algorithm + " server is reachable");
    }
  }

  /** Sends the server the message asking for {@code r}, now. */
  public final void send(R r) {
    r.lastSent = now;
    toServer(client.ask(r));
  }

  /** {@code r} fails: an {@code UNAVAILABLE} failure names the server it could not reach. */
  public final void fail(R r, Output.Failure failure, String detail) {
    fail(r, failure, failure == Output.Failure.UNAVAILABLE ? view.unreachable(up) : Set.of(), detail);
  }

  private void fail(R r, Output.Failure failure, Set<String> missing, String detail) {
    reqs.remove(r.id());
    waiting.remove(r.id());
    out.add(new Output.Failed<>(r.id(), r.claim().name(), failure, missing, detail));
    client.forgot(r);
  }

  /** A wait ends: the node can tell that no quorum can form around it ({@link QuorumWatch}). */
  private void failNoQuorum(R r) {
    fail(r, Output.Failure.UNAVAILABLE, quorum.missing(), quorum.detail());
    toServer(client.cancel(r)); // a server still linked forgets it
  }

  private void cancel(long id) {
    R r = reqs.get(id);
    if (r == null) {
      return;
    }
    if (r.held()) {
      release(id); // granted meanwhile: the driver drops the grant it has seen
      return;
    }
    fail(r, Output.Failure.CANCELLED, "");
    toServer(client.cancel(r));
  }

  /** Asks the server who holds {@code wireName} for {@code query}; unknown at once with no server. */
  public final void askHolder(Input.HolderQuery<M> query, String wireName, M message) {
    ask(query.queryId(), query.name(), wireName, message, () -> Output.Holder.unknown(query));
  }

  /**
   * Asks the server query {@code queryId} about {@code wireName} ({@code message}); when no server is reachable, at
   * once, or when none answers within {@code peerTimeout}, the query ends with {@code byNode}'s answer (what this node
   * knows). The server's answer comes back through {@link #answered} or {@link #holderAnswered}.
   */
  public final void ask(long queryId, String name, String wireName, M message, Supplier<Output<M>> byNode) {
    if (!view.reachable(up)) {
      out.add(byNode.get());
      return;
    }
    asks.put(queryId, new Ask<>(name, wireName, now, byNode));
    toServer(message);
  }

  /**
   * The server answered query {@code queryId} about {@code wireName} and the caller took in what it said: if the query
   * waits, it ends with its answer by what this node now knows.
   */
  public final void answered(long queryId, String wireName) {
    Ask<M> a = take(queryId, wireName);
    if (a != null) {
      out.add(a.byNode().get());
    }
  }

  /** The query {@code queryId} about {@code wireName}, forgotten, or null if none waits. */
  private Ask<M> take(long queryId, String wireName) {
    Ask<M> a = asks.get(queryId);
    if (a == null || !a.wireName().equals(wireName)) {
      return null;
    }
    asks.remove(queryId);
    return a;
  }

  /**
   * The server answers the listing {@code q} of {@code from} with what {@code held} lists, made into its message by
   * {@code answer}; only once it grants, as in its grace its table still lacks what the nodes have yet to restate (a
   * listing then would leave out grants that hold), and only to a node incarnation it has heard from. Unanswered, the
   * asking node's wait ends in "cannot tell" ({@link #ask}).
   */
  public final void answerListing(String from, WireCodec.ListingAsk q, Supplier<List<Output.Listed>> held,
      WireCodec.ListingAnswer.Maker<? extends M> answer) {
    if (heard(from, q.inc()) && (mutationListInGrace ? deciding() : granting())) {
      sendTo(from, answer.make(servingTerm(), q.queryId(), held.get()));
    }
  }

  /**
   * Asks the server the listing {@code q} ({@code message}, a {@link WireCodec.ListingAsk}); with no server reachable
   * at once, or with none answering within {@code peerTimeout}, it ends in "cannot tell", after {@code forgotten} runs.
   * The answer comes back through {@link #listingAnswered}.
   */
  public final void askListing(Input.ListQuery<M> q, M message, Runnable forgotten) {
    ask(q.queryId(), LISTING, LISTING, message, () -> {
      forgotten.run();
      return Output.Listing.unknown(q);
    });
  }

  /**
   * Whether {@code answer} is the server's answer to a listing this node waits for: it is then forgotten, and the
   * caller gives the answer.
   */
  public final boolean listingAnswered(String from, WireCodec.ListingAnswer answer) {
    return view.fromServer(from, answer.term()) && take(answer.queryId(), LISTING) != null;
  }

  /** The key of a listing among the queries waiting for the server: no name is empty. */
  private static final String LISTING = "";

  /** The server of {@code term} answers holder query {@code queryId} about {@code wireName}: {@code tag} holds it. */
  public final void holderAnswered(String from, long term, long queryId, String wireName, String tag) {
    Ask<M> a = view.fromServer(from, term) ? take(queryId, wireName) : null;
    if (a != null) {
      out.add(new Output.Holder<>(queryId, a.name(), tag));
    }
  }
}
