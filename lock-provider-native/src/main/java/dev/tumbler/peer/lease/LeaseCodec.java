package dev.tumbler.peer.lease;

import dev.tumbler.peer.core.WireCodec;

/**
 * Binary encoding of {@link LeaseMessage}: {@code version(1) type(1) fields}, one line a message ({@link WireCodec}).
 * Decoding checks the version, the type, every name, id and count, counts against the bytes left (a corrupt count is
 * refused, never allocated), and that nothing trails. Thread safe.
 */
public final class LeaseCodec extends WireCodec<LeaseMessage> {

  /** The encoding version this codec writes and reads. */
  public static final byte VERSION = 1;

  /** The least bytes of a held lease and of a wanted request in a restatement (empty strings). */
  private static final int MIN_HELD_BYTES = 3 + 8 + 8 + 1 + 2;
  private static final int MIN_WANTED_BYTES = 8 + 3 + 1 + 2;

  private static final Table<LeaseMessage> TABLE = table("lease", VERSION, LeaseMessage.class)
      .message(1, LeaseMessage.Acquire.class,
          (m, o) -> o.inc(m.inc()).id(m.reqId()).name(m.name()).flag(m.attempt()).tag(m.tag()).echo(m.echo()),
          i -> new LeaseMessage.Acquire(i.inc(), i.id("request id"), i.name(), i.flag(), i.tag(), i.echo()))
      .message(2, LeaseMessage.Cancel.class,
          (m, o) -> o.inc(m.inc()).id(m.reqId()).name(m.name()),
          i -> new LeaseMessage.Cancel(i.inc(), i.id("request id"), i.name()))
      .message(3, LeaseMessage.Renew.class,
          (m, o) -> o.inc(m.inc()).name(m.name()).id(m.leaseId()).flag(m.active()).tag(m.tag()).echo(m.echo()),
          i -> new LeaseMessage.Renew(i.inc(), i.name(), i.id("lease id"), i.flag(), i.tag(), i.echo()))
      .message(4, LeaseMessage.RecallReply.class,
          (m, o) -> o.inc(m.inc()).name(m.name()).id(m.leaseId()).flag(m.accepted()),
          i -> new LeaseMessage.RecallReply(i.inc(), i.name(), i.id("lease id"), i.flag()))
      .message(5, LeaseMessage.Release.class,
          (m, o) -> o.inc(m.inc()).name(m.name()).id(m.leaseId()),
          i -> new LeaseMessage.Release(i.inc(), i.name(), i.id("lease id")))
      .message(6, LeaseMessage.Restate.class,
          (m, o) -> o.inc(m.inc()).term(m.term())
              .list(m.held(), (h, x) -> x.name(h.name()).id(h.leaseId()).id(h.token()).flag(h.active()).tag(h.tag()))
              .list(m.wanted(), (w, x) -> x.id(w.reqId()).name(w.name()).flag(w.attempt()).tag(w.tag()))
              .echo(m.echo()),
          i -> new LeaseMessage.Restate(i.inc(), i.term(),
              i.list(MIN_HELD_BYTES, "held leases",
                  x -> new LeaseMessage.Held(x.name(), x.id("lease id"), x.id("token"), x.flag(), x.tag())),
              i.list(MIN_WANTED_BYTES, "wanted requests",
                  x -> new LeaseMessage.Wanted(x.id("request id"), x.name(), x.flag(), x.tag())),
              i.echo()))
      .message(14, LeaseMessage.WhoHolds.class,
          (m, o) -> o.inc(m.inc()).id(m.queryId()).name(m.name()),
          i -> new LeaseMessage.WhoHolds(i.inc(), i.id("query id"), i.name()))
      .message(15, LeaseMessage.Holds.class,
          (m, o) -> o.term(m.term()).id(m.queryId()).name(m.name()).tag(m.tag()),
          i -> new LeaseMessage.Holds(i.term(), i.id("query id"), i.name(), i.tag()))
      .listing(16, LeaseMessage.ListHeld.class, LeaseMessage.ListHeld::new, 17, LeaseMessage.Listing.class,
          LeaseMessage.Listing::new)
      .message(7, LeaseMessage.Restated.class,
          (m, o) -> o.inc(m.inc()).term(m.term()),
          i -> new LeaseMessage.Restated(i.inc(), i.term()))
      .message(8, LeaseMessage.Grant.class,
          (m, o) -> o.term(m.term()).id(m.reqId()).name(m.name()).id(m.leaseId()).id(m.token()).echo(m.echo()),
          i -> new LeaseMessage.Grant(i.term(), i.id("request id"), i.name(), i.id("lease id"), i.id("token"),
              i.echo()))
      .message(9, LeaseMessage.Busy.class,
          (m, o) -> o.term(m.term()).id(m.reqId()).name(m.name()),
          i -> new LeaseMessage.Busy(i.term(), i.id("request id"), i.name()))
      .message(10, LeaseMessage.Renewed.class,
          (m, o) -> o.term(m.term()).name(m.name()).id(m.leaseId()).echo(m.echo()),
          i -> new LeaseMessage.Renewed(i.term(), i.name(), i.id("lease id"), i.echo()))
      .message(11, LeaseMessage.RenewDenied.class,
          (m, o) -> o.term(m.term()).name(m.name()).id(m.leaseId()),
          i -> new LeaseMessage.RenewDenied(i.term(), i.name(), i.id("lease id")))
      .message(12, LeaseMessage.Recall.class,
          (m, o) -> o.term(m.term()).name(m.name()).id(m.leaseId()),
          i -> new LeaseMessage.Recall(i.term(), i.name(), i.id("lease id")))
      .message(13, LeaseMessage.Revoked.class,
          (m, o) -> o.term(m.term()).name(m.name()).id(m.leaseId()),
          i -> new LeaseMessage.Revoked(i.term(), i.name(), i.id("lease id")));

  public LeaseCodec() {
    super(TABLE);
  }
}
