package dev.tumbler.peer.core;

import java.util.List;
import java.util.Objects;

/**
 * What a {@link ProtocolCore} reacts to: a message from a peer, a timer it set, a change in a link, or a
 * request from a local client. Immutable records.
 *
 * <p>Client requests are identified by a request id that the driver chooses and never reuses within one
 * core's life, and belong to a session (one {@code LockService}): closing the session ends every request
 * of it. Timeouts are the client's business: a client that stops waiting sends {@link Cancel}.
 *
 * @param <M> the algorithm's message type
 */
public sealed interface Input<M extends PeerMessage> {

  /** A message from {@code from}, delivered in the order {@code from} sent it (FIFO per link). */
  record Message<M extends PeerMessage>(String from, M message) implements Input<M> {
    public Message {
      Objects.requireNonNull(from, "from");
      Objects.requireNonNull(message, "message");
    }
  }

  /**
   * The node starts: the first input a core gets, before any link comes up. A core that must act on its own
   * (set its first timer, as an election core of a one-member cluster must) does it here.
   */
  record Start<M extends PeerMessage>() implements Input<M> {}

  /**
   * The node is about to stop on purpose (its daemon got SIGTERM): a core tells whom it concerns now, rather than
   * letting them find out by a timeout, and changes nothing that another node relies on. The node stops after it;
   * no input follows but those already on their way.
   */
  record Leave<M extends PeerMessage>() implements Input<M> {}

  /** The timer {@code timerId} set by an earlier {@link Output.SetTimer} is due. */
  record TimerFired<M extends PeerMessage>(long timerId) implements Input<M> {}

  /**
   * The link to {@code peer} is (again) up. Messages sent while it was down may be lost; the core must
   * restate what the peer needs. Always comes after the matching {@link PeerDown} (if any) and before any
   * message received over the new link.
   */
  record PeerUp<M extends PeerMessage>(String peer) implements Input<M> {
    public PeerUp {
      Objects.requireNonNull(peer, "peer");
    }
  }

  /** The link to {@code peer} is down; messages sent to it since the last {@link PeerUp} may be lost. */
  record PeerDown<M extends PeerMessage>(String peer) implements Input<M> {
    public PeerDown {
      Objects.requireNonNull(peer, "peer");
    }
  }

  /**
   * A client asks for {@code claim}.
   *
   * @param requestId the driver's id for this request, unique for the life of the core
   * @param session the client session it belongs to
   * @param claim what it asks for
   * @param attempt whether this is a single attempt ({@code tryAcquire(ZERO)}): the core fails it with
   *     {@link Output.Failure#CONTENDED} as soon as it knows the claim cannot be granted now, instead of
   *     queueing
   * @param txId 0 for a request of its own; else the transaction the claim belongs to
   */
  record Acquire<M extends PeerMessage>(long requestId, String session, Claim claim, boolean attempt, long txId)
      implements Input<M> {
    public Acquire {
      Objects.requireNonNull(session, "session");
      Objects.requireNonNull(claim, "claim");
    }

    /** A request of its own (no transaction). */
    public Acquire(long requestId, String session, Claim claim, boolean attempt) {
      this(requestId, session, claim, attempt, 0);
    }
  }

  /**
   * A client begins the transaction {@code txId}: the claims it asks for with {@link Acquire#txId()} =
   * {@code txId} are taken together and hold until {@link End}. Only a core that serves transactions gets it.
   *
   * @param txId the driver's id for the transaction, unique for the life of the core and never 0
   * @param session the client session it belongs to: closing the session ends it
   * @param options how it claims and what it does on a deadlock
   */
  record Begin<M extends PeerMessage>(long txId, String session, TxOptions options) implements Input<M> {
    public Begin {
      if (txId == 0) {
        throw new IllegalArgumentException("a transaction's id is not 0");
      }
      Objects.requireNonNull(session, "session");
      Objects.requireNonNull(options, "options");
    }
  }

