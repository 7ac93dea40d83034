package dev.tumbler.peer.election;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Scripted runs of the core on a tiny synchronous network: one clock for every node, messages delivered at
 * once and in order unless their link is cut, timers fired in time order. The network itself checks that a
 * core sends only over links it was told are up, that the first message on a link is a Hello, and that the
 * last {@code Fact} of every node is its current view.
 */
class ElectionCoreTest {

  private static final long MS = 1_000_000;

  /** The simulator's timings (Appendix A): lease 30 ms, heartbeat 8 ms, timeout 45 ms, delay 20 ms. */
  private static ElectionSettings settings(int leaderCount) {
    return new ElectionSettings(leaderCount, ElectionSettings.DEFAULT_PRIORITY, 20 * MS, 30 * MS, 8 * MS, 45 * MS,
        0);
  }

  /** A tiny synchronous cluster. */
  private static final class Net {
    final ElectionSettings settings;
    final Map<String, Integer> priorities;
    final Map<String, ElectionCore> cores = new TreeMap<>();
    final Map<String, Long> timers = new TreeMap<>();
    final Set<String> cut = new HashSet<>();
    final Set<String> believedUp = new HashSet<>();
    final Set<String> helloDue = new HashSet<>();
    /** Directed links whose sender has a link report queued: the node runtime's send guard drops its sends. */
    final Set<String> guarded = new HashSet<>();
    final Map<String, Integer> epochs = new HashMap<>();
    final Deque<Msg> inFlight = new ArrayDeque<>();
    final List<Msg> sent = new ArrayList<>();
    final List<Fact> facts = new ArrayList<>();
    final SplittableRandom random = new SplittableRandom(20260101);
    long now = 1_000 * MS;

    record Msg(String from, String to, ElectionMessage message, int epoch) {}

    record Fact(long at, String node, Leader self, Observation.View view) {}

    Net(ElectionSettings settings, Map<String, Integer> priorities) {
      this.settings = settings;
      this.priorities = new TreeMap<>(priorities);
    }

    void startAll() {
      for (String id : priorities.keySet()) {
        start(id);
      }
    }

    void start(String id) {
      List<String> others = new ArrayList<>(priorities.keySet());
      others.remove(id);
      cores.put(id, new ElectionCore(id, others, settings.withPriority(priorities.get(id)),
          new SplittableRandom(random.nextLong())));
      step(id, new Input.Start<>()); // the driver starts every node with it
      for (String o : others) {
        if (cores.containsKey(o) && !cut.contains(pair(id, o))) {
          connect(id, o);
        }
      }
      drain();
    }

    void crash(String id) {
      for (String o : priorities.keySet()) {
        if (!o.equals(id)) {
          disconnect(id, o);
        }
      }
      cores.remove(id);
      timers.remove(id);
      drain();
    }

    void cut(String a, String b) {
      cut.add(pair(a, b));
      disconnect(a, b);
      drain();
    }

    void heal(String a, String b) {
      cut.remove(pair(a, b));
      if (cores.containsKey(a) && cores.containsKey(b)) {
        connect(a, b);
      }
      drain();
    }

    void isolate(String id) {
      for (String o : priorities.keySet()) {
        if (!o.equals(id)) {
          cut(id, o);
        }
      }
    }

    private void connect(String a, String b) {
      epochs.merge(pair(a, b), 1, Integer::sum);
      for (String[] d : new String[][] {{a, b}, {b, a}}) {
        believedUp.add(d[0] + ">" + d[1]);
        helloDue.add(d[0] + ">" + d[1]);
        step(d[0], new Input.PeerUp<>(d[1]));
      }
    }

    private void disconnect(String a, String b) {
      epochs.merge(pair(a, b), 1, Integer::sum);
      for (String[] d : new String[][] {{a, b}, {b, a}}) {
        if (believedUp.remove(d[0] + ">" + d[1]) && cores.containsKey(d[0])) {
          step(d[0], new Input.PeerDown<>(d[1]));
        }
      }
    }

