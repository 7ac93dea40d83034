package dev.tumbler.peer.sim;

import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.ProtocolCore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A node of one run, a member or a thin client, across all its lives: its clock, the core of its current life, and
 * what the run tracks of it. A life ends with a crash; whatever was scheduled for an earlier life checks
 * {@link #living} before it acts.
 */
final class SimNode<M extends PeerMessage> {
  final int index;
  /** A thin client: attached to the members, none itself. */
  final boolean client;
  final String id;
  final Scheduler.Clock clock;
  final Scheduler.Timers timers = new Scheduler.Timers();
  /** How often each session slot was closed: a closed session's next one is a new session. */
  final Map<Integer, Integer> sessionGen = new HashMap<>();
  /** Inputs that came while the node was paused, in order. */
  final List<Input<M>> deferred = new ArrayList<>();
  boolean paused;
  /** A member that takes thin clients, restarted and waiting a term before its cores start. */
  boolean joining;
  ProtocolCore<M> core;
  boolean alive;
  boolean informed;
  int incarnation;
  long crashedAt = Long.MIN_VALUE / 2;
  /** The last view traced, and whether it was active then. */
  Observation.View loggedView;
  boolean loggedActive;

  SimNode(int index, String id, Scheduler.Clock clock, boolean client) {
    this.index = index;
    this.id = id;
    this.clock = clock;
    this.client = client;
  }

  /** Whether the node is up in its life {@code incarnation}. */
  boolean living(int incarnation) {
    return alive && this.incarnation == incarnation;
  }

  /**
   * The node called {@code id}.
   *
   * @throws Violation if there is none: a core addressed a node that does not exist
   */
  static <M extends PeerMessage> SimNode<M> named(List<SimNode<M>> nodes, String id) {
    for (SimNode<M> node : nodes) {
      if (node.id.equals(id)) {
        return node;
      }
    }
    throw new Violation("message to unknown node " + id);
  }
}
