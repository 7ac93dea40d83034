package dev.tumbler.peer.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClaimTest {

  @Test
  void factoriesMakeWhatTheySay() {
    assertTrue(Claim.exclusive("a/b").isPlainLock());
    assertEquals("a/b", Claim.exclusive("a/b").name(), "a flat name is one element, slashes and all");
    assertEquals(1, Claim.exclusive("a/b").path().size());
    assertEquals(Claim.Mode.READ, Claim.read("r").mode());
    Claim w = Claim.write("w", Claim.Writer.TIMED_SOFT, 5);
    assertEquals(Claim.Writer.TIMED_SOFT, w.writer());
    assertEquals(5, w.quietNanos());
    Claim p = Claim.permits("s", 2, 5);
    assertEquals(Claim.Mode.PERMITS, p.mode());
    assertFalse(p.isPlainLock());
    assertFalse(Claim.permits("s", 1, 1).isPlainLock(), "a one-permit semaphore is still a semaphore");
    assertEquals("a/b/c", Claim.tx(List.of("a", "b", "c"), Claim.Mode.WRITE).name());
  }

  @Test
  void badClaimsAreRefusedWithTheReason() {
    assertMessage(() -> Claim.tx(List.of(), Claim.Mode.READ), "1 to 16 elements");
    assertMessage(() -> Claim.tx(Collections.nCopies(17, "x"), Claim.Mode.READ), "1 to 16 elements");
    assertMessage(() -> Claim.tx(List.of("a", ""), Claim.Mode.READ), "empty element");
    assertMessage(() -> Claim.permits("s", 0, 3), "1 to limit permits");
    assertMessage(() -> Claim.permits("s", 4, 3), "1 to limit permits");
    assertMessage(() -> new Claim(List.of("x"), Claim.Mode.EXCLUSIVE, 1, 2, Claim.Writer.HARD, 0), "limit above 1");
    assertMessage(() -> new Claim(List.of("a", "b"), Claim.Mode.PERMITS, 1, 2, Claim.Writer.HARD, 0),
        "names one semaphore");
    assertMessage(() -> new Claim(List.of("x"), Claim.Mode.READ, 1, 1, Claim.Writer.SOFT, 0), "SOFT writer mode");
    assertMessage(() -> Claim.write("w", Claim.Writer.TIMED_SOFT, 0), "quiet period");
    assertMessage(() -> Claim.write("w", Claim.Writer.HARD, 10), "quiet period");
    assertMessage(() -> Claim.exclusive("x").withTag("t".repeat(Claim.MAX_TAG_LENGTH + 1)), "tag");
    assertMessage(() -> Claim.exclusive("x").withTag("a\nb"), "control character");
  }

  @Test
  void aTagNamesWhoClaimsAndChangesNothingElse() {
    assertEquals("", Claim.exclusive("x").tag(), "no tag unless given");
    Claim tagged = Claim.exclusive("x").withTag("node-1#3.1");
    assertEquals("node-1#3.1", tagged.tag());
    assertEquals(Claim.exclusive("x"), tagged.withTag(""));
    assertTrue(tagged.isPlainLock());
    assertEquals("x", tagged.name());
  }

  private static void assertMessage(Runnable r, String part) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, r::run);
    assertTrue(e.getMessage().contains(part), e.getMessage());
  }
}
