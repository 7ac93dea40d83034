package dev.tumbler.peer.agent;

import dev.tumbler.peer.agent.LockTable.Entry;
import dev.tumbler.peer.agent.LockTable.Mode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * An agent's deadlock analysis (design §4.2, agent rule 5), over the queues it knows: the ones its lock
 * servers told it and the ones other agents forwarded. Pure: the agent core calls it after each stored queue
 * and acts on the answer.
 *
 * <p>The graph's nodes are (agent, lock) for every agent that holds an entry in a known queue that has a
 * waiting entry. An edge runs from {@code (A1, O)} to every node of {@code A2} when, in {@code O}'s queue,
 * {@code A2}'s waiting entry waits for {@code A1}'s held one: their paths are related and their modes
 * conflict, or {@code A2}'s entry waits behind an earlier waiter on its own path that it conflicts with and
 * that waits for {@code A1} (the server's FIFO rule makes the later waiter wait for whatever the earlier one
 * waits for; without that edge a cycle through a waiter that holds nothing stays unseen). The first strongly
 * connected component with a cycle of which the analysing agent is the victim, else the first one (components
 * ordered by their smallest node), is the deadlock; a cycle's victim is the node with the largest agent id (the
 * youngest transaction), and among that agent's nodes in it the largest lock.
 */
final class WaitFor {

  /** A lock as an agent knows it: a path on one server. */
  record LockRef(List<String> path, String server) implements Comparable<LockRef> {
    LockRef {
      path = List.copyOf(path);
      Objects.requireNonNull(server, "server");
    }

    @Override
    public int compareTo(LockRef o) {
      int n = Math.min(path.size(), o.path.size());
      for (int i = 0; i < n; i++) {
        int c = path.get(i).compareTo(o.path.get(i));
        if (c != 0) {
          return c;
        }
      }
      int c = Integer.compare(path.size(), o.path.size());
      return c != 0 ? c : server.compareTo(o.server);
    }
  }

  /** A node of the graph: an agent that holds an entry in the queue of a lock that someone waits on. */
  record Node(AgentId agent, LockRef lock) implements Comparable<Node> {
    @Override
    public int compareTo(Node o) {
      int c = agent.compareTo(o.agent);
      return c != 0 ? c : lock.compareTo(o.lock);
    }
  }

  /** Where a queue goes when there is no cycle: to an agent that may see more of the graph. */
  record Forward(AgentId to, LockRef lock) {}

  /**
   * What the analysis found: a deadlock (its component and victim), or none, with the queues to forward.
   *
   * @param cycle the nodes of the deadlock, smallest first; empty when there is none
   * @param victim the node that gives way; empty when there is no deadlock
   * @param victimPaths the paths of the victim's held entries in the victim node's queue (the queue of a path is
   *     every entry on a related path, so these may be an ancestor or a descendant of the node's path): the
   *     claims a surrender there takes away; empty when there is no deadlock
   * @param forwards with no deadlock: each queue with a waiter, to each agent with a larger id than the analysing
   *     one that has an entry somewhere in what it knows and is not in that queue; with deadlocks: to the victim of
   *     each cycle other than this agent, each queue of that cycle the victim is not in
   */
  record Result(List<Node> cycle, Optional<Node> victim, List<List<String>> victimPaths, List<Forward> forwards) {}

  private WaitFor() {}

