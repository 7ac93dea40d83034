package dev.tumbler.peer.agent;

import dev.tumbler.lock.TransactionOptions.Quorum;
import dev.tumbler.peer.agent.LockTable.Entry;
import dev.tumbler.peer.agent.LockTable.Mode;
import dev.tumbler.peer.agent.WaitFor.LockRef;
import dev.tumbler.peer.core.Lazy;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What one agent knows of the queues of its locks (design §4.2, agent rules 3, 4 and 6): the latest queue of
 * each lock it was told, by its lock servers or forwarded by other agents, and the locks whose surrender it
 * has asked for and not yet seen acknowledged.
 *
 * <ul>
 *   <li>A queue no newer than the one held is dropped: the servers' versions only grow, and an older queue
 *       could put the agent back at the head of a lock it has left (seed 000: "unsafe to disregard").
 *   <li>After a surrender, queues of that lock are dropped until one carries the server's note that it took
 *       this agent's surrender: a queue sent before the server moved the agent would show it holding still.
 *   <li>Another agent's surrender drops the stored queue of that lock: it no longer says who holds it.
 * </ul>
 *
 * Not thread safe: owned by one agent in its core.
 */
final class AgentView {
  /** A queue at a version; {@code expiresAt}: when a forwarded one is forgotten ({@link Long#MAX_VALUE}: never). */
  private record Stored(long version, List<Entry> queue, long expiresAt) {}

  /** Test-only mutation: every queue is stored, whatever its version. */
  boolean ignoreVersions;
  /** Test-only mutation: a surrender awaits no acknowledgement. */
  boolean noSurrenderAck;

  private final AgentId self;
  private final Map<LockRef, Stored> stored = new HashMap<>();
  /** The queues of {@link #stored} that it holds, in order, for the deadlock analysis. */
  private final TreeMap<LockRef, List<Entry>> queues = new TreeMap<>();
  // the maps and the set below are empty (shared) until used: an agent that holds and never analyses or surrenders,
  // as most do, keeps none of its own
  /** {@link WaitFor.Facts} of each stored queue, worked out once per queue stored. */
  private Map<LockRef, WaitFor.Facts> facts = Map.of();
  private Set<LockRef> awaitingAck = Set.of();
  /**
   * Per awaited lock, the surrender whose acknowledgement it waits for: the latest one that covers it. A queue a
   * server sent in the change of an earlier surrender (of a sibling path, say) still shows the agent holding it.
   */
  private Map<LockRef, Long> ackAfter = Map.of();
  /** Per server, its surrenders not yet acknowledged, in the order they were sent (a link keeps that order). */
  private Map<String, Deque<Pending>> pending = Map.of();
  private long surrenders;

  /** A surrender sent: its number, and the path it gave up (the server tells that path's queue in its change). */
  private record Pending(long seq, List<String> path) {}

  AgentView(AgentId self) {
    this.self = Objects.requireNonNull(self, "self");
  }

  /**
   * A queue of {@code lock} at {@code version}, told by its server or forwarded; {@code surrenderOf} is the agent
   * whose surrender the server's change was, or null. Returns whether it was stored.
   */
  boolean offer(LockRef lock, long version, List<Entry> queue, AgentId surrenderOf) {
    return offer(lock, version, queue, surrenderOf, Long.MAX_VALUE);
  }

  /**
   * A queue another agent forwarded: as {@link #offer}, forgotten at {@code expiresAt} unless a newer one came. This
   * agent is told nothing more of a lock it has no entry on, so a forwarded queue would otherwise stay as it was
   * when the forwarder last saw it, long after its agents moved on; the forwarders send again while they wait.
   */
  boolean offerForwarded(LockRef lock, long version, List<Entry> queue, long expiresAt) {
    return offer(lock, version, queue, null, expiresAt);
  }