    /**
     * TCP's one-way break: {@code from}'s outbound connection to {@code to} breaks and {@code from} replaces
     * it, so {@code from} is told the link went down and came up again; {@code to} is told nothing (its
     * inbound connection was replaced by a newer one). What {@code from} had in flight to {@code to} is lost.
     */
    void oneWayFlap(String from, String to, long downNanos) {
      epochs.merge(pair(from, to), 1, Integer::sum);
      believedUp.remove(from + ">" + to);
      step(from, new Input.PeerDown<>(to));
      drain();
      advance(downNanos);
      believedUp.add(from + ">" + to);
      helloDue.add(from + ">" + to);
      step(from, new Input.PeerUp<>(to));
      drain();
    }

    /**
     * The link {@code early}–{@code late} breaks and comes back; {@code early} is told of both at once, and
     * {@code late} hears of the break only after the new link's Hello from {@code early} arrived (TCP reports
     * each end on its own schedule). Until then the send guard drops what {@code late} sends to {@code early}:
     * its link reports are queued.
     */
    void reconnectLate(String early, String late) {
      epochs.merge(pair(early, late), 1, Integer::sum);
      guarded.add(late + ">" + early);
      believedUp.remove(early + ">" + late);
      step(early, new Input.PeerDown<>(late));
      believedUp.add(early + ">" + late);
      helloDue.add(early + ">" + late);
      step(early, new Input.PeerUp<>(late));
      drain(); // early's Hello reaches late, which still believes the old link up
      guarded.remove(late + ">" + early);
      believedUp.remove(late + ">" + early);
      step(late, new Input.PeerDown<>(early));
      believedUp.add(late + ">" + early);
      helloDue.add(late + ">" + early);
      step(late, new Input.PeerUp<>(early));
      drain();
    }

    void step(String node, Input<ElectionMessage> in) {
      ElectionCore core = cores.get(node);
      for (Output<ElectionMessage> o : core.step(now, in)) {
        switch (o) {
          case Output.Send<ElectionMessage> s -> {
            String link = node + ">" + s.to();
            if (guarded.contains(link)) {
              continue;
            }
            assertTrue(believedUp.contains(link), () -> "sent on a link that is down: " + link + " " + s.message());
            if (helloDue.remove(link)) {
              assertInstanceOf(ElectionMessage.Hello.class, s.message(), "first on " + link);
            }
            Msg m = new Msg(node, s.to(), s.message(), epochs.get(pair(node, s.to())));
            sent.add(m);
            inFlight.add(m);
          }
          case Output.SetTimer<ElectionMessage> t -> {
            assertTrue(t.at() > now, "a timer in the past");
            timers.put(node, t.at());
          }
          case Output.CancelTimer<ElectionMessage> t -> timers.remove(node);
          case Output.Fact<ElectionMessage> f ->
              facts.add(new Fact(now, node, core.leader(), (Observation.View) f.observation()));
          default -> throw new AssertionError("an election core asked for " + o);
        }
      }
      if (core.term() > 0) {
        assertEquals(core.view(), lastFact(node), node + ": the last fact is not the view");
      }
    }

    void drain() {
      while (!inFlight.isEmpty()) {
        Msg m = inFlight.poll();
        if (cores.containsKey(m.to) && epochs.get(pair(m.from, m.to)) == m.epoch) {
          step(m.to, new Input.Message<>(m.from, m.message));
        }
      }
    }

    void advance(long nanos) {
      long until = now + nanos;
      while (true) {
        String next = null;
        for (Map.Entry<String, Long> t : timers.entrySet()) {
          if (t.getValue() <= until && (next == null || t.getValue() < timers.get(next))) {
            next = t.getKey();
          }
        }
        if (next == null) {
          now = until;
          return;
        }
        now = timers.remove(next);
        step(next, new Input.TimerFired<>(ElectionCore.TIMER));
        drain();
      }
    }

    Observation.View lastFact(String node) {
      for (int i = facts.size() - 1; i >= 0; i--) {
        if (facts.get(i).node.equals(node)) {
          return facts.get(i).view;
        }
      }
      return null;
    }

