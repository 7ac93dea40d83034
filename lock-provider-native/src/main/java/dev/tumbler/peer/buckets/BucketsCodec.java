package dev.tumbler.peer.buckets;

import dev.tumbler.peer.core.WireCodec;
import java.io.IOException;

/**
 * Binary encoding of {@link BucketsMessage}: {@code version(1) type(1) fields}, one line a message
 * ({@link WireCodec}). Decoding checks the version, the type, every name, session, count and permit number, counts
 * against the bytes left (a corrupt count is refused, never allocated), and that nothing trails. Thread safe.
 */
public final class BucketsCodec extends WireCodec<BucketsMessage> {

  /** The encoding version this codec writes and reads. */
  public static final byte VERSION = 1;

  /** The longest session name: the node's id and a counter. */
  static final int MAX_SESSION_LENGTH = 1024;
  /** The longest refusal detail. */
  static final int MAX_DETAIL_LENGTH = 2048;

  /** The least bytes of a session, and of a held grant or a wanted request in a restatement (empty strings). */
  private static final int MIN_TEXT_BYTES = 3;
  private static final int MIN_CLAIMED_BYTES = MIN_TEXT_BYTES * 2 + 8 + 4 + 4 + 2;

  private static final Table<BucketsMessage> TABLE = table("buckets", VERSION, BucketsMessage.class)
      .message(1, BucketsMessage.Acquire.class,
          (m, o) -> o.inc(m.inc()).text(m.session()).id(m.reqId()).name(m.name()).number(m.permits())
              .number(m.limit()).flag(m.attempt()).tag(m.tag()).echo(m.echo()),
          i -> new BucketsMessage.Acquire(i.inc(), session(i), i.id("request id"), i.name(), i.positive("permits"),
              i.positive("limit"), i.flag(), i.tag(), i.echo()))
      .message(2, BucketsMessage.Cancel.class,
          (m, o) -> o.inc(m.inc()).text(m.session()).id(m.reqId()),
          i -> new BucketsMessage.Cancel(i.inc(), session(i), i.id("request id")))
      .message(3, BucketsMessage.Release.class,
          (m, o) -> o.inc(m.inc()).text(m.session()).name(m.name()).id(m.grantId()),
          i -> new BucketsMessage.Release(i.inc(), session(i), i.name(), i.id("grant id")))
      .message(4, BucketsMessage.SessionRenew.class,
          (m, o) -> o.inc(m.inc()).text(m.session()).echo(m.echo()),
          i -> new BucketsMessage.SessionRenew(i.inc(), session(i), i.echo()))
      .message(5, BucketsMessage.Query.class,
          (m, o) -> o.inc(m.inc()).id(m.queryId()).name(m.name()),
          i -> new BucketsMessage.Query(i.inc(), i.id("query id"), i.name()))
      .message(6, BucketsMessage.Restate.class,
          (m, o) -> o.inc(m.inc()).term(m.term()).strings(m.sessions())
              .list(m.held(), (h, x) -> x.text(h.session()).name(h.name()).id(h.grantId()).number(h.permits())
                  .number(h.limit()).tag(h.tag()))
              .list(m.wanted(), (w, x) -> x.text(w.session()).id(w.reqId()).name(w.name()).number(w.permits())
                  .number(w.limit()).tag(w.tag()))
              .echo(m.echo()),
          i -> new BucketsMessage.Restate(i.inc(), i.term(), i.list(MIN_TEXT_BYTES, "sessions", BucketsCodec::session),
              i.list(MIN_CLAIMED_BYTES, "held grants", x -> new BucketsMessage.Held(session(x), x.name(),
                  x.id("grant id"), x.positive("permits"), x.positive("limit"), x.tag())),
              i.list(MIN_CLAIMED_BYTES, "wanted requests", x -> new BucketsMessage.Wanted(session(x),
                  x.id("request id"), x.name(), x.positive("permits"), x.positive("limit"), x.tag())),
              i.echo()))
      .message(7, BucketsMessage.Restated.class,
          (m, o) -> o.inc(m.inc()).term(m.term()),
          i -> new BucketsMessage.Restated(i.inc(), i.term()))
      .message(8, BucketsMessage.Grant.class,
          (m, o) -> o.term(m.term()).text(m.session()).id(m.reqId()).name(m.name()).id(m.grantId()).id(m.token())
              .id(m.total()).echo(m.echo()).id(m.floor()),
          i -> new BucketsMessage.Grant(i.term(), session(i), i.id("request id"), i.name(), i.id("grant id"),
              i.id("token"), i.id("total"), i.echo(), i.id("floor")))
      .message(9, BucketsMessage.Busy.class,
          (m, o) -> o.text(m.session()).id(m.reqId()).id(m.total()),
          i -> new BucketsMessage.Busy(session(i), i.id("request id"), i.id("total")))
      .message(10, BucketsMessage.Refused.class,
          (m, o) -> o.text(m.session()).id(m.reqId()).text(m.detail()),
          i -> new BucketsMessage.Refused(session(i), i.id("request id"), i.text(MAX_DETAIL_LENGTH, "detail")))
      .message(11, BucketsMessage.SessionRenewed.class,
          (m, o) -> o.text(m.session()).echo(m.echo()),
          i -> new BucketsMessage.SessionRenewed(session(i), i.echo()))
      .message(12, BucketsMessage.Revoked.class,
          (m, o) -> o.text(m.session()).name(m.name()).id(m.grantId()),
          i -> new BucketsMessage.Revoked(session(i), i.name(), i.id("grant id")))
      .message(13, BucketsMessage.Total.class,
          (m, o) -> o.id(m.queryId()).name(m.name()).id(m.total()),
          i -> new BucketsMessage.Total(i.id("query id"), i.name(), i.id("total")))
      .message(14, BucketsMessage.WhoHolds.class,
          (m, o) -> o.inc(m.inc()).id(m.queryId()).name(m.name()),
          i -> new BucketsMessage.WhoHolds(i.inc(), i.id("query id"), i.name()))
      .message(15, BucketsMessage.Holds.class,
          (m, o) -> o.term(m.term()).id(m.queryId()).name(m.name()).tag(m.tag()),
          i -> new BucketsMessage.Holds(i.term(), i.id("query id"), i.name(), i.tag()))
      .listing(16, BucketsMessage.ListHeld.class, BucketsMessage.ListHeld::new, 17, BucketsMessage.Listing.class,
          BucketsMessage.Listing::new);

  public BucketsCodec() {
    super(TABLE);
  }

  private static String session(In in) throws IOException {
    return in.text(MAX_SESSION_LENGTH, "session");
  }
}
