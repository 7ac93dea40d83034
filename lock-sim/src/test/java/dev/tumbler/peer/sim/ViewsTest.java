package dev.tumbler.peer.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.core.Leader;
import dev.tumbler.peer.core.Observation;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The view rules (V-1, V-2) on hand-made histories: each accepts what it should and names what it refuses. */
class ViewsTest {
  private static final long NOT_ACTIVE = Long.MIN_VALUE;
  private static final Leader A = new Leader("a", 1);
  private static final Leader B = new Leader("b", 2);
  private static final Leader C = new Leader("c", 3);

  private final Views views = new Views();
  private final Map<String, Long> clocks = new HashMap<>(Map.of("a", 1_000L, "b", 5_000L, "c", 9_000L));

  private void publish(Leader node, long term, List<Leader> leaders, long activeUntil) {
    views.published(node.nodeId(), node, new Observation.View(term, leaders, activeUntil), clocks::get);
  }

  private static void refused(String rule, Runnable r) {
    IllegalStateException e = assertThrows(IllegalStateException.class, r::run);
    assertTrue(e.getMessage().startsWith(rule + ":"), e.getMessage());
  }

  @Test
  void oneLeaderListPerTerm() {
    publish(A, 1, List.of(A), 1_030);
    publish(B, 1, List.of(A), NOT_ACTIVE);
    refused("V-1", () -> publish(C, 1, List.of(B), NOT_ACTIVE));
    refused("V-1", () -> publish(C, 1, List.of(new Leader("a", 7)), NOT_ACTIVE)); // another incarnation of a
    assertEquals(1, views.highestTerm());
  }

  @Test
  void aDroppedLeaderIsInactiveBeforeTheNextTermExists() {
    publish(A, 1, List.of(A), 1_030); // a leads until 1030 by its clock, which reads 1000
    refused("V-2", () -> publish(B, 2, List.of(B), NOT_ACTIVE));
    clocks.put("a", 1_030L); // its lease ran out
    publish(B, 2, List.of(B), NOT_ACTIVE);
    // and it may not act in term 1 again now that term 2 exists without it
    refused("V-2", () -> publish(A, 1, List.of(A), 1_060));
  }

  @Test
  void aLeaderKeptInTheNextTermMayStayActive() {
    publish(A, 1, List.of(A, B), 1_030);
    publish(C, 2, List.of(A, C), NOT_ACTIVE);
    publish(A, 2, List.of(A, C), 1_040);
  }

  @Test
  void aCrashedLeaderNoLongerActsAndARestartedOneIsANewIncarnation() {
    publish(A, 1, List.of(A), 1_030);
    views.down("a");
    publish(B, 2, List.of(B), NOT_ACTIVE);
    Leader again = new Leader("a", 9);
    publish(again, 2, List.of(B), NOT_ACTIVE); // learns the view as a new incarnation
  }

  @Test
  void aNodeNeitherGoesBackNorActsOutsideItsView() {
    publish(B, 3, List.of(A), NOT_ACTIVE);
    refused("view", () -> publish(B, 2, List.of(A), NOT_ACTIVE));
    refused("view", () -> publish(C, 3, List.of(A), 9_100)); // active, but not a leader
  }
}
