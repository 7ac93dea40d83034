package dev.tumbler.peer.agent;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The lock server's table of the {@code agent} algorithm (design §4.2, "Lock server role"): the entries of
 * the agents that asked for paths on this node, the grant rule that decides which of them hold, and the
 * version that stamps every change. Pure state, no messages, no clock of its own: the core that owns it
 * passes the wall-clock reading of each change and sends the {@link #notifications notifications}.
 *
 * <ul>
 *   <li>An <b>entry</b> is one agent's claim on one path: the mode it wants, the mode it holds (none, read,
 *       write) and its place ({@code seq}) in the server's order. The entries that hold nothing stand in the order
 *       of their agents' ids, oldest first (seed 000's "tail of the waiting queue sorted with respect to the total
 *       order on the references", safe here because ids never run out): a new or surrendered entry goes ahead of
 *       the first such entry of a younger agent, else last. Every server so orders the waiters of a path alike,
 *       whatever order their requests came in, and a waiter never queues behind a younger one. At most one per
 *       (agent, path).
 *   <li>Two paths are <b>related</b> when one is a prefix of the other (equal included): {@code [a]} and
 *       {@code [a,b,c]} are, siblings {@code [a,b]} and {@code [a,c]} are not. Entries exist only for paths
 *       that were asked for; no child is created ahead (the children of a name are unbounded).
 *   <li>The <b>grant rule</b>, applied after every change in {@code seq} order until nothing changes: an
 *       entry whose wanted mode its held mode does not cover becomes held in its wanted mode when (i) no
 *       entry of another agent that holds, on a related path, conflicts with it, and (ii) no waiting entry of
 *       another agent on the <em>same</em> path with a smaller {@code seq} conflicts with it. Two modes
 *       conflict unless both are read. So only holders block across related paths, and each path keeps its
 *       waiters' order: a reader does not pass a writer waiting ahead of it on its path.
 *   <li>An <b>upgrade</b> (write asked by an agent whose entry holds read) keeps the entry's place; by the
 *       grant rule a sole reader is upgraded at once.
 *   <li>A <b>surrender</b> drops what the agent holds on a path and the paths related to it, and moves
 *       those entries, held or waiting, back to their agent's place among the waiters (behind every older one,
 *       ahead of the younger ones), keeping what they want. The victim of a deadlock is the youngest agent on it,
 *       so the older agents it gave way to are ahead of it. Seed 000 moves a surrendered entry to the end of the
 *       queue instead; behind younger waiters it then waits for them, which made new cycles whose victims were
 *       those younger waiters, moved to the end in turn: in crowded queues, hundreds of surrenders for one
 *       grant.
 *   <li>The <b>version</b> {@code V} never goes back: every change sets {@code V := max(V + 1, wall)}, and each
 *       entry a change grants takes a version of its own (the first that one, the next {@code V + 1}, and so on):
 *       its fencing token on this server, so that readers granted together do not share one.
 * </ul>
 *
 * Not thread safe: owned by one core. Public for its {@link Mode} and {@link Entry}, which messages carry.
 */
public final class LockTable {

  /** What an entry wants or holds. */
  public enum Mode {
    READ,
    WRITE;

    /** Whether holding this mode gives what {@code wanted} asks for. */
    boolean covers(Mode wanted) {
      return this == WRITE || wanted == READ;
    }

    static boolean conflict(Mode a, Mode b) {
      return a == WRITE || b == WRITE;
    }
  }

  /**
   * One entry, as a queue shows it.
   *
   * @param agent whose entry
   * @param path the path it asks for
   * @param wants the mode it asks for
   * @param holds the mode it holds, or null
   * @param seq its place in this server's order
   * @param grantedAt the version at which it came to hold its mode; 0 while it holds nothing
   * @param surrendered surrendered and not granted since: it waits behind the conflicting waiters on related
   *     paths queued before it, not only on its own path (see {@link #surrender})
   */
  public record Entry(AgentId agent, List<String> path, Mode wants, Mode holds, long seq, long grantedAt,
      boolean surrendered) {

    public Entry {
      Objects.requireNonNull(agent, "agent");
      path = List.copyOf(path);
      Objects.requireNonNull(wants, "wants");
      if (seq < 1 || grantedAt < 0 || (holds == null) != (grantedAt == 0)) {
        throw new IllegalArgumentException("an entry's place is positive and it was granted at a version exactly "
            + "when it holds: seq " + seq + ", holds " + holds + ", granted at " + grantedAt);
      }
    }

    /** Whether it holds what it wants. */
    public boolean held() {
      return holds != null && holds.covers(wants);
    }
  }