  private boolean offer(LockRef lock, long version, List<Entry> queue, AgentId surrenderOf, long expiresAt) {
    Objects.requireNonNull(lock, "lock");
    Objects.requireNonNull(queue, "queue");
    // which of this agent's surrenders the change that sent it was: the oldest not yet acknowledged at that server
    // (a server applies them in the order sent, and tells the surrendered path's queue in each change)
    long of = Long.MAX_VALUE;
    if (self.equals(surrenderOf)) {
      Deque<Pending> d = pending.get(lock.server());
      if (d != null && !d.isEmpty()) {
        of = d.peekFirst().seq();
        if (d.peekFirst().path().equals(lock.path())) {
          d.pollFirst();
        }
      }
    }
    Stored s = stored.get(lock);
    if (s != null && version == s.version && expiresAt == Long.MAX_VALUE && s.queue != null
        && s.expiresAt != Long.MAX_VALUE && !ignoreVersions) {
      // the server tells the queue a forwarder told first: the same queue, kept now as the server's (seed 263874)
      store(lock, new Stored(s.version, s.queue, Long.MAX_VALUE));
      return false;
    }
    if (s != null && version <= s.version && !ignoreVersions) {
      return false;
    }
    if (awaitingAck.contains(lock)) {
      if (!self.equals(surrenderOf) || ackAfter.getOrDefault(lock, 0L) > of) {
        return false;
      }
      awaitingAck.remove(lock);
      if (!ackAfter.isEmpty()) {
        ackAfter.remove(lock);
      }
    }
    // a queue with no entry on its own path is of a path nobody asks for any more: nothing to keep but its version
    boolean asked = queue.stream().anyMatch(e -> e.path().equals(lock.path()));
    store(lock, new Stored(version, asked ? List.copyOf(queue) : null, asked ? expiresAt : Long.MAX_VALUE));
    if (expiresAt == Long.MAX_VALUE && !ignoreVersions) {
      supersede(lock, version, queue);
    }
    return true;
  }

  /**
   * A server's queue of a path holds every entry related to it, so it holds every entry related to a path below it:
   * its queue of {@code lock}'s path at {@code version} says what the server's queue of each such path was then. A
   * stored queue of such a path that is older is replaced by that: the server tells an agent of a path only while
   * the agent has an entry related to it, so once a related entry is gone (its change told on a link that broke, or
   * to an agent no longer on the path), the older queue would stay for ever, and show entries long gone in its
   * analysis (a holder gone from one server, on a cycle that other agents no longer see, each naming another
   * victim: seed 198060). Queues awaiting a surrender's acknowledgement are left alone.
   */
  private void supersede(LockRef lock, long version, List<Entry> queue) {
    for (Map.Entry<LockRef, Stored> e : List.copyOf(stored.entrySet())) {
      LockRef l = e.getKey();
      if (!l.server().equals(lock.server()) || l.path().size() <= lock.path().size()
          || !l.path().subList(0, lock.path().size()).equals(lock.path()) || e.getValue().version >= version
          || awaitingAck.contains(l)) {
        continue;
      }
      List<Entry> below = queue.stream().filter(x -> LockTable.related(x.path(), l.path())).toList();
      boolean asked = below.stream().anyMatch(x -> x.path().equals(l.path()));
      // the server tells this agent every change of a path it has an entry related to: such a queue is the server's
      // from now on, and never forgotten for its age. Kept with a forwarded queue's time, it was forgotten while
      // nothing changed, and the agent never learnt again that it held the path (seed 263874: a read granted and
      // never told, its transaction waiting for good, the writer behind it too).
      boolean told = below.stream().anyMatch(x -> x.agent().equals(self));
      long expiresAt = asked && !told ? e.getValue().expiresAt : Long.MAX_VALUE;
      store(l, new Stored(version, asked ? below : null, expiresAt));
    }
  }

  private void store(LockRef lock, Stored s) {
    stored.put(lock, s);
    if (!facts.isEmpty()) {
      facts.remove(lock);
    }
    if (s.queue == null) {
      queues.remove(lock);
    } else {
      queues.put(lock, s.queue);
    }
  }