  /** The analysis by {@code self} of the queues it knows. */
  static Result analyse(AgentId self, Map<LockRef, List<Entry>> known) {
    SortedMap<LockRef, List<Entry>> queues = new TreeMap<>(known);
    // nodes, and every agent's nodes: each agent with an entry in a queue that someone waits in
    TreeMap<AgentId, List<Node>> nodesOf = new TreeMap<>();
    TreeSet<Node> nodes = new TreeSet<>();
    for (Map.Entry<LockRef, List<Entry>> q : queues.entrySet()) {
      if (q.getValue().stream().anyMatch(e -> !e.held())) {
        for (Entry e : q.getValue()) {
          Node n = new Node(e.agent(), q.getKey());
          if (nodes.add(n)) {
            nodesOf.computeIfAbsent(e.agent(), a -> new ArrayList<>()).add(n);
          }
        }
      }
    }
    Map<Node, TreeSet<Node>> edges = new HashMap<>();
    for (Map.Entry<LockRef, List<Entry>> q : queues.entrySet()) {
      List<Entry> queue = q.getValue();
      TreeSet<AgentId> agents = new TreeSet<>();
      for (Entry e : queue) {
        agents.add(e.agent());
      }
      for (AgentId a : agents) {
        Node from = new Node(a, q.getKey());
        for (Entry w : waitersFor(a, queue)) {
          for (Node to : nodesOf.getOrDefault(w.agent(), List.of())) {
            edges.computeIfAbsent(from, k -> new TreeSet<>()).add(to);
          }
        }
      }
    }
    // Every cycle counts: this agent acts on the first one it is the victim of, and tells each other cycle's victim
    // the queues of that cycle it is not in. Looking at the first cycle only, an agent whose view holds two (one of
    // them perhaps already broken, the news still on its way) would wait for ever for the other's victim to act.
    List<List<Node>> cycles = components(nodes, edges).stream().filter(c -> c.size() > 1).toList();
    if (!cycles.isEmpty()) {
      List<Node> chosen = cycles.get(0);
      for (List<Node> c : cycles) {
        if (Collections.max(c).agent().equals(self)) {
          chosen = c;
          break;
        }
      }
      Node victim = Collections.max(chosen);
      List<List<String>> paths = queues.get(victim.lock()).stream()
          .filter(e -> e.agent().equals(victim.agent())).map(Entry::path).distinct().toList();
      List<Forward> toVictims = new ArrayList<>();
      for (List<Node> c : cycles) {
        AgentId v = Collections.max(c).agent();
        if (v.equals(self)) {
          continue;
        }
        TreeSet<LockRef> locks = new TreeSet<>();
        for (Node n : c) {
          locks.add(n.lock());
        }
        for (LockRef l : locks) {
          if (queues.get(l).stream().noneMatch(e -> e.agent().equals(v))) {
            toVictims.add(new Forward(v, l));
          }
        }
      }
      return new Result(chosen, Optional.of(victim), paths, toVictims);
    }
    // no cycle: each queue with a waiter, to the larger agents queued where someone waits and not in that queue
    TreeSet<AgentId> holders = new TreeSet<>(nodesOf.keySet());
    List<Forward> forwards = new ArrayList<>();
    for (Map.Entry<LockRef, List<Entry>> q : queues.entrySet()) {
      if (q.getValue().stream().allMatch(Entry::held)) {
        continue;
      }
      for (AgentId a : holders.tailSet(self, false)) {
        if (q.getValue().stream().noneMatch(e -> e.agent().equals(a))) {
          forwards.add(new Forward(a, q.getKey()));
        }
      }
    }
    return new Result(List.of(), Optional.empty(), List.of(), forwards);
  }

  /**
   * The waiting entries of other agents in {@code queue} that wait for agent {@code a}: directly (an entry of
   * {@code a} holds on a related path in a conflicting mode), behind a waiting entry of {@code a} (the server's FIFO
   * rule: the same path, queued after it, conflicting with what it wants; any related path for a surrendered
   * waiter), or behind an earlier, conflicting waiter on their own path that waits for {@code a}. A transaction
   * that holds nothing can so be waited for, and be on a cycle: its surrender moves its waiting entries back.
   */
  static List<Entry> waitersFor(AgentId a, List<Entry> queue) {
    List<Entry> mine = queue.stream().filter(e -> e.agent().equals(a)).toList();
    List<Entry> waiting = new ArrayList<>();
    for (Entry w : queue) {
      if (w.held() || w.agent().equals(a)) {
        continue;
      }
      boolean direct = false;
      for (Entry e : mine) {
        if (e.holds() != null && LockTable.related(w.path(), e.path()) && Mode.conflict(e.holds(), w.wants())
            || !e.held() && queuedBehind(w, e)) {
          direct = true;
          break;
        }
      }
      if (direct || behindOneThatWaits(w, waiting)) {
        waiting.add(w);
      }
    }
    return waiting;
  }

