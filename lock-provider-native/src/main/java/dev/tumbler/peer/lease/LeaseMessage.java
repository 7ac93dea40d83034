package dev.tumbler.peer.lease;

import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.WireCodec;
import java.util.List;
import java.util.Objects;

/**
 * The messages of the {@code lease} core (NATIVE-ALGORITHMS §5.6, channel 1): a node's lock helpers talk to the
 * elected server, {@code leaders[0]} of the view. A lease belongs to a node (its helper for the name), not to a
 * session: the node's sessions share it, and a released lock stays cached on the node under its lease.
 *
 * <p>Client to server: {@link Acquire} (sent again every third of the term while it waits: the keep-alive, which a
 * server that lost it takes as a new request), {@link Cancel}, {@link Renew}, {@link RecallReply}, {@link Release},
 * {@link WhoHolds}, and {@link Restate}, sent first to every new server and on every new link to it, again until it is answered.
 * Server to client: {@link Restated}, {@link Grant}, {@link Busy}, {@link Renewed}, {@link RenewDenied},
 * {@link Recall}, {@link Revoked} and {@link Holds}. A server hears nothing else from a node before its restatement, since it may
 * lack what that node holds.
 *
 * <p>Every client message names the client node's incarnation ({@code inc}, drawn when its core starts); every
 * server message names its term, and a client takes answers from the server of its view's term only. An
 * {@code echo} is the client's local time when it sent the message a grant or renewal answers; the server echoes
 * it back without reading it, and the client trusts the answer from then (the echo rule, §2.3). A lease is named by
 * its id, the token of the grant that made it; every message about a lease names it, and one naming another lease
 * changes nothing. Immutable records.
 */
public sealed interface LeaseMessage extends PeerMessage {

  /** What a client node sends the server: the server's side takes it ({@code ElectedServer.Server}). */
  sealed interface ToServer extends LeaseMessage {}

  /** What the server sends a client node: the client's side takes it ({@code ElectedServer.Client}). */
  sealed interface ToClient extends LeaseMessage {}

  /**
   * The node asks for {@code name} for its request {@code reqId}. With {@code attempt}, {@link Busy} unless the lock
   * is free or its holder gives it up when recalled. The same request again is a keep-alive: its place in the queue
   * stays, and a grant made already is sent again. {@code tag} names who asks ({@link WhoHolds}).
   */
  record Acquire(long inc, long reqId, String name, boolean attempt, String tag, long echo) implements ToServer {
    public Acquire {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(tag, "tag");
    }
  }

  /** The request {@code reqId} is no longer wanted: it leaves the queue. */
  record Cancel(long inc, long reqId, String name) implements ToServer {
    public Cancel {
      Objects.requireNonNull(name, "name");
    }
  }

  /**
   * The lease {@code leaseId} of {@code name} lives another term; {@code active}: a request of the node holds it
   * (else it is cached, and the server gives it to a waiter rather than renew it, §5.2 S-3), whose claim has
   * {@code tag} (a cached lease may have been taken again on its node by another request).
   */
  record Renew(long inc, String name, long leaseId, boolean active, String tag, long echo) implements ToServer {
    public Renew {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(tag, "tag");
    }
  }

  /**
   * The answer to {@link Recall}: {@code accepted}, the lease is given back (it was cached, or its holder released it
   * since); otherwise a request of the node holds it, and it is given back when released.
   */
  record RecallReply(long inc, String name, long leaseId, boolean accepted) implements ToServer {
    public RecallReply {
      Objects.requireNonNull(name, "name");
    }
  }

  /** The lease {@code leaseId} of {@code name} is given back. */
  record Release(long inc, String name, long leaseId) implements ToServer {
    public Release {
      Objects.requireNonNull(name, "name");
    }
  }

  /** A lease a client restates: it has {@code name} by lease {@code leaseId}, whose grant had {@code token}. */
  record Held(String name, long leaseId, long token, boolean active, String tag) {
    public Held {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(tag, "tag");
    }
  }

