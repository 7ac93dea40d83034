package dev.tumbler.peer.core;

import java.util.Comparator;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.ToLongFunction;

/**
 * What a core's timer looks at, so that it does not walk every request or grant it keeps on every step: the items
 * that may have something to do (watched), and the others each by the moment it next has something to do (resting).
 * A visit goes through the watched items and the resting ones that are due, in the order the items were added: the
 * order of a walk of all of them, so that a core that moves its walk here does the same work in the same order, as
 * long as an item it lets rest would have done nothing until its moment, or until something the core tells the
 * agenda about ({@link #watch}) changes it. Mutable; owned by one core.
 *
 * @param <T> the items
 */
public final class Agenda<T extends Agenda.Item> {

  /** No moment: a resting item waits to be watched again. */
  public static final long NONE = Long.MAX_VALUE;

  /** An item's place on an agenda: its rank in the order of visits, and where it is now. */
  public abstract static class Item {
    long order;
    boolean watched;
    long at = NONE;

    /** The item's rank in the order of visits: the order it was added in. */
    public final long order() {
      return order;
    }
  }

  private final TreeSet<T> watched = new TreeSet<>(Comparator.comparingLong(i -> i.order));
  private final TreeSet<T> resting = new TreeSet<>(
      Comparator.<T>comparingLong(i -> i.at).thenComparingLong(i -> i.order));
  private long orders;

  /** Adds {@code item} after all others, watched. */
  public void add(T item) {
    item.order = ++orders;
    item.watched = false;
    item.at = NONE;
    watch(item);
  }

  /** {@code item} may have something to do at the next visit. */
  public void watch(T item) {
    if (item.watched) {
      return;
    }
    unrest(item);
    item.watched = true;
    watched.add(item);
  }

  /** {@code item} has nothing to do before {@code at} ({@link #NONE}: until it is watched again). */
  public void rest(T item, long at) {
    if (item.watched) {
      item.watched = false;
      watched.remove(item);
    } else if (item.at == at) {
      return;
    }
    unrest(item);
    item.at = at;
    if (at != NONE) {
      resting.add(item);
    }
  }

  /** Takes {@code item} off the agenda. */
  public void remove(T item) {
    if (item.watched) {
      item.watched = false;
      watched.remove(item);
    }
    unrest(item);
  }

  /**
   * Visits the watched items and the resting ones due by {@code now}, in the order they were added. An item watched
   * during the visit is visited in it if it comes after the one being visited, at the next visit if not; an item that
   * {@code visit} lets rest, or removes, leaves.
   */
  public void visit(long now, Consumer<? super T> visit) {
    while (!resting.isEmpty() && resting.first().at <= now) {
      watch(resting.first());
    }
    if (watched.isEmpty()) {
      return;
    }
    for (T i = watched.first(); i != null; i = watched.higher(i)) {
      visit.accept(i);
    }
  }

  /**
   * The earliest of {@code wakeUp} over the watched items and the moments of the resting ones, where {@code none}
   * (what {@code wakeUp} gives for an item with nothing to do, and what this gives when no item has) is no moment.
   */
  public long earliest(ToLongFunction<? super T> wakeUp, long none) {
    long next = resting.isEmpty() ? none : resting.first().at;
    for (T i : watched) {
      long w = wakeUp.applyAsLong(i);
      if (w != none && (next == none || w < next)) {
        next = w;
      }
    }
    return next;
  }

  private void unrest(T item) {
    if (item.at != NONE) {
      resting.remove(item);
      item.at = NONE;
    }
  }
}