  /**
   * This agent asks to surrender {@code lock}; {@code asked} are the paths it has asked its servers for (its
   * {@code Lock}s and restatements, all sent before this surrender). The server drops what the agent holds on every
   * path related to it, so every stored queue of that server on a related path is forgotten, and on each related path
   * the agent asked for (the server has its entry there, moves it, and tells that path's queue with the
   * acknowledgement) nothing is taken until the acknowledgement comes: a queue sent before the surrender could
   * otherwise still show the agent holding. That holds for a path whose queue it was never told yet as much as for
   * one it was: a grant of a path asked for just before the surrender, on its way when the surrender left, showed the
   * agent holding a lock the server then took away and gave to another (seed 995839).
   */
  void surrendering(LockRef lock, Set<List<String>> asked) {
    Objects.requireNonNull(lock, "lock");
    Objects.requireNonNull(asked, "asked");
    long seq = ++surrenders;
    if (!noSurrenderAck) {
      Deque<Pending> d = pending.get(lock.server());
      if (d == null) {
        d = new ArrayDeque<>();
        pending = Lazy.put(pending, lock.server(), d);
      }
      d.addLast(new Pending(seq, lock.path()));
    }
    for (LockRef l : List.copyOf(stored.keySet())) {
      if (l.server().equals(lock.server()) && LockTable.related(l.path(), lock.path())) {
        forgetQueue(l);
      }
    }
    if (noSurrenderAck) {
      return;
    }
    for (List<String> p : asked) {
      if (LockTable.related(p, lock.path())) {
        LockRef l = new LockRef(p, lock.server());
        awaitingAck = Lazy.add(awaitingAck, l);
        ackAfter = Lazy.put(ackAfter, l, seq);
      }
    }
    awaitingAck = Lazy.add(awaitingAck, lock);
    ackAfter = Lazy.put(ackAfter, lock, seq);
  }

  /**
   * The server {@code server} restated, so the surrenders it has not acknowledged may be lost: they are sent again,
   * one per awaited lock of it, in this order, and each awaited lock waits for the last of them that covers it.
   * Returns the locks to surrender again.
   */
  List<LockRef> resendSurrenders(String server) {
    List<LockRef> again = awaitingAck(server);
    Deque<Pending> d = new ArrayDeque<>();
    pending = Lazy.put(pending, server, d);
    for (LockRef l : again) {
      long seq = ++surrenders;
      d.addLast(new Pending(seq, l.path()));
      for (LockRef w : again) {
        if (LockTable.related(l.path(), w.path())) {
          ackAfter = Lazy.put(ackAfter, w, seq);
        }
      }
    }
    return again;
  }

  /**
   * Another agent surrendered {@code lock} at {@code version}: a stored queue no newer than that no longer says
   * who holds it. A newer one already shows the surrender and is kept.
   */
  void surrenderedByOther(LockRef lock, long version) {
    Stored s = stored.get(lock);
    if (s != null && s.version <= version) {
      forgetQueue(lock);
    }
  }

  private void forgetQueue(LockRef lock) {
    Stored s = stored.get(lock);
    if (s != null) {
      // keep the version, so that a queue older than the forgotten one is still refused
      store(lock, new Stored(s.version, null, Long.MAX_VALUE));
    }
  }

  /** Whether this agent's entry on {@code lock}, by its latest stored queue, holds a mode that covers {@code mode}. */
  boolean holds(LockRef lock, Mode mode) {
    Stored s = stored.get(lock);
    if (s == null || s.queue == null) {
      return false;
    }
    for (Entry e : s.queue) {
      if (e.agent().equals(self) && e.path().equals(lock.path())) {
        return e.holds() != null && e.holds().covers(mode);
      }
    }
    return false;
  }

  /** The mode this agent's entry on {@code lock} holds by its latest stored queue, or null. */
  Mode heldMode(LockRef lock) {
    Stored s = stored.get(lock);
    if (s == null || s.queue == null) {
      return null;
    }
    for (Entry e : s.queue) {
      if (e.agent().equals(self) && e.path().equals(lock.path())) {
        return e.holds();
      }
    }
    return null;
  }