    /** The view every live node has adopted; fails unless they agree on one. */
    List<Leader> agreed() {
      Observation.View first = null;
      for (ElectionCore c : cores.values()) {
        Observation.View v = c.view();
        assertTrue(v.term() > 0, c.self() + " has no view");
        if (first == null) {
          first = v;
        }
        assertEquals(first.term(), v.term(), c.self() + " disagrees");
        assertEquals(first.leaders(), v.leaders(), c.self() + " disagrees");
      }
      for (Leader l : first.leaders()) {
        ElectionCore c = cores.get(l.nodeId());
        assertTrue(c != null && c.leader().equals(l) && c.isActiveLeader(now), l + " is not an active leader");
      }
      return first.leaders();
    }

    /** The current incarnations of {@code ids}, sorted by random id: the order among equal priorities. */
    List<Leader> byRandomId(String... ids) {
      List<ElectionCore> l = new ArrayList<>();
      for (String id : ids) {
        l.add(cores.get(id));
      }
      l.sort(Comparator.comparingInt(ElectionCore::randomId));
      return l.stream().map(ElectionCore::leader).toList();
    }

    long votes(ElectionMessage.Reason reason) {
      return sent.stream().filter(m -> m.message instanceof ElectionMessage.Vote v && v.reason() == reason).count();
    }

    static String pair(String a, String b) {
      return a.compareTo(b) < 0 ? a + "|" + b : b + "|" + a;
    }
  }

  /** §3.9 scenario 1: election keys, and a replacement that keeps the survivors first. */
  @Test
  void leadersAreChosenByPriorityAndSurvivorsStayFirst() {
    Net net = new Net(settings(3), Map.of("a", 1, "b", 1, "c", 8, "d", 2, "e", 15));
    net.startAll();
    net.advance(200 * MS);
    List<Leader> first = net.agreed();
    List<Leader> expected = new ArrayList<>(net.byRandomId("a", "b"));
    expected.add(net.cores.get("d").leader());
    assertEquals(expected, first, "the two priority-1 nodes by random id, then the priority-2 node");
    long term = net.cores.get("a").term();

    String gone = first.getFirst().nodeId();
    String survivor = gone.equals("a") ? "b" : "a";
    net.crash(gone);
    net.advance(300 * MS);
    List<Leader> second = net.agreed();
    expected = new ArrayList<>(net.byRandomId(survivor, "d")); // both sitting: priority 0, then random id
    expected.add(net.cores.get("c").leader());
    assertEquals(expected, second, "the survivors first, then the priority-8 node");
    assertTrue(net.cores.get("c").term() > term);
    for (Net.Fact f : net.facts) {
      assertTrue(f.view.leaders().stream().noneMatch(l -> l.nodeId().equals("e")),
          "priority 15 led with three others connected: " + f);
    }
  }

  /** §3.9 scenario 2: the first election of three nodes needs all three. */
  @Test
  void threeNodesWaitForTheThirdBeforeTheirFirstView() {
    Net net = new Net(settings(3), Map.of("a", 14, "b", 14, "c", 14));
    net.start("a");
    net.start("b");
    net.advance(2_000 * MS);
    assertEquals(0, net.cores.get("a").term());
    assertEquals(0, net.cores.get("b").term());
    assertTrue(net.facts.isEmpty(), "a view without the third node");
    net.start("c");
    net.advance(200 * MS);
    assertEquals(3, net.agreed().size());
  }

