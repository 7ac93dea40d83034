package dev.tumbler.peer.core;

import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * One algorithm of the native provider, as a pure state machine: {@code step(now, input) → outputs}.
 *
 * <p>A core does no I/O, reads no clock (time arrives as {@code now}), starts no thread and uses no
 * global randomness (a core that needs randomness takes a seeded {@link java.util.random.RandomGenerator}
 * when it is made). Same state plus same input gives the same outputs, which is what lets the
 * simulator (module {@code lock-sim}) replay a failing run from its seed. One core
 * serves every lock name of one node.
 *
 * <p>Drivers: the simulator, and the node runtime (in-memory or TCP transport). A crash is modelled by
 * throwing the core away; a restarted node gets a new core with empty state.
 *
 * <p>Not thread safe: a driver calls {@link #step} from one thread at a time (the node runtime runs every
 * core on its own serial executor).
 *
 * @param <M> the algorithm's message type
 */
public interface ProtocolCore<M extends PeerMessage> {

  /**
   * Handles one input.
   *
   * @param now the node's monotonic clock in nanoseconds; never smaller than at the previous call
   * @param input what happened
   * @return what to do, in order; never null
   */
  List<Output<M>> step(long now, Input<M> input);

  /** This node's id. */
  String self();

  /** The algorithm's name, as in the URL ({@code lamport}, {@code ricart-agrawala}). */
  String algorithm();

  /**
   * The members a core of {@code self} talks to, sorted: a core that iterates over them does so in one order
   * in every JVM, so that a seed replays.
   *
   * @throws IllegalArgumentException if {@code peers} holds {@code self}
   * @throws NullPointerException if {@code self} or an id is null
   */
  static SortedSet<String> otherMembers(String self, Collection<String> peers) {
    TreeSet<String> ids = new TreeSet<>(peers);
    if (ids.contains(Objects.requireNonNull(self, "self"))) {
      throw new IllegalArgumentException("peers must not contain self (" + self + ")");
    }
    return Collections.unmodifiableSortedSet(ids);
  }
}