  /**
   * What an agent is told after a change: the queue of {@code path}, the entries on paths related to it in
   * {@code seq} order, at {@code version}; {@code surrenderOf} is the agent whose surrender the change was (the
   * acknowledgement that agent waits for), or null.
   */
  record Info(AgentId to, List<String> path, long version, List<Entry> queue, AgentId surrenderOf) {}

  private static final class Slot {
    final AgentId agent;
    final List<String> path;
    Mode wants;
    Mode holds;
    long seq;
    long grantedAt;
    /** Surrendered and not granted since: waits behind the conflicting waiters on related paths (see grantable). */
    boolean surrendered;

    Slot(AgentId agent, List<String> path, Mode wants, long seq) {
      this.agent = agent;
      this.path = path;
      this.wants = wants;
      this.seq = seq;
    }

    boolean waiting() {
      return holds == null || !holds.covers(wants);
    }

    Entry view() {
      return new Entry(agent, path, wants, holds, seq, grantedAt, surrendered);
    }
  }

  /** An entry's key: its agent, then its path; the entries of one agent are neighbours. */
  private record Key(AgentId agent, List<String> path) implements Comparable<Key> {
    @Override
    public int compareTo(Key o) {
      int c = agent.compareTo(o.agent);
      return c != 0 ? c : comparePaths(path, o.path);
    }
  }

  private static final Comparator<Slot> BY_SEQ = Comparator.comparingLong(s -> s.seq);

  /** Test-only mutation: a request does not see the entries held on its path's descendants. */
  boolean mutationAncestorsOnly;
  /** Test-only mutation: an upgrade to write is granted although other agents hold read on the path. */
  boolean mutationUpgradeWithOthers;

  /*
   * Every entry is in slots (by agent and path), in bySeq (the server's order), under its path's first element in
   * byRoot (related paths share it, so the grant rule, a queue and the notifications of a change look only there),
   * and, while it holds nothing, in idle (where a new entry's place is found). A place made for an entry moves the
   * entries from there on back by one, in place: their order among themselves, and so every set above, stays valid.
   * Nothing here walks every entry on a grant, a release or a queue: a server holding 100,000 names costs what one
   * name costs, and a set of names under one first element costs what they are.
   */
  private final TreeMap<Key, Slot> slots = new TreeMap<>();
  private final TreeSet<Slot> bySeq = new TreeSet<>(BY_SEQ);
  private final TreeSet<Slot> idle = new TreeSet<>(BY_SEQ);
  /** By first path element: the one entry there, or a {@code List<Slot>} of them in seq order. */
  private final Map<String, Object> byRoot = new HashMap<>();
  private long nextSeq = 1;
  private long version;

  /** The version of the latest change: 0 before the first. */
  long version() {
    return version;
  }

  /**
   * {@code agent} asks for {@code path} in {@code mode}: a new entry in its place, or, for a path it has an
   * entry on, the stronger of the two modes (an upgrade keeps the entry's place). Returns the paths whose
   * entries changed (empty when the entry already asked for as much), for {@link #notifications}.
   *
   * @param wall the wall clock in microseconds, the floor of the version this change takes
   */
  Set<List<String>> lock(AgentId agent, List<String> path, Mode mode, long wall) {
    Objects.requireNonNull(agent, "agent");
    Objects.requireNonNull(mode, "mode");
    List<String> p = checked(path);
    Key k = new Key(agent, p);
    Slot s = slots.get(k);
    if (s != null && (s.wants.covers(mode))) {
      return Set.of();
    }
    Set<List<String>> changed = new LinkedHashSet<>();
    if (s == null) {
      s = new Slot(agent, p, mode, placeFor(agent));
      slots.put(k, s);
      index(s);
    } else {
      s.wants = mode;
    }
    changed.add(p);
    change(wall, changed);
    return changed;
  }

