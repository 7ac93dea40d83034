package dev.tumbler.peer.bakery;

import static dev.tumbler.peer.bakery.Node.NONE;
import static dev.tumbler.peer.bakery.Node.earliest;

import dev.tumbler.peer.bakery.BakeryMessage.Key;
import dev.tumbler.peer.bakery.BakeryMessage.ReqKey;
import dev.tumbler.peer.bakery.BakeryMessage.State;
import dev.tumbler.peer.core.Claim;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/** One name's records at a leader ({@link LeaderTables}): entering requests, tickets in key order, high-water marks. */
final class Table {
  final Map<ReqKey, String> entering = new LinkedHashMap<>(2); // a table for every name held: small until it grows
  final TreeMap<Key, TableTicket> tickets = new TreeMap<>();
  /** Activations this leader refused, by ticket key, and who asked. */
  final Map<Key, String> deferred = new LinkedHashMap<>(2);
  long highestTerm;
  long highest;
  long lastRead = NONE;
  /** The largest key this leader agreed to activate in {@link #activatedTerm}. */
  Key activatedTop;
  long activatedTerm;

  void raise(long term, Key key) {
    if (highestTerm != term) {
      highestTerm = term;
      highest = 0;
    }
    highest = Math.max(highest, key.h());
  }

  /**
   * Adds {@code t} keeping one live key per request (BK-2): a request's keys only grow (a redraw takes a larger
   * number), so a smaller one left behind (its DropTicket lost with a link) is dropped, and one that arrives
   * after a larger (a stale restatement or a kept message) is not added. A key left behind would hold back
   * every ticket after it for ever.
   *
   * @return false when {@code t} is stale and was not added
   */
  boolean put(TableTicket t) {
    for (TableTicket x : tickets.values()) {
      if (x.reqKey.equals(t.reqKey) && x.key.compareTo(t.key) > 0) {
        return false;
      }
    }
    tickets.values().removeIf(x -> x.reqKey.equals(t.reqKey) && x.state != State.ACTIVE);
    tickets.put(t.key, t);
    return true;
  }

  void activated(long term, Key key) {
    if (key.term() != term) {
      return; // handed over from an earlier term
    }
    if (activatedTerm != term) {
      activatedTerm = term;
      activatedTop = null;
    }
    if (activatedTop == null || key.compareTo(activatedTop) > 0) {
      activatedTop = key;
    }
  }

  /** Whether this leader agreed to activate a larger key than {@code key} in {@code term}. */
  boolean activatedAbove(long term, Key key) {
    return activatedTerm == term && activatedTop != null && activatedTop.compareTo(key) > 0;
  }

  /**
   * The earliest end, after {@code after}, of the quiet period of a waiting timed-soft writer; NONE if none.
   * Not the earliest end of all: once the shortest quiet period has passed, a writer with a longer one
   * (which may be the first in line) still needs a wake-up when its own ends (sim seed 796252: two timed-soft
   * writers, and the one with the longer period waited for ever once the last reader had gone).
   */
  long quietEndAfter(long after) {
    long at = NONE;
    if (lastRead == NONE) {
      return NONE;
    }
    for (TableTicket t : tickets.values()) {
      long end = lastRead + t.mode.quietNanos();
      if (t.state != State.ACTIVE && t.mode.writer() == Claim.Writer.TIMED_SOFT && end > after) {
        at = earliest(at, end);
      }
    }
    return at;
  }
}
