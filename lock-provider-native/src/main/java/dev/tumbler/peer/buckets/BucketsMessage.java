package dev.tumbler.peer.buckets;

import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.WireCodec;
import java.util.List;
import java.util.Objects;

/**
 * The messages of the {@code buckets} core (NATIVE-ALGORITHMS §6.6, channel 2): a client node's sessions talk to
 * the elected server, {@code leaders[0]} of the view.
 *
 * <p>Client to server: {@link Acquire} (sent again every third of the term while it waits: the seed's keep-alive,
 * which a server that lost it takes as a new request), {@link Cancel}, {@link Release}, {@link SessionRenew},
 * {@link Query}, and {@link Restate}, sent first to every new server and on every new link to it, again until it is
 * answered. Server to client: {@link Restated}, {@link Grant}, {@link Busy}, {@link Refused},
 * {@link SessionRenewed}, {@link Revoked} and {@link Total}. A server hears nothing else from a node before its
 * restatement, since it may lack what that node holds.
 *
 * <p>Every client message names the client node's incarnation ({@code inc}, drawn when its core starts): a session
 * of an earlier life of the node is another session, whatever its name. An {@code echo} is the client's local time
 * when it sent the message a grant or renewal answers; the server echoes it back without reading it, and the client
 * trusts the answer from then (the echo rule, §2.3). Immutable records.
 */
public sealed interface BucketsMessage extends PeerMessage {

  /** What a client node sends the server: the server's side takes it ({@code ElectedServer.Server}). */
  sealed interface ToServer extends BucketsMessage {}

  /** What the server sends a client node: the client's side takes it ({@code ElectedServer.Client}). */
  sealed interface ToClient extends BucketsMessage {}

  /**
   * Session {@code session} asks for {@code permits} of {@code name}, whose handle allows {@code limit} at most
   * (its {@code maxPermits}). With {@code attempt}, {@link Busy} rather than a place in the queue. The same request
   * again is a keep-alive: its place stays, and a grant made already is sent again. {@code tag} names who asks
   * ({@link WhoHolds}).
   */
  record Acquire(long inc, String session, long reqId, String name, int permits, int limit, boolean attempt,
      String tag, long echo) implements ToServer {
    public Acquire {
      Objects.requireNonNull(session, "session");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(tag, "tag");
    }
  }

  /** The request {@code reqId} is no longer wanted: it leaves the queue. */
  record Cancel(long inc, String session, long reqId) implements ToServer {
    public Cancel {
      Objects.requireNonNull(session, "session");
    }
  }

  /** The permits of grant {@code grantId} of {@code name} come back. */
  record Release(long inc, String session, String name, long grantId) implements ToServer {
    public Release {
      Objects.requireNonNull(session, "session");
      Objects.requireNonNull(name, "name");
    }
  }

  /** Session {@code session} lives another term, every grant of it with it (the seed's monitor, L-8). */
  record SessionRenew(long inc, String session, long echo) implements ToServer {
    public SessionRenew {
      Objects.requireNonNull(session, "session");
    }
  }

  /** How many permits of {@code name} are out: answered by {@link Total}. */
  record Query(long inc, long queryId, String name) implements ToServer {
    public Query {
      Objects.requireNonNull(name, "name");
    }
  }

  /** A grant a client restates: it holds {@code permits} of {@code name} by grant {@code grantId}. */
  record Held(String session, String name, long grantId, int permits, int limit, String tag) {
    public Held {
      Objects.requireNonNull(session, "session");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(tag, "tag");
    }
  }

  /** A request a client restates: it still waits for it. */
  record Wanted(String session, long reqId, String name, int permits, int limit, String tag) {
    public Wanted {
      Objects.requireNonNull(session, "session");
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(tag, "tag");
    }
  }

