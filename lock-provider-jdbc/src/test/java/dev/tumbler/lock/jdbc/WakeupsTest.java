package dev.tumbler.lock.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** The waiters' registry: a waiter registered is woken by every release of its key until it unregisters. */
class WakeupsTest {

  /**
   * A wait that registers while the key's last other waiter unregisters is still woken. Registering took the key's set
   * out of the map and then added to it; the other's unregister could empty and drop that set in between, and the new
   * waiter, in a set nobody looked at, slept through every release (a hot lock stood free with four waiters asleep in
   * line until their deadlines).
   */
  @Test
  void aWaiterRegisteredWhileTheLastOtherLeavesIsWoken() throws Exception {
    Wakeups wakeups = new Wakeups("wakeups-test-" + UUID.randomUUID());
    try {
      assertNoWakeUpLost("a registered waiter was not woken by a release of its key",
          () -> wakeups.unregister("k", wakeups.register("k", "other")), () -> {
            Wakeups.Waiter w = wakeups.register("k", "me");
            long seen = w.version();
            wakeups.local("k", "me");
            wakeups.unregister("k", w);
            return w.version() != seen;
          });
    } finally {
      wakeups.close();
    }
  }

  /**
   * A service that opens while the last other service on the same database closes is still woken by the releases of
   * the services opened after it. It joined the database's set the way waiters joined a key's (take, then add): into a
   * set the closing service could drop meanwhile, where no release of this JVM looked, and a release that names one of
   * its waiters sends no notification either.
   */
  @Test
  void aServiceOpenedWhileTheLastOtherClosesIsWokenByTheOthers() throws Exception {
    String database = "wakeups-test-" + UUID.randomUUID();
    assertNoWakeUpLost("a waiter of a service opened beside a closing one was not woken by another service's release",
        () -> new Wakeups(database).close(), () -> {
          Wakeups mine = new Wakeups(database);
          Wakeups.Waiter w = mine.register("k", "me");
          Wakeups releaser = new Wakeups(database);
          releaser.local("k", null);
          boolean woken = w.version() != 0;
          releaser.close();
          mine.close();
          return woken;
        });
  }

  /** A release that names the first in line wakes that waiter only; one that names nobody wakes every waiter of the key. */
  @Test
  void aReleaseNamingTheFirstWakesOnlyIt() {
    Wakeups wakeups = new Wakeups("wakeups-test-" + UUID.randomUUID());
    try {
      Wakeups.Waiter a = wakeups.register("k", "a");
      Wakeups.Waiter b = wakeups.register("k", "b");
      Wakeups.Waiter other = wakeups.register("other", "c");
      wakeups.local("k", "b");
      assertEquals(0, a.version(), "a waiter the release did not name was woken");
      assertEquals(1, b.version());
      assertTrue(b.takeFirst(), "the waiter named first was not told so");
      assertTrue(!b.takeFirst(), "being named first is told once");
      wakeups.notified(">a k");
      assertEquals(1, a.version(), "a notification naming the first did not wake it");
      assertEquals(1, b.version());
      wakeups.notified("k");
      assertEquals(2, a.version());
      assertEquals(2, b.version());
      assertTrue(!b.takeFirst(), "a release naming nobody told a waiter it was first");
      assertEquals(0, other.version(), "a release woke a waiter of another key");
    } finally {
      wakeups.close();
    }
  }

  /**
   * Runs {@code round} for two seconds while two threads run {@code churn} over and over, and fails with {@code what}
   * when a round says its waiter was not woken.
   */
  private static void assertNoWakeUpLost(String what, Runnable churn, BooleanSupplier round) throws Exception {
    AtomicBoolean stop = new AtomicBoolean();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 2; t++) {
      threads.add(Thread.ofPlatform().start(() -> {
        while (!stop.get()) {
          churn.run();
        }
      }));
    }
    int rounds = 0;
    boolean lost = false;
    long end = System.nanoTime() + 2_000_000_000L;
    try {
      while (System.nanoTime() - end < 0 && !lost) {
        rounds++;
        lost = !round.getAsBoolean();
      }
    } finally {
      stop.set(true);
      for (Thread t : threads) {
        t.join();
      }
    }
    assertFalse(lost, what + " (in round " + rounds + ")");
    assertTrue(rounds > 1000, "too few rounds to say anything: " + rounds);
  }
}
