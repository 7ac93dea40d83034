package dev.tumbler.peer.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.agent.LockTable.Entry;
import dev.tumbler.peer.agent.LockTable.Info;
import dev.tumbler.peer.agent.LockTable.Mode;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The lock server's table: the design's scripted scenarios 1 and 7, FIFO, surrender, versions, and a fuzz. */
class LockTableTest {
  private static final AgentId T0 = new AgentId(10, 0, 0);
  private static final AgentId T1 = new AgentId(11, 0, 1);
  private static final AgentId T2 = new AgentId(12, 1, 0);
  private static final AgentId T3 = new AgentId(13, 2, 0);
  private static final AgentId T4 = new AgentId(14, 0, 2);

  private final LockTable table = new LockTable();

  private static List<String> p(String... names) {
    return List.of(names);
  }

  private boolean holds(AgentId a, List<String> path) {
    return table.entries().stream().anyMatch(e -> e.agent().equals(a) && e.path().equals(path) && e.held());
  }

  private void check() {
    assertNull(table.conflictAmongHolders());
  }

  @Test
  void aRestartedServerTakesBackEveryHolderBeforeAnUpgradeAmongThemIsGranted() {
    // seed 636297: T0 held x as reader and waited to write it, T1 held x as reader too; the server restarted and
    // took T0's entry back first: granting T0's upgrade before T1's entry was back gave T0 a write beside T1's read
    table.reinstate(List.of(new LockTable.Held(T0, p("x"), Mode.WRITE, Mode.READ),
        new LockTable.Held(T1, p("x"), Mode.READ, Mode.READ), new LockTable.Held(T1, p("x", "b"), Mode.READ,
            Mode.READ)), 0);
    check();
    assertTrue(holds(T1, p("x")) && holds(T1, p("x", "b")));
    assertTrue(table.entries().stream().anyMatch(e -> e.agent().equals(T0) && e.holds() == Mode.READ
        && e.wants() == Mode.WRITE), "T0 still reads and waits to write: " + table.entries());
    table.end(T1, 0);
    assertTrue(table.entries().stream().anyMatch(e -> e.agent().equals(T0) && e.holds() == Mode.WRITE),
        "upgraded once T1 left");
  }

  @Test
  void freshWaitersOfAPathWaitOldestFirstWhateverOrderTheyCameIn() {
    // two servers hear the same requests in opposite orders: their waiters stand in the same order, so that when
    // the holder leaves both grant the same one
    LockTable other = new LockTable();
    table.lock(T0, p("x"), Mode.WRITE, 0);
    other.lock(T0, p("x"), Mode.WRITE, 0);
    for (AgentId a : List.of(T3, T1, T2)) {
      table.lock(a, p("x"), Mode.WRITE, 0);
    }
    for (AgentId a : List.of(T2, T3, T1)) {
      other.lock(a, p("x"), Mode.WRITE, 0);
    }
    assertEquals(List.of(T0, T1, T2, T3), table.entries().stream().map(Entry::agent).toList());
    assertEquals(List.of(T0, T1, T2, T3), other.entries().stream().map(Entry::agent).toList());
    table.end(T0, 0);
    other.end(T0, 0);
    assertTrue(holds(T1, p("x")));
    assertTrue(other.entries().stream().anyMatch(e -> e.agent().equals(T1) && e.held()), "the same one on both");
    // T1 surrenders with nobody older waiting: back to its place ahead of the younger T2 and T3, and granted again
    table.surrender(T1, p("x"), 0);
    assertTrue(holds(T1, p("x")));
    assertEquals(List.of(T1, T2, T3), table.entries().stream().map(Entry::agent).toList());
  }

  @Test
  void aSurrenderedEntryGoesBehindTheOlderWaitersAndAheadOfTheYoungerOnes() {
    // seed 000's sorted tail: the victim of a deadlock is its youngest agent, and the older one it gives way to is
    // ahead of it; the younger waiters stay behind it, so they do not come to wait for it through the queue's order
    table.lock(T2, p("x"), Mode.WRITE, 0);
    table.lock(T4, p("x"), Mode.WRITE, 0);
    table.lock(T1, p("x", "y"), Mode.READ, 0);
    table.lock(T3, p("x"), Mode.READ, 0);
    assertEquals(List.of(T2, T1, T3, T4), table.entries().stream().map(Entry::agent).toList(),
        "waiters by age, whatever their paths");
    table.surrender(T2, p("x"), 0);
    assertEquals(List.of(T1, T2, T3, T4), table.entries().stream().map(Entry::agent).toList());
    assertTrue(holds(T1, p("x", "y")), "the older waiter it made way for");
    assertTrue(!holds(T2, p("x")), "and not granted back past it");
    table.end(T1, 0);
    assertTrue(holds(T2, p("x")), "then granted again, ahead of the younger T3 and T4");
    check();
  }

