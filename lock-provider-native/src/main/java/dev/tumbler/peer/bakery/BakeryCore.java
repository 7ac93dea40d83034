package dev.tumbler.peer.bakery;

import dev.tumbler.peer.bakery.BakeryMessage.ReqKey;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.ProtocolCore;
import dev.tumbler.peer.core.QuorumWatch;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
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
 * A client ({@link ClientRole}) sends {@code Lock} to the owner {@code leaders[FNV-1a(self \0 name) mod L]} (the
 * next connected leader if it is not connected) and keeps it alive with {@code Waiting} every T/3; the owner
 * ({@link OwnerRole}) takes it through phases P1 to P6 at quorums of leaders, then answers {@code Locked}.
 *
 * <h2>How it is built</h2>
 * This class ties the roles together and is the only one with a step function: {@link #step} routes every input
 * and every message to the role it concerns, handles the messages a leader cannot act on yet, and then settles
 * (lets each role do what time and the changed tables ask of it) and sets the one timer. Each role lives in its
 * own class and shares this node's state through {@link Node} (identity, clock, outbox, links, view):
 * <ul>
 *   <li>{@link ClientRole}: this node's requests, on every node (client rules 1–8);
 *   <li>{@link OwnerRole}: the runs of the requests this leader owns, P1–P6, renewals, relocks;
 *   <li>{@link LeaderTables}: every acting leader's table of tickets per name, the activation rule, expiry;
 *   <li>{@link ViewTakeOver}: a new term, and the hand-over of the previous view's tables;
 *   <li>{@link Restatement}: links that come up or go down, and what a peer's restatement replaces;
 *   <li>{@link HeldMessages}: leader messages kept until this node can handle them.
 * </ul>
 * A client whose owner is this node talks to it by function call, never by message: the message counts of
 * §3.6 hold exactly.
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

  private static final long NONE = Node.NONE;

  /** Test-only switches that break one rule each (§3.8); all off unless a test sets one. */
  final Mutations mutations = new Mutations();

  private final Node node;
  private final ClientRole client;
  private final LeaderTables tables;
  private final OwnerRole owner;
  private final ViewTakeOver takeOver;
  private final Restatement restatement;
  private final HeldMessages held = new HeldMessages();

  private long timerAt = NONE;
  /** The clock at the end of the previous step. */
  private long settledAt = NONE;

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
    Objects.requireNonNull(self, "self");
    if (leaseNanos <= 0) {
      throw new IllegalArgumentException("the bakery's grants have a term: leaseNanos must be positive, not "
          + leaseNanos);
    }
    if (peerTimeoutNanos <= 0 || leaderTimeoutNanos < 0) {
      throw new IllegalArgumentException("bad timeouts " + peerTimeoutNanos + "/" + leaderTimeoutNanos);
    }
    this.node = new Node(self, ProtocolCore.otherMembers(self, peers), leaseNanos, peerTimeoutNanos,
        leaseNanos + leaderTimeoutNanos, random.nextLong() & Long.MAX_VALUE, mutations);
    this.client = new ClientRole(node);
    this.tables = new LeaderTables(node);
    this.owner = new OwnerRole(node, tables, Math.min(peerTimeoutNanos, Math.max(1, leaderTimeoutNanos)));
    this.takeOver = new ViewTakeOver(node, tables, owner, held);
    this.restatement = new Restatement(node, client, owner, tables, held);
  }

  @Override
  public String self() {
    return node.self;
  }

  @Override
  public String algorithm() {
    return ALGORITHM;
  }

  @Override
  public List<Output<BakeryMessage>> step(long now, Input<BakeryMessage> input) {
    Objects.requireNonNull(input, "input");
    node.now = now;
    node.out = new ArrayList<>();
    try {
      switch (input) {
        case Input.Message<BakeryMessage> m -> receive(m.from(), m.message());
        case Input.TimerFired<BakeryMessage> t -> {
          if (t.timerId() == TIMER) {
            timerAt = NONE;
          }
        }
        case Input.PeerUp<BakeryMessage> u -> restatement.up(u.peer());
        case Input.PeerDown<BakeryMessage> d -> restatement.down(d.peer());
        case Input.Acquire<BakeryMessage> a -> client.acquire(a);
        case Input.Release<BakeryMessage> r -> client.release(r.requestId());
        case Input.Cancel<BakeryMessage> c -> client.cancel(c.requestId());
        case Input.Renew<BakeryMessage> r -> client.renew(r.requestId());
        case Input.CloseSession<BakeryMessage> s -> client.closeSession(s.session());
        case Input.View<BakeryMessage> v -> {
          for (Input.Message<BakeryMessage> m : takeOver.view(v.term(), v.leaders(), v.activeUntil())) {
            receive(m.from(), m.message());
          }
        }
        case Input.HolderQuery<BakeryMessage> q -> client.whoHolds(q);
        case Input.PermitsQuery<BakeryMessage> q -> node.out.add(Output.Permits.unknown(q)); // no semaphores here
        case Input.ListQuery<BakeryMessage> q -> client.list(q);
        case Input.Start<BakeryMessage> st -> { }
        case Input.Leave<BakeryMessage> l -> { } // what it holds and serves ends by the rules of a crash
        case Input.Begin<BakeryMessage> b -> node.out.add(new Output.TxAborted<>(b.txId(), Output.Failure.UNAVAILABLE,
            Set.of(), "the " + algorithm() + " core serves no transactions"));
        case Input.End<BakeryMessage> e -> { }
      }
      settle();
      return node.out;
    } finally {
      node.out = null;
    }
  }

  /** Routes a message to its role, or keeps it until this node can handle it. */
  private void receive(String from, BakeryMessage m) {
    if (!from.equals(node.self) && !node.links.containsKey(from)) {
      return; // not a member
    }
    if (!from.equals(node.self) && !(m instanceof BakeryMessage.Restate) && !node.links.get(from).synced) {
      // before the peer's restatement on this link: nothing counts; client messages are restated anyway
      return;
    }
    if (m instanceof BakeryMessage.Termed t && t.term() > node.term && !(m instanceof BakeryMessage.TablesRequest)) {
      held.keepAhead(from, m); // its view reaches this node soon: handled then
      return;
    }
    switch (m) {
      case BakeryMessage.Restate r -> restatement.onRestate(from, r);
      // client → owner
      case BakeryMessage.Lock k -> owner.onLock(from, k);
      case BakeryMessage.Waiting w -> owner.onWaiting(from, w);
      case BakeryMessage.Renew r -> owner.onRenew(from, r);
      case BakeryMessage.Relock r -> owner.onRelock(from, r);
      case BakeryMessage.Unlock u -> owner.onUnlock(from, u);
      // owner → client
      case BakeryMessage.Locked k -> client.onLocked(from, k);
      case BakeryMessage.LockFailed f -> client.onLockFailed(from, f);
      case BakeryMessage.Renewed r -> client.onRenewed(from, r);
      case BakeryMessage.Unlocked u -> client.onUnlocked(from, u);
      // client ↔ every leader
      case BakeryMessage.WhoHolds w -> tables.answerWhoHolds(from, w);
      case BakeryMessage.Holds h -> client.onHolds(from, h);
      case BakeryMessage.ListTickets q -> tables.answerListTickets(from, q);
      case BakeryMessage.TicketList l -> client.onTicketList(from, l);
      // leader ↔ leader
      case BakeryMessage.TablesRequest t -> takeOver.onTablesRequest(from, t);
      case BakeryMessage.Tables t -> takeOver.onTables(from, t);
      case BakeryMessage.DropTicket d -> {
        if (d.term() == node.term) {
          tables.dropRecords(d.name(), d.reqKey());
          if (!node.acting() && held.anyUntilActing()) {
            // messages kept until this leader acts may still record the request (a LockEntering): the drop
            // is applied again after them, or the record would be left behind and hold back every ticket
            held.keepUntilActing(from, m);
          }
        }
      }
      case BakeryMessage.Termed t -> {
        if (t.term() != node.term || !node.isLeader(from) || !node.isLeader(node.self)) {
          return; // another term's, or not between leaders of this one
        }
        if (!node.acting()) {
          held.keepUntilActing(from, m); // handled once this leader acts in the term
          return;
        }
        onLeaderMessage(from, t);
      }
    }
  }

  /** A phase message between the acting leaders of this term: to the table, or an answer to this owner's run. */
  private void onLeaderMessage(String from, BakeryMessage.Termed m) {
    switch (m) {
      case BakeryMessage.LockEntering e -> tables.onLockEntering(from, e);
      case BakeryMessage.LockEntered e -> owner.onEntered(from, e);
      case BakeryMessage.GetMaxTicket g -> tables.onGetMaxTicket(from, g);
      case BakeryMessage.MaxTicket mt -> owner.onMaxTicket(from, mt);
      case BakeryMessage.AddTicket a -> tables.onAddTicket(from, a);
      case BakeryMessage.TicketAdded a -> owner.onTicketAdded(from, a);
      case BakeryMessage.LockExiting x -> tables.onLockExiting(x);
      case BakeryMessage.TicketCheck c -> tables.onTicketCheck(from, c);
      case BakeryMessage.TicketGone g -> tables.onTicketGone(from, g);
      case BakeryMessage.TicketReady r -> tables.onTicketReady(r);
      case BakeryMessage.ActivateLock a -> tables.onActivateLock(from, a);
      case BakeryMessage.LockActivated a -> owner.onActivated(from, a);
      case BakeryMessage.DropTicket d -> tables.dropRecords(d.name(), d.reqKey());
      case BakeryMessage.RenewTicket r -> tables.onRenewTicket(from, r);
      case BakeryMessage.TicketRenewed r -> owner.onTicketRenewed(from, r);
      default -> { }
    }
  }

  /**
   * The loop after every input: local messages, then the roles' time-driven work, then the owners' re-evaluation of
   * every name whose table changed, until nothing is left to do; then the timer for the earliest wake-up.
   */
  private void settle() {
    boolean again = true;
    int rounds = 0;
    while (again) {
      again = false;
      while (!node.local.isEmpty()) {
        receive(node.self, node.local.poll());
      }
      takeOver.checkGrace();
      if (node.acting() && held.anyUntilActing()) {
        for (Input.Message<BakeryMessage> m : held.takeUntilActing()) {
          onLeaderMessage(m.from(), (BakeryMessage.Termed) m.message());
        }
      }
      tables.tick(settledAt);
      owner.tick();
      client.tick();
      if (node.acting()) {
        for (String name : tables.dirtyNames()) {
          tables.clean(name);
          owner.tableChanged(name);
          tables.recheckDeferred(name);
        }
      }
      again = !node.local.isEmpty() || node.acting() && tables.anyDirty() || node.acting() && held.anyUntilActing();
      if (++rounds > 10_000) {
        throw new IllegalStateException("the bakery core does not settle");
      }
    }
    tables.tidy();
    settledAt = node.now;
    long next = nextWakeUp();
    if (next != timerAt) {
      node.out.add(next == NONE ? new Output.CancelTimer<>(TIMER) : new Output.SetTimer<>(TIMER, next));
      timerAt = next;
    }
  }

  private long nextWakeUp() {
    long next = Node.earliest(client.nextWakeUp(), tables.nextWakeUp());
    next = Node.earliest(next, owner.nextWakeUp());
    next = Node.earliest(next, takeOver.nextWakeUp());
    if (next != NONE && next <= node.now) {
      next = node.now + 1;
    }
    return next;
  }

  // ---------------------------------------------------------------- for tests and statistics

  /** This node's view's term (0 before the first). */
  public long term() {
    return node.term;
  }

  /** Whether this node is a leader of its view that has taken over the previous view's tables. */
  public boolean ready() {
    return node.ready;
  }

  /** Requests of this node's clients not yet ended. */
  public int openRequests() {
    return client.openRequests();
  }

  /** The owner of this node's requests on {@code name} (§3.2 client rule 1), or null if none is connected. */
  String ownerFor(String name) {
    return client.ownerFor(name);
  }

  /** The key this node's request {@code requestId} has now, or null; for tests. */
  ReqKey reqKeyOf(long requestId) {
    return client.reqKeyOf(requestId);
  }

  /** The tickets this leader keeps for {@code name}, in key order, as text ({@code key state}). */
  List<String> tickets(String name) {
    return tables.tickets(name);
  }
}
