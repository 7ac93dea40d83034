package dev.tumbler.peer.election;

import dev.tumbler.peer.core.Acks;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.ProtocolCore;
import java.util.Collections;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.random.RandomGenerator;

/**
 * Seed 003's election of leaders by priority, random id and address, wrapped in terms, majority votes and
 * leader leases (NATIVE-ALGORITHMS §2.4), as a pure {@link ProtocolCore}. One core per node elects the
 * leaders that {@code bakery} (three) and {@code lease} and {@code buckets} (one, the server) run on. Its
 * only output to the rest of the node is {@link Observation.View}: the adopted view and, while this node is
 * an active leader of it, until when it may act as one.
 *
 * <h2>What it guarantees</h2>
 * <ul>
 *   <li><b>V-1</b> At most one leader list per term, across all nodes and all time: a view is established
 *       only with granted votes of a majority of all members, counted by distinct sender, and a node votes
 *       for one proposal per term.
 *   <li><b>V-2</b> A leader that the view of a later term drops has stopped being active (by its own clock)
 *       before that view is established anywhere: a leader is active only until {@code leaderLease} after
 *       the sending of a beat that a majority acknowledged, and a node that acknowledged a leader's beat
 *       refuses for {@code leaderTimeout} to vote that leader out (and, having voted for a higher term without
 *       it, acknowledges none of its beats of a lower term). This needs clock rates within
 *       {@value ElectionSettings#MAX_RATE_ERROR_PERCENT}% of each other, which {@link ElectionSettings} checks
 *       the timings against; no bound on message delay.
 *   <li>Terms adopted by a node only grow. Terms keep growing over restarts of any set of nodes as long as
 *       one node that knows the highest established term stays up; a cluster where no member is informed
 *       (all restarted) counts again from {@link ElectionSettings#initialTerm()}.
 *   <li>Progress: with a majority of members connected, a view whose leaders are connected and active is
 *       established within about {@code leaderTimeout + electionDelay} plus a few back-offs.
 * </ul>
 *
 * <h2>The rules (E1–E11) and what this core adds to them</h2>
 * Links: messages go only over links that are up; the first message on a link is {@link
 * ElectionMessage.Hello}, and nothing else from a peer counts until its Hello on the current link
 * arrived. A node is <em>connected</em> to a peer whose link is up and whose Hello it has. The two ends of a
 * link are told of it apart, as over TCP: one end may hear of a break and a new link that the other never
 * hears of (its peer replaced a broken outbound connection), or hear of the old link's break only after the
 * new link's Hello arrived. So a Hello sent first on a link is answered with a Hello (§2.5, like Lamport's
 * {@code Sync}), even on a link the receiver believes unbroken, and the receiver treats it as the start of a
 * new link from the sender's side: what the sender sent before may be lost, and what it was sent since it
 * heard of the break was ignored, so a vote still wanted from it is asked again. Each end thus gets a Hello
 * sent after it was last told of a break.
 * <ul>
 *   <li>E1–E3: the conductor is the smallest id among this node and its connected informed peers; it
 *       conducts while its view is not live, it is informed, and a quorum is connected (all members for a
 *       cluster of at most 3 before its first view, else a majority); it waits {@code electionDelay} first,
 *       cut short when all members are connected.
 *   <li>E4: the proposal's term is one above the highest term this node has seen (and above
 *       {@code initialTerm}); candidates are this node and its connected peers but sitting leaders silent for
 *       {@code leaderTimeout} (which do not conduct either: a link that drops bytes stays up until the idle
 *       timeout, and a silent leader proposed again kept its view until then), sitting leaders at priority 0,
 *       priority 15 only when fewer than {@code min(leaderCount, n)} others are connected; sorted by
 *       (priority, random id, node id); the first {@code leaderCount} lead.
 *   <li>E5: a vote is granted once per term and only for a term above every term the voter has seen, by an
 *       informed voter that started at least {@code leaderTimeout} ago, to which every proposed leader is
 *       connected, and that has acked no beat, within {@code leaderTimeout}, of a leader of its view that the
 *       proposal drops. The same proposal asked again (after a link broke) gets the same vote.
 *   <li>E6: with votes of a majority of all members the conductor adopts the view and sends
 *       {@link ElectionMessage.Leaders} to every connected node. Any adopted view is established, so a node
 *       adopts a higher view from a {@code Leaders}, a {@code Hello} or a {@code Vote}. A failed proposal
 *       backs off for a random {@code [electionDelay/4, electionDelay/2]} (at least half a heartbeat).
 *   <li>E7: each leader beats every {@code heartbeat}; a node acks a beat of its view's term from a leader of
 *       its view when it is informed, the term is not below the highest term it knew when it became informed,
 *       and every list it voted for in a higher term (not yet adopted) names that leader. A leader is active until
 *       {@code max(sentAt + leaderLease)} over the beats a majority (itself included) acked; a leader kept in
 *       the next view keeps its lease.
 *   <li>E8: the view is not live when there is none; a leader is silent for {@code leaderTimeout} and the
 *       candidates now include someone outside the view; a leader's node came back as a new incarnation; a
 *       majority of the leaders are unreachable for {@code leaderTimeout}; the view has fewer than
 *       {@code min(leaderCount, n)} leaders and someone outside it is a candidate now; a term higher than
 *       the view's has been known for {@code leaderTimeout}; or (with server failover, for the node's single-server
 *       cores) the first leader has been unreachable for {@code leaderTimeout}.
 *   <li>E9: a peer whose Hello, beat, ack or {@code Leaders} shows an older view is sent this node's view.
 *   <li>E10: a {@link Output.Fact} of {@link Observation.View} whenever the view or this node's
 *       {@code activeUntil} changes ({@link Long#MIN_VALUE} when not an active leader).
 *   <li>E11: a node is informed once it has the Hellos of all its peers (the whole cluster; then terms count
 *       from {@code initialTerm} if none is informed), or of a majority of members that are informed. A Hello
 *       carries the sender's informed flag and highest term, and is sent again when either changes. An
 *       uninformed node neither votes, conducts nor acks.
 * </ul>
 *
 * <p>Client inputs ({@code Acquire}, {@code Release}, {@code Cancel}, {@code Renew}, {@code CloseSession})
 * and {@link Input.View} are not for this core and are ignored. It uses one timer, {@link #TIMER}. The core
 * starts its clock at its first input, which drivers make {@link Input.Start} (a cluster of one member needs
 * it: no link ever comes up there; a {@code TimerFired(TIMER)} does the same at any time). Not thread safe, like every core.
 */