  /** Seed 003: "on a network with 4 nodes, the 4th node will automatically be elected when one goes down". */
  @Test
  void theFourthNodeReplacesALeaderAndARestartedLeaderIsANewNode() {
    Net net = new Net(settings(3), Map.of("a", 14, "b", 14, "c", 14, "d", 14));
    net.startAll();
    net.advance(200 * MS);
    List<Leader> first = net.agreed();
    String fourth = net.cores.keySet().stream().filter(id -> first.stream().noneMatch(l -> l.nodeId().equals(id)))
        .findFirst().orElseThrow();
    Leader gone = first.get(1);
    net.crash(gone.nodeId());
    net.advance(300 * MS);
    List<Leader> second = net.agreed();
    assertTrue(second.contains(net.cores.get(fourth).leader()), second + " lacks the fourth node " + fourth);
    assertEquals(3, second.size());

    long termBeforeRestart = net.cores.get(fourth).term();
    net.start(gone.nodeId());
    Leader reborn = net.cores.get(gone.nodeId()).leader();
    assertNotEquals(gone, reborn, "a restarted node draws a new incarnation");
    net.advance(300 * MS);
    assertEquals(second, net.agreed(), "the view was complete: no election for a node that came back");
    for (Net.Fact f : net.facts) {
      if (f.view.term() <= termBeforeRestart) {
        assertFalse(f.view.leaders().contains(reborn), "the new incarnation leads an older term: " + f);
      }
    }
  }

  /** §3.9 scenario 3: three leaders, one crashes (no pause: two of three go on), it restarts (a new term). */
  @Test
  void aLeaderOfThreeRestartsIntoANewTerm() {
    Net net = new Net(settings(3), Map.of("a", 14, "b", 14, "c", 14));
    net.startAll();
    net.advance(200 * MS);
    List<Leader> first = net.agreed();
    long term = net.cores.get("a").term();
    Leader b = net.cores.get("b").leader();
    net.crash("b");
    net.advance(300 * MS);
    assertEquals(term, net.cores.get("a").term(), "no replacement among three: no election");
    assertTrue(net.cores.get("a").isActiveLeader(net.now) && net.cores.get("c").isActiveLeader(net.now),
        "two leaders of three keep their leases");

    net.start("b");
    Leader reborn = net.cores.get("b").leader();
    net.advance(300 * MS);
    List<Leader> second = net.agreed();
    assertTrue(net.cores.get("a").term() > term);
    assertTrue(second.contains(reborn) && !second.contains(b), second.toString());
    assertEquals(first.stream().filter(l -> !l.equals(b)).toList(), second.subList(0, 2), "sitting leaders first");
  }

  /** V-2: a leader cut off from everyone stops being active before any other node adopts a successor. */
  @Test
  void aLeaderCutOffStopsBeingActiveBeforeItsSuccessorExists() {
    Net net = new Net(settings(1), Map.of("a", 14, "b", 14, "c", 1, "d", 14, "e", 14));
    net.startAll();
    net.advance(200 * MS);
    Leader c = net.cores.get("c").leader();
    assertEquals(List.of(c), net.agreed());
    long term = net.cores.get("a").term();
    long cutAt = net.now;
    net.isolate("c");
    net.advance(300 * MS);

    Net.Fact successor = net.facts.stream().filter(f -> !f.node.equals("c") && f.view.term() > term).findFirst()
        .orElseThrow(() -> new AssertionError("no successor view"));
    long lastActive = net.facts.stream().filter(f -> f.node.equals("c")).mapToLong(f -> f.view.activeUntil())
        .max().orElseThrow();
    assertTrue(lastActive > cutAt, "c was active when it was cut off");
    assertTrue(lastActive <= successor.at, "c active until " + lastActive + ", successor adopted at "
        + successor.at);
    assertFalse(net.cores.get("c").isActiveLeader(net.now));
    assertEquals(term, net.cores.get("c").term(), "c saw nothing");
    assertFalse(successor.view.leaders().contains(c));
  }

