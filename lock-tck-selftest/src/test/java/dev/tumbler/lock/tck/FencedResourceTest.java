package dev.tumbler.lock.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class FencedResourceTest {

  @Test
  void rejectsLowerTokensAndCountsThem() {
    FencedResource<String> r = new FencedResource<>();
    assertEquals(Long.MIN_VALUE, r.highestToken());
    assertTrue(r.write(5, "a"));
    assertTrue(r.write(5, "a2"), "the same holder writes again with its token");
    assertTrue(r.write(7, "b"));
    assertFalse(r.write(6, "stale"));
    assertFalse(r.write(5, "staler"));
    assertEquals("b", r.value());
    assertEquals(7, r.highestToken());
    assertEquals(2, r.staleWrites());
    assertEquals(3, r.acceptedWrites());
    assertEquals(List.of(5L, 5L, 7L), r.acceptedTokens());
  }
}
