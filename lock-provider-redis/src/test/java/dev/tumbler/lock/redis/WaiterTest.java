package dev.tumbler.lock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * How a waiter counts the releases it hears. On Redlock a release is published by every master that let the lock go,
 * with the same event (the releaser's owner value).
 */
class WaiterTest {

  /** The copies of one release heard before the waiter looks again wake it once. */
  @Test
  void copiesOfOneReleaseBeforeALookWakeOnce() {
    Waiter w = new Waiter("me");
    long seen = w.version();
    w.signal("reader-1");
    w.signal("reader-1");
    w.signal("reader-1");
    assertEquals(seen + 1, w.version());
  }

  /**
   * A copy heard after the waiter looked again wakes it again: the first master's copy woke it, it looked while the
   * other masters still listed the releaser and was refused by them, and their copies came after. Dropped as heard
   * already, they left it asleep until {@code recheck} (a soak run's RedlockTest waited 10 s for a writer that way).
   */
  @Test
  void aCopyHeardAfterTheNextLookWakesAgain() {
    Waiter w = new Waiter("me");
    w.version();
    w.signal("reader-1"); // master 0 released and published
    long seen = w.version(); // the waiter looks again: refused by masters 1 and 2, which still list the reader
    w.signal("reader-1"); // masters 1 and 2 release and publish
    w.signal("reader-1");
    assertTrue(w.version() > seen, "the later copies of the release did not wake the waiter");
  }
}
