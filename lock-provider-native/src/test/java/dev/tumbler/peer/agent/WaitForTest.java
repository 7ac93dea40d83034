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
    // T1 holds p READ; T3 waits for p WRITE; T2 asks p READ after T3 and waits behind it (FIFO). T2 holds q
    // WRITE, and T1 waits for q. T2 waits (through T3) for T1, which waits for T2.
    lock(T1, "n1", Mode.READ, "p");
    lock(T3, "n1", Mode.WRITE, "p");
    lock(T2, "n1", Mode.WRITE, "q");
    lock(T2, "n1", Mode.READ, "p");
    lock(T1, "n1", Mode.READ, "q");
    Result r = WaitFor.analyse(T1, all());
    assertEquals(List.of(node(T1, "n1", "p"), node(T2, "n1", "q")), r.cycle());
    assertEquals(node(T2, "n1", "q"), r.victim().orElseThrow());
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
    List<Entry> queue = servers.get("n1").queue(List.of("a", "b"));
    Entry held = queue.stream().filter(e -> e.agent().equals(T2) && e.path().equals(List.of("a", "b"))).findFirst()
        .orElseThrow();
    assertTrue(WaitFor.waitersOf(held, servers.get("n1").queue(List.of("a", "c"))).isEmpty(),
        "siblings never wait for each other");
  }

  @Test
  void withoutACycleTheQueuesGoToLargerAgentsThatHoldElsewhere() {
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
        new Forward(T3, new LockRef(List.of("y"), "n1")),
        new Forward(T2, new LockRef(List.of("z"), "n2"))), Set.copyOf(r.forwards()),
        "each waited-on queue to each larger holder not in it: T2 holds y, T3 holds z, T4 holds nothing");
    assertTrue(WaitFor.analyse(T3, all()).forwards().isEmpty(), "no holder is larger than T3");
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
}