  /**
   * A leader that stops on purpose ({@code Input.Leave}) is inactive at once and says so, then its process ends; the
   * others elect a view without it well within the leader timeout (they need not wait out its beats) and without
   * waiting the election delay for the member that went.
   */
  @Test
  void aLeaderThatRetiresIsInactiveAtOnceAndReplacedWithinALeaderTimeout() {
    Net net = new Net(settings(1), Map.of("a", 14, "b", 14, "c", 1));
    net.startAll();
    net.advance(200 * MS);
    Leader c = net.cores.get("c").leader();
    assertEquals(List.of(c), net.agreed());
    long term = net.cores.get("a").term();
    long retiredAt = net.now;
    net.step("c", new Input.Leave<>());
    assertFalse(net.cores.get("c").isActiveLeader(net.now), "inactive in the very step it leaves");
    assertEquals(Long.MIN_VALUE, net.lastFact("c").activeUntil(), "and its algorithm cores are told so");
    net.drain();
    net.crash("c"); // the daemon exits: its links go down
    net.advance(15 * MS); // well under the leader timeout (45 ms), and under the election delay (20 ms)
    Observation.View a = net.cores.get("a").view();
    assertTrue(a.term() > term, "a new view within 15 ms: " + a);
    assertFalse(a.leaders().contains(c), "without the leader that retired: " + a);
    assertEquals(a.term(), net.cores.get("b").view().term());
    assertEquals(a.leaders(), net.cores.get("b").view().leaders());
    long lastActive = net.facts.stream().filter(f -> f.node.equals("c")).mapToLong(f -> f.view.activeUntil())
        .max().orElseThrow();
    Net.Fact successor = net.facts.stream().filter(f -> !f.node.equals("c") && f.view.term() > term).findFirst()
        .orElseThrow();
    assertTrue(successor.at >= retiredAt, "the successor came after the retirement");
    assertTrue(lastActive > retiredAt, "c was active until it retired");
    int retire = indexOfRetire(net);
    for (int i = retire; i < net.sent.size(); i++) {
      Net.Msg m = net.sent.get(i);
      assertFalse(m.from().equals("c") && (m.message() instanceof ElectionMessage.Beat
          || m.message() instanceof ElectionMessage.Vote || m.message() instanceof ElectionMessage.BeatAck),
          "c sent " + m.message() + " after it retired");
    }
  }

  /** A node that retired is no candidate, though its link is still up and its priority would make it lead. */
  @Test
  void aNodeThatRetiredIsNoCandidate() {
    Net net = new Net(settings(1), Map.of("a", 1, "b", 14, "c", 2, "d", 14, "e", 14));
    net.startAll();
    net.advance(200 * MS);
    assertEquals(List.of(net.cores.get("a").leader()), net.agreed());
    net.step("c", new Input.Leave<>());
    net.drain();
    int retired = net.facts.size();
    ElectionCore c = net.cores.remove("c"); // still linked, but stepped no more: as a daemon between Leave and exit
    net.timers.remove("c");
    net.crash("a");
    net.advance(300 * MS);
    assertFalse(net.agreed().contains(c.leader()));
    for (Net.Fact f : net.facts.subList(retired, net.facts.size())) {
      assertFalse(f.view.leaders().contains(c.leader()), "the retired node was chosen: " + f);
    }
  }

  private static int indexOfRetire(Net net) {
    for (int i = 0; i < net.sent.size(); i++) {
      if (net.sent.get(i).message() instanceof ElectionMessage.Retire) {
        return i;
      }
    }
    throw new AssertionError("no Retire sent");
  }

  /** E5: a node that acks a leader's beats refuses to vote it out, whatever the conductor thinks. */
  @Test
  void votesAreRefusedWhileADroppedLeaderStillBeats() {
    Net net = new Net(settings(1), Map.of("a", 14, "b", 14, "c", 1, "d", 14, "e", 14));
    net.startAll();
    net.advance(200 * MS);
    Leader c = net.cores.get("c").leader();
    assertEquals(List.of(c), net.agreed());
    long term = net.cores.get("a").term();

    long granted = net.votes(ElectionMessage.Reason.GRANTED);
    net.cut("a", "c"); // the conductor stops hearing c; b, d and e still do
    net.advance(400 * MS);
    assertTrue(net.votes(ElectionMessage.Reason.LEADER_ALIVE) >= 3, "no LEADER_ALIVE refusals");
    assertEquals(granted, net.votes(ElectionMessage.Reason.GRANTED), "a vote against a live leader");
    for (ElectionCore core : net.cores.values()) {
      assertEquals(term, core.term(), core.self() + " adopted a view without the live leader");
    }
    assertTrue(net.cores.get("c").isActiveLeader(net.now), "c lost its lease to a failed election");

    net.heal("a", "c");
    net.advance(300 * MS);
    assertEquals(List.of(c), net.agreed(), "the leader stays once the conductor hears it again");
  }