  /**
   * Everything the client node {@code inc} has at the server of {@code term} (the term of the client's view: a server
   * of another term ignores it, and the client, once it sees that server's term, restates to it again): its live sessions, the grants they hold (a new
   * server takes them back in its grace period; a server that already serves revokes the ones it does not know)
   * and the requests they wait for (queued again if the server lacks them). A session, grant or request of the
   * node that is not restated is gone.
   */
  record Restate(long inc, long term, List<String> sessions, List<Held> held, List<Wanted> wanted, long echo)
      implements ToServer {
    public Restate {
      sessions = List.copyOf(sessions);
      held = List.copyOf(held);
      wanted = List.copyOf(wanted);
    }
  }

  /** The restatement of node incarnation {@code inc} to the server of {@code term} was taken. */
  record Restated(long inc, long term) implements ToClient {}

  /**
   * The request {@code reqId} of {@code session} holds its permits of {@code name} by grant {@code grantId} with
   * {@code token}, made by the server of {@code term}; {@code total} permits of the name are out, these included. A
   * client takes a grant of the term of its view only: one of an earlier term, arriving after the client restated
   * to the server of a later one, is not that server's. A client that gave the request up gives the grant back by
   * its name. {@code floor} is the token of the server's latest grant of the name when it sent this one: a grant
   * below it was sent again (its first copy lost on a link that broke) after later grants of the name, some of
   * which may have ended; told now, its token would not be above theirs, so the client gives it back and asks again.
   */
  record Grant(long term, String session, long reqId, String name, long grantId, long token, long total, long echo,
      long floor) implements ToClient {
    public Grant {
      Objects.requireNonNull(session, "session");
      Objects.requireNonNull(name, "name");
    }
  }

  /** The attempt {@code reqId} does not fit: {@code total} permits are out. */
  record Busy(String session, long reqId, long total) implements ToClient {
    public Busy {
      Objects.requireNonNull(session, "session");
    }
  }

  /** The request {@code reqId} cannot be served as asked (its handle disagrees with the name's bucket size). */
  record Refused(String session, long reqId, String detail) implements ToClient {
    public Refused {
      Objects.requireNonNull(session, "session");
      Objects.requireNonNull(detail, "detail");
    }
  }

  /** The session lives until a term after the server decided, on the renewal sent at {@code echo}. */
  record SessionRenewed(String session, long echo) implements ToClient {
    public SessionRenewed {
      Objects.requireNonNull(session, "session");
    }
  }

  /** The grant {@code grantId} of {@code name} is not the server's (any more): its holder lost it. */
  record Revoked(String session, String name, long grantId) implements ToClient {
    public Revoked {
      Objects.requireNonNull(session, "session");
      Objects.requireNonNull(name, "name");
    }
  }

  /** Who holds the lock {@code name} (a one-permit semaphore of the lock name space): answered by {@link Holds}. */
  record WhoHolds(long inc, long queryId, String name) implements ToServer {
    public WhoHolds {
      Objects.requireNonNull(name, "name");
    }
  }

  /**
   * The answer to {@link WhoHolds} {@code queryId}: the tag of the grant that holds the lock {@code name}; empty when
   * it is free or the server of {@code term} does not decide now.
   */
  record Holds(long term, long queryId, String name, String tag) implements ToClient {
    public Holds {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(tag, "tag");
    }
  }

  /**
   * What is held under the names (with their prefix) that start with one of {@code prefixes}, for an operator's
   * listing: answered by {@link Listing}, by a server that decides.
   */
  record ListHeld(long inc, long queryId, List<String> prefixes) implements ToServer, WireCodec.ListingAsk {
    public ListHeld {
      prefixes = List.copyOf(prefixes);
    }
  }

  /**
   * The answer to {@link ListHeld} {@code queryId}: every grant under the names asked about (with their prefix), with
   * its token, and the time left of its session from when the server answered (-1 for a session of the server's own
   * node, which does not expire there).
   */
  record Listing(long term, long queryId, List<Output.Listed> held) implements ToClient, WireCodec.ListingAnswer {
    public Listing {
      held = List.copyOf(held);
    }
  }

  /** The answer to {@link Query} {@code queryId}: {@code total} permits of {@code name} are out. */
  record Total(long queryId, String name, long total) implements ToClient {
    public Total {
      Objects.requireNonNull(name, "name");
    }
  }
}