  /**
   * The place of a new or surrendered entry of {@code agent}: ahead of the first entry that holds nothing and is a
   * younger agent's (a larger id), else last, so that the entries holding nothing stay in id order, oldest first.
   * Every server so orders the waiters of a path the same way, whatever order their requests came in: when a holder
   * leaves, every server grants the same waiter, and claims over several servers do not split them (each server
   * granting another, none a quorum). An upgrade waiting in a held entry keeps its place. The entries from that
   * place on move back by one; their order among themselves stays.
   */
  private long placeFor(AgentId agent) {
    Slot before = null;
    for (Slot w : idle) {
      if (w.agent.compareTo(agent) > 0) {
        before = w;
        break;
      }
    }
    if (before == null) {
      return nextSeq++;
    }
    long place = before.seq;
    for (Slot t : bySeq.tailSet(before, true)) {
      t.seq++; // all of them: their order, in every set, stays
    }
    nextSeq++;
    return place;
  }

  /**
   * {@code agent} gives up what it holds on {@code path} and on every path related to it: those entries hold
   * nothing and, with its entries there that wait, move back to its place among the waiters (behind the older
   * ones), still asking for what they asked for, and until they are granted
   * again they also wait behind the conflicting waiters on related paths that were queued before them (without
   * that, an entry surrendered on {@code [a,b]} while the agent it should make way for waits on {@code [a]},
   * held back by a third agent, would be granted straight back, and the same cycle chosen again). Always a
   * change, even when the agent held nothing there, so that the agent gets the acknowledgement it waits for.
   * Returns the paths whose entries changed, {@code path} first.
   */
  Set<List<String>> surrender(AgentId agent, List<String> path, long wall) {
    Objects.requireNonNull(agent, "agent");
    List<String> p = checked(path);
    Set<List<String>> changed = new LinkedHashSet<>();
    changed.add(p);
    List<Slot> moved = new ArrayList<>();
    for (Slot s : of(agent)) {
      if (related(s.path, p)) {
        unindex(s);
        s.holds = null;
        s.grantedAt = 0;
        s.surrendered = true;
        moved.add(s);
        changed.add(s.path);
      }
    }
    for (Slot s : moved) {
      s.seq = placeFor(agent);
      index(s);
    }
    change(wall, changed);
    return changed;
  }

  /** An entry a restarted server takes back: {@code agent} wants {@code wants} on {@code path} and holds {@code held}. */
  record Held(AgentId agent, List<String> path, Mode wants, Mode held) {
    Held {
      Objects.requireNonNull(agent, "agent");
      Objects.requireNonNull(wants, "wants");
      Objects.requireNonNull(held, "held");
    }
  }

  /**
   * A server that restarted takes back what the restated agents held before (they may still trust those grants of
   * its previous life): every entry holds its {@code held} mode at once, ahead of the grant rule, and only then does
   * the grant rule run, so that an entry that wants more than it holds (an upgrade) waits for the other holders
   * taken back with it. Nothing changes for an agent that has an entry on the path already; an entry only waits
   * when another agent holds a conflicting entry (two restated grants cannot conflict unless an agent's view is
   * wrong). Returns the paths that changed.
   */
  Set<List<String>> reinstate(List<Held> entries, long wall) {
    Set<List<String>> changed = new LinkedHashSet<>();
    List<Held> conflicting = new ArrayList<>();
    boolean placed = false;
    for (Held h : entries) {
      List<String> p = checked(h.path());
      if (slots.containsKey(new Key(h.agent(), p))) {
        continue;
      }
      Mode want = h.held().covers(h.wants()) ? h.held() : h.wants();
      boolean conflict = false;
      for (Slot o : rooted(p.get(0))) {
        if (!o.agent.equals(h.agent()) && o.holds != null && related(o.path, p) && Mode.conflict(o.holds, h.held())) {
          conflict = true;
          break;
        }
      }
      if (conflict) {
        conflicting.add(new Held(h.agent(), p, want, h.held()));
        continue;
      }
      Slot s = new Slot(h.agent(), p, want, nextSeq++);
      version = Math.max(version + 1, wall);
      s.holds = h.held();
      s.grantedAt = version;
      slots.put(new Key(h.agent(), p), s);
      index(s);
      changed.add(p);
      placed = true;
    }
    if (placed) {
      change(wall, changed); // upgrades among them, now that every holder is back
    }
    for (Held h : conflicting) {
      changed.addAll(lock(h.agent(), h.path(), h.wants(), wall));
    }
    return changed;
  }

