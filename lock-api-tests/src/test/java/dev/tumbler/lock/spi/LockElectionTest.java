package dev.tumbler.lock.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.LeaderElection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class LockElectionTest {
  private final TestBackend backend = new TestBackend();

  @Test
  void exactlyOneLeaderAndANewOneAfterItResigns() throws Exception {
    TestBackend.TestService s1 = backend.open(LeaseSettings.defaults(), Ticker.system());
    TestBackend.TestService s2 = backend.open(LeaseSettings.defaults(), Ticker.system());
    List<Boolean> changes1 = new CopyOnWriteArrayList<>();
    LeaderElection e1 = s1.election("e").onLeadershipChange(changes1::add);
    LeaderElection e2 = s2.election("e");
    assertThrows(IllegalStateException.class, () -> e1.awaitLeadership(Duration.ZERO));
    e1.join();
    assertTrue(e1.awaitLeadership(Duration.ofSeconds(5)));
    e2.join();
    assertFalse(e2.awaitLeadership(Duration.ofMillis(200)));
    assertTrue(e1.isLeader() && !e2.isLeader());
    assertEquals(e1.candidateId(), e1.leader().orElseThrow());
    long firstToken = e1.leadership().orElseThrow().fencingToken();
    e1.resign();
    assertFalse(e1.isLeader());
    assertTrue(e2.awaitLeadership(Duration.ofSeconds(5)));
    assertTrue(e2.leadership().orElseThrow().fencingToken() > firstToken);
    assertEquals(List.of(true, false), changes1);
    s1.close();
    s2.close();
  }

  @Test
  void leaderLosingItsServiceHandsOver() throws Exception {
    TestBackend.TestService s1 = backend.open(LeaseSettings.defaults(), Ticker.system());
    TestBackend.TestService s2 = backend.open(LeaseSettings.defaults(), Ticker.system());
    List<Boolean> changes1 = new CopyOnWriteArrayList<>();
    LeaderElection e1 = s1.election("e").onLeadershipChange(changes1::add).join();
    assertTrue(e1.awaitLeadership(Duration.ofSeconds(5)));
    long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (changes1.isEmpty() && System.nanoTime() - end < 0) {
      Thread.sleep(1); // isLeader() turns true just before the listeners hear it
    }
    List<String> heardByE1WhenE2Led = new CopyOnWriteArrayList<>();
    LeaderElection e2 = s2.election("e").onLeadershipChange(leads -> {
      if (leads) {
        heardByE1WhenE2Led.add(changes1.toString());
      }
    }).join();
    s1.close();
    // the loss is heard on the closing thread, inside the lease's lost listener: before close() returns and
    // before the lock can be granted to the next candidate, not whenever the campaign thread runs again
    assertEquals(List.of(true, false), changes1, "the leader had not heard false when close() returned");
    assertFalse(e1.isLeader());
    assertTrue(e2.awaitLeadership(Duration.ofSeconds(5)));
    long heardBy = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (heardByE1WhenE2Led.isEmpty() && System.nanoTime() - heardBy < 0) {
      Thread.sleep(1); // isLeader() turns true just before the listeners hear it
    }
    assertEquals(List.of("[true, false]"), heardByE1WhenE2Led, "what the old leader had heard when the new one led");
    s2.close();
  }
}
