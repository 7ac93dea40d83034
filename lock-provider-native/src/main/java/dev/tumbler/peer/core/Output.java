package dev.tumbler.peer.core;

import java.util.Collections;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a {@link ProtocolCore} asks its driver to do or tells its clients, in order. Immutable records.
 *
 * @param <M> the algorithm's message type
 */
public sealed interface Output<M extends PeerMessage> {

  /** Send {@code message} to {@code to}. Best effort: a link that is down drops it. */
  record Send<M extends PeerMessage>(String to, M message) implements Output<M> {
    public Send {
      Objects.requireNonNull(to, "to");
      Objects.requireNonNull(message, "message");
    }
  }

  /**
   * Deliver {@link Input.TimerFired} with {@code timerId} once the core's clock reads {@code at} or later.
   * Replaces an earlier timer of the same id.
   */
  record SetTimer<M extends PeerMessage>(long timerId, long at) implements Output<M> {}

  /** Forget the timer {@code timerId}; it must not fire. */
  record CancelTimer<M extends PeerMessage>(long timerId) implements Output<M> {}

  /** The request {@code requestId} holds the lock {@code name} from now on, with {@code fencingToken}. */
  record Granted<M extends PeerMessage>(long requestId, String name, long fencingToken) implements Output<M> {
    public Granted {
      Objects.requireNonNull(name, "name");
    }
  }

  /** Why a request ended without a grant. */
  enum Failure {
    /** The client cancelled it ({@link Input.Cancel}). */
    CANCELLED,
    /** A single attempt found the lock taken. */
    CONTENDED,
    /** Peers the algorithm needs stayed unreachable too long; {@link Failed#missingPeers()} names them. */
    UNAVAILABLE
  }

  /**
   * The request {@code requestId} ended without a grant.
   *
   * @param missingPeers the peers the request was still waiting for that were unreachable (down, or up
   *     but not yet resynchronised) when it ended, sorted; empty when every peer was reachable
   */
  record Failed<M extends PeerMessage>(long requestId, String name, Failure failure, Set<String> missingPeers)
      implements Output<M> {
    public Failed {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(failure, "failure");
      missingPeers = Collections.unmodifiableSortedSet(new TreeSet<>(missingPeers)); // sorted, for messages
    }
  }

  /**
   * A grant the core had reported is no longer safe to use (for algorithms with leases or revocation).
   * Lamport and Ricart–Agrawala never emit it: their grants hold until released.
   */
  record Lost<M extends PeerMessage>(long requestId, String name, String reason) implements Output<M> {
    public Lost {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(reason, "reason");
    }
  }
}
