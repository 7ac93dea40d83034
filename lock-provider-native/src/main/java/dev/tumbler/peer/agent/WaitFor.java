package dev.tumbler.peer.agent;

import dev.tumbler.peer.agent.LockTable.Entry;
import dev.tumbler.peer.agent.LockTable.Mode;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
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
 * waits for; without that edge a cycle through a waiter that holds nothing stays unseen). A strongly connected
 * component is a deadlock when one of its agents holds, in one of its locks, an entry that another member waits
 * for; its victim is the node with the largest agent id (the youngest transaction) among those holders, and among
 * that agent's nodes the largest lock. Only a holder is ever a victim (seed 000: "it is important to select this
 * particular client among the ones that indeed hold a lock"): a victim that only waits moves to the back and gives
 * nothing to anyone, and in a crowd of waiters it was chosen again and again while the holders' cycle stayed. The
 * first deadlock of which the analysing agent is the victim, else the first one (ordered by their smallest
 * node), is the one it acts on.
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

  /**
   * The analysis by {@code self} of the queues it knows.
   *
   * <p>The components are found on the agents, not on the (agent, lock) nodes: every node of an agent has the same
   * incoming edges, so the node graph has a cycle exactly when the agent graph has one, and a component of agents
   * {@code C} is, in nodes, every {@code (a, O)} with {@code a} in {@code C} and a waiter of {@code a} in {@code O}
   * that is in {@code C}. That costs the edges between agents, where the nodes cost the square of their number
   * (every node of a waiter was a target).
   */
  static Result analyse(AgentId self, Map<LockRef, List<Entry>> known) {
    SortedMap<LockRef, List<Entry>> queues = new TreeMap<>(known);
    return analyse(self, queues, l -> Facts.of(queues.get(l)));
  }

  /**
   * What the analysis needs of one queue, worked out once per queue stored ({@link AgentView} keeps them).
   *
   * @param contended whether an entry in it waits
   * @param agents the agents with an entry in it
   * @param waitedBy for each agent waited for in it, the agents whose entries wait for it there ({@link #waitsFor})
   */
  record Facts(boolean contended, Set<AgentId> agents, Map<AgentId, Set<AgentId>> waitedBy) {
    static Facts of(List<Entry> queue) {
      Set<AgentId> agents = new HashSet<>();
      boolean contended = false;
      for (Entry e : queue) {
        agents.add(e.agent());
        contended |= !e.held();
      }
      Map<AgentId, Set<AgentId>> waitedBy = new HashMap<>();
      if (contended) {
        List<Set<AgentId>> waitsFor = waitsFor(queue);
        for (int i = 0; i < queue.size(); i++) {
          for (AgentId a : waitsFor.get(i)) {
            waitedBy.computeIfAbsent(a, k -> new HashSet<>()).add(queue.get(i).agent());
          }
        }
      }
      return new Facts(contended, agents, waitedBy);
    }
  }

  /**
   * {@link #analyse(AgentId, Map)} of queues already in order, with the {@link Facts} of each queue from
   * {@code facts} (an {@link AgentView} works them out once per queue it stores).
   */
  static Result analyse(AgentId self, SortedMap<LockRef, List<Entry>> queues,
      java.util.function.Function<LockRef, Facts> facts) {
    // the agents queued where someone waits, and who waits for whom
    TreeSet<AgentId> holders = new TreeSet<>();
    Map<AgentId, Set<AgentId>> waitedBy = new HashMap<>(); // a -> the agents that wait for it somewhere
    List<LockRef> contended = new ArrayList<>();
    for (LockRef l : queues.keySet()) {
      Facts f = facts.apply(l);
      if (!f.contended()) {
        continue;
      }
      contended.add(l);
      holders.addAll(f.agents());
      f.waitedBy().forEach((a, ws) -> waitedBy.computeIfAbsent(a, k -> new HashSet<>()).addAll(ws));
    }
    List<List<Node>> cycles = new ArrayList<>();
    List<Node> victims = new ArrayList<>();
    for (List<AgentId> component : components(holders, waitedBy)) {
      if (component.size() < 2) {
        continue; // an agent never waits for itself
      }
      Set<AgentId> members = new HashSet<>(component);
      TreeSet<Node> nodes = new TreeSet<>();
      for (LockRef l : contended) {
        facts.apply(l).waitedBy().forEach((a, ws) -> {
          if (members.contains(a) && ws.stream().anyMatch(members::contains)) {
            nodes.add(new Node(a, l));
          }
        });
      }
      // the victim holds what a member waits for (seed 000: "important to select this particular client among the
      // ones that indeed hold a lock"); a component whose members only queue behind each other is no deadlock yet:
      // its first waiter waits for a holder outside it, and once one of them holds, the holder is on the cycle
      Node victim = null;
      for (Node n : nodes.descendingSet()) {
        if (holdsForMember(n, queues.get(n.lock()), members)) {
          victim = n;
          break;
        }
      }
      if (victim != null) {
        cycles.add(new ArrayList<>(nodes));
        victims.add(victim);
      }
    }
    Integer[] order = new Integer[cycles.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    java.util.Arrays.sort(order, Comparator.comparing(i -> cycles.get(i).get(0)));
    // Every cycle counts: this agent acts on the first one it is the victim of, and tells each other cycle's victim
    // the queues of that cycle it is not in. Looking at the first cycle only, an agent whose view holds two (one of
    // them perhaps already broken, the news still on its way) would wait for ever for the other's victim to act.
    if (!cycles.isEmpty()) {
      int chosenAt = order[0];
      for (int i : order) {
        if (victims.get(i).agent().equals(self)) {
          chosenAt = i;
          break;
        }
      }
      List<Node> chosen = cycles.get(chosenAt);
      Node victim = victims.get(chosenAt);
      List<List<String>> paths = queues.get(victim.lock()).stream()
          .filter(e -> e.agent().equals(victim.agent())).map(Entry::path).distinct().toList();
      List<Forward> toVictims = new ArrayList<>();
      for (int i : order) {
        List<Node> c = cycles.get(i);
        AgentId v = victims.get(i).agent();
        if (v.equals(self)) {
          continue;
        }
        TreeSet<LockRef> locks = new TreeSet<>();
        for (Node n : c) {
          locks.add(n.lock());
        }
        for (LockRef l : locks) {
          if (!facts.apply(l).agents().contains(v)) {
            toVictims.add(new Forward(v, l));
          }
        }
      }
      return new Result(chosen, Optional.of(victim), paths, toVictims);
    }
    // no cycle: each queue with a waiter, to the larger agents queued where someone waits and not in that queue
    List<Forward> forwards = new ArrayList<>();
    SortedSet<AgentId> larger = holders.tailSet(self, false);
    for (LockRef l : contended) {
      Set<AgentId> in = facts.apply(l).agents();
      for (AgentId a : larger) {
        if (!in.contains(a)) {
          forwards.add(new Forward(a, l));
        }
      }
    }
    return new Result(List.of(), Optional.empty(), List.of(), forwards);
  }

  /**
   * Whether node {@code n}'s agent holds, in {@code queue}, an entry that a waiting entry of another of
   * {@code members} waits for: one that conflicts with it, or an upgrade it is queued behind (a reader behind a
   * reader's pending write). Its surrender there then gives a member of the cycle what it waits for.
   */
  private static boolean holdsForMember(Node n, List<Entry> queue, Set<AgentId> members) {
    for (Entry h : queue) {
      if (!h.agent().equals(n.agent()) || h.holds() == null) {
        continue;
      }
      for (Entry w : queue) {
        if (!w.held() && !w.agent().equals(n.agent()) && members.contains(w.agent())
            && LockTable.related(w.path(), h.path())
            && (Mode.conflict(h.holds(), w.wants()) || !h.held() && queuedBehind(w, h))) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * The waiting entries of other agents in {@code queue} that wait for agent {@code a}: directly (an entry of
   * {@code a} holds on a related path in a conflicting mode), behind a waiting entry of {@code a} (the server's FIFO
   * rule: the same path, queued after it, conflicting with what it wants; any related path for a surrendered
   * waiter), or behind an earlier, conflicting waiter on their own path that waits for {@code a}. A transaction
   * that holds nothing can so be waited for, and be on a cycle: its surrender moves its waiting entries back.
   */
  static List<Entry> waitersFor(AgentId a, List<Entry> queue) {
    List<Set<AgentId>> waitsFor = waitsFor(queue);
    List<Entry> waiting = new ArrayList<>();
    for (int i = 0; i < queue.size(); i++) {
      if (waitsFor.get(i).contains(a)) {
        waiting.add(queue.get(i));
      }
    }
    return waiting;
  }

  /**
   * For each entry of {@code queue}, in order, the agents it waits for ({@link #waitersFor}, for every agent at
   * once): none for a held entry; for a waiting one, the other agents with an entry it waits for directly, and
   * those that each earlier waiter it is queued behind waits for. One pass, each waiter against the entries
   * before it and the waiters it is behind: the square of the queue's length, where asking agent by agent cost
   * its cube.
   */
  static List<Set<AgentId>> waitsFor(List<Entry> queue) {
    List<Set<AgentId>> out = new ArrayList<>(queue.size());
    for (int i = 0; i < queue.size(); i++) {
      Entry w = queue.get(i);
      if (w.held()) {
        out.add(Set.of());
        continue;
      }
      Set<AgentId> agents = new HashSet<>();
      for (Entry e : queue) {
        if (!e.agent().equals(w.agent()) && (e.holds() != null && LockTable.related(w.path(), e.path())
            && Mode.conflict(e.holds(), w.wants()) || !e.held() && queuedBehind(w, e))) {
          agents.add(e.agent());
        }
      }
      for (int j = 0; j < i; j++) {
        Entry e = queue.get(j);
        if (!e.held() && queuedBehind(w, e)) {
          for (AgentId a : out.get(j)) {
            if (!a.equals(w.agent())) {
              agents.add(a);
            }
          }
        }
      }
      out.add(agents);
    }
    return out;
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

  /** Tarjan's strongly connected components of the agents, by who waits for whom, in no particular order. */
  private static List<List<AgentId>> components(TreeSet<AgentId> agents, Map<AgentId, Set<AgentId>> waitedBy) {
    Map<AgentId, int[]> index = new HashMap<>(); // {index, lowlink}
    Deque<AgentId> stack = new ArrayDeque<>();
    java.util.Set<AgentId> onStack = new java.util.HashSet<>();
    List<List<AgentId>> out = new ArrayList<>();
    int counter = 0;
    // iterative, so that a large graph cannot overflow the stack
    Deque<Map.Entry<AgentId, java.util.Iterator<AgentId>>> work = new ArrayDeque<>();
    for (AgentId root : agents) {
      if (index.containsKey(root)) {
        continue;
      }
      index.put(root, new int[] {counter, counter});
      counter++;
      stack.push(root);
      onStack.add(root);
      work.push(Map.entry(root, waitedBy.getOrDefault(root, Set.of()).iterator()));
      while (!work.isEmpty()) {
        AgentId n = work.peek().getKey();
        java.util.Iterator<AgentId> it = work.peek().getValue();
        if (it.hasNext()) {
          AgentId m = it.next();
          if (!index.containsKey(m)) {
            index.put(m, new int[] {counter, counter});
            counter++;
            stack.push(m);
            onStack.add(m);
            work.push(Map.entry(m, waitedBy.getOrDefault(m, Set.of()).iterator()));
          } else if (onStack.contains(m)) {
            index.get(n)[1] = Math.min(index.get(n)[1], index.get(m)[0]);
          }
          continue;
        }
        work.pop();
        if (!work.isEmpty()) {
          int[] parent = index.get(work.peek().getKey());
          parent[1] = Math.min(parent[1], index.get(n)[1]);
        }
        if (index.get(n)[1] == index.get(n)[0]) {
          List<AgentId> c = new ArrayList<>();
          AgentId m;
          do {
            m = stack.pop();
            onStack.remove(m);
            c.add(m);
          } while (!m.equals(n));
          out.add(c);
        }
      }
    }
    return out;
  }
}