public final class ElectionCore implements ProtocolCore<ElectionMessage> {

  /** The name {@link #algorithm()} returns. */
  public static final String ALGORITHM = "election";

  /**
   * The id of the one timer this core uses: the earliest moment something may change without an input. A
   * {@code TimerFired} of it at any time is harmless: the core re-evaluates and sets it again.
   */
  static final long TIMER = 1;

  private static final long NONE = Long.MIN_VALUE;
  private static final long NOT_ACTIVE = Long.MIN_VALUE;

  private final String self;
  private final ElectionSettings settings;
  private final RandomGenerator random;
  private final Leader me;
  private final int randomId;
  private final int members;
  /** Whether a first leader lost for good is elected away (rule g, for the node's single-server cores). */
  private final boolean serverFailover;
  private final int majority;
  /** Every member's id, this node's included: who may vote and ack. */
  private final Set<String> memberIds;
  private final Map<String, Peer> peers = new TreeMap<>();

  private long startedAt = NONE;
  private boolean informed;
  /** The highest term known when this node became informed: it acks no beat of a lower term. */
  private long ackFloor;
  /** The highest term seen in any message, vote or view; never below {@link #term}. */
  private long highest;
  /** Since when {@link #highest} has been above the view's term; {@link #NONE} while it is not. */
  private long newerTermSince = NONE;
  private boolean helloChanged;
  private boolean everAdopted;

  private long term;
  private List<Leader> leaders = List.of();
  private long adoptedAt;
  private Ballot votedFor;
  /**
   * The votes this node granted for terms above its view's: term T → the leaders named by every vote for T or
   * a higher term. It acks a beat of its view only from a leader of the first entry (a vote for T promises
   * that nobody outside T's list stays active on this node's acks once T may exist). Entries naming the same
   * leaders as the next one up are dropped, so there are at most 17 (one per list size).
   */
  private final TreeMap<Long, Set<Leader>> votesAbove = new TreeMap<>();
  /** When this node last acked a beat of each leader of its view (its own beats included). */
  private final Map<Leader, Long> lastAcked = new HashMap<>();
  /** When each leader of the view last beat (absent: not since the view was adopted). */
  private final Map<Leader, Long> lastBeat = new HashMap<>();

  private long pauseUntil = NONE;
  private long backoffUntil = NONE;
  private Proposal proposal;

  private long beatSeq;
  private long nextBeatAt = NONE;
  private final Map<Long, SentBeat> beats = new LinkedHashMap<>();
  private long activeUntil = NOT_ACTIVE;

  private long timerAt = NONE;
  /** This node stops on purpose ({@code Input.Leave}): it leads, votes, acks and conducts no more. */
  private boolean retired;
  private Observation.View published;
  private List<Output<ElectionMessage>> out;

