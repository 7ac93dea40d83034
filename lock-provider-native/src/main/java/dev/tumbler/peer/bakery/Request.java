package dev.tumbler.peer.bakery;

import static dev.tumbler.peer.bakery.Node.NONE;

import dev.tumbler.peer.bakery.BakeryMessage.Key;
import dev.tumbler.peer.bakery.BakeryMessage.ReqKey;
import dev.tumbler.peer.core.Agenda;
import dev.tumbler.peer.core.Claim;
import java.util.Arrays;

/** A request of this node's client ({@link ClientRole}), from its {@code Acquire} to its end. */
final class Request extends Agenda.Item {

  enum State { NEW, PENDING, HELD, ENDED }

  final long id;
  final String session;
  final Claim claim;
  final boolean attempt;
  State state = State.NEW;
  ReqKey key;
  ReqKey supersedes;
  String owner;
  long seq;
  /**
   * When messages {@code low} to {@code seq} of this request were sent ({@code sentTimes[i]} for {@code low + i}): a
   * grant's window starts at its echo's. Those below an echo that was used are dropped; the others are kept in order,
   * since every message takes the next number (a map of boxed numbers took 150 bytes a held lock).
   */
  private long[] sentTimes = new long[2];
  private long low = 1;
  long ownerLostSince = NONE;
  long nextKeepAlive;
  Key ticket;
  long token;
  long reported = NONE;
  long validUntil;
  /** When the oldest renewal the owner has not answered yet was asked for; NONE if none waits. */
  long renewSentAt = NONE;

  Request(long id, String session, Claim claim, boolean attempt) {
    this.id = id;
    this.session = session;
    this.claim = claim;
    this.attempt = attempt;
  }

  String name() {
    return claim.name();
  }

  long nextSeq(long now) {
    int kept = (int) (seq + 1 - low);
    if (kept == sentTimes.length) {
      sentTimes = Arrays.copyOf(sentTimes, kept * 2);
    }
    sentTimes[kept] = now;
    return ++seq;
  }

  /** When message {@code echo} of this request was sent; NONE if it was not, or was dropped. */
  long sentAt(long echo) {
    return echo >= low && echo <= seq ? sentTimes[(int) (echo - low)] : NONE;
  }

  /** Sequence numbers below an echo that was used can never be echoed usefully again. */
  void pruneSentAt(long echo) {
    long drop = Math.min(echo, seq + 1) - low;
    if (drop <= 0) {
      return;
    }
    System.arraycopy(sentTimes, (int) drop, sentTimes, 0, (int) (seq + 1 - low - drop));
    low += drop;
  }
}