  /** A request a client restates: it still waits for {@code name}. */
  record Wanted(long reqId, String name, boolean attempt, String tag) {
    public Wanted {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(tag, "tag");
    }
  }

  /**
   * Everything the client node {@code inc} has at the server of {@code term} (the term of the client's view: a server
   * of another term ignores it, and the client, once it sees that server's term, restates to it again): the leases it holds (a new server takes them back in
   * its grace period, a server that already serves revokes the ones it does not know; either renews the ones it
   * keeps, from {@code echo}) and the requests it waits for (queued again if the server lacks them). A lease or
   * request of the node that is not restated is gone.
   */
  record Restate(long inc, long term, List<Held> held, List<Wanted> wanted, long echo) implements ToServer {
    public Restate {
      held = List.copyOf(held);
      wanted = List.copyOf(wanted);
    }
  }

  /** Who holds {@code name} in use: answered by {@link Holds}. */
  record WhoHolds(long inc, long queryId, String name) implements ToServer {
    public WhoHolds {
      Objects.requireNonNull(name, "name");
    }
  }

  /**
   * The answer to {@link WhoHolds} {@code queryId}: the tag of the request that holds {@code name} in use, as far as
   * the server knows; empty when it is free, cached, or the server does not decide now.
   */
  record Holds(long term, long queryId, String name, String tag) implements ToClient {
    public Holds {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(tag, "tag");
    }
  }

  /**
   * What is held in use under the names that start with one of {@code prefixes}, for an operator's listing: answered
   * by {@link Listing}, by a server that decides.
   */
  record ListHeld(long inc, long queryId, List<String> prefixes) implements ToServer, WireCodec.ListingAsk {
    public ListHeld {
      prefixes = List.copyOf(prefixes);
    }
  }

  /**
   * The answer to {@link ListHeld} {@code queryId}: the leases in use under the names asked about, each with the
   * highest token its node's grants of it can reach (a node grants its cached lease again with no message, by fewer than
   * {@link LeaseCore#MAX_LOCAL} tokens past the lease's own) and the time left from when the server answered.
   */
  record Listing(long term, long queryId, List<Output.Listed> held) implements ToClient, WireCodec.ListingAnswer {
    public Listing {
      held = List.copyOf(held);
    }
  }

  /** The restatement of node incarnation {@code inc} to the server of {@code term} was taken. */
  record Restated(long inc, long term) implements ToClient {}

  /**
   * The request {@code reqId} has {@code name} by the new lease {@code leaseId}, whose grant has {@code token}; the
   * lease lives a term from when the server decided, and the client trusts it from {@code echo}.
   */
  record Grant(long term, long reqId, String name, long leaseId, long token, long echo) implements ToClient {
    public Grant {
      Objects.requireNonNull(name, "name");
    }
  }

  /** The attempt {@code reqId} found {@code name} held. */
  record Busy(long term, long reqId, String name) implements ToClient {
    public Busy {
      Objects.requireNonNull(name, "name");
    }
  }

  /** The lease {@code leaseId} of {@code name} lives a term from when the server decided on the renewal {@code echo}. */
  record Renewed(long term, String name, long leaseId, long echo) implements ToClient {
    public Renewed {
      Objects.requireNonNull(name, "name");
    }
  }

  /** The cached lease {@code leaseId} of {@code name} was not renewed: a waiter has it now. */
  record RenewDenied(long term, String name, long leaseId) implements ToClient {
    public RenewDenied {
      Objects.requireNonNull(name, "name");
    }
  }

  /** Someone waits for {@code name}: the holder of lease {@code leaseId} is asked to give it back. */
  record Recall(long term, String name, long leaseId) implements ToClient {
    public Recall {
      Objects.requireNonNull(name, "name");
    }
  }

  /** The lease {@code leaseId} of {@code name} is not the server's (any more): its holder lost it. */
  record Revoked(long term, String name, long leaseId) implements ToClient {
    public Revoked {
      Objects.requireNonNull(name, "name");
    }
  }
}