  /** Test-only mutation: E5 ignores {@link ElectionMessage.Reason#LEADER_ALIVE}. The simulator must catch it (V-2). */
  boolean mutationVoteWithoutLease;

  /** Test-only mutation: granted votes are counted per message, not per distinct sender. */
  boolean mutationCountDuplicateVotes;

  /**
   * Test-only mutation: a Hello is neither answered nor taken as the start of a new link from its sender, as
   * before TCP-like link reports were handled. The simulator must catch it (a node ignores its peer for good).
   */
  boolean mutationHelloUnanswered;

  /**
   * @param self this node's id
   * @param peers the other members' ids (fixed membership)
   * @param settings the election's settings, with this node's priority
   * @param random the core's only source of randomness: its incarnation nonce, its random id, its back-offs
   * @throws IllegalArgumentException if {@code peers} contains {@code self}, or an id cannot go on the wire
   *     (empty, a control character, more than {@value ElectionCodec#MAX_ID_BYTES} UTF-8 bytes)
   */
  public ElectionCore(String self, Collection<String> peers, ElectionSettings settings, RandomGenerator random) {
    this(self, peers, settings, random, false);
  }

  /**
   * As {@link #ElectionCore(String, Collection, ElectionSettings, RandomGenerator)}; with {@code serverFailover} the
   * node hosts a single-server core ({@code buckets}, {@code lease}) whose server is {@code leaders[0]}: a view whose
   * first leader has been unreachable for {@code leaderTimeout} is elected again without it (rule g), even when no
   * candidate outside the view could replace it, so that the server fails over.
   */
  public ElectionCore(String self, Collection<String> peers, ElectionSettings settings, RandomGenerator random,
      boolean serverFailover) {
    this.serverFailover = serverFailover;
    this.self = Objects.requireNonNull(self, "self");
    this.settings = Objects.requireNonNull(settings, "settings");
    this.random = Objects.requireNonNull(random, "random");
    SortedSet<String> ids = ProtocolCore.otherMembers(self, peers);
    ElectionCodec.requireEncodable(self);
    for (String id : ids) {
      ElectionCodec.requireEncodable(id);
      this.peers.put(id, new Peer(id));
    }
    this.members = ids.size() + 1;
    this.majority = members / 2 + 1;
    TreeSet<String> all = new TreeSet<>(ids);
    all.add(self);
    this.memberIds = Collections.unmodifiableSortedSet(all);
    this.me = new Leader(self, random.nextLong() & Long.MAX_VALUE);
    this.randomId = random.nextInt(ElectionMessage.Hello.MAX_RANDOM_ID + 1);
  }

  @Override
  public String self() {
    return self;
  }

  @Override
  public String algorithm() {
    return ALGORITHM;
  }

  @Override
  public List<Output<ElectionMessage>> step(long now, Input<ElectionMessage> input) {
    Objects.requireNonNull(input, "input");
    out = new ArrayList<>();
    try {
      if (startedAt == NONE) {
        start(now);
      }
      switch (input) {
        case Input.Message<ElectionMessage> m -> receive(now, m.from(), m.message());
        case Input.TimerFired<ElectionMessage> t -> {
          if (t.timerId() == TIMER) {
            timerAt = NONE;
          }
        }
        case Input.Start<ElectionMessage> st -> { } // the clock starts and the timer is set below, as for any input
        case Input.Leave<ElectionMessage> l -> retire();
        case Input.PeerUp<ElectionMessage> u -> up(now, u.peer());
        case Input.PeerDown<ElectionMessage> d -> down(now, d.peer());
        // client requests and views belong to the algorithm cores; the composite never routes them here
        case Input.Acquire<ElectionMessage> a -> { }
        case Input.Release<ElectionMessage> r -> { }
        case Input.Cancel<ElectionMessage> c -> { }
        case Input.Renew<ElectionMessage> r -> { }
        case Input.CloseSession<ElectionMessage> s -> { }
        case Input.View<ElectionMessage> v -> { }
        case Input.HolderQuery<ElectionMessage> q -> { }
        case Input.PermitsQuery<ElectionMessage> q -> { }
        case Input.ListQuery<ElectionMessage> q -> { }
        case Input.Begin<ElectionMessage> b -> { }
        case Input.End<ElectionMessage> e -> { }
      }
      settle(now);
      return out;
    } finally {
      out = null;
    }
  }

  // ---- accessors (tests, statistics)

  /** This node as a leader: its id and the incarnation it drew when this core was made. */
  public Leader leader() {
    return me;
  }

  /** The adopted view, with this node's {@code activeUntil}; term 0 and no leaders before the first. */
  public Observation.View view() {
    return new Observation.View(term, leaders, activeUntil);
  }

  /** The adopted view's term; 0 before the first. */
  public long term() {
    return term;
  }

