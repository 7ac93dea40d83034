package dev.tumbler.peer.client;

import dev.tumbler.lock.TransactionOptions.Quorum;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.CodecException;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.TxOptions;
import dev.tumbler.peer.core.WireCodec;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Binary encoding of {@link ClientMessage}: {@code version(1) type(1) session(8) seq-or-echo(8) fields}, one line a
 * message ({@link WireCodec}). Decoding checks the version, the type, every id, duration, enum, name and count (a
 * corrupt count is refused, never allocated), that a claim and a transaction's options are valid, and that nothing
 * trails. Thread safe.
 */
public final class ClientCodec extends WireCodec<ClientMessage> {

  /** The encoding version this codec writes and reads. */
  public static final byte VERSION = 1;

  /** The longest path element of a claim (a provider's qualified name is at most 517 characters), and node id. */
  static final int MAX_ELEMENT_LENGTH = 520;
  /** The longest name: a claim's path joined by {@code /}. */
  static final int MAX_NAME_LENGTH = Claim.MAX_DEPTH * (MAX_ELEMENT_LENGTH + 1);
  /** The longest algorithm name, reason or detail. */
  static final int MAX_TEXT_LENGTH = 2048;

  private static final int MIN_TEXT_BYTES = 3;
  /** A claim: a 1-element path, mode, permits, limit, writer, quiet period, empty tag. */
  private static final int MIN_CLAIM_BYTES = 4 + MIN_TEXT_BYTES + 1 + 4 + 4 + 1 + 8 + 2;
  private static final int MIN_ASKED_BYTES = 8 + MIN_CLAIM_BYTES + 1 + 8 + 1;
  private static final int MIN_OPEN_BYTES = 8 + 1 + 1 + 4 + 8;

  private static final Table<ClientMessage> TABLE = table("client", VERSION, ClientMessage.class)
      .names(MAX_NAME_LENGTH)
      .minBytes(2 + 8 + 8)
      // a client's messages: session, seq
      .message(1, ClientMessage.Hello.class,
          (m, o) -> head(m, o).text(m.algorithm()).number(m.leaseNanos())
              .list(m.requests(), (a, x) -> x.id(a.req()).claim(a.claim()).flag(a.attempt()).id(a.tx()).flag(a.held()))
              .list(m.txs(), (t, x) -> options(x.id(t.tx()), t.options())),
          i -> new ClientMessage.Hello(i.number(), seq(i), text(i, "algorithm"), i.id("lease term"),
              i.list(MIN_ASKED_BYTES, "requests", x -> new ClientMessage.Asked(x.id("request id"), claim(x), x.flag(),
                  x.id("transaction id"), x.flag())),
              i.list(MIN_OPEN_BYTES, "transactions", x -> new ClientMessage.Open(x.id("transaction id"), options(x)))))
      .message(2, ClientMessage.Acquire.class,
          (m, o) -> head(m, o).id(m.req()).claim(m.claim()).flag(m.attempt()).id(m.tx()),
          i -> new ClientMessage.Acquire(i.number(), seq(i), i.id("request id"), claim(i), i.flag(),
              i.id("transaction id")))
      .message(3, ClientMessage.Release.class, (m, o) -> head(m, o).id(m.req()),
          i -> new ClientMessage.Release(i.number(), seq(i), i.id("request id")))
      .message(4, ClientMessage.Cancel.class, (m, o) -> head(m, o).id(m.req()),
          i -> new ClientMessage.Cancel(i.number(), seq(i), i.id("request id")))
      .message(5, ClientMessage.Renew.class, (m, o) -> head(m, o).id(m.req()),
          i -> new ClientMessage.Renew(i.number(), seq(i), i.id("request id")))
      .message(6, ClientMessage.Begin.class, (m, o) -> options(head(m, o).id(m.tx()), m.options()),
          i -> new ClientMessage.Begin(i.number(), seq(i), i.id("transaction id"), options(i)))
      .message(7, ClientMessage.End.class, (m, o) -> head(m, o).id(m.tx()),
          i -> new ClientMessage.End(i.number(), seq(i), i.id("transaction id")))
      .message(8, ClientMessage.HolderQuery.class, (m, o) -> head(m, o).id(m.q()).name(m.name()),
          i -> new ClientMessage.HolderQuery(i.number(), seq(i), i.id("query id"), i.name()))
      .message(9, ClientMessage.PermitsQuery.class,
          (m, o) -> head(m, o).id(m.q()).name(m.name()).number(m.limit()),
          i -> new ClientMessage.PermitsQuery(i.number(), seq(i), i.id("query id"), i.name(), i.positive("limit")))
      .message(12, ClientMessage.ListQuery.class, (m, o) -> head(m, o).id(m.q()).strings(m.prefixes()),
          i -> new ClientMessage.ListQuery(i.number(), seq(i), i.id("query id"), i.prefixes()))
      .message(10, ClientMessage.Ping.class, ClientCodec::head, i -> new ClientMessage.Ping(i.number(), seq(i)))
      .message(11, ClientMessage.Bye.class, ClientCodec::head, i -> new ClientMessage.Bye(i.number(), seq(i)))
      // a member's replies: session, echo, and mostly how long the member vouches for the session
      .message(20, ClientMessage.Welcome.class, (m, o) -> head(m, o).id(m.sessionFor()),
          i -> new ClientMessage.Welcome(i.number(), echo(i), i.id("session time")))
      .message(21, ClientMessage.Refused.class, (m, o) -> head(m, o).text(m.reason()),
          i -> new ClientMessage.Refused(i.number(), echo(i), text(i, "reason")))
      .message(22, ClientMessage.Gone.class, (m, o) -> head(m, o).flag(m.stopping()).text(m.reason()),
          i -> new ClientMessage.Gone(i.number(), echo(i), i.flag(), text(i, "reason")))
      .message(23, ClientMessage.Granted.class,
          (m, o) -> head(m, o).id(m.sessionFor()).id(m.req()).name(m.name()).number(m.token()).number(m.permits())
              .id(m.validFor()),
          i -> new ClientMessage.Granted(i.number(), echo(i), i.id("session time"), i.id("request id"), i.name(),
              i.number(), i.positive("permits"), i.id("grant's time")))
      .message(24, ClientMessage.Renewed.class,
          (m, o) -> head(m, o).id(m.sessionFor()).id(m.req()).id(m.validFor()),
          i -> new ClientMessage.Renewed(i.number(), echo(i), i.id("session time"), i.id("request id"),
              i.id("grant's time")))
      .message(25, ClientMessage.Failed.class,
          (m, o) -> head(m, o).id(m.sessionFor()).id(m.req()).name(m.name()).ordinal(m.failure()).strings(m.missing())
              .text(m.detail()),
          i -> new ClientMessage.Failed(i.number(), echo(i), i.id("session time"), i.id("request id"),
              nameOrEmpty(i), i.oneOf(Output.Failure.values(), "failure"), nodes(i), detail(i)))
      .message(26, ClientMessage.Lost.class,
          (m, o) -> head(m, o).id(m.sessionFor()).id(m.req()).name(m.name()).ordinal(m.reason()).text(m.detail()),
          i -> new ClientMessage.Lost(i.number(), echo(i), i.id("session time"), i.id("request id"), nameOrEmpty(i),
              i.oneOf(Output.LostReason.values(), "reason"), detail(i)))
      .message(27, ClientMessage.TxAborted.class,
          (m, o) -> head(m, o).id(m.sessionFor()).id(m.tx()).ordinal(m.failure()).strings(m.missing())
              .text(m.detail()),
          i -> new ClientMessage.TxAborted(i.number(), echo(i), i.id("session time"), i.id("transaction id"),
              i.oneOf(Output.Failure.values(), "failure"), nodes(i), detail(i)))
      .message(28, ClientMessage.Holder.class,
          (m, o) -> head(m, o).id(m.sessionFor()).id(m.q()).name(m.name()).tag(m.tag()),
          i -> new ClientMessage.Holder(i.number(), echo(i), i.id("session time"), i.id("query id"), i.name(),
              i.tag()))
      .message(29, ClientMessage.Permits.class,
          (m, o) -> head(m, o).id(m.sessionFor()).id(m.q()).name(m.name()).number(m.available()),
          i -> new ClientMessage.Permits(i.number(), echo(i), i.id("session time"), i.id("query id"), i.name(),
              i.nonNegative("available permits")))
      .message(32, ClientMessage.Listing.class,
          (m, o) -> head(m, o).id(m.sessionFor()).id(m.q()).flag(m.known()).list(m.held(), (h, x) -> x.listed(h)),
          i -> new ClientMessage.Listing(i.number(), echo(i), i.id("session time"), i.id("query id"), i.flag(),
              i.list(In.MIN_LISTED_BYTES, "listed claims", x -> x.listed())))
      .message(30, ClientMessage.Pong.class, (m, o) -> head(m, o).id(m.sessionFor()),
          i -> new ClientMessage.Pong(i.number(), echo(i), i.id("session time")))
      .message(31, ClientMessage.Again.class, (m, o) -> head(m, o).id(m.sessionFor()),
          i -> new ClientMessage.Again(i.number(), echo(i), i.id("session time")));

