package dev.tumbler.peer.sim;

import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.Observation;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.ToLongFunction;

/**
 * The election's guarantees to the algorithms (NATIVE-ALGORITHMS §2.4), judged over the views every node
 * publishes ({@link Observation.View} facts), across all nodes and all time:
 *
 * <ul>
 *   <li><b>V-1</b>: one leader list per term;
 *   <li><b>V-2</b>: when a term is first adopted anywhere, no node that leads a view of an earlier term and is
 *       not in the new list is active by its own clock ({@code now < activeUntil}); and no node becomes
 *       active in a term after a later term that drops it was adopted;
 *   <li><b>view</b>: the terms a node adopts never go back within one incarnation, and only a leader of its
 *       view is active.
 * </ul>
 * A node is known by its id; its incarnation (the {@link Leader} it would be) comes with each view it
 * publishes, and {@link #down} forgets it when it crashes. Violations are thrown as
 * {@link IllegalStateException}s whose message starts with the rule's name ({@code V-1:}, {@code V-2:},
 * {@code view:}). Not thread safe.
 */
public final class Views {

  private record Published(Leader self, Observation.View view) {}

  private final TreeMap<Long, List<Leader>> termLeaders = new TreeMap<>();
  private final Map<String, Published> last = new HashMap<>();
  private long highest;

  /**
   * Judges the view {@code node} (as the leader {@code self}) just published, and records it.
   *
   * @param localNow every live node's clock now, by node id (the activity of leaders is by their own clocks)
   * @throws IllegalStateException naming the rule it breaks
   */
  public void published(String node, Leader self, Observation.View v, ToLongFunction<String> localNow) {
    Objects.requireNonNull(self, "self");
    Published before = last.get(node);
    if (before != null && before.self().equals(self) && v.term() < before.view().term()) {
      throw new IllegalStateException("view: " + node + " went back from term " + before.view().term() + " to "
          + v.term());
    }
    boolean active = v.activeUntil() != Long.MIN_VALUE && localNow.applyAsLong(node) < v.activeUntil();
    if (v.activeUntil() != Long.MIN_VALUE && !v.leaders().contains(self)) {
      throw new IllegalStateException("view: " + node + " is active until " + v.activeUntil() + " but not a leader of "
          + v);
    }
    if (v.term() == 0) { // no view yet
      last.put(node, new Published(self, v));
      return;
    }
    List<Leader> known = termLeaders.putIfAbsent(v.term(), v.leaders());
    if (known != null && !known.equals(v.leaders())) {
      throw new IllegalStateException("V-1: term " + v.term() + " has leaders " + known + " and " + v.leaders()
          + " (at " + node + ")");
    }
    if (known == null) { // first adopted now: every leader it drops must be inactive already
      for (Map.Entry<String, Published> e : last.entrySet()) {
        Published p = e.getValue();
        if (!e.getKey().equals(node) && p.view().term() < v.term() && !v.leaders().contains(p.self())
            && p.view().activeUntil() != Long.MIN_VALUE && localNow.applyAsLong(e.getKey()) < p.view().activeUntil()) {
          throw new IllegalStateException("V-2: " + e.getKey() + " leads term " + p.view().term() + " until "
              + (p.view().activeUntil() - localNow.applyAsLong(e.getKey())) + " ns from now, but term " + v.term()
              + " " + v.leaders() + " was just adopted by " + node);
        }
      }
    }
    if (active) { // and this node may not act after a later term that drops it was adopted
      for (Map.Entry<Long, List<Leader>> later : termLeaders.tailMap(v.term(), false).entrySet()) {
        if (!later.getValue().contains(self)) {
          throw new IllegalStateException("V-2: " + node + " is active in term " + v.term() + " after term "
              + later.getKey() + " " + later.getValue() + " was adopted");
        }
      }
    }
    highest = Math.max(highest, v.term());
    last.put(node, new Published(self, v));
  }

  /** {@code node} crashed: its views no longer act. */
  public void down(String node) {
    last.remove(node);
  }

  /** The highest term adopted anywhere so far; 0 before the first. */
  public long highestTerm() {
    return highest;
  }

  /** The last view {@code node} published in its current incarnation, or null. */
  public Observation.View viewOf(String node) {
    Published p = last.get(node);
    return p == null ? null : p.view();
  }
}
