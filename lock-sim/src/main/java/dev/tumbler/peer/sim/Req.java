package dev.tumbler.peer.sim;

import dev.tumbler.peer.core.Claim;

/**
 * One request of a run, as its client asked for it and as the run's book keeps it: the client's side of the
 * request and the core's side differ while an input is on its way (a paused node catching up), and the checks need
 * both.
 */
final class Req {

  enum State { PENDING, HELD, ENDED }

  final long id;
  final int node;
  final String session;
  final Claim claim;
  final long hold;
  final boolean renews;
  State state = State.PENDING;
  String endReason;
  /** A probe: asked once every fault healed, it must be granted. */
  boolean mustGrant;
  boolean granted;
  /** The client ended the request and the input telling the core (Release, Cancel, CloseSession) was issued. */
  boolean endSentToCore;
  /** The core has stepped that input. */
  boolean endDelivered;
  /** The renewer's generation: a scheduled renewal of an older one does nothing. */
  long renewals;
  /** The transaction it is a claim of, or null. */
  Tx tx;

  Req(long id, int node, String session, Claim claim, long hold, boolean renews) {
    this.id = id;
    this.node = node;
    this.session = session;
    this.claim = claim;
    this.hold = hold;
    this.renews = renews;
  }

  /**
   * Whether the client gave the request up and the core has not heard yet: what the core says of it meanwhile (a
   * grant, a renewal, a surrender) is the core's own, and nobody uses it.
   */
  boolean endedUnheard() {
    return state == State.ENDED && endSentToCore && !endDelivered;
  }

  @Override
  public String toString() {
    int slash = session.indexOf('/');
    return "#" + id + "@" + (slash > 0 ? session.substring(0, slash) : "n" + node) + "("
        + (claim.mode() == Claim.Mode.EXCLUSIVE ? "" : claim.mode() + " ") + claim.name() + ", " + session + ")";
  }
}
