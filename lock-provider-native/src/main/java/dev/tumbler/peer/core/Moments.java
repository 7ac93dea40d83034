package dev.tumbler.peer.core;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * Keys by the moment each is next due, in time order: what lets a core's timer find the work that is due, and the
 * earliest moment, without walking every name it knows. A key has at most one moment. Mutable; owned by one core.
 *
 * @param <K> the keys (names), ordered among those due at the same moment
 */
public final class Moments<K extends Comparable<? super K>> {

  /** No moment: a key set to it is taken out. */
  public static final long NONE = Long.MAX_VALUE;

  private final Map<K, Long> at = new HashMap<>();
  private final TreeSet<Entry<K>> order = new TreeSet<>();

  private record Entry<K extends Comparable<? super K>>(long at, K key) implements Comparable<Entry<K>> {
    @Override
    public int compareTo(Entry<K> o) {
      int c = Long.compare(at, o.at);
      return c != 0 ? c : key.compareTo(o.key);
    }
  }

  /** Sets {@code key}'s moment; {@link #NONE} takes the key out. */
  public void set(K key, long moment) {
    Long was = moment == NONE ? at.remove(key) : at.put(key, moment);
    if (was != null && was == moment) {
      return;
    }
    if (was != null) {
      order.remove(new Entry<>(was, key));
    }
    if (moment != NONE) {
      order.add(new Entry<>(moment, key));
    }
  }

  /** The earliest moment, or {@link #NONE} when no key has one. */
  public long first() {
    return order.isEmpty() ? NONE : order.first().at;
  }

  /** Adds the keys due by {@code now} (their moment is {@code now} or earlier) to {@code into}, and returns it. */
  public <C extends Collection<? super K>> C due(long now, C into) {
    for (Entry<K> e : order) {
      if (e.at > now) {
        break;
      }
      into.add(e.key);
    }
    return into;
  }

  /** Takes every key out. */
  public void clear() {
    at.clear();
    order.clear();
  }
}
