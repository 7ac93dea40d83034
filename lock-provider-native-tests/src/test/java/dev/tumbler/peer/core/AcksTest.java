package dev.tumbler.peer.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class AcksTest {

  @Test
  void onlyFirstAnswersOfAskedNodesOfTheTermCount() {
    Acks a = new Acks(7, List.of("a", "b", "c"), Acks.majority(3));
    assertTrue(a.add(7, "a"));
    assertFalse(a.add(7, "a"), "a second answer of the same sender");
    assertFalse(a.reached(), "one sender answering twice is not a quorum of two (seed 003's unsafety)");
    assertFalse(a.add(6, "b"), "an answer of an older term");
    assertFalse(a.add(7, "x"), "an answer of a node that was not asked");
    assertFalse(a.reached());
    assertEquals(Set.of("b", "c"), a.missing());
    assertTrue(a.add(7, "c"));
    assertTrue(a.reached());
    assertEquals(2, a.count());
  }

  @Test
  void majoritiesAndImpossibleQuorums() {
    assertEquals(1, Acks.majority(1));
    assertEquals(2, Acks.majority(2));
    assertEquals(2, Acks.majority(3));
    assertEquals(3, Acks.majority(4));
    assertEquals(3, Acks.majority(5));
    assertThrows(IllegalArgumentException.class, () -> Acks.majority(0));
    assertThrows(IllegalArgumentException.class, () -> new Acks(1, List.of("a", "b"), 3));
    assertThrows(IllegalArgumentException.class, () -> new Acks(1, List.of("a"), 0));
  }
}