  @Test
  void hierarchyConflictsBothWaysAndSiblingsDoNot() {
    // design §4.9 scenario 1
    table.lock(T1, p("a", "b"), Mode.WRITE, 0);
    table.lock(T4, p("a", "c"), Mode.WRITE, 0);
    assertTrue(holds(T4, p("a", "c")), "a sibling is granted at once");
    table.lock(T2, p("a", "b", "c"), Mode.READ, 0);
    assertTrue(!holds(T2, p("a", "b", "c")), "a descendant of a held path waits");
    table.lock(T3, p("a"), Mode.READ, 0);
    assertTrue(!holds(T3, p("a")), "an ancestor of held paths waits");
    check();
    table.end(T1, 0);
    assertTrue(holds(T2, p("a", "b", "c")));
    assertTrue(!holds(T3, p("a")), "[a] still waits for [a,c]");
    table.end(T4, 0);
    assertTrue(holds(T3, p("a")), "two readers on related paths");
    assertTrue(holds(T2, p("a", "b", "c")));
    check();
    assertEquals(List.of(p("a", "b", "c"), p("a")), table.entries().stream().map(Entry::path).toList(),
        "entries only for the paths asked for");
  }

  @Test
  void aWaiterOnAnAncestorDoesNotHoldBackAnUnrelatedDescendant() {
    // design §4.9 scenario 1, the TCK's variant
    table.lock(T0, p("n"), Mode.WRITE, 0);
    table.lock(T1, p("n", "a", "b"), Mode.WRITE, 0);
    assertTrue(!holds(T1, p("n", "a", "b")));
    table.end(T0, 0);
    assertTrue(holds(T1, p("n", "a", "b")));
    table.lock(T2, p("n"), Mode.WRITE, 0);
    assertTrue(!holds(T2, p("n")));
    table.lock(T3, p("n", "a", "c"), Mode.WRITE, 0);
    assertTrue(holds(T3, p("n", "a", "c")), "only holders block across related paths");
    check();
  }

  @Test
  void aSoleReaderIsUpgradedInPlaceAndOtherwiseWaitsForTheOtherReaders() {
    // design §4.9 scenario 7
    table.lock(T1, p("p"), Mode.READ, 0);
    long read = table.entries().getFirst().grantedAt();
    table.lock(T1, p("p"), Mode.WRITE, 0);
    Entry e = table.entries().getFirst();
    assertEquals(Mode.WRITE, e.holds());
    assertTrue(e.grantedAt() > read, "the upgrade is a new grant with a larger version");
    table.end(T1, 0);

    table.lock(T1, p("p"), Mode.READ, 0);
    table.lock(T2, p("p"), Mode.READ, 0);
    table.lock(T1, p("p"), Mode.WRITE, 0);
    assertTrue(!holds(T1, p("p")), "an upgrade waits while another reader holds");
    table.lock(T3, p("p"), Mode.READ, 0);
    assertTrue(!holds(T3, p("p")), "a new reader does not pass the waiting upgrade");
    check();
    table.end(T2, 0);
    assertTrue(holds(T1, p("p")));
    assertEquals(Mode.WRITE, table.queue(p("p")).getFirst().holds());
    check();
  }

  @Test
  void waitersOfOnePathAreServedInArrivalOrder() {
    table.lock(T1, p("x"), Mode.READ, 0);
    table.lock(T2, p("x"), Mode.WRITE, 0);
    table.lock(T3, p("x"), Mode.READ, 0);
    assertTrue(!holds(T3, p("x")), "a reader does not pass a waiting writer");
    table.end(T1, 0);
    assertTrue(holds(T2, p("x")));
    assertTrue(!holds(T3, p("x")));
    table.end(T2, 0);
    assertTrue(holds(T3, p("x")));
  }

  @Test
  void aSurrenderMovesTheEntryBackStillAsking() {
    table.lock(T1, p("x"), Mode.WRITE, 0);
    table.lock(T2, p("x"), Mode.WRITE, 0);
    table.lock(T2, p("x", "y"), Mode.WRITE, 0);
    assertEquals(java.util.Set.of(p("x"), p("x", "y")), table.surrender(T2, p("x"), 0),
        "T2 holds nothing, but its waiting entries move back too");
    table.end(T1, 0);
    assertTrue(holds(T2, p("x")) && holds(T2, p("x", "y")));
    table.lock(T1, p("x"), Mode.WRITE, 0);
    assertEquals(java.util.Set.of(p("x"), p("x", "y")), table.surrender(T2, p("x"), 0),
        "both of T2's entries on related paths were dropped");
    assertTrue(holds(T1, p("x")));
    List<Entry> q = table.queue(p("x"));
    assertEquals(List.of(T1, T2, T2), q.stream().map(Entry::agent).toList(), "T2's entries went behind the older T1");
    assertTrue(q.get(1).wants() == Mode.WRITE && q.get(1).holds() == null, "still asking, holding nothing");
    table.end(T1, 0);
    assertTrue(holds(T2, p("x")) && holds(T2, p("x", "y")), "granted again");
  }