  /**
   * Two conductors on either side of a cut link each ask the same voter, for terms 2 and 3; the voter then
   * adopts the lower view. Acking its leader would let it become active after term 3, which drops it, may
   * exist (V-2; the simulation found it). A leader that term 3 keeps is acked.
   */
  @Test
  void aVoterAcksNoLeaderOfALowerViewThatItsHigherVoteDrops() {
    for (boolean kept : new boolean[] {false, true}) {
      ElectionCore n3 = new ElectionCore("n3", List.of("n1", "n2", "n4"), settings(1), new SplittableRandom(3));
      long now = 0;
      Map<String, Leader> peer = Map.of("n1", new Leader("n1", 11), "n2", new Leader("n2", 22), "n4",
          new Leader("n4", 44));
      for (Leader p : peer.values()) {
        n3.step(now, new Input.PeerUp<>(p.nodeId()));
        n3.step(now, new Input.Message<>(p.nodeId(), new ElectionMessage.Hello(p.incarnation(), 1, 7, true, 0, 0,
            List.of(), false))); // informed peers, n1 the smallest: n3 only votes
      }
      now += 45 * MS;
      List<Leader> second = kept ? List.of(peer.get("n1")) : List.of(peer.get("n2"));
      assertEquals(ElectionMessage.Reason.GRANTED, vote(n3.step(now, new Input.Message<>("n1",
          new ElectionMessage.Propose(2, List.of(peer.get("n1")))))));
      assertEquals(ElectionMessage.Reason.GRANTED, vote(n3.step(now, new Input.Message<>("n2",
          new ElectionMessage.Propose(3, second)))));
      n3.step(now, new Input.Message<>("n1", new ElectionMessage.Leaders(2, List.of(peer.get("n1")))));
      assertEquals(2, n3.term());
      List<Output<ElectionMessage>> answer = n3.step(now, new Input.Message<>("n1", new ElectionMessage.Beat(2, 1)));
      assertEquals(kept, answer.stream().anyMatch(o -> o instanceof Output.Send<ElectionMessage> s
          && s.message().equals(new ElectionMessage.BeatAck(2, 1))), kept ? "a kept leader is acked"
          : "acked a leader that its vote for term 3 dropped");
    }
  }

  /**
   * TCP-like reports, a one-way break (the simulator's seed 165): the leader replaces its broken outbound
   * connections to both followers, so it is told each link went down and up, and the followers are told
   * nothing. Its Hellos on the new links must be answered, or it ignores the followers for good and never
   * regains its lease, while they, seeing their leader connected, elect nobody else.
   */
  @Test
  void aLeaderToldOfOneWayBreaksThatItsFollowersNeverSawIsActiveAgain() {
    Net net = new Net(settings(1), Map.of("a", 14, "b", 14, "c", 14));
    net.startAll();
    net.advance(200 * MS);
    Leader leader = net.agreed().getFirst();
    List<String> followers = net.cores.keySet().stream().filter(id -> !id.equals(leader.nodeId())).toList();
    for (String f : followers) {
      net.oneWayFlap(leader.nodeId(), f, 8 * MS);
    }
    net.advance(300 * MS);
    assertEquals(List.of(leader), net.agreed(), "the same leader, active again");
    for (String f : followers) {
      net.oneWayFlap(f, leader.nodeId(), 8 * MS); // and the other way round
    }
    net.advance(300 * MS);
    assertEquals(List.of(leader), net.agreed(), "the same leader, active again");
  }

