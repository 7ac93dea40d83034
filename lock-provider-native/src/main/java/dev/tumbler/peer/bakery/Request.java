package dev.tumbler.peer.bakery;

import static dev.tumbler.peer.bakery.Node.NONE;

import dev.tumbler.peer.bakery.BakeryMessage.Key;
import dev.tumbler.peer.bakery.BakeryMessage.ReqKey;
import dev.tumbler.peer.core.Agenda;
import dev.tumbler.peer.core.Claim;
import java.util.TreeMap;

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
  /** When each message of this request was sent, by its sequence number: a grant's window starts at its echo's. */
  final TreeMap<Long, Long> sentAt = new TreeMap<>();
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
    sentAt.put(++seq, now);
    return seq;
  }

  /** Sequence numbers below an echo that was used can never be echoed usefully again. */
  void pruneSentAt(long echo) {
    sentAt.headMap(echo).clear();
  }
}
