package dev.tumbler.peer.core;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * Sets and maps that most of their owners leave empty (a held lock's replies, refusals, deferred requests): a shared
 * empty one ({@code Set.of()}, {@code Map.of()}) until the first element, then one of the owner's own, in insertion
 * order. Each method returns what the owner keeps from then on. An empty collection of a lock's made for every lock
 * held cost about 70 bytes each.
 */
public final class Lazy {

  private Lazy() {}

  /** {@code set} with {@code element} added. */
  public static <T> Set<T> add(Set<T> set, T element) {
    Set<T> s = set.isEmpty() ? new LinkedHashSet<>() : set;
    s.add(element);
    return s;
  }

  /** {@code set} without {@code element}. */
  public static <T> Set<T> remove(Set<T> set, T element) {
    if (!set.isEmpty()) {
      set.remove(element);
    }
    return set;
  }

  /** {@code map} with {@code key} mapped to {@code value}. */
  public static <K, V> Map<K, V> put(Map<K, V> map, K key, V value) {
    Map<K, V> m = map.isEmpty() ? new LinkedHashMap<>() : map;
    m.put(key, value);
    return m;
  }
}