  /**
   * The version at which this agent's entry on {@code lock} came to hold, by the latest stored queue: the token of
   * that part of a claim; 0 when it holds nothing there.
   */
  long grantedAt(LockRef lock) {
    Stored s = stored.get(lock);
    if (s == null || s.queue == null) {
      return 0;
    }
    for (Entry e : s.queue) {
      if (e.agent().equals(self) && e.path().equals(lock.path())) {
        return e.grantedAt();
      }
    }
    return 0;
  }

  /**
   * The link to {@code server} went down: what was in flight on it is lost, the acknowledgement of a surrender
   * among it. The queues it will restate once the link is back are taken again, whatever they say.
   */
  void linkLost(String server) {
    if (!awaitingAck.isEmpty()) {
      awaitingAck.removeIf(l -> l.server().equals(server));
    }
    if (!ackAfter.isEmpty()) {
      ackAfter.keySet().removeIf(l -> l.server().equals(server));
    }
    if (!pending.isEmpty()) {
      pending.remove(server);
    }
  }

  /** Forgets the forwarded queues whose time is up; returns whether there was one. */
  boolean expire(long now) {
    boolean any = false;
    for (Map.Entry<LockRef, Stored> e : List.copyOf(stored.entrySet())) {
      Stored s = e.getValue();
      if (s.queue != null && s.expiresAt <= now) {
        // forgotten for its age, not because it is wrong: the same queue, forwarded again, is taken again
        store(e.getKey(), new Stored(s.version - 1, null, Long.MAX_VALUE));
        any = true;
      }
    }
    return any;
  }

  /** The version of the latest stored queue of {@code lock}: 0 when none was. */
  long version(LockRef lock) {
    Stored s = stored.get(lock);
    return s == null ? 0 : s.version;
  }

  /** The locks of {@code server} whose surrender this agent waits to see acknowledged. */
  List<LockRef> awaitingAck(String server) {
    return awaitingAck.stream().filter(l -> l.server().equals(server)).sorted().toList();
  }

  /** Whether this agent waits for the server to acknowledge its surrender of {@code lock}. */
  boolean awaitingAck(LockRef lock) {
    return awaitingAck.contains(lock);
  }

  /** The queues stored now, in order, for the deadlock analysis: a read-only view that follows this view. */
  SortedMap<LockRef, List<Entry>> known() {
    return Collections.unmodifiableSortedMap(queues);
  }

  /** {@link WaitFor.Facts} of the stored queue of {@code lock}, worked out once per queue stored. */
  WaitFor.Facts facts(LockRef lock) {
    WaitFor.Facts f = facts.get(lock);
    if (f == null) {
      f = WaitFor.Facts.of(queues.get(lock));
      facts = Lazy.put(facts, lock, f);
    }
    return f;
  }

  /** {@link WaitFor#analyse} of what this view knows, for {@code self}. */
  WaitFor.Result analyse() {
    return WaitFor.analyse(self, known(), this::facts);
  }

  /**
   * Whether a claim on {@code path} in {@code mode} over {@code servers} is held under {@code quorum}: every
   * server ({@code ALL}), more than half ({@code MAJORITY}) or at least one ({@code ANY}) holds it.
   */
  boolean claimHeld(List<String> path, Mode mode, Collection<String> servers, Quorum quorum) {
    int held = 0;
    for (String s : servers) {
      if (holds(new LockRef(path, s), mode)) {
        held++;
      }
    }
    return met(quorum, held, servers.size());
  }

  /** Whether {@code held} of {@code of} servers meet {@code quorum}. */
  static boolean met(Quorum quorum, int held, int of) {
    if (of < 1 || held < 0 || held > of) {
      throw new IllegalArgumentException("held " + held + " of " + of + " servers");
    }
    return switch (quorum) {
      case ALL -> held == of;
      case MAJORITY -> 2 * held > of;
      case ANY -> held >= 1;
    };
  }
}
