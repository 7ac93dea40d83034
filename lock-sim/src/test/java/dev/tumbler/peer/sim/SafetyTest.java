package dev.tumbler.peer.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.core.Claim;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The checker's rules on hand-made histories: each rule accepts what it should and names what it refuses. */
class SafetyTest {
  private final Safety safety = new Safety();
  private final Set<Long> invalid = new HashSet<>();

  private void grant(long id, Claim c, long token) {
    grant(id, c, token, 1);
  }

  private void grant(long id, Claim c, long token, int permits) {
    safety.granted(new Safety.Grant(id, "n" + id, c, token, permits), g -> !invalid.contains(g.requestId()));
  }

  private void refused(String rule, Runnable r) {
    IllegalStateException e = assertThrows(IllegalStateException.class, r::run);
    assertTrue(e.getMessage().startsWith(rule + ":"), e.getMessage());
  }

  @Test
  void exclusiveGrantsExcludeAndTheirTokensIncrease() {
    grant(1, Claim.exclusive("x"), 10);
    refused("exclusion", () -> grant(2, Claim.exclusive("x"), 11));
    grant(3, Claim.exclusive("y"), 5); // another name: no conflict, its own tokens
    safety.ended(1);
    refused("fencing", () -> grant(4, Claim.exclusive("x"), 10)); // F1
    refused("fencing", () -> grant(5, Claim.exclusive("x"), 9)); // F2 / F3
    grant(6, Claim.exclusive("x"), 12);
    assertEquals(2, safety.live().size());
  }

  @Test
  void aGrantNoLongerValidDoesNotExclude() {
    grant(1, Claim.exclusive("x"), 10);
    invalid.add(1L); // its window closed, or its node died: the holder can no longer act on it
    grant(2, Claim.exclusive("x"), 11);
    // neither counts now, but F3 still holds a later exclusive grant above every earlier one
    invalid.add(2L);
    refused("fencing", () -> grant(3, Claim.exclusive("x"), 11));
    grant(4, Claim.exclusive("x"), 12);
  }

  @Test
  void readersShareWritersExcludeAndReadTokensNeedOnlyBeUniqueAndAboveEnded() {
    grant(1, Claim.read("r"), 20);
    grant(2, Claim.read("r"), 15); // shared grants by different leaders need not be ordered (F-5)
    refused("exclusion", () -> grant(3, Claim.write("r", Claim.Writer.HARD, 0), 30));
    safety.ended(1);
    refused("fencing", () -> grant(4, Claim.read("r"), 19)); // F2: below the ended reader's 20
    safety.ended(2);
    refused("fencing", () -> grant(5, Claim.write("r", Claim.Writer.HARD, 0), 20)); // F1
    grant(6, Claim.write("r", Claim.Writer.SOFT, 0), 21);
    refused("exclusion", () -> grant(7, Claim.read("r"), 22));
  }

  @Test
  void permitsStayWithinTheLimit() {
    grant(1, Claim.permits("s", 2, 3), 1, 2);
    grant(2, Claim.permits("s", 1, 3), 2, 1);
    refused("permits", () -> grant(3, Claim.permits("s", 1, 3), 3, 1));
    safety.ended(1);
    grant(4, Claim.permits("s", 2, 3), 4, 2);
    // handles that disagree on the limit (BU-1): each grant fits in its own handle's limit with the grants made
    // before it (smaller tokens), and all fit in the largest limit
    grant(5, Claim.permits("t", 2, 5), 10, 2);
    refused("permits", () -> grant(6, Claim.permits("t", 1, 2), 11, 1)); // 3 out with a handle of 2
    grant(7, Claim.permits("t", 1, 2), 9, 1); // made before the 2 of a handle of 5, reported after them
    grant(10, Claim.permits("t", 2, 5), 12, 2);
    refused("permits", () -> grant(11, Claim.permits("t", 1, 5), 13, 1));
    // a lock and a semaphore of one name are different things
    grant(8, Claim.exclusive("s"), 1);
  }