  @Test
  void versionsNeverGoBackAndFollowTheWallClock() {
    table.lock(T1, p("x"), Mode.WRITE, 1_000);
    assertEquals(1_000, table.version());
    long t1 = table.entries().getFirst().grantedAt();
    table.end(T1, 5);
    assertEquals(1_001, table.version(), "a wall clock that went back does not move the version back");
    table.lock(T2, p("x"), Mode.WRITE, 0);
    assertTrue(table.entries().getFirst().grantedAt() > t1, "the next holder's token is larger");
    assertTrue(table.lock(T2, p("x"), Mode.READ, 9_999).isEmpty(), "asking for less changes nothing");
    assertEquals(1_002, table.version());
  }

  @Test
  void everyAgentRelatedToAChangeIsToldTheQueueOfItsPaths() {
    table.lock(T1, p("a"), Mode.WRITE, 0);
    table.lock(T2, p("a", "b"), Mode.READ, 0);
    table.lock(T3, p("c"), Mode.READ, 0);
    List<Info> infos = table.notifications(table.end(T1, 0), null);
    assertEquals(List.of(T2, T2), infos.stream().map(Info::to).toList(), "T3's path is unrelated, T1 is gone");
    // [a], asked for by nobody now, is told once more, with no entry on it: T2 forgets the queue it had of [a]
    assertEquals(p("a"), infos.getFirst().path());
    assertTrue(infos.getFirst().queue().stream().noneMatch(e -> e.path().equals(p("a"))));
    Info i = infos.get(1);
    assertEquals(p("a", "b"), i.path());
    assertEquals(table.version(), i.version());
    assertTrue(i.queue().getFirst().held());
    assertNull(i.surrenderOf());

    table.lock(T4, p("a"), Mode.WRITE, 0);
    List<Info> acks = table.notifications(table.surrender(T2, p("a", "b"), 0), T2);
    assertEquals(List.of(p("a"), p("a", "b")), acks.stream().map(Info::path).distinct().toList(),
        "the ancestor's queue and the path's own, in path order");
    assertTrue(acks.stream().allMatch(x -> T2.equals(x.surrenderOf())), "each carries the acknowledgement");
    assertEquals(java.util.Set.of(T2, T4), acks.stream().map(Info::to).collect(java.util.stream.Collectors.toSet()));
  }

  @Test
  void aSurrenderThatTakesNothingIsStillAChangeSoThatItIsAcknowledged() {
    table.lock(T1, p("x"), Mode.WRITE, 0);
    table.lock(T2, p("x"), Mode.WRITE, 0);
    long v = table.version();
    assertEquals(java.util.Set.of(p("x")), table.surrender(T2, p("x"), 0));
    assertTrue(table.version() > v);
    assertEquals(List.of(T1, T2), table.notifications(java.util.Set.of(p("x")), T2).stream().map(Info::to).toList());
  }

  @Test
  void aSurrenderedEntryIsNotGrantedBackBeforeTheWaiterOnARelatedPathItMadeWayFor() {
    // T4 holds [0] and [a,b]; T3 holds [a,c] READ and waits for [0]; T2 holds [x] and waits for [a] WRITE;
    // T4 waits for [x]. T4, the youngest, surrenders [a,b]: T2 still waits (for T3), and [a,b] must not go back
    // to T4 at once, or the same cycle would be found and broken the same way for ever.
    table.lock(T4, p("0"), Mode.WRITE, 0);
    table.lock(T4, p("a", "b"), Mode.WRITE, 0);
    table.lock(T3, p("a", "c"), Mode.READ, 0);
    table.lock(T3, p("0"), Mode.WRITE, 0);
    table.lock(T2, p("x"), Mode.WRITE, 0);
    table.lock(T2, p("a"), Mode.WRITE, 0);
    table.lock(T4, p("x"), Mode.WRITE, 0);
    table.surrender(T4, p("a", "b"), 0);
    assertTrue(!holds(T4, p("a", "b")), "held back behind T2's earlier wait on [a]");
    table.surrender(T4, p("0"), 0);
    assertTrue(holds(T3, p("0")));
    table.end(T3, 0);
    assertTrue(holds(T2, p("a")));
    table.end(T2, 0);
    assertTrue(holds(T4, p("x")) && holds(T4, p("0")) && holds(T4, p("a", "b")), "all granted in the end");
    check();
  }

