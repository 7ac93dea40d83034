package dev.tumbler.peer.core;

import java.util.Collections;
import java.util.List;
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

  /**
   * The request {@code requestId} holds its claim from now on, with {@code fencingToken}.
   *
   * @param name the claim's name ({@link Claim#name()})
   * @param permits the permits granted (1 for locks)
   * @param sentAt for a grant with a term: the local time the client's message that the grant answers was
   *     sent (the echo rule: the client trusts the grant from then); {@link Long#MIN_VALUE} when the grant
   *     has no term
   * @param validUntil until when the client may trust the grant by its own clock, unless renewed:
   *     {@code sentAt + term × safety}; {@link Long#MAX_VALUE} when the grant has no term
   */
  record Granted<M extends PeerMessage>(long requestId, String name, long fencingToken, int permits, long sentAt,
      long validUntil) implements Output<M> {
    public Granted {
      Objects.requireNonNull(name, "name");
      if (permits < 1) {
        throw new IllegalArgumentException("a grant has at least one permit: " + permits);
      }
      if (validUntil < sentAt) {
        throw new IllegalArgumentException("a grant valid until " + validUntil + " was sent at " + sentAt);
      }
    }

    /** A one-permit grant with no term: it holds until released. */
    public Granted(long requestId, String name, long fencingToken) {
      this(requestId, name, fencingToken, 1, Long.MIN_VALUE, Long.MAX_VALUE);
    }

    /** Whether the grant holds until released, with no term to renew. */
    public boolean unbounded() {
      return validUntil == Long.MAX_VALUE;
    }
  }

  /**
   * The grant of {@code requestId} was renewed: the client may trust it until {@code validUntil} by its own
   * clock. {@code sentAt} never goes back from one {@code Renewed} (or the {@code Granted}) to the next.
   * A grant with no term is renewed with {@link Long#MIN_VALUE} and {@link Long#MAX_VALUE}.
   */
  record Renewed<M extends PeerMessage>(long requestId, long sentAt, long validUntil) implements Output<M> {
    public Renewed {
      if (validUntil < sentAt) {
        throw new IllegalArgumentException("a renewal valid until " + validUntil + " was sent at " + sentAt);
      }
    }
  }

  /** Why a request ended without a grant. */
  enum Failure {
    /** The client cancelled it ({@link Input.Cancel}). */
    CANCELLED,
    /** A single attempt found the claim taken. */
    CONTENDED,
    /** Peers the algorithm needs stayed unreachable too long; {@link Failed#missingPeers()} names them. */
    UNAVAILABLE,
    /** The request's own deadline, kept by the deciding node, passed. */
    TIMED_OUT,
    /** The request was chosen to break a deadlock. */
    DEADLOCK,
    /**
     * The deciding node refused the request as asked: it conflicts with how the name is used (a semaphore handle
     * whose {@code maxPermits} disagrees with the name's bucket size). Asking again the same way is refused again.
     */
    REFUSED
  }

  /**
   * The request {@code requestId} ended without a grant.
   *
   * @param missingPeers the peers the request was still waiting for that were unreachable (down, or up
   *     but not yet resynchronised) when it ended, sorted; empty when every peer was reachable
   * @param detail more about why, for the exception's message (for example "1 of 3 leaders reachable");
   *     empty when the failure says it all
   */
  record Failed<M extends PeerMessage>(long requestId, String name, Failure failure, Set<String> missingPeers,
      String detail) implements Output<M> {
    public Failed {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(failure, "failure");
      Objects.requireNonNull(detail, "detail");
      missingPeers = Collections.unmodifiableSortedSet(new TreeSet<>(missingPeers)); // sorted, for messages
    }

    /** A failure with nothing more to say than its kind and the missing peers. */
    public Failed(long requestId, String name, Failure failure, Set<String> missingPeers) {
      this(requestId, name, failure, missingPeers, "");
    }
  }

  /** Why a grant was lost; one for one the API's {@code LeaseLostEvent.Reason}s that a core can cause. */
  enum LostReason {
    /** Its term ran out by the client's clock without a renewal. */
    EXPIRED,
    /** The deciding node refused to keep it (it no longer knows the grant). */
    REVOKED,
    /** It was taken back to break a deadlock. */
    DEADLOCK,
    /** The node lost the connections the grant depends on. */
    CONNECTION_LOST
  }

  /**
   * A grant the core had reported is no longer safe to use. Emitted at the latest when the grant's
   * {@link Granted#validUntil()} passes without a renewal. Lamport and Ricart–Agrawala never emit it:
   * their grants hold until released.
   *
   * @param detail more about why, for the lost event; empty when the reason says it all
   */
  record Lost<M extends PeerMessage>(long requestId, String name, LostReason reason, String detail)
      implements Output<M> {
    public Lost {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(reason, "reason");
      Objects.requireNonNull(detail, "detail");
    }
  }

  /**
   * The transaction {@code txId} ended by the core's choice: every claim of it is released, its pending requests
   * failed and its held ones lost (each reported before this, with the same cause). Nothing more follows about
   * it; the driver still sends {@link Input.End}, which is then ignored.
   *
   * @param failure why: {@link Failure#DEADLOCK} (chosen to break a deadlock, with
   *     {@link TxOptions#abortOnDeadlock()}) or {@link Failure#UNAVAILABLE} (too few of its nodes reachable)
   * @param missingPeers for {@link Failure#UNAVAILABLE}, the nodes that were unreachable, sorted
   * @param detail more about why, for the exception's message
   */
  record TxAborted<M extends PeerMessage>(long txId, Failure failure, Set<String> missingPeers, String detail)
      implements Output<M> {
    public TxAborted {
      Objects.requireNonNull(failure, "failure");
      Objects.requireNonNull(detail, "detail");
      missingPeers = Collections.unmodifiableSortedSet(new TreeSet<>(missingPeers));
    }
  }

  /**
   * The answer to {@link Input.HolderQuery} {@code queryId}: the tag of the claim that holds {@code name}.
   *
   * @param tag the holder's {@link Claim#tag()}; empty when no claim holds the name, the holder has no tag,
   *     or the core cannot tell
   */
  record Holder<M extends PeerMessage>(long queryId, String name, String tag) implements Output<M> {
    public Holder {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(tag, "tag");
    }

    /** The answer of a core that cannot tell who holds {@code name}. */
    public static <M extends PeerMessage> Holder<M> unknown(Input.HolderQuery<M> query) {
      return new Holder<>(query.queryId(), query.name(), "");
    }
  }

  /**
   * The answer to {@link Input.PermitsQuery} {@code queryId}: {@code available} permits of {@code name} are free for
   * the handle asked about.
   */
  record Permits<M extends PeerMessage>(long queryId, String name, int available) implements Output<M> {
    public Permits {
      Objects.requireNonNull(name, "name");
    }

    /** The answer of a core that serves no semaphores: nothing is known to be out. */
    public static <M extends PeerMessage> Permits<M> unknown(Input.PermitsQuery<M> query) {
      return new Permits<>(query.queryId(), query.name(), query.limit());
    }
  }

  /**
   * The answer to {@link Input.ListQuery} {@code queryId}: the claims in use under the names asked about, or that the
   * core cannot say ({@code known} false, {@code held} empty).
   */
  record Listing<M extends PeerMessage>(long queryId, boolean known, List<Listed> held) implements Output<M> {
    public Listing {
      held = List.copyOf(held);
    }

    /** The answer of a core that cannot list what is held. */
    public static <M extends PeerMessage> Listing<M> unknown(Input.ListQuery<M> query) {
      return new Listing<>(query.queryId(), false, List.of());
    }
  }

  /**
   * One claim in use, as a listing gives it.
   *
   * @param name the claim's name ({@link Claim#name()})
   * @param mode how it is held
   * @param permits the permits it holds (1 for locks)
   * @param holder who holds it: the holding node, and the claim's tag after a space when it has one
   * @param token its fencing token, or the highest its grant can hand out when {@code tokenIsHolders} is false;
   *     0 when none is known
   * @param tokenIsHolders whether {@code token} is the holder's own
   * @param remainingNanos how long it lasts without a renewal, by the lister's clock; -1 when it has no term
   */
  record Listed(String name, Claim.Mode mode, int permits, String holder, long token, boolean tokenIsHolders,
      long remainingNanos) {
    public Listed {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(mode, "mode");
      Objects.requireNonNull(holder, "holder");
    }

    /** Who holds a claim, for a listing: the node, and the claim's tag after a space when it has one. */
    public static String holder(String node, String tag) {
      return tag.isEmpty() ? node : node + " " + tag;
    }
  }

  /** A fact about the core's state, for checkers, statistics and traces ({@link Observation}). */
  record Fact<M extends PeerMessage>(Observation observation) implements Output<M> {
    public Fact {
      Objects.requireNonNull(observation, "observation");
    }
  }
}
