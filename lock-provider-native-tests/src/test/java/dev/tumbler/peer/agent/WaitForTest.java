package dev.tumbler.peer.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.agent.LockTable.Entry;
import dev.tumbler.peer.agent.LockTable.Mode;
import dev.tumbler.peer.agent.WaitFor.Forward;
import dev.tumbler.peer.agent.WaitFor.LockRef;
import dev.tumbler.peer.agent.WaitFor.Node;
import dev.tumbler.peer.agent.WaitFor.Result;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The agents' deadlock analysis, on queues built by real {@link LockTable}s (one per server), as the servers would
 * tell them: the design's scenarios 2, 5 and 7's two-reader upgrade, a cycle through a waiter that holds nothing,
 * hierarchy, and forwarding when no agent sees a cycle yet.
 */
class WaitForTest {
  private static final AgentId T1 = new AgentId(1, 0, 0);
  private static final AgentId T2 = new AgentId(2, 0, 0);
  private static final AgentId T3 = new AgentId(3, 1, 0);
  private static final AgentId T4 = new AgentId(4, 2, 0);

  private final Map<String, LockTable> servers = new LinkedHashMap<>();

  private void lock(AgentId a, String server, Mode mode, String... path) {
    servers.computeIfAbsent(server, s -> new LockTable()).lock(a, List.of(path), mode, 0);
  }

  /** Every queue of every server, as an agent that had been told all of them would know them. */
  private Map<LockRef, List<Entry>> all() {
    Map<LockRef, List<Entry>> known = new HashMap<>();
    servers.forEach((name, t) -> {
      for (Entry e : t.entries()) {
        known.putIfAbsent(new LockRef(e.path(), name), t.queue(e.path()));
      }
    });
    return known;
  }

  private static Node node(AgentId a, String server, String... path) {
    return new Node(a, new LockRef(List.of(path), server));
  }

  @Test
  void twoTransactionsWaitingForEachOtherAreACycleWhoseVictimIsTheYounger() {
    // design §4.9 scenario 2
    lock(T1, "n1", Mode.WRITE, "x");
    lock(T2, "n1", Mode.WRITE, "y");
    lock(T1, "n1", Mode.WRITE, "y");
    lock(T2, "n1", Mode.WRITE, "x");
    for (AgentId self : List.of(T1, T2)) {
      Result r = WaitFor.analyse(self, all());
      assertEquals(List.of(node(T1, "n1", "x"), node(T2, "n1", "y")), r.cycle());
      assertEquals(node(T2, "n1", "y"), r.victim().orElseThrow(), "the later transaction gives way, on the lock it holds");
    }
  }

  @Test
  void aCycleOverThreeServersHasOneVictim() {
    threeServerCycle();
    Result r = WaitFor.analyse(T1, all());
    assertEquals(3, r.cycle().size());
    assertEquals(node(T3, "n3", "z"), r.victim().orElseThrow());
  }

  /** Design §4.9 scenario 5: each of three transactions holds a lock on its own server and waits for the next's. */
  private void threeServerCycle() {
    lock(T1, "n1", Mode.WRITE, "x");
    lock(T2, "n2", Mode.WRITE, "y");
    lock(T3, "n3", Mode.WRITE, "z");
    lock(T1, "n2", Mode.WRITE, "y");
    lock(T2, "n3", Mode.WRITE, "z");
    lock(T3, "n1", Mode.WRITE, "x");
  }

  @Test
  void twoReadersUpgradingWaitForEachOther() {
    // design §4.9 scenario 7's deadlock (A-V4)
    lock(T1, "n1", Mode.READ, "p");
    lock(T2, "n1", Mode.READ, "p");
    lock(T1, "n1", Mode.WRITE, "p");
    lock(T2, "n1", Mode.WRITE, "p");
    Result r = WaitFor.analyse(T1, all());
    assertEquals(node(T2, "n1", "p"), r.victim().orElseThrow());
  }