  @Test
  void theVersionIsRaisedButNeverLowered() {
    table.lock(T1, p("x"), Mode.WRITE, 0);
    table.raise(500);
    assertEquals(500, table.version());
    table.raise(7);
    assertEquals(500, table.version());
    table.end(T1, 0);
    assertEquals(501, table.version());
  }

  @Test
  void pathsAreComparedElementByElement() {
    assertTrue(LockTable.comparePaths(p("a\u0000b"), p("a", "b")) != 0);
    assertTrue(LockTable.comparePaths(p("a"), p("a", "b")) < 0);
    table.lock(T1, p("a\u0000b"), Mode.READ, 0);
    table.lock(T2, p("a", "b"), Mode.READ, 0);
    assertEquals(2, table.notifications(java.util.Set.of(p("a\u0000b"), p("a", "b")), null).size());
  }

  @Test
  void badPathsAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> table.lock(T1, List.of(), Mode.READ, 0));
    assertThrows(IllegalArgumentException.class, () -> table.lock(T1, List.of("a", ""), Mode.READ, 0));
    assertThrows(IllegalArgumentException.class, () -> new AgentId(-1, 0, 0));
    assertTrue(table.entries().isEmpty());
  }

  /**
   * Random lock, upgrade, surrender and end over a small tree of paths and a few agents: after every change no
   * two agents hold conflicting entries (AG-1), the version grew, nothing that could be granted still waits
   * (checked by a rule written out again here), and once every agent ended the table is empty.
   */
  @Test
  void randomChangesKeepExclusionAndGrantEverythingGrantable() {
    List<List<String>> paths = List.of(p("a"), p("a", "b"), p("a", "c"), p("a", "b", "d"), p("e"), p("e", "f"));
    for (long seed = 1; seed <= 300; seed++) {
      SplittableRandom r = new SplittableRandom(seed);
      LockTable t = new LockTable();
      List<AgentId> agents = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        agents.add(new AgentId(i, 0, i));
      }
      long last = 0;
      for (int step = 0; step < 60; step++) {
        AgentId a = agents.get(r.nextInt(agents.size()));
        List<String> path = paths.get(r.nextInt(paths.size()));
        int op = r.nextInt(10);
        List<Entry> before = t.entries();
        boolean changed = !(op < 6 ? t.lock(a, path, r.nextBoolean() ? Mode.READ : Mode.WRITE, 0)
            : op < 8 ? t.surrender(a, path, 0) : t.end(a, 0)).isEmpty();
        String where = "seed " + seed + " step " + step + ": " + t.entries();
        assertNull(t.conflictAmongHolders(), where);
        assertTrue(changed ? t.version() > last : t.version() == last, where);
        last = t.version();
        AgentId previous = null;
        for (Entry e : t.entries()) {
          if (e.holds() == null) {
            assertTrue(previous == null || previous.compareTo(e.agent()) <= 0, "waiters out of age order: " + where);
            previous = e.agent();
          }
        }
        for (Entry e : t.entries()) {
          assertTrue(e.held() || !grantable(t.entries(), e), "still waits but could be granted: " + e + " at " + where);
          assertTrue(e.holds() == null || e.grantedAt() > 0 && e.grantedAt() <= t.version(), where);
          if (e.holds() != null && e.grantedAt() == t.version()) {
            // granted by this change: not past an earlier, conflicting waiter of another agent on its own path
            // that waited for the same before the change and still does
            for (Entry o : t.entries()) {
              boolean waitedBefore = before.contains(o) && o.holds() == null;
              assertTrue(!(waitedBefore && !o.agent().equals(e.agent()) && o.path().equals(e.path())
                  && o.seq() < e.seq() && Mode.conflict(o.wants(), e.holds())),
                  "granted past an earlier waiter: " + e + " past " + o + " at " + where);
            }
          }
        }
      }
      for (AgentId a : agents) {
        t.end(a, 0);
      }
      assertTrue(t.entries().isEmpty());
    }
  }

  /** The grant rule, written out again from the design's words. */
  private static boolean grantable(List<Entry> all, Entry e) {
    for (Entry o : all) {
      if (o.agent().equals(e.agent())) {
        continue;
      }
      boolean related = o.path().size() <= e.path().size()
          ? e.path().subList(0, o.path().size()).equals(o.path())
          : o.path().subList(0, e.path().size()).equals(e.path());
      boolean holderConflicts = o.holds() != null && (o.holds() == Mode.WRITE || e.wants() == Mode.WRITE);
      boolean queuedBehind = e.surrendered() ? related : o.path().equals(e.path());
      boolean earlierWaiter = !o.held() && o.seq() < e.seq() && queuedBehind
          && (o.wants() == Mode.WRITE || e.wants() == Mode.WRITE);
      if (related && (holderConflicts || earlierWaiter)) {
        return false;
      }
    }
    return true;
  }
}
