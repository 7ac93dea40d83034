package dev.tumbler.peer.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The index of moments the lease server and clients find their due work in. */
class MomentsTest {

  @Test
  void keysComeDueInTimeOrderThenKeyOrderAndEachSlotHasOneMoment() {
    Moments<String> m = new Moments<>();
    Moments.Slot<String> a = new Moments.Slot<>("a");
    Moments.Slot<String> b = new Moments.Slot<>("b");
    Moments.Slot<String> c = new Moments.Slot<>("c");
    assertEquals(Moments.NONE, m.first());
    m.set(b, 20);
    m.set(a, 20);
    m.set(c, 10);
    assertEquals(10, m.first());
    assertEquals(List.of("c", "a", "b"), m.due(20, new ArrayList<>()));
    assertEquals(List.of("c"), m.due(19, new ArrayList<>()), "not a nanosecond early");
    m.set(c, 30); // moved, not added
    assertEquals(List.of("a", "b"), m.due(29, new ArrayList<>()));
    m.set(a, Moments.NONE);
    assertEquals(List.of("b", "c"), m.due(Long.MAX_VALUE - 1, new ArrayList<>()));
    m.set(a, Moments.NONE); // taking out what is out changes nothing
    m.set(b, 20); // the same moment again
    assertEquals(List.of("b", "c"), m.due(30, new ArrayList<>()));
    m.clear();
    assertEquals(Moments.NONE, m.first());
    assertEquals(List.of(), m.due(Long.MAX_VALUE, new ArrayList<>()));
    m.set(a, 5); // a slot taken out by clear goes back in
    assertEquals(List.of("a"), m.due(5, new ArrayList<>()));
  }

  @Test
  void twoSlotsOfOneKeyAtOneMomentAreTwoEntries() {
    // a name forgotten and used again in one step: the new owner's slot is set before the old one leaves
    Moments<String> m = new Moments<>();
    Moments.Slot<String> old = new Moments.Slot<>("x");
    Moments.Slot<String> fresh = new Moments.Slot<>("x");
    m.set(old, 7);
    m.set(fresh, 7);
    m.set(old, Moments.NONE);
    assertEquals(7, m.first(), "taking the old slot out left the new one in");
    assertEquals(List.of("x"), m.due(7, new ArrayList<>()));
  }

  @Test
  void agreesWithAWalkOfEveryKeyUnderRandomChanges() {
    Random random = new Random(7);
    Moments<Integer> m = new Moments<>();
    Map<Integer, Moments.Slot<Integer>> slots = new HashMap<>();
    TreeMap<Integer, Long> truth = new TreeMap<>();
    for (int i = 0; i < 20_000; i++) {
      int key = random.nextInt(50);
      long at = random.nextInt(4) == 0 ? Moments.NONE : random.nextInt(1_000) - 500;
      m.set(slots.computeIfAbsent(key, Moments.Slot::new), at);
      if (at == Moments.NONE) {
        truth.remove(key);
      } else {
        truth.put(key, at);
      }
      long now = random.nextInt(1_200) - 600;
      TreeSet<Integer> due = new TreeSet<>();
      long first = Moments.NONE;
      for (var e : truth.entrySet()) {
        first = Math.min(first, e.getValue());
        if (e.getValue() <= now) {
          due.add(e.getKey());
        }
      }
      assertEquals(first, m.first());
      assertEquals(due, m.due(now, new TreeSet<>()));
    }
  }
}