  @Test
  void anUnusedGrantIsJudgedForExclusionButNotForItsTokensOrder() {
    // a transaction's hold told again after its client gave up, as the core still counts it (token 5), past a
    // reader that ended meanwhile (token 7): never used, so not judged for F2
    safety.granted(new Safety.Grant(1, "n1", Claim.tx(List.of("a"), Claim.Mode.READ), 7, 1, 10, 2),
        g -> true);
    safety.ended(1, 20);
    refused("fencing", () -> safety.granted(new Safety.Grant(2, "n2", Claim.tx(List.of("a"), Claim.Mode.READ), 5, 1,
        30, 3), g -> true));
    safety.granted(new Safety.Grant(3, "n2", Claim.tx(List.of("a"), Claim.Mode.READ), 5, 1, 30, 3), g -> true, true);
    safety.ended(3, 35); // dropped as soon as judged
    safety.granted(new Safety.Grant(4, "n3", Claim.tx(List.of("a"), Claim.Mode.WRITE), 9, 1, 40, 4), g -> true);
    refused("exclusion", () -> safety.granted(new Safety.Grant(5, "n4", Claim.tx(List.of("a"), Claim.Mode.WRITE), 11,
        1, 50, 5), g -> true, true));
  }

  @Test
  void transactionPathsConflictWithAncestorsAndDescendantsNotSiblings() {
    assertTrue(Safety.conflicts(Claim.tx(List.of("a"), Claim.Mode.WRITE), Claim.tx(List.of("a", "b", "c"),
        Claim.Mode.READ)));
    assertTrue(Safety.conflicts(Claim.tx(List.of("a", "b"), Claim.Mode.READ), Claim.tx(List.of("a"),
        Claim.Mode.WRITE)));
    assertFalse(Safety.conflicts(Claim.tx(List.of("a", "b"), Claim.Mode.WRITE), Claim.tx(List.of("a", "c"),
        Claim.Mode.WRITE)));
    assertFalse(Safety.conflicts(Claim.tx(List.of("a"), Claim.Mode.READ), Claim.tx(List.of("a", "b"),
        Claim.Mode.READ)));
    assertFalse(Safety.conflicts(Claim.exclusive("a/b"), Claim.exclusive("a")), "a flat name is never a path");
    grant(1, Claim.tx(List.of("a", "b"), Claim.Mode.WRITE), 1);
    grant(2, Claim.tx(List.of("a", "c"), Claim.Mode.WRITE), 1);
    refused("exclusion", () -> grant(3, Claim.tx(List.of("a"), Claim.Mode.READ), 2));
  }

  @Test
  void aGrantCountsFromWhenItWasMadeForF2() {
    // an echo-rule grant made at 100 (its client's send time) and reported later: a shared grant that the
    // server made after it, and that ended at 150 before the report, does not make it late
    safety.granted(new Safety.Grant(1, "n1", Claim.read("r"), 10, 1, 90), g -> true);
    safety.granted(new Safety.Grant(2, "n2", Claim.read("r"), 12, 1, 110), g -> true);
    safety.ended(2, 150);
    safety.granted(new Safety.Grant(3, "n3", Claim.read("r"), 11, 1, 100), g -> true);
    // but one made after that end is judged against it
    refused("fencing", () -> safety.granted(new Safety.Grant(4, "n4", Claim.read("r"), 11, 1, 151), g -> true));
    // an exclusive grant is above every earlier grant whenever it was made (F3)
    refused("fencing", () -> safety.granted(new Safety.Grant(5, "n5", Claim.write("r", Claim.Writer.HARD, 0), 12, 1,
        0), g -> false));
  }

  @Test
  void aRequestGrantedTwiceIsABookkeepingError() {
    grant(1, Claim.exclusive("x"), 1);
    refused("bookkeeping", () -> grant(1, Claim.exclusive("z"), 2));
  }
}
