package dev.tumbler.peer.core;

import java.util.Collection;
import java.util.Comparator;
import java.util.TreeSet;

/**
 * Keys by the moment each is next due, in time order: what lets a core's timer find the work that is due, and the
 * earliest moment, without walking every name it knows. Each key has a {@link Slot}, made once by what owns the key
 * and kept with it, so that an index costs one tree entry per key that has a moment (no map, no boxed moment: a node
 * holding 100,000 leases keeps two or three of these). Mutable; owned by one core.
 *
 * @param <K> the keys (names), ordered among those due at the same moment
 */
public final class Moments<K extends Comparable<? super K>> {

  /** No moment: a slot set to it leaves the index. */
  public static final long NONE = Long.MAX_VALUE;

  /**
   * A key's place in one index. A key whose owner is replaced (a name forgotten, then used again) gets a new slot; the
   * old one is set to {@link #NONE} so that it leaves.
   *
   * @param <K> the key
   */
  public static final class Slot<K> {
    final K key;
    long at = NONE;
    /** Tells apart two slots of one key at one moment (an owner replaced in the step that set the new one). */
    long id;

    public Slot(K key) {
      this.key = key;
    }

    /** Its moment, or {@link #NONE}. */
    public long at() {
      return at;
    }
  }

  private final TreeSet<Slot<K>> order = new TreeSet<>(
      Comparator.<Slot<K>>comparingLong(s -> s.at).thenComparing(s -> s.key).thenComparingLong(s -> s.id));
  private long ids;

  /** Sets {@code slot}'s moment; {@link #NONE} takes it out. */
  public void set(Slot<K> slot, long moment) {
    if (slot.at == moment) {
      return;
    }
    if (slot.at != NONE) {
      order.remove(slot);
    }
    slot.at = moment;
    if (slot.id == 0) {
      slot.id = ++ids;
    }
    if (moment != NONE) {
      order.add(slot);
    }
  }

  /** The earliest moment, or {@link #NONE} when no slot has one. */
  public long first() {
    return order.isEmpty() ? NONE : order.first().at;
  }

  /** Adds the keys due by {@code now} (their moment is {@code now} or earlier) to {@code into}, and returns it. */
  public <C extends Collection<? super K>> C due(long now, C into) {
    for (Slot<K> s : order) {
      if (s.at > now) {
        break;
      }
      into.add(s.key);
    }
    return into;
  }

  /** Takes every slot out. */
  public void clear() {
    for (Slot<K> s : order) {
      s.at = NONE;
    }
    order.clear();
  }
}
