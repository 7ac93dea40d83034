package dev.tumbler.peer.core;

import java.util.List;

/**
 * A fact a core publishes about its state ({@link Output.Fact}), emitted when it changes: what the
 * simulator's checkers judge, what {@code NodeStats} shows and what traces print. Never an instruction
 * to the driver. Immutable records.
 */
public sealed interface Observation {

  /**
   * The elected view this node has adopted.
   *
   * @param term the view's term; terms only grow
   * @param leaders the leaders, in the order of the view (the first is the server of single-server
   *     algorithms)
   * @param activeUntil while this node is a leader of the view: until when (local clock) it may act as one,
   *     by its leader lease; {@link Long#MIN_VALUE} when it is not a leader or its lease has lapsed
   */
  record View(long term, List<Leader> leaders, long activeUntil) implements Observation {
    public View {
      leaders = List.copyOf(leaders);
    }
  }

  /**
   * This node became the server of a single-server algorithm ({@code buckets}, {@code lease}) in {@code term}; it
   * grants nothing new before {@code graceUntil} (local clock), while the holders of the previous server restate
   * what they hold.
   */
  record Serving(String node, long term, long graceUntil) implements Observation {}

  /**
   * The counters of a semaphore on its server changed (NATIVE-ALGORITHMS §6.4, BU-2), for checks and traces.
   *
   * @param server the serving node
   * @param name the semaphore's name
   * @param bucketSize the permits of each bucket
   * @param counts the counters of buckets 1 to {@code highest}
   * @param highest the highest bucket ever made active
   * @param total the permits out
   */
  record Buckets(String server, String name, int bucketSize, List<Integer> counts, int highest, long total)
      implements Observation {
    public Buckets {
      counts = List.copyOf(counts);
    }
  }

  /**
   * A bakery ticket changed state at its owner leader (NATIVE-ALGORITHMS §3.4), for traces.
   *
   * @param name the lock name
   * @param key the ticket's key ({@code term.H.slot}) and request, as text
   * @param state {@code ADDED}, {@code READY}, {@code ACTIVE} (granted), {@code RENEWED} or {@code DROPPED}
   */
  record Ticket(String name, String key, String state) implements Observation {}

  /**
   * An {@code agent} transaction surrendered a lock to break a deadlock (NATIVE-ALGORITHMS §4.2, agent rule 5), for
   * checks (AG-4, AG-5) and traces.
   *
   * @param server the lock server of the surrendered lock
   * @param path its path
   * @param agent the surrendering agent's id, as text
   * @param told whether a claim it takes away had been reported held
   * @param version the version of the queue the agent chose it on
   */
  record Surrender(String server, java.util.List<String> path, String agent, boolean told, long version)
      implements Observation {
    public Surrender {
      path = java.util.List.copyOf(path);
    }
  }
}