  /**
   * The transaction {@code txId} ends: every claim of it is released, held or pending, and no output about it
   * follows. Unknown or ended ids are ignored.
   */
  record End<M extends PeerMessage>(long txId) implements Input<M> {}

  /** The holder gives back the grant of {@code requestId}. Unknown or ended ids are ignored. */
  record Release<M extends PeerMessage>(long requestId) implements Input<M> {}

  /**
   * The client stopped waiting for {@code requestId} (timeout, interrupt). A pending request ends with
   * {@link Output.Failed} ({@link Output.Failure#CANCELLED}); a request granted meanwhile is released, the
   * driver having seen (or being about to see) its {@link Output.Granted} and dropping it.
   */
  record Cancel<M extends PeerMessage>(long requestId) implements Input<M> {}

  /**
   * The holder of {@code requestId} asks to keep its grant for another term (the driver's renewer, or the
   * user with {@code renew=manual}). The core answers {@link Output.Renewed} while the grant holds, or
   * {@link Output.Lost} when it does not any more. A core whose grants have no term answers at once.
   */
  record Renew<M extends PeerMessage>(long requestId) implements Input<M> {}

  /** The session closed: every grant of it is released and every pending request of it dropped silently. */
  record CloseSession<M extends PeerMessage>(String session) implements Input<M> {
    public CloseSession {
      Objects.requireNonNull(session, "session");
    }
  }

  /**
   * A client asks who holds {@code name}: the core answers {@link Output.Holder} with the {@link Claim#tag()}
   * of the claim that holds it, as far as it can tell. A core that cannot say who holds a lock answers at once
   * that it does not know; so does one that cannot ask (no leader reachable). The answer may never come (a
   * message lost with a link): the client bounds its wait itself. A query changes nothing.
   *
   * @param queryId the driver's id for this query, echoed by the answer
   * @param name the name, as in {@link Claim#name()}
   */
  record HolderQuery<M extends PeerMessage>(long queryId, String name) implements Input<M> {
    public HolderQuery {
      Objects.requireNonNull(name, "name");
    }
  }

  /**
   * A client asks what is held under the names that start with one of {@code prefixes}, for an operator's listing:
   * the core answers {@link Output.Listing} with the claims in use it knows of, by the word of its server or leaders
   * where it has them, this node's own grants as this node knows them. A core that cannot say answers at once that it
   * does not know. The answer may never come (a message lost with a link): the client bounds its wait itself. A query
   * changes nothing.
   *
   * @param queryId the driver's id for this query, echoed by the answer
   */
  record ListQuery<M extends PeerMessage>(long queryId, List<String> prefixes) implements Input<M> {
    public ListQuery {
      prefixes = List.copyOf(prefixes);
    }

    /** Whether {@code name} is one this query asks about. */
    public boolean covers(String name) {
      return covers(prefixes, name);
    }

    /** Whether {@code name} starts with one of {@code prefixes}. */
    public static boolean covers(List<String> prefixes, String name) {
      for (String p : prefixes) {
        if (name.startsWith(p)) {
          return true;
        }
      }
      return false;
    }
  }

  /**
   * A client asks how many permits of the semaphore {@code name} are free for a handle of {@code limit}
   * ({@code maxPermits}): the core answers {@link Output.Permits}, by the semaphore server's word when it can ask it,
   * else by the last it heard. A query changes nothing.
   *
   * @param queryId the driver's id for this query, echoed by the answer
   */
  record PermitsQuery<M extends PeerMessage>(long queryId, String name, int limit) implements Input<M> {
    public PermitsQuery {
      Objects.requireNonNull(name, "name");
    }
  }

  /**
   * The elected view changed, or this node's leader lease did ({@link Observation.View}): given by the
   * node's election core to the algorithm cores of the same node, within the same step.
   */
  record View<M extends PeerMessage>(long term, List<Leader> leaders, long activeUntil) implements Input<M> {
    public View {
      leaders = List.copyOf(leaders);
    }
  }
}