  @Test
  void aCycleThroughAWaiterThatHoldsNothingIsSeen() {
    // T1 holds p READ; T2 waits for p WRITE; T3 asks p READ after T2 and waits behind it (the server's order: the
    // older T2 first). T3 holds q WRITE, and T1 waits for q. T3 waits (through T2) for T1, which waits for T3; and
    // T2, which holds nothing, is on the cycle (T3 waits behind it). The youngest, T3, gives way on q.
    lock(T1, "n1", Mode.READ, "p");
    lock(T2, "n1", Mode.WRITE, "p");
    lock(T3, "n1", Mode.WRITE, "q");
    lock(T3, "n1", Mode.READ, "p");
    lock(T1, "n1", Mode.READ, "q");
    Result r = WaitFor.analyse(T1, all());
    assertEquals(List.of(node(T1, "n1", "p"), node(T2, "n1", "p"), node(T3, "n1", "q")), r.cycle());
    assertEquals(node(T3, "n1", "q"), r.victim().orElseThrow());
    assertEquals(List.of(List.of("q")), r.victimPaths(), "what it holds there");
    assertEquals(List.of(), r.forwards(), "the victim is in every queue of the cycle");
  }

  @Test
  void aReaderQueuedBehindAYoungerReadersPendingUpgradeMakesTheUpgraderTheVictim() {
    // On n1, T1 and T3 read p and T3 asks to write it: its upgrade waits for T1, and T2's read queues behind it. On
    // n2, T2 reads p and T3's write waits for it. T2 and T3 wait for each other; T2 holds p on n2, T3 holds its
    // read on n1 that T2 queues behind. The victim is the youngest, T3: were it T2, its surrender would put it back
    // ahead of the younger T3 on n2, granted again at once, the same cycle found for ever (seed 5034 of the
    // simulator's transactions)
    lock(T1, "n1", Mode.READ, "p");
    lock(T3, "n1", Mode.READ, "p");
    lock(T3, "n1", Mode.WRITE, "p");
    lock(T2, "n1", Mode.READ, "p");
    lock(T2, "n2", Mode.READ, "p");
    lock(T3, "n2", Mode.WRITE, "p");
    for (AgentId self : List.of(T2, T3)) {
      Result r = WaitFor.analyse(self, all());
      assertEquals(node(T3, "n1", "p"), r.victim().orElseThrow(), "as " + self + " sees it");
    }
  }

  @Test
  void anAgentActsOnACycleItIsTheVictimOfEvenWhenAnotherComesFirst() {
    // two cycles: T1 and T2 over x and y (victim T2), T3 and T4 over u and v (victim T4)
    lock(T1, "n1", Mode.WRITE, "x");
    lock(T2, "n1", Mode.WRITE, "y");
    lock(T1, "n1", Mode.WRITE, "y");
    lock(T2, "n1", Mode.WRITE, "x");
    lock(T3, "n2", Mode.WRITE, "u");
    lock(T4, "n2", Mode.WRITE, "v");
    lock(T3, "n2", Mode.WRITE, "v");
    lock(T4, "n2", Mode.WRITE, "u");
    assertEquals(T4, WaitFor.analyse(T4, all()).victim().orElseThrow().agent(), "T4 sees its own cycle");
    Result r = WaitFor.analyse(T3, all());
    assertEquals(T2, r.victim().orElseThrow().agent(), "the first cycle, of which T3 is not the victim");
    assertTrue(r.forwards().stream().anyMatch(f -> f.to().equals(T4)) == false,
        "T4 is in both queues of its cycle: nothing to tell it");
  }

