package dev.tumbler.peer.agent;

import dev.tumbler.lock.TransactionOptions.Quorum;
import dev.tumbler.peer.agent.LockTable.Entry;
import dev.tumbler.peer.agent.LockTable.Mode;
import dev.tumbler.peer.agent.WaitFor.LockRef;
import dev.tumbler.peer.agent.WaitFor.Node;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.core.Agenda;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Lazy;
import dev.tumbler.peer.core.Moments;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.ProtocolCore;
import dev.tumbler.peer.core.RemoteSessions;
import dev.tumbler.peer.core.TxOptions;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The {@code agent} algorithm's core (design §4.2): on every node a lock server ({@link LockTable}) and one agent
 * per transaction ({@link AgentView}, {@link WaitFor}). Pure, like every core.
 *
 * <p><b>Lock server.</b> Takes {@code Lock}, {@code Surrender}, {@code End}, {@code Renew}, {@code Stamp} and a
 * node's {@code Restate} from agents, applies them to its table and tells every agent with an entry on a related
 * path the new queue ({@code Info}). A remote agent's entries go {@code T} after the last message from it; a
 * local agent's live as long as it does. Until every peer has restated (or the longer of {@code peerTimeout} and
 * {@code T} after start, for peers that stay away) it defers requests, so that its versions start above every
 * version its peers have seen; then it first takes back what the restated agents say they hold, since after a
 * restart they may still trust grants of its previous life, and a transaction's term may not exceed {@code T}.
 *
 * <p><b>Agents.</b> A transaction's agent ({@link Input.Begin}) asks each of its nodes for each claim, keeps the
 * latest queue of each lock it hears of, and reports a claim {@link Output.Granted} once its quorum of servers
 * holds it (after a {@code Stamp} round for a majority over several nodes); after every queue it stores, unless
 * every claim is held, it looks for a deadlock among the queues it knows: the youngest transaction on a cycle
 * surrenders its lock there (or aborts, with {@link TxOptions#abortOnDeadlock()} and a claim it was told of), and
 * with no cycle the queues go to the agents with larger ids that may see more. A plain request ({@code txId} 0) is
 * a transaction of one claim, a majority of every member ({@link TxOptions#plainLock()}); one that holds some of
 * its servers but not its majority gives way at once to an older claim waiting there (the yield rule), and among
 * plain claims on one name alone it leaves cycles to that rule.
 *
 * <p>Leases: an agent renews at its remote servers every third of its term and trusts a server's part of a claim
 * for {@code 3/4} of the term from the renewal it sent (the echo rule); a claim whose quorum of trusted parts is
 * gone is {@link Output.Lost}. A node of a claim unreachable for {@code peerTimeout} counts as down; a transaction
 * whose claims can no longer meet their quorum aborts ({@link Output.Failure#UNAVAILABLE}).
 *
 * <p><b>Listings.</b> No node has a table of every grant: a listing ({@link Input.ListQuery}) asks every member that
 * is up ({@code ListHeld}) and answers once all have, or {@code peerTimeout} on. Each member gives the claims its own
 * agents hold as their clients were told, with their tokens, and the parts its lock table holds for the agents of
 * other nodes. A member that answered lists its own claims exactly; a claim of a member that did not is listed from
 * its parts at the members that did, with no token. That finds every plain claim (held on a majority of the members)
 * only when a majority of ready lock servers answered: with fewer the listing cannot say.
 */
public final class AgentCore implements ProtocolCore<AgentMessage> {

  static final long TIMER = 1;
  /**
   * Low bits of a token that hold the index of the server that granted it: a part's token is its grant version on
   * that server, shifted, plus the server's index, so that no two servers make the same token (F1). Members are at
   * most {@link AgentAlgorithm#MAX_NODES}.
   */
  static final int TOKEN_NODE_BITS = 10;
  private static final long NONE = Long.MAX_VALUE;
  private static final String SURRENDERED = "surrendered to break a deadlock; asked for again";
  private static final int MAX_FORWARDS_REMEMBERED = 4096;
  private static final int MAX_LOCAL_MESSAGES_PER_STEP = 100_000;

  /** Test-only mutation: an agent stores every queue it is told, even one older than the one it holds. */
  boolean mutationIgnoreVersions;
  /** Test-only mutation: after a surrender, an agent takes the lock's queues at once, acknowledged or not. */
  boolean mutationNoSurrenderAck;
  /** Test-only mutation: the victim of a cycle is its smallest agent, not its largest. */
  boolean mutationSmallestSurrenders;
  /** Test-only mutation: a thin client's told claim is surrendered at once, as a local one is (CLIENTS.md D10). */
  public boolean mutationSurrenderRemoteAtOnce;
  /** Test-only mutation: an agent chosen on a cycle aborts even when the lock there was not reported held. */
  boolean mutationAbortUntold;
  /** Test-only mutation: a listing says it knows whatever few lock servers answered. */
  boolean mutationListWithoutMajority;

  /**
   * For checkers (the simulator): after every step, fail with an {@link IllegalStateException} naming the entries
   * if two agents hold conflicting entries in this node's table (AG-1).
   */
  public boolean checkTable;

  private final String self;
  private final List<String> members;
  private final int selfIndex;
  private final SortedSet<String> peers;
  private final long peerTimeout;
  private final long term;
  private final long wallMicros;
  final LockTable table = new LockTable();

  private long now;
  private long startNow = Long.MIN_VALUE;
  private List<Output<AgentMessage>> out;
  private final Deque<Local> local = new ArrayDeque<>();
  /** The agents whose view changed in this step, in the order they were first told: analysed once it is drained. */
  private final Set<Agent> toAnalyse = new LinkedHashSet<>();
  private long clock;
  private long txSeq;
  /** The largest server version this node has seen, its own included: what it restates. */
  private long highestSeen;

  private final Set<String> up = new HashSet<>();
  private final Map<String, Long> downSince = new HashMap<>();

  // ---- the lock server
  /** What this server keeps of an agent with entries here, beside the entries, while it has some. */
  private final Map<AgentId, Served> served = new HashMap<>();
  /** When each remote agent's entries here go, unless it is heard from again: the timer's index of {@link #served}. */
  private final Moments<AgentId> expiries = new Moments<>();
  private final Set<String> restatedBy = new HashSet<>();
  private boolean ready;
  private final Deque<Local> deferred = new ArrayDeque<>();

  // ---- the agents
  private final TreeMap<AgentId, Agent> agents = new TreeMap<>();
  /**
   * What the timer visits: the agents that wait for a claim or may have something to do at the next step (watched),
   * and the others each resting until its next moment (a renewal, the end of a told claim's trust or window, a
   * node's time to come back); any input or message that concerns an agent watches it again. The agents are added in
   * the order of their ids, so a visit goes through them in the order of the map above.
   */
  private final Agenda<Agent> agenda = new Agenda<>();
  /** The agents watched in this step: those that wait for nothing rest once it is done. */
  private final List<Agent> woken = new ArrayList<>();
  private final Map<Long, Agent> txs = new HashMap<>();
  private final Map<Long, Req> requests = new HashMap<>();
  /**
   * Plain agents whose client let the lease run out, until their servers are told to end them: the rest of the
   * term, in which the holder's lost listeners run before any other client can be granted its lock.
   */
  private final Map<AgentId, Lapse> lapsing = new HashMap<>();
  private long timerAt = NONE;
  private long surrenders;

  // ---- listings
  /** The listings this node gathers for its clients, by query id. */
  private final Map<Long, Gathering> listings = new HashMap<>();

  private record Local(String from, AgentMessage message) {}

  /**
   * An agent with entries on this server: when they go (a remote agent's, unless it is heard from again; a local
   * agent's live as long as it does), the term it renews for (0: the service's), the tag it asked with, when it gave
   * one ({@link AgentMessage.Lock#tag()}).
   */
  private static final class Served {
    final Moments.Slot<AgentId> expiry;
    long term;
    String tag = "";

    Served(AgentId agent) {
      this.expiry = new Moments.Slot<>(agent);
    }
  }

  private record Forwarded(AgentId to, LockRef lock, long version) {}

  /** An agent that no longer renews, and when its servers are told that it ended. */
  private record Lapse(Agent agent, long endAt) {}

  /**
   * A listing under way: the members asked that have yet to answer, the answers so far by member (this node's own
   * among them), and when it stops waiting for the rest.
   */
  private static final class Gathering {
    final Set<String> waiting;
    final Map<String, AgentMessage.Listing> answers = new TreeMap<>();
    final long deadline;

    Gathering(Set<String> waiting, long deadline) {
      this.waiting = waiting;
      this.deadline = deadline;
    }
  }

  private final class Agent extends Agenda.Item {
    final AgentId id;
    final long txId;
    final String session;
    final boolean abortOnDeadlock;
    final Quorum quorum;
    final List<String> nodes;
    final long lease;
    final long trust;
    final AgentView view;
    /** The strongest mode asked for each path: what is restated. */
    final Map<List<String>, Mode> asked = new TreeMap<>(LockTable::comparePaths);
    final List<Req> reqs = new ArrayList<>(1); // a plain lock has one claim
    /** Per remote server, the send time of the latest renewal it answered (a local agent has none). */
    Map<String, Long> windows = Map.of();
    /** The queues it forwarded, each to whom and at which version, so that none goes twice. */
    Set<Forwarded> forwarded = Set.of();
    long nextRenewAt = NONE;
    /** The tag its claims were asked with (an election's candidate), restated with them; empty for none. */
    String tag = "";
    /** Whether its view changed since its last deadlock analysis. */
    boolean dirty;
    /** Whether it is among the agents watched in this step. */
    boolean woken;
    /** The lock being surrendered in this step, so that the claims it takes away are lost for that reason. */
    LockRef surrendering;
    /**
     * Whether a told claim of this transaction was lost for good (its lease ran out): it can never hold every claim
     * again, and nothing more is granted to it until it ends (a claim on the same path would share the lost
     * claim's entry).
     */
    boolean lostForGood;
    /**
     * By path, the largest token of its claims there that were surrendered to break a deadlock and asked for again.
     * A later grant of any of its claims on that path takes a token above it: such a claim may still hold a quorum
     * without the part it surrendered, whose version was the largest (agent seed 49131 of a 250,000-seed thin-client
     * run: a MAJORITY write over four servers surrendered its part on one and was granted again at once from the other
     * three's older versions, below its own earlier token), and a read and a write claim of one transaction on one
     * path share their entries, so the one granted again must also go above the other's (seed 205576).
     */
    Map<List<String>, Long> surrenderedTokens = Map.of();
    /** A thin client's (CLIENTS.md D10): what it was told it holds is taken from it only once its window closed. */
    final boolean remoteHolder;
    /** A surrender chosen while the thin client may still trust a told claim it takes: made at {@link #deferredUntil}. */
    LockRef deferred;
    List<Node> deferredCycle;
    long deferredUntil;

    Agent(AgentId id, long txId, String session, TxOptions options) {
      this.id = id;
      this.txId = txId;
      this.session = session;
      this.remoteHolder = RemoteSessions.remote(session);
      this.abortOnDeadlock = options.abortOnDeadlock();
      this.quorum = options.quorum();
      this.nodes = options.nodes().isEmpty() ? members : options.nodes();
      this.lease = options.leaseNanos() > 0 ? options.leaseNanos() : term;
      this.trust = lease / 4 * 3 + lease % 4 * 3 / 4;
      this.view = new AgentView(id);
      view.ignoreVersions = mutationIgnoreVersions;
      view.noSurrenderAck = mutationNoSurrenderAck;
    }

    boolean plain() {
      return txId == 0;
    }

    boolean remote() {
      return nodes.size() > 1 || !nodes.get(0).equals(self);
    }
  }

  private static final class Req {
    final long id;
    final Agent agent;
    final Claim claim;
    final List<String> path;
    final Mode mode;
    final boolean attempt;
    /*
     * The sets below are empty (shared) until used: most claims are not attempts, and a stamp round's sets go once
     * the claim is granted (a claim lost to a deadlock starts its next round afresh).
     */
    /** The servers that answered since it was asked, for an attempt (only an attempt counts them). */
    Set<String> answered = Set.of();
    Set<String> stampedBy = Set.of();
    /** The servers the round under way was sent to. */
    Set<String> stampAsked = Set.of();
    /** The servers that answered the round under way that the claim's entry held nothing there. */
    Set<String> stampRefused = Set.of();
    /** The token of the stamp round under way, or -1. */
    long stampT = -1;
    /** Whether the round under way is a read claim's first, which asks for fresh versions. */
    boolean freshRound;
    /** The largest fresh token the first round's answers gave. */
    long freshest;
    /** When the first round of a read claim was sent: its grant counts from no later (the echo rule). */
    long freshSentAt = Long.MAX_VALUE;
    boolean told;
    /**
     * Surrendered to break a deadlock and asked for again, not granted since: a renewal of it is answered with that
     * loss, not a bare "not held" (the renewal's answer can reach the client's lease before the loss does).
     */
    boolean surrendered;
    /** The token of its last grant (-1 before the first). */
    long token = -1;
    long sentAt = Long.MIN_VALUE;
    /** Until when the client may trust it, unless it renews ({@link Output.Granted#validUntil()}). */
    long validUntil;
    /** When the client asked to renew it, while no quorum has answered a renewal sent since; else NONE. */
    long renewAsked = NONE;
    boolean done;

    Req(long id, Agent agent, Claim claim, Mode mode, boolean attempt) {
      this.id = id;
      this.agent = agent;
      this.claim = claim;
      this.path = claim.path();
      this.mode = mode;
      this.attempt = attempt;
    }
  }

  public AgentCore(CoreContext context) {
    this.self = context.self();
    this.peers = ProtocolCore.otherMembers(self, context.peers());
    TreeSet<String> all = new TreeSet<>(peers);
    all.add(self);
    this.members = List.copyOf(all);
    this.selfIndex = members.indexOf(self);
    this.peerTimeout = context.peerTimeoutNanos();
    if (context.leaseNanos() <= 0) {
      throw new IllegalArgumentException("the agent algorithm's grants have a term: leaseNanos " + context.leaseNanos());
    }
    this.term = context.leaseNanos();
    this.wallMicros = context.wallMicros();
  }

  @Override
  public String self() {
    return self;
  }

  @Override
  public String algorithm() {
    return AgentAlgorithm.NAME;
  }

  /** How many surrenders this node's agents sent, for statistics and tests. */
  public long surrenders() {
    return surrenders;
  }

  /** This node's lock table's entries, in order, for checks. */
  public List<Entry> tableEntries() {
    return table.entries();
  }

  @Override
  public List<Output<AgentMessage>> step(long now, Input<AgentMessage> input) {
    Objects.requireNonNull(input, "input");
    this.now = now;
    if (startNow == Long.MIN_VALUE) {
      start();
    }
    out = new ArrayList<>();
    try {
      switch (input) {
        case Input.Message<AgentMessage> m -> {
          if (peers.contains(m.from())) { // not a member: the transport should not let it in
            local.add(new Local(m.from(), m.message()));
          }
        }
        case Input.TimerFired<AgentMessage> t -> {
          if (t.timerId() == TIMER) {
            timerAt = NONE;
            tick();
          }
        }
        case Input.Start<AgentMessage> s -> { }
        case Input.Leave<AgentMessage> l -> { } // what it holds and serves ends by the rules of a crash
        case Input.PeerUp<AgentMessage> u -> peerUp(u.peer());
        case Input.PeerDown<AgentMessage> d -> peerDown(d.peer());
        case Input.Begin<AgentMessage> b -> begin(b);
        case Input.End<AgentMessage> e -> {
          Agent a = txs.get(e.txId());
          if (a != null) {
            endAgent(a);
          }
        }
        case Input.Acquire<AgentMessage> a -> acquire(a);
        case Input.Release<AgentMessage> r -> {
          Req q = requests.get(r.requestId());
          if (q != null && q.agent.plain()) { // a transaction's claims are released by its end only
            endAgent(q.agent);
          }
        }
        case Input.Cancel<AgentMessage> c -> cancel(c.requestId());
        case Input.Renew<AgentMessage> r -> renew(r.requestId());
        case Input.CloseSession<AgentMessage> s -> {
          for (Agent a : List.copyOf(agents.values())) {
            if (a.session.equals(s.session())) {
              endAgent(a);
            }
          }
        }
        case Input.HolderQuery<AgentMessage> q -> out.add(new Output.Holder<>(q.queryId(), q.name(), holderTag(q.name())));
        case Input.PermitsQuery<AgentMessage> q -> out.add(Output.Permits.unknown(q)); // no semaphores here
        case Input.ListQuery<AgentMessage> q -> list(q);
        case Input.View<AgentMessage> v -> { } // no elections
      }
      drain();
      settle();
      if (checkTable) {
        String conflict = table.conflictAmongHolders();
        if (conflict != null) {
          throw new IllegalStateException("AG-1: conflicting holders on " + self + ": " + conflict);
        }
      }
      return out;
    } finally {
      out = null;
    }
  }

  /**
   * How long a server that (re)started waits at most for the restatements of its peers before it serves: a peer
   * that does not restate may have agents that still trust grants of this server's previous life, for at most the
   * lease term from their last renewal, which came before this start.
   */
  private long readyWait() {
    return Math.max(peerTimeout, term);
  }

  private void start() {
    startNow = now;
    for (String p : peers) {
      downSince.put(p, now);
    }
    ready = peers.isEmpty();
  }

  /**
   * Handles the messages of this step to local parties (a server's answer to a local agent, and back), then the
   * deadlock analyses they call for, one per agent whose view changed, and what those send, until nothing is left.
   */
  private void drain() {
    int handled = 0;
    while (true) {
      while (!local.isEmpty()) {
        if (++handled > MAX_LOCAL_MESSAGES_PER_STEP) {
          // a bug, not a load: fail this step loudly rather than grow without bound
          throw new IllegalStateException("livelock: more than " + MAX_LOCAL_MESSAGES_PER_STEP + " local messages in "
              + "one step on " + self + ", the last " + local.peekLast().message);
        }
        Local l = local.poll();
        receive(l.from, l.message);
      }
      if (toAnalyse.isEmpty()) {
        return;
      }
      Agent a = toAnalyse.iterator().next();
      toAnalyse.remove(a);
      if (agents.containsKey(a.id) && needsAnalysis(a)) {
        a.dirty = false; // nothing to learn from the same queues twice
        analyse(a);
      }
    }
  }

  /** Whether {@code a}'s view changed since its last analysis, while it waits for a claim the analysis may concern. */
  private boolean needsAnalysis(Agent a) {
    return a.dirty && a.reqs.stream().anyMatch(r -> !r.done && !r.told) && (!a.plain() || seesOtherPaths(a));
  }

  private void receive(String from, AgentMessage m) {
    clock = Math.max(clock, m.clock());
    switch (m) {
      case AgentMessage.Lock l -> toServer(from, l);
      case AgentMessage.Surrender s -> toServer(from, s);
      case AgentMessage.End e -> toServer(from, e);
      case AgentMessage.Renew r -> toServer(from, r);
      case AgentMessage.Stamp s -> toServer(from, s);
      case AgentMessage.Restate r -> restate(from, r);
      case AgentMessage.Info i -> info(from, i);
      case AgentMessage.Renewed r -> {
        Agent a = agentHere(r.agent());
        if (a != null && a.nodes.contains(from) && r.echo() <= now) {
          a.windows = Lazy.put(a.windows, from, Math.max(a.windows.getOrDefault(from, Long.MIN_VALUE), r.echo()));
          evaluate(a);
        }
      }
      case AgentMessage.Stamped s -> {
        Agent a = agentHere(s.agent());
        if (a != null && a.nodes.contains(from)) {
          for (Req r : a.reqs) {
            if (!r.done && r.path.equals(s.path()) && r.stampT == s.t() && !s.ok()) {
              // it held no more when the stamp came: asked again if it holds again while the round goes on
              r.stampAsked = Lazy.remove(r.stampAsked, from);
              r.stampRefused = Lazy.add(r.stampRefused, from);
            } else if (!r.done && r.path.equals(s.path()) && r.stampT == s.t()) {
              r.stampedBy = Lazy.add(r.stampedBy, from);
              if (r.freshRound) {
                r.freshest = Math.max(r.freshest, s.version() << TOKEN_NODE_BITS | members.indexOf(from));
              }
            }
          }
          evaluate(a);
        }
      }
      case AgentMessage.Forward f -> {
        Agent a = agentHere(f.to());
        if (a != null && members.contains(f.server())) {
          if (a.view.offerForwarded(new LockRef(f.path(), f.server()), f.version(), f.queue(), now + a.lease / 3)) {
            highestSeen = Math.max(highestSeen, f.version());
            a.dirty = true;
            evaluate(a);
          }
        }
      }
      case AgentMessage.Surrendered s -> {
        Agent a = agentHere(s.to());
        if (a != null && members.contains(s.server())) {
          a.view.surrenderedByOther(new LockRef(s.path(), s.server()), s.version());
          a.dirty = true;
          evaluate(a);
        }
      }
      case AgentMessage.ListHeld q -> sendTo(from, listing(q.queryId(), q.prefixes()));
      case AgentMessage.Listing l -> {
        Gathering g = listings.get(l.queryId());
        if (g != null && g.waiting.remove(from)) { // from a member asked, once
          g.answers.put(from, l);
          finishIfAnswered(l.queryId(), g);
        }
      }
    }
  }

  // ================================================================ listings

  /**
   * A listing: this node answers for itself at once, and asks every member that is up. Those that are down are not
   * waited for; with too few up it answers at once that it cannot say.
   */
  private void list(Input.ListQuery<AgentMessage> q) {
    Gathering g = new Gathering(new TreeSet<>(up), now + peerTimeout);
    g.answers.put(self, listing(q.queryId(), q.prefixes()));
    listings.put(q.queryId(), g);
    for (String p : g.waiting) {
      sendTo(p, new AgentMessage.ListHeld(tick1(), q.queryId(), q.prefixes()));
    }
    finishIfAnswered(q.queryId(), g);
  }

  /**
   * This member's answer to a listing, as it stands now: its own agents' claims that their clients were told of and
   * may still trust, and the parts its lock table holds for other nodes' agents. A server that is not ready answers
   * too, saying so: its own agents are known exactly (those of its previous life died with it), and its table is empty
   * until it serves.
   */
  private AgentMessage.Listing listing(long queryId, List<String> prefixes) {
    List<Output.Listed> held = new ArrayList<>();
    for (Agent a : agents.values()) {
      for (Req r : a.reqs) {
        if (!r.done && r.told && now < r.validUntil && Input.ListQuery.covers(prefixes, r.claim.name())) {
          held.add(new Output.Listed(r.claim.name(), r.claim.mode(), 1, Output.Listed.holder(self, r.claim.tag()),
              r.token, true, r.validUntil - now));
        }
      }
    }
    List<AgentMessage.Part> parts = new ArrayList<>();
    for (Entry e : table.entries()) {
      int node = e.agent().node();
      if (e.holds() == null || node == selfIndex || node >= members.size()) {
        continue;
      }
      String name = e.path().size() == 1 ? e.path().get(0) : String.join("/", e.path());
      if (!Input.ListQuery.covers(prefixes, name)) {
        continue;
      }
      // The table does not keep the claim's own mode: a write on one name is most often a plain lock (a read-write
      // lock's write and an election on one name come as the same WRITE entry), a write on a path a transaction's.
      Claim.Mode mode = e.holds() == Mode.READ ? Claim.Mode.READ
          : e.path().size() == 1 ? Claim.Mode.EXCLUSIVE : Claim.Mode.WRITE;
      String member = members.get(node);
      Served sv = served.get(e.agent());
      long expires = sv == null ? Moments.NONE : sv.expiry.at();
      parts.add(new AgentMessage.Part(member, new Output.Listed(name, mode, 1,
          Output.Listed.holder(member, sv == null ? "" : sv.tag), 0, false,
          expires == Moments.NONE ? -1 : Math.max(0, expires - now))));
    }
    return new AgentMessage.Listing(tick1(), queryId, ready, held, parts);
  }

  private void finishIfAnswered(long queryId, Gathering g) {
    if (g.waiting.isEmpty()) {
      finish(queryId, g);
    }
  }

  /**
   * The listing's answer from the answers it has. A plain claim holds on a majority of the members, so a majority of
   * ready lock servers has one of its parts at least, whichever node holds it: with fewer, a claim of a node that did
   * not answer may show nowhere, and the listing cannot say. Each member that answered lists its own claims exactly
   * (its parts at the others are dropped: what its agents hold there and it does not list was released, lost, or not
   * yet granted); a claim of a member that did not answer is listed once by name and holder, with no token (its parts'
   * versions are not its token), in its strongest mode and with the longest time left among its parts.
   */
  private void finish(long queryId, Gathering g) {
    listings.remove(queryId);
    long tables = g.answers.values().stream().filter(AgentMessage.Listing::ready).count();
    if (tables < members.size() / 2 + 1 && !mutationListWithoutMajority) {
      out.add(new Output.Listing<>(queryId, false, List.of()));
      return;
    }
    Set<Output.Listed> listed = new LinkedHashSet<>();
    Map<List<String>, Output.Listed> silent = new LinkedHashMap<>(); // by name and holder
    for (AgentMessage.Listing l : g.answers.values()) {
      listed.addAll(l.held());
      for (AgentMessage.Part p : l.parts()) {
        if (!g.answers.containsKey(p.node())) {
          Output.Listed c = p.claim();
          silent.merge(List.of(c.name(), c.holder()), c, (a, b) -> new Output.Listed(a.name(),
              a.mode() == Claim.Mode.READ ? b.mode() : a.mode(), 1, a.holder(), 0, false,
              Math.max(a.remainingNanos(), b.remainingNanos())));
        }
      }
    }
    listed.addAll(silent.values());
    out.add(new Output.Listing<>(queryId, true, List.copyOf(listed)));
  }

  // ================================================================ the lock server

  private void toServer(String from, AgentMessage m) {
    if (!ready) {
      deferred.add(new Local(from, m));
      return;
    }
    switch (m) {
      case AgentMessage.Lock l -> {
        if (fromItsNode(from, l.agent())) {
          touch(from, l.agent(), 0);
          if (!l.tag().isEmpty()) {
            served(l.agent()).tag = l.tag();
          }
          Set<List<String>> changed = table.lock(l.agent(), l.path(), l.mode(), wall());
          notify(changed, null, List.of(new Tell(l.agent(), l.path())));
        }
      }
      case AgentMessage.Surrender s -> {
        if (fromItsNode(from, s.agent())) {
          touch(from, s.agent(), 0);
          Set<List<String>> changed = table.surrender(s.agent(), s.path(), wall());
          notify(changed, s.agent(), List.of(new Tell(s.agent(), s.path())));
        }
      }
      case AgentMessage.End e -> {
        if (fromItsNode(from, e.agent())) {
          unserve(e.agent());
          notify(table.end(e.agent(), wall()), null, List.of());
        }
      }
      case AgentMessage.Renew r -> {
        if (fromItsNode(from, r.agent())) {
          touch(from, r.agent(), r.term());
          sendTo(from, new AgentMessage.Renewed(tick1(), r.agent(), r.echo()));
        }
      }
      case AgentMessage.Stamp s -> {
        if (fromItsNode(from, s.agent())) {
          touch(from, s.agent(), 0);
          Entry e = table.entry(s.agent(), s.path());
          // holds something: a read claim's entry holds while it waits for its upgrade to write
          boolean ok = e != null && e.holds() != null;
          if (ok) {
            table.raise(s.t() >>> TOKEN_NODE_BITS);
            if (s.fresh()) {
              table.raise(table.version() + 1);
            }
            highestSeen = Math.max(highestSeen, table.version());
          }
          sendTo(from, new AgentMessage.Stamped(tick1(), s.agent(), s.path(), s.t(), ok, table.version()));
        }
      }
      default -> throw new IllegalStateException("not a server's message: " + m);
    }
  }

  /**
   * A peer's restatement, first on every new link: its agents' entries here are exactly these (the others ended
   * while the link was down, or died with the peer), and every restated agent is told the queue of its path.
   */
  private void restate(String from, AgentMessage.Restate r) {
    if (from.equals(self)) {
      return;
    }
    askAgain(from);
    table.raise(r.version());
    highestSeen = Math.max(highestSeen, table.version());
    if (!ready) {
      // the entries are applied once ready, after what the restated agents held, in order with the requests
      // deferred so far
      restatedBy.add(from);
      deferred.add(new Local(from, r));
      if (restatedBy.containsAll(peers)) {
        becomeReady();
      }
      return;
    }
    applyRestate(from, r);
  }

  private void applyRestate(String from, AgentMessage.Restate r) {
    int node = members.indexOf(from);
    Set<AgentId> restated = new HashSet<>();
    for (AgentMessage.Claimed c : r.entries()) {
      if (c.agent().node() == node) {
        restated.add(c.agent());
      }
    }
    Set<List<String>> changed = new LinkedHashSet<>();
    for (AgentId a : List.copyOf(table.agents())) {
      if (a.node() == node && !restated.contains(a)) {
        unserve(a);
        changed.addAll(table.end(a, wall()));
      }
    }
    List<Tell> tell = new ArrayList<>();
    for (AgentMessage.Claimed c : r.entries()) {
      if (c.agent().node() == node) {
        touch(from, c.agent(), 0);
        if (!c.tag().isEmpty()) {
          served(c.agent()).tag = c.tag();
        }
        changed.addAll(table.lock(c.agent(), c.path(), c.mode(), wall()));
        tell.add(new Tell(c.agent(), c.path()));
      }
    }
    notify(changed, null, tell);
  }

  /**
   * The server serves: first it takes back what the restated agents held (each peer's latest restatement), before
   * any other agent can be granted it, then it applies the restatements and the requests deferred, in order.
   */
  private void becomeReady() {
    ready = true;
    table.raise(highestSeen);
    Deque<Local> todo = new ArrayDeque<>(deferred);
    deferred.clear();
    Map<String, AgentMessage.Restate> latest = new TreeMap<>();
    for (Local l : todo) {
      if (l.message instanceof AgentMessage.Restate r) {
        latest.put(l.from, r);
      }
    }
    List<LockTable.Held> held = new ArrayList<>();
    latest.forEach((from, r) -> {
      for (AgentMessage.Claimed c : r.entries()) {
        if (c.held() != null && fromItsNode(from, c.agent())) {
          touch(from, c.agent(), 0);
          held.add(new LockTable.Held(c.agent(), c.path(), c.mode(), c.held()));
        }
      }
    });
    // all at once: an upgrade one of them waited for must still wait for the other holders taken back with it
    notify(table.reinstate(held, wall()), null, List.of());
    for (Local l : todo) {
      if (l.message instanceof AgentMessage.Restate r) {
        applyRestate(l.from, r);
      } else {
        toServer(l.from, l.message);
      }
    }
  }

  private record Tell(AgentId agent, List<String> path) {}

  /**
   * Tells the agents what changed: each asked-for path related to {@code changed}, to each agent with an entry
   * related to it; and each of {@code tell} the queue of its path if that was not among them (the answer to a
   * request that changed nothing, the acknowledgement of a surrender by an agent with no entry left there).
   */
  private void notify(Set<List<String>> changed, AgentId surrenderOf, List<Tell> tell) {
    highestSeen = Math.max(highestSeen, table.version());
    Set<Tell> told = new HashSet<>();
    if (!changed.isEmpty()) {
      for (LockTable.Info i : table.notifications(changed, surrenderOf)) {
        toAgent(i.to(), new AgentMessage.Info(tick1(), i.to(), i.path(), i.version(), i.queue(), i.surrenderOf()));
        told.add(new Tell(i.to(), i.path()));
      }
    }
    for (Tell t : tell) {
      if (told.add(t)) {
        toAgent(t.agent(), new AgentMessage.Info(tick1(), t.agent(), t.path(), table.version(), table.queue(t.path()),
            surrenderOf));
      }
    }
  }

  /** Whether {@code agent} is one of {@code from}'s: a peer speaks for its own agents only. */
  private boolean fromItsNode(String from, AgentId agent) {
    return agent.node() < members.size() && members.get(agent.node()).equals(from);
  }

  /** {@code agent} (of {@code from}) was heard from: its entries here live another term. */
  private void touch(String from, AgentId agent, long newTerm) {
    if (from.equals(self)) {
      return; // a local agent's entries live as long as it does
    }
    Served sv = served(agent);
    if (newTerm > 0) {
      sv.term = newTerm;
    }
    expiries.set(sv.expiry, now + (sv.term > 0 ? sv.term : term));
  }

  /** What this server keeps of {@code agent}: made at its first word. */
  private Served served(AgentId agent) {
    Served sv = served.get(agent);
    if (sv == null) {
      sv = new Served(agent);
      served.put(agent, sv);
    }
    return sv;
  }

  /** {@code agent}'s entries here go: so does what this server kept of it. */
  private void unserve(AgentId agent) {
    Served sv = served.remove(agent);
    if (sv != null) {
      expiries.set(sv.expiry, Moments.NONE);
    }
  }

  private long wall() {
    return wallMicros + (now - startNow) / 1000;
  }

  // ================================================================ the agents

  private void begin(Input.Begin<AgentMessage> b) {
    if (txs.containsKey(b.txId())) {
      throw new IllegalStateException("transaction id " + b.txId() + " is already in use");
    }
    List<String> unknown = b.options().nodes().stream().filter(n -> !members.contains(n)).toList();
    if (!unknown.isEmpty()) {
      out.add(new Output.TxAborted<>(b.txId(), Output.Failure.UNAVAILABLE, new TreeSet<>(unknown),
          "not a member of the cluster: " + unknown + " (members: " + members + ")"));
      return;
    }
    if (b.options().leaseNanos() > term) {
      // a lock server that restarts waits out this node's term for the peers that do not restate: a longer lease
      // could still be trusted when it serves again
      out.add(new Output.TxAborted<>(b.txId(), Output.Failure.UNAVAILABLE, Set.of(), "a transaction's lease term ("
          + b.options().leaseNanos() / 1_000_000 + " ms) may not be longer than the service's leaseTime ("
          + term / 1_000_000 + " ms)"));
      return;
    }
    Agent a = newAgent(b.txId(), b.session(), b.options());
    txs.put(b.txId(), a);
  }

  private Agent newAgent(long txId, String session, TxOptions options) {
    clock++;
    Agent a = new Agent(new AgentId(clock, selfIndex, ++txSeq), txId, session, options);
    agents.put(a.id, a);
    agenda.add(a);
    wake(a);
    renewAt(a);
    return a;
  }

  private void acquire(Input.Acquire<AgentMessage> in) {
    if (requests.containsKey(in.requestId())) {
      throw new IllegalStateException("request id " + in.requestId() + " is already in use");
    }
    Claim claim = in.claim();
    if (claim.mode() == Claim.Mode.PERMITS || claim.writer() != Claim.Writer.HARD) {
      out.add(new Output.Failed<>(in.requestId(), claim.name(), Output.Failure.UNAVAILABLE, Set.of(),
          algorithm() + " serves exclusive, read and write locks (hard writers), not " + claim));
      return;
    }
    Agent a;
    if (in.txId() == 0) {
      a = newAgent(0, in.session(), TxOptions.plainLock());
    } else {
      a = txs.get(in.txId());
      if (a == null) {
        out.add(new Output.Failed<>(in.requestId(), claim.name(), Output.Failure.CANCELLED, Set.of(),
            "transaction " + in.txId() + " has ended"));
        return;
      }
    }
    Mode mode = claim.mode() == Claim.Mode.READ ? Mode.READ : Mode.WRITE;
    Req r = new Req(in.requestId(), a, claim, mode, in.attempt() && a.plain());
    a.reqs.add(r);
    requests.put(r.id, r);
    if (!claim.tag().isEmpty()) {
      a.tag = claim.tag();
    }
    Mode before = a.asked.get(r.path);
    if (before == null || !before.covers(mode)) {
      a.asked.put(r.path, mode);
      for (String s : a.nodes) {
        sendTo(s, new AgentMessage.Lock(tick1(), a.id, r.path, mode, claim.tag()));
      }
    } else {
      if (r.attempt) {
        for (String s : a.nodes) {
          r.answered = Lazy.add(r.answered, s); // asked already: what is known of it is the answer
        }
      }
    }
    evaluate(a);
  }

  private void cancel(long requestId) {
    Req r = requests.get(requestId);
    if (r == null || r.done) {
      return;
    }
    if (!r.told) {
      out.add(new Output.Failed<>(r.id, r.claim.name(), Output.Failure.CANCELLED, missing(r.agent)));
    }
    if (r.agent.plain()) {
      endAgent(r.agent);
    } else {
      r.done = true; // its entries stay until the transaction ends: a transaction has no unlock
      requests.remove(r.id);
      wake(r.agent);
    }
  }

  private void renew(long requestId) {
    Req r = requests.get(requestId);
    if (r != null && !r.done && !r.told && r.surrendered) {
      out.add(new Output.Lost<>(requestId, r.claim.name(), Output.LostReason.DEADLOCK, SURRENDERED));
      return;
    }
    if (r == null || r.done || !r.told) {
      out.add(new Output.Lost<>(requestId, r == null ? "" : r.claim.name(), Output.LostReason.REVOKED, "not held"));
      return;
    }
    evaluate(r.agent);
    if (!r.told) {
      return;
    }
    if (!r.agent.remote() || trustedSince(r) > r.sentAt) {
      answerRenewal(r); // a quorum answered a renewal sent since the last answer: trusted from then
    } else if (r.renewAsked == NONE) {
      // nothing newer to give: renew at the servers now, and answer once a quorum has (a cut-off client never is
      // answered, and its renewal fails at the lease's deadline rather than pretending)
      r.renewAsked = now;
      renewAt(r.agent);
    }
  }

  private void answerRenewal(Req r) {
    long sentAt = Math.max(r.sentAt, trustedSince(r));
    r.renewAsked = NONE;
    r.sentAt = sentAt;
    r.validUntil = sentAt + r.agent.trust;
    out.add(new Output.Renewed<>(r.id, sentAt, r.validUntil));
  }

  private void info(String from, AgentMessage.Info i) {
    Agent a = agentHere(i.to());
    if (a == null || !a.nodes.contains(from)) {
      return;
    }
    highestSeen = Math.max(highestSeen, i.version());
    for (Req r : a.reqs) {
      if (r.attempt && r.path.equals(i.path())) {
        r.answered = Lazy.add(r.answered, from);
      }
    }
    if (a.view.offer(new LockRef(i.path(), from), i.version(), i.queue(), i.surrenderOf())) {
      a.dirty = true;
    }
    evaluate(a);
  }

  /**
   * Who holds the plain claim on {@code name}, by the tag its request gave: the agent that holds it on a majority of
   * the members, by the newest queue of each server that this node knows (its own table, and the queues its agents
   * were told: a candidate that does not lead waits on every member, so its agent hears every server). Empty when
   * no agent holds a majority as far as this node knows, or when the holder gave no tag.
   */
  private String holderTag(String name) {
    List<String> path = List.of(name);
    Map<String, List<Entry>> queues = new HashMap<>();
    Map<String, Long> versions = new HashMap<>();
    for (Agent a : agents.values()) {
      for (String s : members) {
        LockRef ref = new LockRef(path, s);
        List<Entry> q = a.view.known().get(ref);
        long v = a.view.version(ref);
        if (q != null && v > versions.getOrDefault(s, -1L)) {
          queues.put(s, q);
          versions.put(s, v);
        }
      }
    }
    queues.put(self, table.entries().stream().filter(e -> e.path().equals(path)).toList());
    Map<AgentId, Integer> holds = new HashMap<>();
    for (List<Entry> q : queues.values()) {
      for (Entry e : q) {
        if (e.path().equals(path) && e.holds() != null) {
          holds.merge(e.agent(), 1, Integer::sum);
        }
      }
    }
    for (Map.Entry<AgentId, Integer> h : holds.entrySet()) {
      if (h.getValue() >= members.size() / 2 + 1) {
        Served sv = served.get(h.getKey());
        return sv == null ? "" : sv.tag;
      }
    }
    return "";
  }

  /** The agent {@code id} if it lives on this node. */
  private Agent agentHere(AgentId id) {
    return id.node() == selfIndex ? agents.get(id) : null;
  }

  /**
   * Reports what changed for {@code a}'s claims (granted, lost, failed attempts) and, unless all are held, looks
   * for a deadlock among the queues it knows.
   */
  private void evaluate(Agent a) {
    if (agents.containsKey(a.id)) {
      wake(a);
    }
    for (Req r : List.copyOf(a.reqs)) {
      if (r.done || !agents.containsKey(a.id)) {
        continue;
      }
      List<String> held = heldOn(r, true);
      boolean met = AgentView.met(a.quorum, held.size(), a.nodes.size());
      if (r.told) {
        if (!met) {
          lose(r, lossReason(r));
        } else if (now >= r.validUntil) {
          lose(r, Output.LostReason.EXPIRED); // the client did not renew
        } else if (r.renewAsked != NONE && trustedSince(r) >= r.renewAsked) {
          answerRenewal(r);
        }
        continue;
      }
      if (deferring(a, r)) {
        continue; // its surrender is chosen and waits for the thin client's window: not told again meanwhile
      }
      if (!met || a.lostForGood) {
        r.stampT = -1;
        r.freshSentAt = Long.MAX_VALUE;
        r.stampedBy = Set.of();
        if (r.attempt && answeredAllReachable(r)) {
          out.add(new Output.Failed<>(r.id, r.claim.name(), Output.Failure.CONTENDED, Set.of()));
          endAgent(a);
          return;
        }
        continue;
      }
      long t = 0;
      for (String s : held) {
        t = Math.max(t, a.view.grantedAt(new LockRef(r.path, s)) << TOKEN_NODE_BITS | members.indexOf(s));
      }
      long floor = a.surrenderedTokens.getOrDefault(r.path, -1L) + 1;
      boolean raised = t < floor; // its stamp round raises the servers to the floor, which orders later claims above
      t = Math.max(t, floor);
      long parts = t;
      long sentAt = trustedSince(r);
      boolean fresh = r.mode == Mode.READ && a.remote();
      if (fresh || raised || a.quorum != Quorum.ANY && a.nodes.size() > 1) {
        // The servers that hold it when it first does are a quorum, and t is at least each one's token; a server
        // that comes to hold it later changes nothing. A write claim's parts were each granted after every
        // conflicting claim left that server, so their tokens order it; a quorum then raises every later token
        // above t. That holds for ALL as for MAJORITY: t is the largest part, from one server, and a later claim
        // of a majority that leaves that server out took its parts after this one's left the others, at versions
        // that may still be below t (seed 199628 of the 1,000,000-seed run: a MAJORITY write granted below the
        // token of an ALL write before it). A read claim's parts may be older than grants of other readers made
        // and ended since: its first round asks its servers for a fresh version, and the token is the largest of
        // them, which its second round raises a quorum to (for several nodes).
        if (r.stampT < 0) {
          startRound(r, t, fresh, held);
        } else {
          // a server asked is cut off before it answered: the servers that came to hold the claim since join in;
          // one that refused (it held no more) is asked again once it holds again
          boolean cutOff = r.stampAsked.stream()
              .anyMatch(s -> !r.stampedBy.contains(s) && !s.equals(self) && !up.contains(s));
          for (String s : held) {
            if ((cutOff || r.stampRefused.contains(s)) && !r.stampAsked.contains(s)) {
              r.stampAsked = Lazy.add(r.stampAsked, s);
              r.stampRefused = Lazy.remove(r.stampRefused, s);
              sendTo(s, new AgentMessage.Stamp(tick1(), a.id, r.path, r.stampT, r.freshRound));
            }
          }
        }
        int quorum = a.quorum == Quorum.ANY ? 1 : a.quorum == Quorum.ALL ? a.nodes.size() : a.nodes.size() / 2 + 1;
        if (r.stampedBy.size() < quorum) {
          continue;
        }
        if (r.freshRound) {
          long freshest = Math.max(r.stampT, r.freshest);
          sentAt = Math.min(sentAt, r.freshSentAt);
          if (a.nodes.size() > 1 && a.quorum != Quorum.ANY) {
            startRound(r, freshest, false, held);
            r.freshSentAt = sentAt;
            continue;
          }
          t = freshest;
        } else {
          t = r.stampT;
          sentAt = Math.min(sentAt, r.freshSentAt);
        }
        if (sentAt + a.trust <= now) {
          startRound(r, parts, fresh, held); // the rounds took longer than the trust they count from: again
          continue;
        }
      }
      r.told = true;
      r.surrendered = false;
      r.stampedBy = Set.of(); // its round is over: a loss to a deadlock starts the next one afresh
      r.stampAsked = Set.of();
      r.stampRefused = Set.of();
      r.token = t;
      r.sentAt = sentAt;
      r.validUntil = r.sentAt + a.trust;
      out.add(new Output.Granted<>(r.id, r.claim.name(), t, 1, r.sentAt, r.validUntil));
    }
    if (a.plain() && agents.containsKey(a.id) && yieldToOlder(a)) {
      return;
    }
    if (agents.containsKey(a.id) && needsAnalysis(a)) {
      toAnalyse.add(a); // once the step's local messages are handled: several queues may come in one step
    }
  }

  /** A stamp round for {@code r} with token {@code t} to {@code servers}; {@code fresh}: the first of a read claim's. */
  private void startRound(Req r, long t, boolean fresh, List<String> servers) {
    r.stampT = t;
    r.freshRound = fresh;
    r.freshest = 0;
    r.stampedBy = Set.of();
    r.stampRefused = Set.of();
    r.stampAsked = Set.of();
    for (String s : servers) {
      r.stampAsked = Lazy.add(r.stampAsked, s);
    }
    if (fresh) {
      r.freshSentAt = now;
    } else if (r.mode != Mode.READ) {
      r.freshSentAt = Long.MAX_VALUE;
    }
    for (String s : servers) {
      sendTo(s, new AgentMessage.Stamp(tick1(), r.agent.id, r.path, t, fresh));
    }
  }

  /** The servers of {@code r}'s claim whose part holds by the latest queue and, with {@code trusted}, is trusted. */
  private List<String> heldOn(Req r, boolean trusted) {
    List<String> held = new ArrayList<>();
    for (String s : r.agent.nodes) {
      if (r.agent.view.holds(new LockRef(r.path, s), r.mode) && (!trusted || trusted(r.agent, s))) {
        held.add(s);
      }
    }
    return held;
  }

  /** Whether {@code a} may trust what server {@code s} holds for it now: always its own node's. */
  private boolean trusted(Agent a, String s) {
    if (s.equals(self)) {
      return true;
    }
    Long w = a.windows.get(s);
    return w != null && now < w + a.trust;
  }

  /** Since when the claim's quorum of trusted parts is trusted: the quorum-th latest renewal among them. */
  private long trustedSince(Req r) {
    List<Long> starts = new ArrayList<>();
    for (String s : heldOn(r, true)) {
      starts.add(s.equals(self) ? now : r.agent.windows.get(s));
    }
    starts.sort(Collections.reverseOrder());
    int n = r.agent.nodes.size();
    int k = switch (r.agent.quorum) {
      case ALL -> n;
      case MAJORITY -> n / 2 + 1;
      case ANY -> 1;
    };
    // fewer trusted parts than the quorum: trusted no more (the caller finds it lost)
    return starts.size() < k ? now - r.agent.trust : starts.get(k - 1);
  }

  private Output.LostReason lossReason(Req r) {
    LockRef s = r.agent.surrendering;
    if (s != null && r.agent.nodes.contains(s.server()) && LockTable.related(r.path, s.path())) {
      return Output.LostReason.DEADLOCK;
    }
    // still held by the queues but no longer trusted: the lease ran out
    return AgentView.met(r.agent.quorum, heldOn(r, false).size(), r.agent.nodes.size())
        ? Output.LostReason.EXPIRED : Output.LostReason.REVOKED;
  }

  /**
   * A told claim is no longer held. Surrendered to break a deadlock, it is asked for again, and the servers grant it
   * again with a new version, hence a larger token. Lost otherwise (its lease ran out, by the client's or the
   * servers' windows), it is lost for good: its entries may still hold, and a second grant would carry the same
   * token; the transaction keeps them until it ends. A plain lock's loss ends it.
   */
  private void lose(Req r, Output.LostReason reason) {
    boolean again = reason == Output.LostReason.DEADLOCK;
    out.add(new Output.Lost<>(r.id, r.claim.name(), reason, again ? SURRENDERED : ""));
    r.told = false;
    r.surrendered = again;
    r.renewAsked = NONE;
    if (again) {
      r.agent.surrenderedTokens = Lazy.put(r.agent.surrenderedTokens, r.path,
          Math.max(r.agent.surrenderedTokens.getOrDefault(r.path, Long.MIN_VALUE), r.token));
    }
    r.stampT = -1;
    r.stampedBy = Set.of();
    if (r.agent.plain() && reason == Output.LostReason.EXPIRED) {
      lapse(r.agent);
    } else if (r.agent.plain()) {
      endAgentAfter(r.agent, r.agent.remoteHolder && !mutationSurrenderRemoteAtOnce ? r.validUntil : now);
    } else if (!again) {
      r.done = true;
      r.agent.lostForGood = true;
    }
  }

  private boolean answeredAllReachable(Req r) {
    for (String s : r.agent.nodes) {
      if ((s.equals(self) || up.contains(s)) && !r.answered.contains(s)) {
        return false;
      }
    }
    return true;
  }

  private void analyse(Agent a) {
    WaitFor.Result res = a.view.analyse();
    if (res.victim().isPresent()) {
      Node victim = mutationSmallestSurrenders ? res.cycle().get(0) : res.victim().get();
      // A plain claim on a cycle of claims on its own name only (several claims racing, each server granting
      // another) gives way by the yield rule, to the older claims, not as the cycle's youngest: surrendering as the
      // youngest, over and over as new claims arrive, it keeps the servers granting different claims.
      boolean splitOnly = a.plain() && res.cycle().stream().allMatch(n -> n.lock().path().equals(a.reqs.get(0).path));
      if (victim.agent().equals(a.id) && !splitOnly && a.deferred == null) {
        resolve(a, victim, res.cycle());
        return;
      }
    }
    for (WaitFor.Forward f : res.forwards()) {
      long version = a.view.version(f.lock());
      Forwarded key = new Forwarded(f.to(), f.lock(), version);
      if (a.forwarded.size() > MAX_FORWARDS_REMEMBERED) {
        a.forwarded = Set.of();
      }
      if (!a.forwarded.contains(key)) {
        a.forwarded = Lazy.add(a.forwarded, key);
        toAgent(f.to(), new AgentMessage.Forward(tick1(), f.to(), f.lock().path(), f.lock().server(), version,
            a.view.known().get(f.lock())));
      }
    }
  }

  /**
   * Whether a plain claim's agent knows of an entry on a path other than its own (a transaction's, on a related
   * path): only then can it be on a cycle the yield rule does not break, and only then does it analyse. Among plain
   * claims on one name the yield rule alone decides, and an analysis would only send queues about.
   */
  private static boolean seesOtherPaths(Agent a) {
    List<String> path = a.reqs.get(0).path;
    for (List<Entry> q : a.view.known().values()) {
      for (Entry e : q) {
        if (!e.path().equals(path)) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * A plain claim that holds some of its servers but not its quorum gives way, at a server where it holds, to an
   * older agent (a smaller id) waiting there on the name or a path below it in a conflicting mode (an upgrade of a read
   * to a write waits too): it surrenders there, and is
   * queued again at the back. Claims racing for one name reach the servers in different orders, and each server may
   * grant a different one, none a quorum: without this rule they wait for each other until a deadlock analysis picks
   * a victim, one surrender at a time, while new claims keep arriving. With it, every server ends up with the oldest
   * claim, which a younger one never holds back. A claim that has its quorum (granted, or in its stamp round) keeps
   * what it holds.
   *
   * @return whether it surrendered
   */
  private boolean yieldToOlder(Agent a) {
    Req r = a.reqs.isEmpty() ? null : a.reqs.get(0);
    if (r == null || r.done || r.told || AgentView.met(a.quorum, heldOn(r, false).size(), a.nodes.size())) {
      return false;
    }
    for (String s : a.nodes) {
      LockRef ref = new LockRef(r.path, s);
      List<Entry> q = a.view.known().get(ref);
      if (q == null || a.view.awaitingAck(ref)) {
        continue;
      }
      Entry mine = q.stream().filter(e -> e.agent().equals(a.id) && e.path().equals(r.path)).findFirst().orElse(null);
      if (mine == null || mine.holds() == null) {
        continue;
      }
      // waiting: for what it asks, or for the write its read is to be upgraded to
      boolean olderWaits = q.stream().anyMatch(e -> !e.held() && LockTable.related(e.path(), r.path)
          && e.agent().compareTo(a.id) < 0 && Mode.conflict(e.wants(), mine.holds()));
      if (olderWaits) {
        long version = a.view.version(ref);
        surrenders++;
        sendTo(s, new AgentMessage.Surrender(tick1(), a.id, r.path, version));
        out.add(new Output.Fact<>(new Observation.Surrender(s, r.path, a.id.toString(), false, version)));
        a.view.surrendering(ref, a.asked.keySet());
        a.dirty = true;
        return true;
      }
    }
    return false;
  }

  /** {@code a} is the victim of a deadlock at {@code victim}: it surrenders that lock, or aborts. */
  private void resolve(Agent a, Node victim, List<Node> cycle) {
    LockRef lock = victim.lock();
    boolean told = a.reqs.stream().anyMatch(r -> !r.done && r.told && a.nodes.contains(lock.server())
        && LockTable.related(r.path, lock.path()));
    if (a.abortOnDeadlock && (told || mutationAbortUntold)) {
      abort(a, Output.Failure.DEADLOCK, Set.of(), "chosen to break a deadlock on " + String.join("/", lock.path())
          + " at " + lock.server());
      return;
    }
    if (a.remoteHolder && told && !mutationSurrenderRemoteAtOnce) {
      // CLIENTS.md D10: the thin client trusts its told claims until their windows close, and hears of their loss
      // over the network: they are lost now, and the servers take them only when those windows have closed
      long until = now;
      for (Req r : List.copyOf(a.reqs)) {
        if (!r.done && r.told && LockTable.related(r.path, lock.path())) {
          until = Math.max(until, r.validUntil);
          lose(r, Output.LostReason.DEADLOCK);
        }
      }
      if (!agents.containsKey(a.id)) {
        return; // a plain lock's loss ended it, its servers told once its window closed
      }
      a.deferred = lock;
      a.deferredCycle = List.copyOf(cycle);
      a.deferredUntil = until;
      a.dirty = true;
      return;
    }
    surrender(a, lock, cycle, told);
  }

  /** {@code a} surrenders {@code lock}, a deadlock's victim, and tells the other agents of {@code cycle}. */
  private void surrender(Agent a, LockRef lock, List<Node> cycle, boolean told) {
    List<Entry> queue = a.view.known().getOrDefault(lock, List.of());
    long version = a.view.version(lock);
    surrenders++;
    sendTo(lock.server(), new AgentMessage.Surrender(tick1(), a.id, lock.path(), version));
    out.add(new Output.Fact<>(new Observation.Surrender(lock.server(), lock.path(), a.id.toString(),
        told, version)));
    a.view.surrendering(lock, a.asked.keySet());
    a.dirty = true;
    Set<AgentId> inQueue = new HashSet<>();
    for (Entry e : queue) {
      inQueue.add(e.agent());
    }
    Set<AgentId> toldOthers = new HashSet<>();
    for (Node n : cycle) {
      if (!n.agent().equals(a.id) && !inQueue.contains(n.agent()) && toldOthers.add(n.agent())) {
        toAgent(n.agent(), new AgentMessage.Surrendered(tick1(), n.agent(), a.id, lock.path(), lock.server(),
            version));
      }
    }
    a.surrendering = lock;
    try {
      evaluate(a);
    } finally {
      a.surrendering = null;
    }
  }

  /** Whether {@code r} is a claim a deferred surrender of its agent takes. */
  private static boolean deferring(Agent a, Req r) {
    return a.deferred != null && a.nodes.contains(a.deferred.server()) && LockTable.related(r.path, a.deferred.path());
  }

  /** {@code a} ends by its own choice: its pending claims fail, its held ones are lost, the servers let go. */
  private void abort(Agent a, Output.Failure failure, Set<String> missing, String detail) {
    Output.LostReason lost = failure == Output.Failure.DEADLOCK ? Output.LostReason.DEADLOCK
        : Output.LostReason.CONNECTION_LOST;
    long until = now;
    for (Req r : a.reqs) {
      if (!r.done && r.told) {
        until = Math.max(until, r.validUntil);
      }
    }
    // every loss before any failure: a holder told its waiting claim failed ends the transaction, and a loss told
    // after that (a thin client hears each in a message of its own) finds nobody to tell
    for (Req r : a.reqs) {
      if (!r.done && r.told) {
        out.add(new Output.Lost<>(r.id, r.claim.name(), lost, detail));
      }
    }
    for (Req r : a.reqs) {
      if (!r.done && !r.told) {
        out.add(new Output.Failed<>(r.id, r.claim.name(), failure, missing, detail));
      }
    }
    if (!a.plain()) {
      out.add(new Output.TxAborted<>(a.txId, failure, missing, detail));
    }
    endAgentAfter(a, a.remoteHolder && !mutationSurrenderRemoteAtOnce ? until : now);
  }

  /**
   * Ends {@code a} here at once and at its servers at {@code at}: a thin client's told claims are taken from it only
   * once their windows closed (CLIENTS.md D10). Until then its servers keep its entries, and a restatement lists them.
   */
  private void endAgentAfter(Agent a, long at) {
    if (at <= now || a.asked.isEmpty()) {
      endAgent(a);
    } else if (forget(a)) {
      lapsing.put(a.id, new Lapse(a, at));
    }
  }

  /**
   * Ends plain agent {@code a}, whose client did not renew, here at once and at its servers after the rest of the
   * term ({@code lease - trust} after the loss): its lost listeners run on a thread of their own, and an End sent
   * with the loss let a client of another node be granted the lock within milliseconds, before they had run. Its
   * servers keep its entries until then (they expire them only a full term after its last renewal, later still),
   * and a restatement in the meantime still lists them.
   */
  private void lapse(Agent a) {
    if (forget(a) && !a.asked.isEmpty()) {
      lapsing.put(a.id, new Lapse(a, now + Math.max(1, a.lease - a.trust)));
    }
  }

  /** {@code a} is gone: every server of it lets its entries go; no output. */
  private void endAgent(Agent a) {
    if (!forget(a)) {
      return;
    }
    if (!a.asked.isEmpty()) {
      for (String s : a.nodes) {
        sendTo(s, new AgentMessage.End(tick1(), a.id));
      }
    }
  }

  /** Takes {@code a} and its requests out of this node's tables; false if it was gone already. */
  private boolean forget(Agent a) {
    if (agents.remove(a.id) == null) {
      return false;
    }
    agenda.remove(a);
    if (!a.plain()) {
      txs.remove(a.txId);
    }
    for (Req r : a.reqs) {
      r.done = true;
      requests.remove(r.id);
    }
    return true;
  }

  private Set<String> missing(Agent a) {
    Set<String> m = new TreeSet<>();
    for (String s : a.nodes) {
      if (!s.equals(self) && !up.contains(s)) {
        m.add(s);
      }
    }
    return m;
  }

  // ================================================================ links, time

  /**
   * {@code server} says (by its restatement) that what it sent before may be lost, even when this node saw its link
   * stay up: this node's agents ask it again for what they wait to hear from it (a stamp's answer, a renewal's, a
   * surrender's acknowledgement).
   */
  private void askAgain(String server) {
    for (Agent a : agents.values()) {
      if (!a.nodes.contains(server)) {
        continue;
      }
      sendTo(server, new AgentMessage.Renew(tick1(), a.id, a.lease, now));
      for (LockRef l : a.view.resendSurrenders(server)) {
        sendTo(server, new AgentMessage.Surrender(tick1(), a.id, l.path(), a.view.version(l)));
      }
      for (Req r : a.reqs) {
        if (!r.done && !r.told && r.stampT >= 0 && !r.stampedBy.contains(server)
            && a.view.holds(new LockRef(r.path, server), r.mode)) {
          sendTo(server, new AgentMessage.Stamp(tick1(), a.id, r.path, r.stampT, r.freshRound));
        }
      }
    }
  }

  private void peerUp(String p) {
    if (!peers.contains(p)) {
      return;
    }
    up.add(p);
    downSince.remove(p);
    // first on the new link: what this node's agents asked of p, and the versions seen here
    List<AgentMessage.Claimed> entries = new ArrayList<>();
    for (Agent a : agents.values()) {
      wake(a); // its moment may have been p's time to come back
      if (a.nodes.contains(p)) {
        // what it holds there and still trusts: a server that restarted gives it back before anything else
        boolean trusted = trusted(a, p);
        a.asked.forEach((path, mode) -> entries.add(new AgentMessage.Claimed(a.id, path, mode,
            trusted ? a.view.heldMode(new LockRef(path, p)) : null, a.tag)));
      }
    }
    for (Lapse l : lapsing.values()) {
      if (l.agent().nodes.contains(p)) {
        l.agent().asked.forEach((path, mode) -> entries.add(new AgentMessage.Claimed(l.agent().id, path, mode,
            l.agent().tag)));
      }
    }
    sendTo(p, new AgentMessage.Restate(tick1(), highestSeen, entries));
    askAgain(p);
    // and the server's side: the queues of p's agents here, which may have been lost on the old link
    if (ready) {
      int node = members.indexOf(p);
      List<Tell> tell = new ArrayList<>();
      for (Entry e : table.entries()) {
        if (e.agent().node() == node) {
          tell.add(new Tell(e.agent(), e.path()));
        }
      }
      notify(Set.of(), null, tell);
    }
  }

  private void peerDown(String p) {
    if (!peers.contains(p)) {
      return;
    }
    up.remove(p);
    downSince.put(p, now);
    for (Agent a : agents.values()) {
      a.view.linkLost(p);
      a.dirty = true;
      wake(a);
    }
    // a listing's question or answer went with the link: it waits no more for p
    for (Map.Entry<Long, Gathering> l : List.copyOf(listings.entrySet())) {
      if (l.getValue().waiting.remove(p)) {
        finishIfAnswered(l.getKey(), l.getValue());
      }
    }
  }

  private void renewAt(Agent a) {
    for (String s : a.nodes) {
      if (!s.equals(self)) {
        sendTo(s, new AgentMessage.Renew(tick1(), a.id, a.lease, now));
      }
    }
    a.nextRenewAt = now + Math.max(1, a.lease / 3);
  }

  /** The timer: leases here, renewals, trust running out, nodes down too long, the start's wait, listings' waits. */
  private void tick() {
    if (!ready && now >= startNow + readyWait()) {
      becomeReady();
    }
    for (Map.Entry<Long, Gathering> l : List.copyOf(listings.entrySet())) {
      if (now >= l.getValue().deadline) {
        finish(l.getKey(), l.getValue()); // the members still waited for are taken as silent
      }
    }
    for (AgentId a : expiries.due(now, new ArrayList<>())) { // in the order of their moments, then of their ids
      unserve(a);
      notify(table.end(a, wall()), null, List.of());
    }
    for (Lapse l : List.copyOf(lapsing.values())) {
      if (now >= l.endAt()) {
        lapsing.remove(l.agent().id);
        for (String s : l.agent().nodes) {
          sendTo(s, new AgentMessage.End(tick1(), l.agent().id));
        }
      }
    }
    agenda.visit(now, this::visit);
  }

  /**
   * The timer's look at agent {@code a}: its deferred surrender, its renewal, its nodes down too long, what changed for
   * its claims; then, unless it waits for a claim, it rests until its next moment.
   */
  private void visit(Agent a) {
    if (a.deferred != null && now >= a.deferredUntil) {
      LockRef lock = a.deferred;
      List<Node> cycle = a.deferredCycle;
      a.deferred = null;
      a.deferredCycle = null;
      a.dirty = true;
      if (!a.view.awaitingAck(lock)) {
        surrender(a, lock, cycle, true);
        if (!agents.containsKey(a.id)) {
          return;
        }
      }
    }
    if (now >= a.nextRenewAt) {
      renewAt(a);
      // while it waits: forwarded queues past their time are forgotten, and it analyses and forwards again, so
      // that what it knows, and what the larger agents know of it, never stays stale
      a.view.expire(now);
      if (a.reqs.stream().anyMatch(r -> !r.done && !r.told)) {
        a.forwarded = Set.of();
        a.dirty = true;
      }
    }
    if (a.reqs.stream().anyMatch(r -> !r.done)) {
      Set<String> down = new TreeSet<>();
      for (String s : a.nodes) {
        Long since = downSince.get(s);
        if (since != null && now >= since + peerTimeout) {
          down.add(s);
        }
      }
      if (!AgentView.met(a.quorum, a.nodes.size() - down.size(), a.nodes.size())) {
        abort(a, Output.Failure.UNAVAILABLE, down, down.size() + " of " + a.nodes.size()
            + " nodes unreachable for " + peerTimeout / 1_000_000 + " ms, quorum " + a.quorum);
        return;
      }
    }
    evaluate(a);
  }

  /** {@code a} may have something to do at the next visit: watched until the step is done. */
  private void wake(Agent a) {
    agenda.watch(a);
    if (!a.woken) {
      a.woken = true;
      woken.add(a);
    }
  }

  /**
   * The agents watched in this step that wait for nothing rest until their next moment: nothing changes for them
   * before it unless a message or an input concerns them, which watches them again. (A local agent that holds renews
   * at its servers only when it is visited: it has none to tell.)
   */
  private void restIdle() {
    for (Agent a : woken) {
      a.woken = false;
      if (agents.containsKey(a.id) && a.deferred == null && a.reqs.stream().allMatch(r -> r.done || r.told)) {
        agenda.rest(a, wakeUp(a));
      }
    }
    woken.clear();
  }

  /**
   * The next moment agent {@code a} has something to do by itself: a renewal (for a remote agent, or one that waits),
   * a deferred surrender, the end of a told claim's window or trust, a node's time to come back; {@link #NONE} for
   * none.
   */
  private long wakeUp(Agent a) {
    long next = NONE;
    if (a.remote() || a.reqs.stream().anyMatch(r -> !r.done && !r.told)) {
      next = Math.min(next, a.nextRenewAt);
    }
    if (a.deferred != null) {
      next = Math.min(next, a.deferredUntil);
    }
    boolean live = false;
    for (Req r : a.reqs) {
      if (!r.done) {
        live = true;
        if (r.told) {
          next = Math.min(next, Math.min(r.validUntil, trustedUntil(r)));
        }
      }
    }
    if (live) {
      for (String s : a.nodes) {
        Long since = downSince.get(s);
        if (since != null && since + peerTimeout > now) { // once past, nothing more happens at that time
          next = Math.min(next, since + peerTimeout);
        }
      }
    }
    return next;
  }

  private void settle() {
    drain();
    restIdle();
    long next = NONE;
    if (!ready) {
      next = startNow + readyWait();
    }
    next = Math.min(next, expiries.first());
    for (Lapse l : lapsing.values()) {
      next = Math.min(next, l.endAt());
    }
    for (Gathering g : listings.values()) {
      next = Math.min(next, g.deadline);
    }
    next = Math.min(next, agenda.earliest(this::wakeUp, NONE));
    next = Math.max(next, now + 1);
    if (next == NONE || next >= NONE - 1) {
      if (timerAt != NONE) {
        out.add(new Output.CancelTimer<>(TIMER));
        timerAt = NONE;
      }
    } else if (next != timerAt) {
      out.add(new Output.SetTimer<>(TIMER, next));
      timerAt = next;
    }
  }

  /** When the trust in a held claim runs out unless renewed: the earliest end among its quorum of parts. */
  private long trustedUntil(Req r) {
    return trustedSince(r) + r.agent.trust;
  }

  // ================================================================ sending

  /** The clock for a message sent now. */
  private long tick1() {
    return ++clock;
  }

  private void sendTo(String node, AgentMessage m) {
    if (node.equals(self)) {
      local.add(new Local(self, m));
    } else if (up.contains(node)) {
      out.add(new Output.Send<>(node, m));
    }
  }

  private void toAgent(AgentId agent, AgentMessage m) {
    if (agent.node() < members.size()) {
      sendTo(members.get(agent.node()), m);
    }
  }
}
