package dev.tumbler.peer.bakery;

import static dev.tumbler.peer.bakery.Node.NONE;

import dev.tumbler.peer.bakery.BakeryMessage.Key;
import dev.tumbler.peer.bakery.BakeryMessage.Mode;
import dev.tumbler.peer.bakery.BakeryMessage.ReqKey;
import dev.tumbler.peer.bakery.BakeryMessage.State;
import dev.tumbler.peer.bakery.BakeryMessage.Ticket;

/** A ticket in a leader's {@link Table}; {@link #wire} is how it travels in restatements and hand-overs. */
final class TableTicket {
  final Key key;
  final ReqKey reqKey;
  String owner;
  final Mode mode;
  State state;
  long deadline = NONE;
  final String tag;
  /** Since when this leader has kept this ticket of another owner without checking it (anti-entropy). */
  long since = NONE;

  TableTicket(Key key, ReqKey reqKey, String owner, Mode mode, State state, String tag) {
    this.key = key;
    this.reqKey = reqKey;
    this.owner = owner;
    this.mode = mode;
    this.state = state;
    this.tag = tag;
  }

  Ticket wire(String name, long now) {
    return new Ticket(name, key, reqKey, owner, mode, state,
        state == State.ACTIVE ? Math.max(0, deadline - now) : 0, tag);
  }
}
