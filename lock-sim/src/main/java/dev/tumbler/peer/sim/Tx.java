package dev.tumbler.peer.sim;

import java.util.ArrayList;
import java.util.List;

/** A transaction a client began ({@link Op.Transaction}), and its claims as they were asked for. */
final class Tx {
  final long id;
  final int node;
  final int incarnation;
  final String session;
  final Op.Transaction op;
  final List<Req> reqs = new ArrayList<>();
  boolean holding;
  boolean ended;
  int surrendered;
  /** The step in which a told claim of it was last lost to a deadlock (AG-4). */
  long toldLostAtStep = -1;

  Tx(long id, int node, int incarnation, String session, Op.Transaction op) {
    this.id = id;
    this.node = node;
    this.incarnation = incarnation;
    this.session = session;
    this.op = op;
  }
}
