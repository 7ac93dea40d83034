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
    LeaderElection e1 = s1.election("e").join();
    assertTrue(e1.awaitLeadership(Duration.ofSeconds(5)));
    LeaderElection e2 = s2.election("e").join();
    s1.close();
    assertFalse(e1.isLeader());
    assertTrue(e2.awaitLeadership(Duration.ofSeconds(5)));
    s2.close();
  }
}
