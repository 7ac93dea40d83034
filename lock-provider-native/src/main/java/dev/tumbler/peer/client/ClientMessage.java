package dev.tumbler.peer.client;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.TxOptions;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * The messages of the client channel (CLIENTS.md): between a thin client and its home member, in a session. The
 * client numbers its messages ({@link ToMember#seq()}); every reply echoes the highest number the member had received
 * ({@link ToClient#echo()}) and says for how long from the reply the member vouches for the session
 * ({@link ToClient#sessionFor()}), so that the client trusts what it holds from when it sent the echoed message (the
 * echo rule across the client link).
 */
public sealed interface ClientMessage extends PeerMessage {

  /** The session: a random number the client draws per session, scoped by its authenticated id. */
  long session();

  /** A client's message to its home. */
  sealed interface ToMember extends ClientMessage {
    /** Its number in the session: 1, 2, 3, ... in the order sent. */
    long seq();
  }

  /** A member's reply to a client. */
  sealed interface ToClient extends ClientMessage {
    /** The highest {@link ToMember#seq()} of the session the member had received when it replied; 0 for none. */
    long echo();

    /** How long from this reply the member vouches for the session, by its clock, in nanoseconds. */
    long sessionFor();
  }

  /** A request the client has in its session, restated by {@link Hello}: whether it holds it, by its view. */
  record Asked(long req, Claim claim, boolean attempt, long tx, boolean held) {
    public Asked {
      Objects.requireNonNull(claim, "claim");
      positive(req, "request id");
      nonNegative(tx, "transaction id");
    }
  }

  /** A transaction the client has open in its session, restated by {@link Hello}. */
  record Open(long tx, TxOptions options) {
    public Open {
      positive(tx, "transaction id");
      Objects.requireNonNull(options, "options");
    }
  }

  /**
   * The first message on every new link to the home: opens the session, or restates it (what was in flight on a
   * link that broke is lost). {@code algorithm} and {@code leaseNanos} must be the member's.
   */
  record Hello(long session, long seq, String algorithm, long leaseNanos, List<Asked> requests, List<Open> txs)
      implements ToMember {
    public Hello {
      Objects.requireNonNull(algorithm, "algorithm");
      requests = List.copyOf(requests);
      txs = List.copyOf(txs);
      nonNegative(leaseNanos, "lease term");
    }
  }

  /** Asks for {@code claim} ({@link dev.tumbler.peer.core.Input.Acquire}). */
  record Acquire(long session, long seq, long req, Claim claim, boolean attempt, long tx) implements ToMember {
    public Acquire {
      Objects.requireNonNull(claim, "claim");
      positive(req, "request id");
      nonNegative(tx, "transaction id");
    }
  }

  /** Releases a grant. */
  record Release(long session, long seq, long req) implements ToMember {}

  /** Stops waiting. */
  record Cancel(long session, long seq, long req) implements ToMember {}

  /** Asks to renew a grant. */
  record Renew(long session, long seq, long req) implements ToMember {}

  /** Begins a transaction. */
  record Begin(long session, long seq, long tx, TxOptions options) implements ToMember {
    public Begin {
      positive(tx, "transaction id");
      Objects.requireNonNull(options, "options");
    }
  }

  /** Ends a transaction. */
  record End(long session, long seq, long tx) implements ToMember {}

  /** Who holds {@code name}. */
  record HolderQuery(long session, long seq, long q, String name) implements ToMember {
    public HolderQuery {
      Objects.requireNonNull(name, "name");
    }
  }

  /** How many permits of semaphore {@code name} of {@code limit} are free. */
  record PermitsQuery(long session, long seq, long q, String name, int limit) implements ToMember {
    public PermitsQuery {
      Objects.requireNonNull(name, "name");
    }
  }

  /** What is held under the names that start with one of {@code prefixes} ({@code Input.ListQuery}). */
  record ListQuery(long session, long seq, long q, List<String> prefixes) implements ToMember {
    public ListQuery {
      prefixes = List.copyOf(prefixes);
    }
  }

  /** Keeps the session alive when the client has sent nothing else for a while. */
  record Ping(long session, long seq) implements ToMember {}

  /** The client closes the session: everything of it is released, cancelled or ended. */
  record Bye(long session, long seq) implements ToMember {}

  /** The session is open (the answer to {@link Hello}). */
  record Welcome(long session, long echo, long sessionFor) implements ToClient {}

  /** The member will not open the session: {@code reason} says why (another algorithm or term, say). */
  record Refused(long session, long echo, String reason) implements ToClient {
    public Refused {
      Objects.requireNonNull(reason, "reason");
    }

    @Override
    public long sessionFor() {
      return 0;
    }
  }

  /**
   * The member does not know the session (it restarted, or expired it): open a new one there; or, with
   * {@code stopping}, the member is going away (its daemon stops): open one at another member.
   */
  record Gone(long session, long echo, boolean stopping, String reason) implements ToClient {
    public Gone {
      Objects.requireNonNull(reason, "reason");
    }

    @Override
    public long sessionFor() {
      return 0;
    }
  }

  /** The request holds its claim; the member vouches for the grant for {@code validFor} from this reply. */
  record Granted(long session, long echo, long sessionFor, long req, String name, long token, int permits,
      long validFor) implements ToClient {
    public Granted {
      Objects.requireNonNull(name, "name");
    }
  }

  /** The grant was renewed; the member vouches for it for {@code validFor} from this reply. */
  record Renewed(long session, long echo, long sessionFor, long req, long validFor) implements ToClient {}

  /** The request ended without a grant ({@link Output.Failed}). */
  record Failed(long session, long echo, long sessionFor, long req, String name, Output.Failure failure,
      Set<String> missing, String detail) implements ToClient {
    public Failed {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(failure, "failure");
      Objects.requireNonNull(detail, "detail");
      missing = Collections.unmodifiableSortedSet(new TreeSet<>(missing));
    }
  }

  /** A grant is no longer held ({@link Output.Lost}). */
  record Lost(long session, long echo, long sessionFor, long req, String name, Output.LostReason reason,
      String detail) implements ToClient {
    public Lost {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(reason, "reason");
      Objects.requireNonNull(detail, "detail");
    }
  }

  /** A transaction was aborted ({@link Output.TxAborted}). */
  record TxAborted(long session, long echo, long sessionFor, long tx, Output.Failure failure, Set<String> missing,
      String detail) implements ToClient {
    public TxAborted {
      Objects.requireNonNull(failure, "failure");
      Objects.requireNonNull(detail, "detail");
      missing = Collections.unmodifiableSortedSet(new TreeSet<>(missing));
    }
  }

  /** The answer to a {@link HolderQuery}: the holder's tag, empty when none is known. */
  record Holder(long session, long echo, long sessionFor, long q, String name, String tag) implements ToClient {
    public Holder {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(tag, "tag");
    }
  }

  /** The answer to a {@link PermitsQuery}. */
  record Permits(long session, long echo, long sessionFor, long q, String name, int available)
      implements ToClient {
    public Permits {
      Objects.requireNonNull(name, "name");
    }
  }

  /** The answer to a {@link ListQuery}: what is held, or that the member cannot say ({@code known} false). */
  record Listing(long session, long echo, long sessionFor, long q, boolean known, List<Output.Listed> held)
      implements ToClient {
    public Listing {
      held = List.copyOf(held);
    }
  }

  /**
   * The member's link to the client is new: what it sent before may be lost, so the client restates the session with
   * a {@link Hello}, as it does when its own side of a link comes up.
   */
  record Again(long session, long echo, long sessionFor) implements ToClient {}

  /** The answer to a {@link Ping}. */
  record Pong(long session, long echo, long sessionFor) implements ToClient {}

  private static void positive(long v, String what) {
    if (v < 1) {
      throw new IllegalArgumentException("a " + what + " is positive: " + v);
    }
  }

  private static void nonNegative(long v, String what) {
    if (v < 0) {
      throw new IllegalArgumentException("a " + what + " is not negative: " + v);
    }
  }
}