  /** Whether this node knows the cluster's highest term (E11): only then does it vote, conduct and ack. */
  public boolean informed() {
    return informed;
  }

  /** Whether this node is a leader of its view whose leader lease holds at {@code now}. */
  public boolean isActiveLeader(long now) {
    return activeUntil != NOT_ACTIVE && now < activeUntil;
  }

  /** The highest term this node has seen. */
  long highestTerm() {
    return highest;
  }

  /** This node's random id, its second sort key. */
  int randomId() {
    return randomId;
  }

  // ---- links

  private void start(long now) {
    startedAt = now;
    adoptedAt = now;
    for (Peer p : peers.values()) {
      p.lostAt = now;
    }
  }

  private void up(long now, String id) {
    Peer p = peers.get(id);
    if (p == null) {
      return;
    }
    if (p.up) {
      down(now, id); // a reconnect whose down we never saw: messages may have been lost all the same
    }
    p.up = true;
    out.add(new Output.Send<>(id, hello(false))); // first on the link; the peer answers with its own
    if (retired) {
      out.add(new Output.Send<>(id, new ElectionMessage.Retire(term)));
    }
    if (p.helloed) {
      joined(p); // its Hello came before the link was reported up (TCP connects the two directions apart)
    }
  }

  private void down(long now, String id) {
    Peer p = peers.get(id);
    if (p == null) {
      return;
    }
    p.up = false;
    p.helloed = false;
    p.lostAt = now;
    if (proposal != null) {
      proposal.pending.remove(id); // its vote may be lost; it is asked again when it is back
    }
  }

  private void receive(long now, String from, ElectionMessage m) {
    Peer p = peers.get(from);
    if (p == null || !p.helloed && !(m instanceof ElectionMessage.Hello)) {
      return; // not a member, or a message from before the peer's Hello on this link
    }
    switch (m) {
      case ElectionMessage.Hello h -> hello(now, p, h);
      case ElectionMessage.Propose pr -> onPropose(now, p, pr);
      case ElectionMessage.Vote v -> onVote(now, p, v);
      case ElectionMessage.Leaders l -> {
        if (l.term() > term) {
          adopt(now, l.term(), l.leaders());
        } else if (l.term() < term) {
          send(p, leadersMessage());
        }
      }
      case ElectionMessage.Beat b -> onBeat(now, p, b);
      case ElectionMessage.BeatAck a -> onBeatAck(now, p, a);
      case ElectionMessage.Retire r -> onRetire(now, p, r);
    }
  }

  /**
   * The peer stops on purpose. It was no active leader when it said so and never will be again in this incarnation,
   * so its beats acked here need not be waited out (V-2 holds: it stopped acting before any view without it can
   * exist); it is no candidate, conductor or voter; and the election delay waits for it no more. A view it leads is
   * elected away at once.
   */
  private void onRetire(long now, Peer p, ElectionMessage.Retire r) {
    see(now, r.term());
    p.retired = true;
    forget(new Leader(p.id, p.incarnation));
    if (proposal != null) {
      proposal.pending.remove(p.id);
    }
  }

  /**
   * {@code Input.Leave}: this node stops being an active leader now (the algorithm cores see it in this step's
   * view), then tells every peer that it retires; from now on it beats, acks, votes and conducts no more.
   */
  private void retire() {
    retired = true;
    activeUntil = NOT_ACTIVE;
    beats.clear();
    nextBeatAt = NONE;
    proposal = null;
    for (Peer p : peers.values()) {
      send(p, new ElectionMessage.Retire(term));
    }
  }

  private void hello(long now, Peer p, ElectionMessage.Hello h) {
    if (p.incarnation != h.incarnation()) {
      if (p.incarnation >= 0) {
        forget(new Leader(p.id, p.incarnation)); // that core is gone, and nothing it was can act any more
      }
      p.incarnation = h.incarnation();
      p.retired = false;
    }
    p.priority = h.priority();
    p.randomId = h.randomId();
    p.informed = h.informed();
    boolean wasConnected = connected(p);
    p.helloed = true;
    see(now, h.highestTerm());
    if (h.viewTerm() > term) {
      adopt(now, h.viewTerm(), h.viewLeaders());
    }
    boolean newLink = !h.answer() && !mutationHelloUnanswered;
    if (newLink) {
      // the peer was told of a new link: it ignores what we sent since it heard of the break (and ignores the
      // rest until a Hello of ours follows its own), whether or not we were told of any of it
      send(p, hello(true));
    }
    if (h.viewTerm() < term) {
      send(p, leadersMessage()); // E9: a late comer learns the view
    }
    if (connected(p) && (!wasConnected || newLink)) {
      joined(p); // connected, or a new link from its side: a vote it sent may be lost, and our Propose ignored
    }
  }

