package dev.tumbler.peer.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The lease rule for lost grants, as the lease, buckets and thin-client cores share it. */
class LostGrantsTest {

  private static final long T = 120_000_000L;

  @Test
  void aGrantIsTrustedThreeQuartersOfTheTermAndKeptTheRest() {
    assertEquals(90_000_000L, LostGrants.trustNanos(T));
    assertEquals(30_000_000L, LostGrants.keepNanos(T));
    // rounded as every core rounds it: the trust never exceeds 3T/4, and trust + keep is the whole term
    assertEquals(5, LostGrants.trustNanos(7));
    assertEquals(2, LostGrants.keepNanos(7));
    assertEquals(0, LostGrants.trustNanos(1));
    assertEquals(1, LostGrants.keepNanos(1));
    assertThrows(IllegalArgumentException.class, () -> new LostGrants<String>(0));
  }

  @Test
  void aLostGrantIsKeptUntilTheRestOfItsTermThenDueOnce() {
    LostGrants<String> lost = new LostGrants<>(T);
    assertEquals(Long.MAX_VALUE, lost.next());
    lost.keep("a", 1_000);
    assertTrue(lost.kept("a"));
    assertFalse(lost.over("a", 1_000 + 30_000_000L - 1));
    assertEquals(List.of(), lost.due(1_000 + 30_000_000L - 1), "not a nanosecond early");
    assertTrue(lost.over("a", 1_000 + 30_000_000L));
    assertEquals(1_000 + 30_000_000L, lost.next());
    assertEquals(List.of("a"), lost.due(1_000 + 30_000_000L));
    assertFalse(lost.kept("a"), "due once, then forgotten");
    assertEquals(List.of(), lost.due(Long.MAX_VALUE));
    assertTrue(lost.isEmpty());
  }

  @Test
  void grantsComeDueInTheOrderTheyWereLostAndAreRestatedInThatOrder() {
    LostGrants<String> lost = new LostGrants<>(T);
    lost.keep("b", 10);
    lost.keep("a", 20);
    lost.keep("c", 30);
    assertEquals(List.of("b", "a", "c"), List.copyOf(lost.grants()));
    lost.forget("a");
    assertEquals(10 + 30_000_000L, lost.next());
    assertEquals(List.of("b", "c"), lost.due(Long.MAX_VALUE));
    lost.keep("d", 40);
    lost.clear();
    assertTrue(lost.isEmpty());
    assertEquals(Long.MAX_VALUE, lost.next());
  }
}