  @Test
  void onlyRelatedPathsWait() {
    lock(T1, "n1", Mode.WRITE, "a", "c");
    lock(T2, "n1", Mode.WRITE, "a", "b");
    lock(T2, "n1", Mode.WRITE, "q");
    lock(T1, "n1", Mode.WRITE, "q");
    lock(T2, "n1", Mode.READ, "a");
    // T2 waits for [a] on T1's [a,c] (a descendant), and T1 waits for q on T2: a cycle through the hierarchy
    assertEquals(node(T2, "n1", "q"), WaitFor.analyse(T1, all()).victim().orElseThrow());
    lock(T3, "n1", Mode.WRITE, "a", "b", "z");
    lock(T4, "n1", Mode.WRITE, "a", "c", "z");
    List<Entry> queue = servers.get("n1").queue(List.of("a", "b"));
    Entry held = queue.stream().filter(e -> e.agent().equals(T2) && e.path().equals(List.of("a", "b"))).findFirst()
        .orElseThrow();
    assertEquals(List.of(T3), WaitFor.waitersOf(held, servers.get("n1").entries()).stream().map(Entry::agent)
        .filter(a -> !a.equals(T2)).distinct().filter(a -> a.equals(T3) || a.equals(T4)).toList(),
        "T3 waits under [a,b]; T4, under the sibling [a,c], does not");
  }

  @Test
  void theVictimsPathsAreItsOwnEntriesInTheQueueNotTheQueuesPath() {
    // T2 holds [a]; T1 holds [q] and asks [a,b] (waits for T2's [a]); T2 asks [q]. The victim node may be the
    // queue of [a,b], a path T2 never asked for: what it surrenders there is its [a].
    lock(T2, "n1", Mode.WRITE, "a");
    lock(T1, "n1", Mode.WRITE, "q");
    lock(T1, "n1", Mode.WRITE, "a", "b");
    lock(T2, "n1", Mode.WRITE, "q");
    Result r = WaitFor.analyse(T1, all());
    assertEquals(node(T2, "n1", "a", "b"), r.victim().orElseThrow(), "the largest of T2's nodes");
    assertEquals(List.of(List.of("a")), r.victimPaths(), "what T2 holds there, and gives up");
  }

  @Test
  void aReaderBehindAPendingUpgradeWaitsForTheUpgradingAgent() {
    // T1 and T2 read p; T1 asks to write it; T3 asks to read p (behind T1's upgrade) and holds q; T1 waits for q
    lock(T1, "n1", Mode.READ, "p");
    lock(T2, "n1", Mode.READ, "p");
    lock(T1, "n1", Mode.WRITE, "p");
    lock(T3, "n1", Mode.WRITE, "q");
    lock(T3, "n1", Mode.READ, "p");
    lock(T1, "n1", Mode.READ, "q");
    Result r = WaitFor.analyse(T1, all());
    assertEquals(T3, r.victim().orElseThrow().agent(), "T1 and T3 wait for each other: " + r);
  }

  @Test
  void withoutACycleTheQueuesGoToLargerAgentsQueuedElsewhere() {
    // T1 holds x, T2 waits for x and holds y, T3 holds z; T4 waits for y. No cycle.
    lock(T1, "n1", Mode.WRITE, "x");
    lock(T2, "n1", Mode.WRITE, "y");
    lock(T3, "n2", Mode.WRITE, "z");
    lock(T2, "n1", Mode.WRITE, "x");
    lock(T4, "n1", Mode.WRITE, "y");
    lock(T4, "n2", Mode.WRITE, "z");
    Result r = WaitFor.analyse(T1, all());
    assertTrue(r.victim().isEmpty());
    assertEquals(Set.of(new Forward(T3, new LockRef(List.of("x"), "n1")),
        new Forward(T4, new LockRef(List.of("x"), "n1")),
        new Forward(T3, new LockRef(List.of("y"), "n1")),
        new Forward(T2, new LockRef(List.of("z"), "n2"))), Set.copyOf(r.forwards()),
        "each waited-on queue to each larger agent queued where someone waits and not in it: T2 in x and y, T3 in "
            + "z, T4 (which holds nothing) in y and z");
    assertEquals(List.of(new Forward(T4, new LockRef(List.of("x"), "n1"))), WaitFor.analyse(T3, all()).forwards(),
        "T4 is the only agent larger than T3");
    assertTrue(WaitFor.analyse(T4, all()).forwards().isEmpty(), "no agent is larger than T4");
  }