  /** {@code p} just became connected, or began a new link from its side. */
  private void joined(Peer p) {
    if (proposal != null) {
      ask(p);
    }
  }

  private void forget(Leader gone) {
    lastAcked.remove(gone);
    lastBeat.remove(gone);
  }

  // ---- votes (E4–E6)

  private void onPropose(long now, Peer p, ElectionMessage.Propose pr) {
    if (retired) {
      return; // it votes no more: its peers count it out once its Retire arrives
    }
    Leader conductor = new Leader(p.id, p.incarnation);
    ElectionMessage.Reason reason = judge(now, conductor, pr.term(), pr.leaders());
    if (reason == ElectionMessage.Reason.GRANTED) {
      grant(conductor, pr.term(), pr.leaders());
    }
    see(now, pr.term());
    send(p, new ElectionMessage.Vote(pr.term(), reason, highest, term, leaders));
  }

  /** E5: how this node answers {@code conductor}'s proposal that {@code list} lead term {@code t}. */
  private ElectionMessage.Reason judge(long now, Leader conductor, long t, List<Leader> list) {
    if (votedFor != null && votedFor.equals(new Ballot(t, conductor, list))) {
      return ElectionMessage.Reason.GRANTED; // the same question again: the same answer
    }
    if (t <= highest) {
      return ElectionMessage.Reason.STALE_TERM;
    }
    if (!informed) {
      return ElectionMessage.Reason.UNINFORMED;
    }
    // a node alone in its cluster had no other leader to ack before it started: it need not wait that out
    if (members > 1 && now - startedAt < settings.leaderTimeoutNanos()) {
      return ElectionMessage.Reason.STARTING;
    }
    for (Leader l : list) {
      if (!reachable(l)) {
        return ElectionMessage.Reason.NOT_CONNECTED;
      }
    }
    if (!mutationVoteWithoutLease && dropsALiveLeader(now, list)) {
      return ElectionMessage.Reason.LEADER_ALIVE;
    }
    return ElectionMessage.Reason.GRANTED;
  }

  private boolean dropsALiveLeader(long now, List<Leader> list) {
    for (Leader l : leaders) {
      Long acked = lastAcked.get(l);
      if (!list.contains(l) && acked != null && now - acked < settings.leaderTimeoutNanos()) {
        return true;
      }
    }
    return false;
  }

  private void grant(Leader conductor, long t, List<Leader> list) {
    votedFor = new Ballot(t, conductor, list);
    Set<Leader> named = Set.copyOf(list);
    votesAbove.replaceAll((votedTerm, all) -> intersection(all, named));
    votesAbove.put(t, named); // t is above every earlier vote
    Set<Leader> above = null;
    for (Iterator<Set<Leader>> it = votesAbove.descendingMap().values().iterator(); it.hasNext(); ) {
      Set<Leader> all = it.next();
      if (all.equals(above)) {
        it.remove(); // the entry above answers for it
      }
      above = all;
    }
  }

  private static Set<Leader> intersection(Set<Leader> a, Set<Leader> b) {
    Set<Leader> both = new HashSet<>(a);
    both.retainAll(b);
    return Set.copyOf(both);
  }

  private void onVote(long now, Peer p, ElectionMessage.Vote v) {
    see(now, v.highestTerm());
    if (v.viewTerm() > term) {
      adopt(now, v.viewTerm(), v.viewLeaders());
    }
    Proposal pr = proposal;
    if (pr != null && v.term() == pr.term && pr.pending.remove(p.id) && v.granted()) {
      pr.votes.add(v.term(), p.id);
      pr.grantMessages++;
    }
  }

  /** E1–E4: start a proposal if this node is the conductor and the time has come. */
  private void conduct(long now) {
    if (proposal != null || retired) {
      return;
    }
    int connected = 0;
    int gone = 0;
    boolean conductor = informed;
    for (Peer p : peers.values()) {
      if (connected(p)) {
        connected++;
        // a sitting leader silent for leaderTimeout on a link still up (partitioned, or paused) conducts nothing
        conductor &= !p.informed || p.id.compareTo(self) > 0 || silentLeader(now, p);
      } else if (p.retired) {
        gone++; // said it stops: the delay waits for it no more
      }
    }
    int quorum = members <= 3 && !everAdopted ? members : majority;
    if (!conductor || connected + 1 < quorum || live(now)) {
      pauseUntil = NONE;
      return;
    }
    if (pauseUntil == NONE) {
      pauseUntil = now + settings.electionDelayNanos();
    }
    if (now < pauseUntil && connected + gone + 1 < members || now < backoffUntil) {
      return;
    }
    List<Leader> list = candidates(now);
    long t = Math.max(highest, settings.initialTerm()) + 1;
    if (judge(now, me, t, list) != ElectionMessage.Reason.GRANTED) {
      return; // starting, or a leader it acked is still alive: the timer brings it back when that ends
    }
    grant(me, t, list);
    see(now, t);
    proposal = new Proposal(t, list, memberIds, majority);
    proposal.votes.add(t, self);
    proposal.grantMessages = 1;
    for (Peer p : peers.values()) {
      if (connected(p)) {
        ask(p);
      }
    }
  }

