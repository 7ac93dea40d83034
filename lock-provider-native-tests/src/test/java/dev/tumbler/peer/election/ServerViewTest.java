package dev.tumbler.peer.election;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.core.Leader;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The grace of a new server, and which restatements count toward ending it early. */
class ServerViewTest {

  private static final long GRACE = 1_000;

  private static ServerView serverOfTerm(long term) {
    ServerView v = new ServerView("a", new TreeSet<>(List.of("b", "c")), GRACE, 10, 0);
    ServerView.Change c = v.view(0, term, List.of(new Leader("a", 1), new Leader("b", 1)), 500);
    assertTrue(c.freshServer() && c.startedServing(), c.toString());
    return v;
  }

  @Test
  void everyMemberRestatedForThisTermEndsTheGraceAtOnce() {
    ServerView v = serverOfTerm(5);
    assertTrue(v.inGrace(1));
    for (String node : List.of("a", "b", "c")) {
      assertTrue(v.takesRestatement(5), node);
      v.restated(node, 1);
    }
    assertTrue(v.endGraceIfAllRestated(2));
    assertFalse(v.inGrace(2));
  }

  @Test
  void aRestatementMadeForAnotherTermIsNotTaken() {
    ServerView v = serverOfTerm(5);
    assertFalse(v.takesRestatement(4), "made before a grant of term 4 may have reached the node");
    assertFalse(v.takesRestatement(6), "a term this server does not serve");
    v.restated("a", 1);
    v.restated("b", 1);
    assertFalse(v.endGraceIfAllRestated(2), "c has not restated for term 5");
    assertTrue(v.inGrace(2));
    assertEquals(GRACE, v.graceUntil());
  }

  @Test
  void aNodeThatDoesNotServeTakesNoRestatement() {
    ServerView v = new ServerView("b", new TreeSet<>(List.of("a", "c")), GRACE, 10, 0);
    v.view(0, 5, List.of(new Leader("a", 1)), Long.MIN_VALUE);
    assertFalse(v.takesRestatement(5));
  }
}