  /** {@link #waitersFor} the agent of the held entry {@code h}. */
  static List<Entry> waitersOf(Entry h, List<Entry> queue) {
    return waitersFor(h.agent(), queue);
  }

  /** Whether the waiter {@code w} is queued behind the waiter {@code e}: the server grants {@code e} first. */
  private static boolean queuedBehind(Entry w, Entry e) {
    boolean samePlace = w.surrendered() ? LockTable.related(e.path(), w.path()) : e.path().equals(w.path());
    return e.seq() < w.seq() && samePlace && Mode.conflict(e.wants(), w.wants());
  }

  private static boolean behindOneThatWaits(Entry w, List<Entry> waitingForH) {
    for (Entry e : waitingForH) {
      if (queuedBehind(w, e)) {
        return true;
      }
    }
    return false;
  }

  /** Tarjan's strongly connected components, each sorted, the list ordered by each one's smallest node. */
  private static List<List<Node>> components(TreeSet<Node> nodes, Map<Node, TreeSet<Node>> edges) {
    Map<Node, int[]> index = new HashMap<>(); // {index, lowlink}
    Deque<Node> stack = new ArrayDeque<>();
    java.util.Set<Node> onStack = new java.util.HashSet<>();
    List<List<Node>> out = new ArrayList<>();
    int[] counter = {0};
    for (Node n : nodes) {
      if (!index.containsKey(n)) {
        strongConnect(n, edges, index, stack, onStack, out, counter);
      }
    }
    for (List<Node> c : out) {
      c.sort(Comparator.naturalOrder());
    }
    out.sort(Comparator.comparing(c -> c.get(0)));
    return out;
  }

  private static void strongConnect(Node v, Map<Node, TreeSet<Node>> edges, Map<Node, int[]> index,
      Deque<Node> stack, java.util.Set<Node> onStack, List<List<Node>> out, int[] counter) {
    // iterative, so that a large graph cannot overflow the stack
    Deque<Object[]> work = new ArrayDeque<>();
    index.put(v, new int[] {counter[0], counter[0]});
    counter[0]++;
    stack.push(v);
    onStack.add(v);
    work.push(new Object[] {v, edges.getOrDefault(v, new TreeSet<>()).iterator()});
    while (!work.isEmpty()) {
      Object[] frame = work.peek();
      Node n = (Node) frame[0];
      @SuppressWarnings("unchecked")
      java.util.Iterator<Node> it = (java.util.Iterator<Node>) frame[1];
      if (it.hasNext()) {
        Node m = it.next();
        if (!index.containsKey(m)) {
          index.put(m, new int[] {counter[0], counter[0]});
          counter[0]++;
          stack.push(m);
          onStack.add(m);
          work.push(new Object[] {m, edges.getOrDefault(m, new TreeSet<>()).iterator()});
        } else if (onStack.contains(m)) {
          index.get(n)[1] = Math.min(index.get(n)[1], index.get(m)[0]);
        }
        continue;
      }
      work.pop();
      if (!work.isEmpty()) {
        Node parent = (Node) work.peek()[0];
        index.get(parent)[1] = Math.min(index.get(parent)[1], index.get(n)[1]);
      }
      if (index.get(n)[1] == index.get(n)[0]) {
        List<Node> c = new ArrayList<>();
        Node m;
        do {
          m = stack.pop();
          onStack.remove(m);
          c.add(m);
        } while (!m.equals(n));
        out.add(c);
      }
    }
  }
}