  private void ask(Peer p) {
    proposal.pending.add(p.id);
    send(p, new ElectionMessage.Propose(proposal.term, proposal.leaders));
  }

  /** E6: establish the proposal once a majority granted it, give it up once it cannot get one. */
  private void tally(long now) {
    Proposal pr = proposal;
    if (pr == null) {
      return;
    }
    int votes = mutationCountDuplicateVotes ? pr.grantMessages : pr.votes.count();
    if (votes >= majority) {
      proposal = null;
      adopt(now, pr.term, pr.leaders);
      for (Peer p : peers.values()) {
        if (connected(p)) {
          send(p, leadersMessage());
        }
      }
    } else if (votes + pr.pending.size() < majority) {
      giveUp(now);
    }
  }

  private void giveUp(long now) {
    proposal = null;
    long lo = Math.max(settings.electionDelayNanos() / 4, settings.heartbeatNanos() / 2);
    long hi = Math.max(settings.electionDelayNanos() / 2, settings.heartbeatNanos());
    backoffUntil = now + lo + random.nextLong(hi - lo + 1);
  }

  /**
   * E4: this node and its connected peers, sitting leaders first; the first {@code leaderCount}. A sitting leader
   * silent for {@code leaderTimeout} is no candidate, though its link is up: a partition that drops bytes (or a long
   * pause) keeps a link up until the idle timeout, and proposed again, it kept the view it was silent in until then
   * (a lease server cut off that way was replaced only after the idle timeout, later than its clients' leases ended).
   */
  private List<Leader> candidates(long now) {
    List<Candidate> all = new ArrayList<>();
    all.add(candidate(me, settings.priority(), randomId));
    for (Peer p : peers.values()) {
      if (connected(p) && !silentLeader(now, p)) {
        all.add(candidate(new Leader(p.id, p.incarnation), p.priority, p.randomId));
      }
    }
    List<Candidate> pool = new ArrayList<>();
    for (Candidate c : all) {
      if (c.priority < ElectionSettings.NEVER_LEADS) {
        pool.add(c);
      }
    }
    if (pool.size() < Math.min(settings.leaderCount(), members)) {
      pool = all; // too few others: priority 15 leads after all
    }
    pool.sort(Candidate.ORDER);
    List<Leader> list = new ArrayList<>();
    for (int i = 0; i < pool.size() && i < settings.leaderCount(); i++) {
      list.add(pool.get(i).leader);
    }
    return List.copyOf(list);
  }

  /** Whether leader {@code l} of the view (not this node) has sent no beat for {@code leaderTimeout}. */
  private boolean silent(long now, Leader l) {
    return now - Math.max(adoptedAt, lastBeat.getOrDefault(l, NONE)) >= settings.leaderTimeoutNanos();
  }

  /** Whether peer {@code p} is a leader of the view, in the incarnation it has now, silent for leaderTimeout. */
  private boolean silentLeader(long now, Peer p) {
    Leader l = new Leader(p.id, p.incarnation);
    return leaders.contains(l) && silent(now, l);
  }

  private Candidate candidate(Leader l, int priority, int id) {
    return new Candidate(l, leaders.contains(l) ? 0 : priority, id);
  }

  /** E8: whether the view needs no election. */
  private boolean live(long now) {
    if (term == 0) {
      return false;
    }
    long timeout = settings.leaderTimeoutNanos();
    if (newerTermSince != NONE && now - newerTermSince >= timeout) {
      return false; // (f) a newer term exists: nodes that know it ack nobody of this view
    }
    boolean silent = false;
    int unreachable = 0;
    for (Leader l : leaders) {
      if (l.equals(me)) {
        continue;
      }
      Peer p = peers.get(l.nodeId());
      if (p == null || p.incarnation >= 0 && p.incarnation != l.incarnation()) {
        return false; // (c) the leader's node restarted (this node, or a peer that said so in its Hello)
      }
      if (p.retired && p.incarnation == l.incarnation()) {
        return false; // (h) the leader said it stops
      }
      silent |= silent(now, l);
      if (!reachable(l) && now - Math.max(adoptedAt, p.lostAt) >= timeout) {
        unreachable++;
      }
    }
    if (unreachable > leaders.size() / 2) {
      return false; // (d)
    }
    if (serverFailover && leaders.size() > 1 && !leaders.get(0).equals(me)) {
      Leader first = leaders.get(0);
      Peer p = peers.get(first.nodeId());
      if (!reachable(first) && now - Math.max(adoptedAt, p.lostAt) >= timeout) {
        return false; // (g) the single-server cores' server is gone: a view of the others makes another
      }
    }
    if (silent || leaders.size() < Math.min(settings.leaderCount(), members)) {
      for (Leader c : candidates(now)) {
        if (!leaders.contains(c)) {
          return false; // (b) a silent leader and a replacement, or (e) room for one more
        }
      }
    }
    return true;
  }