  public ClientCodec() {
    super(TABLE);
  }

  /** What every message starts with: its session, then its number in it (a client's) or the echo (a reply's). */
  private static Out head(ClientMessage m, Out out) throws IOException {
    return out.number(m.session()).id(switch (m) {
      case ClientMessage.ToMember t -> t.seq();
      case ClientMessage.ToClient t -> t.echo();
    });
  }

  private static long seq(In in) throws IOException {
    return in.id("sequence number");
  }

  private static long echo(In in) throws IOException {
    return in.id("echo");
  }

  private static Claim claim(In in) throws IOException {
    return in.claim(MAX_ELEMENT_LENGTH);
  }

  private static Out options(Out out, TxOptions o) throws IOException {
    return out.flag(o.abortOnDeadlock()).ordinal(o.quorum()).strings(o.nodes()).id(o.leaseNanos());
  }

  private static TxOptions options(In in) throws IOException {
    boolean abort = in.flag();
    Quorum quorum = in.oneOf(Quorum.values(), "quorum");
    Set<String> nodes = nodes(in);
    return new TxOptions(abort, quorum, List.copyOf(nodes), in.id("transaction's lease term"));
  }

  private static Set<String> nodes(In in) throws IOException {
    return new TreeSet<>(in.list(MIN_TEXT_BYTES, "node ids", x -> x.text(MAX_ELEMENT_LENGTH, "node id")));
  }

  private static String text(In in, String what) throws IOException {
    return in.text(MAX_TEXT_LENGTH, what);
  }

  /** A request's name in a failure or loss: empty when the member did not know the request. */
  private static String nameOrEmpty(In in) throws IOException {
    String s = in.textOrEmpty(Integer.MAX_VALUE, "name");
    if (s.length() > MAX_NAME_LENGTH || s.chars().anyMatch(Character::isISOControl)) {
      throw new CodecException("name of " + s.length() + " characters, or with a control character, in client "
          + "message (at most " + MAX_NAME_LENGTH + ")");
    }
    return s;
  }

  /** A detail may be empty (the member had nothing to add). */
  private static String detail(In in) throws IOException {
    return in.textOrEmpty(MAX_TEXT_LENGTH, "detail");
  }
}