  /**
   * TCP-like reports, a break heard of late (the simulator's seed 1059): one end is told of the break and the
   * new link, and its Hello on the new link arrives before the other end hears of the break. Told of the
   * break, that end forgets the Hello; its own Hello on the new link must be answered, or it never counts
   * its peer again (in two nodes: no ack, no vote, no lease for ever).
   */
  @Test
  void aHelloOfTheNewLinkBeforeTheOldLinksBreakIsReportedStillConnects() {
    for (String late : List.of("a", "b")) {
      Net net = new Net(settings(1), Map.of("a", 14, "b", 14));
      net.startAll();
      net.advance(200 * MS);
      List<Leader> view = net.agreed();
      net.reconnectLate(late.equals("a") ? "b" : "a", late);
      net.advance(300 * MS);
      assertEquals(view, net.agreed(), late + " heard of the break late");
    }
  }

  /**
   * A Hello that starts a new link on one that this node believes unbroken is answered with a Hello first, and
   * a vote still wanted from its sender is asked again (its answer may have been lost in the break); an
   * answering Hello gets no answer.
   */
  @Test
  void aSecondHelloIsAnsweredAndAVoteStillWantedIsAskedAgain() {
    ElectionCore a = new ElectionCore("a", List.of("b", "c"), settings(1), new SplittableRandom(1));
    long now = 0;
    a.step(now, new Input.Start<>());
    for (String p : List.of("b", "c")) {
      a.step(now, new Input.PeerUp<>(p));
      a.step(now, new Input.Message<>(p, new ElectionMessage.Hello(p.equals("b") ? 2 : 3, 14, 5, false, 0, 0,
          List.of(), false)));
    }
    assertTrue(a.informed(), "a has the Hellos of the whole cluster");
    now += 45 * MS;
    List<Output<ElectionMessage>> asked = a.step(now, new Input.TimerFired<>(ElectionCore.TIMER));
    ElectionMessage.Propose propose = asked.stream().filter(o -> o instanceof Output.Send<ElectionMessage> s
        && s.to().equals("b")).map(o -> (ElectionMessage.Propose) ((Output.Send<ElectionMessage>) o).message())
        .findFirst().orElseThrow(() -> new AssertionError("no Propose to b in " + asked));

    List<Output<ElectionMessage>> again = a.step(now, new Input.Message<>("b", new ElectionMessage.Hello(2, 14, 5,
        true, propose.term(), 0, List.of(), false)));
    List<ElectionMessage> toB = again.stream().filter(o -> o instanceof Output.Send<ElectionMessage> s
        && s.to().equals("b")).map(o -> ((Output.Send<ElectionMessage>) o).message()).toList();
    assertTrue(toB.getFirst() instanceof ElectionMessage.Hello h && h.answer(), "answered first: " + toB);
    assertTrue(toB.contains(propose), "the proposal asked again: " + toB);

    List<Output<ElectionMessage>> answered = a.step(now, new Input.Message<>("b", new ElectionMessage.Hello(2, 14, 5,
        true, propose.term(), 0, List.of(), true)));
    assertTrue(answered.stream().noneMatch(o -> o instanceof Output.Send<ElectionMessage> s
        && s.message() instanceof ElectionMessage.Hello), "an answer answered: " + answered);
  }

  private static ElectionMessage.Reason vote(List<Output<ElectionMessage>> outputs) {
    for (Output<ElectionMessage> o : outputs) {
      if (o instanceof Output.Send<ElectionMessage> s && s.message() instanceof ElectionMessage.Vote v) {
        return v.reason();
      }
    }
    throw new AssertionError("no vote in " + outputs);
  }

  @Test
  void aSingleNodeElectsItselfAndStaysActive() {
    Net net = new Net(settings(3), Map.of("solo", 15));
    net.startAll();
    net.advance(5 * MS);
    assertEquals(1, net.cores.get("solo").term(), "a node alone in its cluster need not wait out a leaderTimeout: "
        + "there is no other leader it could have acked before it started");
    net.advance(1_000 * MS);
    assertEquals(List.of(net.cores.get("solo").leader()), net.agreed());
    assertEquals(1, net.cores.get("solo").term());
  }