  // ---- views and leases (E6, E7, E10)

  private void adopt(long now, long t, List<Leader> list) {
    if (t <= term) {
      return;
    }
    for (Leader l : list) {
      if (!l.nodeId().equals(self) && !peers.containsKey(l.nodeId())) {
        return; // names a node that is not a member: not a view of this cluster
      }
    }
    see(now, t);
    boolean wasLeader = leaders.contains(me);
    term = t;
    leaders = list;
    adoptedAt = now;
    everAdopted = true;
    newerTermSince = highest > term ? now : NONE;
    votesAbove.headMap(t, true).clear();
    lastAcked.keySet().retainAll(list);
    lastBeat.keySet().retainAll(list);
    if (proposal != null && proposal.term <= t) {
      giveUp(now); // a view at least as new exists
    }
    if (!leaders.contains(me)) {
      beats.clear();
      nextBeatAt = NONE;
      activeUntil = NOT_ACTIVE;
    } else if (!wasLeader && !retired) {
      beats.clear();
      nextBeatAt = now;
    }
  }

  private void onBeat(long now, Peer p, ElectionMessage.Beat b) {
    see(now, b.term());
    Leader from = new Leader(p.id, p.incarnation);
    if (b.term() > term) {
      send(p, new ElectionMessage.BeatAck(term, b.seq())); // behind: the older term asks for the view
    } else if (b.term() < term) {
      send(p, leadersMessage());
    } else if (leaders.contains(from)) {
      lastBeat.put(from, now);
      if (mayAck(from)) {
        lastAcked.put(from, now);
        send(p, new ElectionMessage.BeatAck(term, b.seq()));
      }
    }
  }

  private boolean mayAck(Leader l) {
    return !retired && informed && term >= ackFloor && (votesAbove.isEmpty() || votesAbove.firstEntry().getValue().contains(l));
  }

  private void onBeatAck(long now, Peer p, ElectionMessage.BeatAck a) {
    if (retired) {
      return; // never active again
    }
    SentBeat b = beats.get(a.seq());
    if (b != null && b.term() == a.term()) {
      if (b.acks.add(a.term(), p.id)) {
        extend(now, b);
      }
    } else if (a.term() < term) {
      send(p, leadersMessage());
    }
  }

  private void beat(long now) {
    if (nextBeatAt == NONE || now < nextBeatAt) {
      return;
    }
    nextBeatAt = now + settings.heartbeatNanos();
    beats.values().removeIf(old -> old.sentAt() + settings.leaderLeaseNanos() <= now); // can extend nothing
    SentBeat b = new SentBeat(new Acks(term, memberIds, majority), now);
    beats.put(++beatSeq, b);
    if (mayAck(me)) {
      b.acks.add(term, self);
      lastAcked.put(me, now);
    }
    ElectionMessage.Beat m = new ElectionMessage.Beat(term, beatSeq);
    for (Peer p : peers.values()) {
      if (connected(p)) {
        send(p, m);
      }
    }
    extend(now, b);
  }

  private void extend(long now, SentBeat b) {
    long until = b.sentAt() + settings.leaderLeaseNanos();
    if (b.acks.reached() && until > now && until > activeUntil) {
      activeUntil = until;
    }
  }

  // ---- after every input

  private void settle(long now) {
    inform();
    tally(now);
    conduct(now);
    tally(now); // a lone node establishes its proposal at once
    if (activeUntil != NOT_ACTIVE && now >= activeUntil) {
      activeUntil = NOT_ACTIVE;
    }
    beat(now);
    if (helloChanged) {
      helloChanged = false;
      ElectionMessage.Hello h = hello(true); // on links that have their first Hello already: no answer
      for (Peer p : peers.values()) {
        send(p, h);
      }
    }
    publish();
    schedule(now);
  }

  /** E11. */
  private void inform() {
    if (informed) {
      return;
    }
    int heard = 0;
    int informedPeers = 0;
    for (Peer p : peers.values()) {
      if (p.helloed) {
        heard++;
        informedPeers += p.informed ? 1 : 0;
      }
    }
    if (heard == peers.size() || informedPeers >= majority) {
      informed = true;
      ackFloor = highest;
      helloChanged = true;
    }
  }

