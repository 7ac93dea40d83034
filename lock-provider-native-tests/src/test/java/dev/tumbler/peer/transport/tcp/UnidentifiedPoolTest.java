package dev.tumbler.peer.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The pool of connections awaiting HELLO, scripted: admits, reads begun, HELLOs and ends. */
class UnidentifiedPoolTest {

  @Test
  void admitsUpToItsCapacityWithoutEvicting() {
    UnidentifiedPool<String> pool = new UnidentifiedPool<>(3);
    assertNull(pool.admit("a"));
    assertNull(pool.admit("b"));
    assertNull(pool.admit("c"));
    assertEquals(3, pool.size());
  }

  @Test
  void aFullPoolEvictsTheConnectionReadLongestNotTheOldestAdmitted() {
    UnidentifiedPool<String> pool = new UnidentifiedPool<>(3);
    pool.admit("a");
    pool.admit("b");
    pool.admit("c");
    pool.reading("b");
    pool.reading("c");
    assertEquals("b", pool.admit("d"), "a was admitted first, but nobody has read it yet");
    assertEquals("c", pool.admit("e"));
    assertEquals(3, pool.size());
  }

  @Test
  void aConnectionNotYetReadIsNeverEvicted() {
    // the accept loop ran ahead of the handshake threads: a member's HELLO may be waiting unread in any of these
    UnidentifiedPool<String> pool = new UnidentifiedPool<>(2);
    pool.admit("member");
    pool.admit("attacker");
    assertFalse(pool.hasRoom());
    assertThrows(IllegalStateException.class, () -> pool.admit("next"));
    pool.reading("attacker");
    assertTrue(pool.hasRoom());
    assertEquals("attacker", pool.admit("next"));
    pool.reading("member");
    assertTrue(pool.remove("member"), "its HELLO named a member: it leaves the pool");
    assertTrue(pool.hasRoom());
    assertNull(pool.admit("another"));
  }

  @Test
  void aConnectionThatEndsLeavesThePool() {
    UnidentifiedPool<String> pool = new UnidentifiedPool<>(2);
    pool.admit("a");
    pool.admit("b");
    assertTrue(pool.remove("a"));
    assertFalse(pool.remove("a"));
    assertNull(pool.admit("c"));
    pool.reading("a"); // its thread starts after it was closed: nothing changes
    assertFalse(pool.hasRoom());
    assertEquals(2, pool.size());
  }

  @Test
  void rejectsBadArguments() {
    assertThrows(IllegalArgumentException.class, () -> new UnidentifiedPool<String>(0));
    UnidentifiedPool<String> pool = new UnidentifiedPool<>(2);
    pool.admit("a");
    assertThrows(IllegalArgumentException.class, () -> pool.admit("a"));
    pool.reading("a");
    assertThrows(IllegalArgumentException.class, () -> pool.admit("a"));
    assertThrows(NullPointerException.class, () -> pool.admit(null));
  }
}