  @Test
  void theAnswerDoesNotDependOnTheOrderQueuesWereLearnt() {
    threeServerCycle();
    List<Map.Entry<LockRef, List<Entry>>> entries = new ArrayList<>(all().entrySet());
    Result first = WaitFor.analyse(T2, all());
    java.util.Collections.reverse(entries);
    Map<LockRef, List<Entry>> reversed = new LinkedHashMap<>();
    entries.forEach(e -> reversed.put(e.getKey(), e.getValue()));
    assertEquals(first, WaitFor.analyse(T2, reversed));
  }

  /**
   * Random queues on three servers: the analysis reports a cycle exactly when the graph (the same nodes and
   * edges, built here again) has one by brute-force reachability; the reported component is strongly connected,
   * nothing outside it reaches it both ways, and the victim is its largest node.
   */
  @Test
  void theCycleFoundIsACycleAndEveryCycleIsFound() {
    List<AgentId> agents = List.of(T1, T2, T3, T4);
    List<List<String>> paths = List.of(List.of("a"), List.of("a", "b"), List.of("c"), List.of("d"));
    int cycles = 0;
    for (long seed = 1; seed <= 500; seed++) {
      java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
      servers.clear();
      for (int i = 0; i < 10; i++) {
        String server = "n" + (1 + r.nextInt(3));
        List<String> path = paths.get(r.nextInt(paths.size()));
        lock(agents.get(r.nextInt(agents.size())), server, r.nextBoolean() ? Mode.READ : Mode.WRITE,
            path.toArray(String[]::new));
      }
      Map<LockRef, List<Entry>> known = all();
      List<Node> nodes = new ArrayList<>();
      known.forEach((lock, q) -> {
        if (q.stream().anyMatch(e -> !e.held())) {
          q.stream().map(e -> new Node(e.agent(), lock)).distinct().forEach(nodes::add);
        }
      });
      int n = nodes.size();
      boolean[][] reach = new boolean[n][n];
      for (int i = 0; i < n; i++) {
        Node from = nodes.get(i);
        for (Entry w : WaitFor.waitersFor(from.agent(), known.get(from.lock()))) {
          for (int j = 0; j < n; j++) {
            reach[i][j] |= nodes.get(j).agent().equals(w.agent());
          }
        }
      }
      for (int k = 0; k < n; k++) {
        for (int i = 0; i < n; i++) {
          for (int j = 0; j < n; j++) {
            reach[i][j] |= reach[i][k] && reach[k][j];
          }
        }
      }
      boolean anyCycle = false;
      for (int i = 0; i < n; i++) {
        anyCycle |= reach[i][i];
      }
      Result res = WaitFor.analyse(T1, known);
      String where = "seed " + seed + ": " + known;
      assertEquals(anyCycle, res.victim().isPresent(), where);
      if (anyCycle) {
        cycles++;
        Node smallestOnACycle = null;
        for (int i = 0; i < n; i++) {
          if (reach[i][i] && (smallestOnACycle == null || nodes.get(i).compareTo(smallestOnACycle) < 0)) {
            smallestOnACycle = nodes.get(i);
          }
        }
        assertEquals(smallestOnACycle, res.cycle().get(0), "not the first cycle: " + where);
        for (Node a : res.cycle()) {
          for (Node b : res.cycle()) {
            assertTrue(reach[nodes.indexOf(a)][nodes.indexOf(b)], "not strongly connected: " + where);
          }
        }
        for (Node x : nodes) {
          if (!res.cycle().contains(x)) {
            int i = nodes.indexOf(x);
            int j = nodes.indexOf(res.cycle().get(0));
            assertTrue(!(reach[i][j] && reach[j][i]), "not the whole component: " + where);
          }
        }
        assertEquals(java.util.Collections.max(res.cycle()), res.victim().orElseThrow(), where);
      }
    }
    assertTrue(cycles > 20, "the random queues should make some cycles: " + cycles);
  }
}