  private void publish() {
    if (term == 0) {
      return;
    }
    Observation.View v = new Observation.View(term, leaders, activeUntil);
    if (!v.equals(published)) {
      published = v;
      out.add(new Output.Fact<>(v));
    }
  }

  /** Sets the timer to the earliest deadline ahead, unless it is already due sooner (it then comes back). */
  private void schedule(long now) {
    long timeout = settings.leaderTimeoutNanos();
    Deadline next = new Deadline(now);
    next.consider(nextBeatAt);
    next.consider(activeUntil);
    next.consider(pauseUntil);
    next.consider(backoffUntil);
    next.consider(startedAt + timeout);
    if (newerTermSince != NONE) {
      next.consider(newerTermSince + timeout);
    }
    for (Leader l : leaders) {
      Peer p = peers.get(l.nodeId());
      if (p != null) {
        next.consider(Math.max(adoptedAt, lastBeat.getOrDefault(l, NONE)) + timeout);
        if (!reachable(l)) {
          next.consider(Math.max(adoptedAt, p.lostAt) + timeout);
        }
      }
      Long acked = lastAcked.get(l);
      if (acked != null) {
        next.consider(acked + timeout);
      }
    }
    if (next.at != Long.MAX_VALUE && (timerAt == NONE || timerAt <= now || next.at < timerAt)) {
      out.add(new Output.SetTimer<>(TIMER, next.at));
      timerAt = next.at;
    }
  }

  // ---- small helpers

  private void see(long now, long t) {
    if (t > highest) {
      if (highest <= term && t > term) {
        newerTermSince = now;
      }
      highest = t;
      helloChanged = true;
    }
  }

  private ElectionMessage.Hello hello(boolean answer) {
    return new ElectionMessage.Hello(me.incarnation(), settings.priority(), randomId, informed, highest, term,
        leaders, answer);
  }

  private ElectionMessage.Leaders leadersMessage() {
    return new ElectionMessage.Leaders(term, leaders);
  }

  /** Linked, with its Hello on this link, and not retired: a peer that may vote, ack, lead or conduct. */
  private static boolean connected(Peer p) {
    return p.up && p.helloed && !p.retired;
  }

  /** Whether {@code l} is this node, or a connected peer in the incarnation {@code l} names. */
  private boolean reachable(Leader l) {
    if (l.equals(me)) {
      return true;
    }
    Peer p = peers.get(l.nodeId());
    return p != null && connected(p) && p.incarnation == l.incarnation();
  }

  private void send(Peer p, ElectionMessage m) {
    if (p.up) {
      out.add(new Output.Send<>(p.id, m));
    }
  }

  private static final class Peer {
    final String id;
    boolean up;
    /** Its Hello arrived since the link was last reported down. */
    boolean helloed;
    /** From its latest Hello; -1 before the first. */
    long incarnation = -1;
    int priority;
    int randomId;
    boolean informed;
    /** When it last stopped being connected (or this core started). */
    long lostAt;
    /** It said it stops ({@link ElectionMessage.Retire}), in the incarnation it has now. */
    boolean retired;

    Peer(String id) {
      this.id = id;
    }
  }

  /** A vote granted: for term {@code term}, to {@code conductor}'s proposal of {@code leaders}. */
  private record Ballot(long term, Leader conductor, List<Leader> leaders) {}

  private static final class Proposal {
    final long term;
    final List<Leader> leaders;
    /** Granted votes, one per distinct member of the term (E6, R-6). */
    final Acks votes;
    /** Asked, and not answered yet. */
    final Set<String> pending = new HashSet<>();
    int grantMessages;

    Proposal(long term, List<Leader> leaders, Set<String> members, int majority) {
      this.term = term;
      this.leaders = leaders;
      this.votes = new Acks(term, members, majority);
    }
  }

  /** A beat this leader sent, and the distinct members that acked it in its term. */
  private record SentBeat(Acks acks, long sentAt) {
    long term() {
      return acks.term();
    }
  }

  /** A candidate and its sort key (seed 003: priority, then random id, then address). */
  private record Candidate(Leader leader, int priority, int randomId) {
    static final Comparator<Candidate> ORDER = Comparator.comparingInt(Candidate::priority)
        .thenComparingInt(Candidate::randomId).thenComparing(c -> c.leader.nodeId());
  }

  /** The earliest of some moments after {@code now}. */
  private static final class Deadline {
    final long now;
    long at = Long.MAX_VALUE;

    Deadline(long now) {
      this.now = now;
    }

    void consider(long t) {
      if (t != NONE && t > now && t < at) {
        at = t;
      }
    }
  }
}