  /** {@code agent}'s transaction ended (or its lease ran out): all its entries go. Returns their paths. */
  Set<List<String>> end(AgentId agent, long wall) {
    Objects.requireNonNull(agent, "agent");
    Set<List<String>> changed = new LinkedHashSet<>();
    for (Slot s : of(agent)) {
      unindex(s);
      slots.remove(new Key(s.agent, s.path));
      changed.add(s.path);
    }
    if (!changed.isEmpty()) {
      change(wall, changed);
    }
    return changed;
  }

  /**
   * Raises the version to at least {@code floor} (a {@code Stamp} of a multi-node claim, or a restarted server's
   * restatements); never lowers it.
   */
  void raise(long floor) {
    version = Math.max(version, floor);
  }

  /** {@code agent}'s entry on {@code path}, or null. */
  Entry entry(AgentId agent, List<String> path) {
    Slot s = slots.get(new Key(agent, path));
    return s == null ? null : s.view();
  }

  /** The agents that have an entry here, in id order. */
  SortedSet<AgentId> agents() {
    TreeSet<AgentId> agents = new TreeSet<>();
    for (Key k : slots.keySet()) {
      agents.add(k.agent);
    }
    return agents;
  }

  /** The entries on paths related to {@code path}, in {@code seq} order. */
  List<Entry> queue(List<String> path) {
    List<Entry> q = new ArrayList<>();
    for (Slot s : rooted(path.get(0))) {
      if (related(s.path, path)) {
        q.add(s.view());
      }
    }
    return q;
  }

  /** Every entry, in {@code seq} order. */
  List<Entry> entries() {
    return bySeq.stream().map(Slot::view).toList();
  }

  /**
   * Who must hear of a change to the entries on {@code changed}: for every path asked for here that is
   * related to one of them, its queue, to every agent with an entry related to it. In path order, then agent
   * order, so that equal tables tell the same.
   */
  List<Info> notifications(Set<List<String>> changed, AgentId surrenderOf) {
    TreeSet<List<String>> asked = new TreeSet<>(LockTable::comparePaths);
    for (Slot s : scope(changed)) {
      for (List<String> c : changed) {
        if (related(s.path, c)) {
          asked.add(s.path);
        }
      }
    }
    // a changed path nobody asks for any more: the agents on related paths hear that its queue is gone (one
    // without an entry on the path), or they would keep its last queue, and its holders, for ever
    for (List<String> c : changed) {
      if (rooted(c.get(0)).stream().noneMatch(s -> s.path.equals(c))) {
        asked.add(c);
      }
    }
    List<Info> out = new ArrayList<>();
    for (List<String> q : asked) {
      List<Entry> queue = queue(q);
      TreeSet<AgentId> agents = new TreeSet<>();
      for (Entry e : queue) {
        agents.add(e.agent());
      }
      for (AgentId a : agents) {
        out.add(new Info(a, q, version, queue, surrenderOf));
      }
    }
    return out;
  }