  @Test
  void clientInputsAndViewsAreIgnored() {
    Net net = new Net(settings(1), Map.of("a", 14, "b", 14, "c", 14));
    net.startAll();
    net.advance(200 * MS);
    List<Leader> leaders = net.agreed();
    int sent = net.sent.size();
    int facts = net.facts.size();
    List<Input<ElectionMessage>> inputs = List.of(new Input.Acquire<>(1, "s", Claim.exclusive("x"), false),
        new Input.Release<>(1), new Input.Cancel<>(1), new Input.Renew<>(1), new Input.CloseSession<>("s"),
        new Input.View<>(99, List.of(new Leader("b", 1)), Long.MAX_VALUE));
    for (Input<ElectionMessage> in : inputs) {
      net.step("b", in);
    }
    assertEquals(sent, net.sent.size());
    assertEquals(facts, net.facts.size());
    assertEquals(leaders, net.agreed());
  }

  /** R-4/§2.5: nothing before a peer's Hello counts, and a Hello that beats the link's up report is kept. */
  @Test
  void onlyWhatFollowsAPeersHelloCounts() {
    ElectionSettings s = settings(1);
    ElectionCore a = new ElectionCore("a", List.of("b"), s, new SplittableRandom(1));
    ElectionCore b = new ElectionCore("b", List.of("a"), s, new SplittableRandom(2));
    long now = 0;
    b.step(now, new Input.Message<>("a", new ElectionMessage.Leaders(5, List.of(new Leader("a", 1)))));
    assertEquals(0, b.term(), "a view from a peer whose Hello has not arrived");

    List<Output<ElectionMessage>> fromA = a.step(now, new Input.PeerUp<>("b"));
    ElectionMessage.Hello hello = assertInstanceOf(ElectionMessage.Hello.class,
        ((Output.Send<ElectionMessage>) fromA.getFirst()).message());
    assertEquals(a.leader().incarnation(), hello.incarnation());
    b.step(now, new Input.Message<>("a", hello)); // before b heard that its own link to a is up
    assertTrue(b.informed(), "b has the Hello of its only peer");
    List<Output<ElectionMessage>> fromB = b.step(now, new Input.PeerUp<>("a"));
    assertInstanceOf(ElectionMessage.Hello.class, ((Output.Send<ElectionMessage>) fromB.getFirst()).message());
    assertTrue(fromB.stream().noneMatch(o -> o instanceof Output.Send<ElectionMessage> m
        && m.to().equals("a") && !(m.message() instanceof ElectionMessage.Hello)), "sent before the Hello");

    // a message from the peer after its Hello counts
    b.step(now, new Input.Message<>("a", new ElectionMessage.Leaders(5, List.of(b.leader()))));
    assertEquals(5, b.term());
    // after the link breaks, nothing counts until the next Hello
    b.step(now, new Input.PeerDown<>("a"));
    b.step(now, new Input.Message<>("a", new ElectionMessage.Leaders(6, List.of(b.leader()))));
    assertEquals(5, b.term());
  }

  @Test
  void constructionIsChecked() {
    ElectionSettings s = settings(3);
    assertThrows(IllegalArgumentException.class, () -> new ElectionCore("a", List.of("a", "b"), s,
        new SplittableRandom(1)));
    assertThrows(IllegalArgumentException.class, () -> new ElectionCore("a", List.of("b\n"), s,
        new SplittableRandom(1)));
    assertThrows(IllegalArgumentException.class, () -> new ElectionCore("", List.of("b"), s,
        new SplittableRandom(1)));
    for (int seed = 0; seed < 100; seed++) {
      ElectionCore c = new ElectionCore("a", List.of("b"), s, new SplittableRandom(seed));
      assertTrue(c.leader().incarnation() >= 0);
      assertTrue(c.randomId() >= 0 && c.randomId() <= ElectionMessage.Hello.MAX_RANDOM_ID);
      assertEquals(ElectionCore.ALGORITHM, c.algorithm());
      assertEquals(Observation.View.class, c.view().getClass());
      assertEquals(0, c.view().term());
    }
  }
}