  /** Paths in element order, a prefix first. */
  static int comparePaths(List<String> a, List<String> b) {
    int n = Math.min(a.size(), b.size());
    for (int i = 0; i < n; i++) {
      int c = a.get(i).compareTo(b.get(i));
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(a.size(), b.size());
  }

  /** Whether one of the paths is a prefix of the other (equal paths included). */
  static boolean related(List<String> a, List<String> b) {
    int n = Math.min(a.size(), b.size());
    for (int i = 0; i < n; i++) {
      if (!a.get(i).equals(b.get(i))) {
        return false;
      }
    }
    return true;
  }

  /** A conflict between two entries of different agents that both hold, if any: for checks (AG-1). */
  String conflictAmongHolders() {
    for (String root : new TreeSet<>(byRoot.keySet())) {
      List<Slot> holders = rooted(root).stream().filter(s -> s.holds != null).toList();
      for (int i = 0; i < holders.size(); i++) {
        for (int j = i + 1; j < holders.size(); j++) {
          Slot a = holders.get(i);
          Slot b = holders.get(j);
          if (!a.agent.equals(b.agent) && related(a.path, b.path) && Mode.conflict(a.holds, b.holds)) {
            return a.view() + " and " + b.view();
          }
        }
      }
    }
    return null;
  }

  /** A change: the version moves on, and the grant rule runs until nothing more can be granted. */
  private void change(long wall, Set<List<String>> changed) {
    version = Math.max(version + 1, wall);
    // Before the change nothing could be granted (every change ends here), and the grant rule looks at related
    // paths only: what can be granted now is under the first elements of the changed paths, and is visited in
    // the same order as a walk of the whole table would.
    List<Slot> scope = scope(changed);
    boolean granted = true;
    boolean versionUsed = false;
    while (granted) {
      granted = false;
      for (Slot s : scope) {
        if (s.waiting() && grantable(s)) {
          if (versionUsed) {
            version++; // each grant its own version: readers granted together get distinct tokens (F1)
          }
          versionUsed = true;
          if (s.holds == null) {
            idle.remove(s);
          }
          s.holds = s.wants;
          s.grantedAt = version;
          s.surrendered = false;
          changed.add(s.path);
          granted = true;
        }
      }
    }
  }

  private boolean grantable(Slot s) {
    for (Slot o : rooted(s.path.get(0))) {
      if (o.agent.equals(s.agent) || !related(o.path, s.path)) {
        continue;
      }
      if (mutationAncestorsOnly && o.path.size() > s.path.size()
          || mutationUpgradeWithOthers && s.holds == Mode.READ && o.path.equals(s.path) && o.holds == Mode.READ) {
        continue;
      }
      if (o.holds != null && Mode.conflict(o.holds, s.wants)) {
        return false; // (i) a holder of another agent
      }
      if (o.seq < s.seq && o.waiting() && (s.surrendered || o.path.equals(s.path))
          && Mode.conflict(o.wants, s.wants)) {
        return false; // (ii) FIFO among the waiters of one path; of related paths for a surrendered entry
      }
    }
    return true;
  }

  /** The entries under first path element {@code root}, in seq order. */
  @SuppressWarnings("unchecked")
  private List<Slot> rooted(String root) {
    Object o = byRoot.get(root);
    return o == null ? List.of() : o instanceof Slot s ? List.of(s) : (List<Slot>) o;
  }

  /** The entries under the first elements of {@code paths}, in seq order. */
  private List<Slot> scope(Set<List<String>> paths) {
    Set<String> roots = new LinkedHashSet<>();
    for (List<String> p : paths) {
      roots.add(p.get(0));
    }
    if (roots.size() == 1) {
      return rooted(roots.iterator().next());
    }
    List<Slot> all = new ArrayList<>();
    for (String r : roots) {
      all.addAll(rooted(r));
    }
    all.sort(BY_SEQ);
    return all;
  }

  /** {@code agent}'s entries, in seq order. */
  private List<Slot> of(AgentId agent) {
    List<Slot> mine = new ArrayList<>();
    for (Slot s : slots.tailMap(new Key(agent, List.of()), true).values()) {
      if (!s.agent.equals(agent)) {
        break;
      }
      mine.add(s);
    }
    mine.sort(BY_SEQ);
    return mine;
  }

  /** Puts {@code s}, at its seq, in the server's order, under its first path element, and among the idle if it is. */
  @SuppressWarnings("unchecked")
  private void index(Slot s) {
    bySeq.add(s);
    if (s.holds == null) {
      idle.add(s);
    }
    String root = s.path.get(0);
    Object o = byRoot.get(root);
    if (o == null) {
      byRoot.put(root, s);
      return;
    }
    List<Slot> list;
    if (o instanceof Slot one) {
      list = new ArrayList<>(2);
      list.add(one);
      byRoot.put(root, list);
    } else {
      list = (List<Slot>) o;
    }
    int i = Collections.binarySearch(list, s, BY_SEQ);
    list.add(i < 0 ? -i - 1 : i, s);
  }

  /** Takes {@code s} out of what {@link #index} put it in; its seq is still the one it was put at. */
  private void unindex(Slot s) {
    bySeq.remove(s);
    idle.remove(s);
    String root = s.path.get(0);
    Object o = byRoot.get(root);
    if (o == s) {
      byRoot.remove(root);
    } else if (o instanceof List<?> list) {
      list.remove(s);
      if (list.size() == 1) {
        byRoot.put(root, list.get(0));
      }
    }
  }

  private static List<String> checked(List<String> path) {
    Objects.requireNonNull(path, "path");
    if (path.isEmpty()) {
      throw new IllegalArgumentException("a lock path has at least one element");
    }
    for (String e : path) {
      if (e == null || e.isEmpty()) {
        throw new IllegalArgumentException("a lock path has no empty element: " + path);
      }
    }
    return List.copyOf(path);
  }
}
