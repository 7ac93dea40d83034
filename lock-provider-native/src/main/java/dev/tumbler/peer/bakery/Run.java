package dev.tumbler.peer.bakery;

import dev.tumbler.peer.bakery.BakeryMessage.Key;
import dev.tumbler.peer.bakery.BakeryMessage.Mode;
import dev.tumbler.peer.bakery.BakeryMessage.ReqKey;
import dev.tumbler.peer.core.Acks;
import dev.tumbler.peer.core.Agenda;
import java.util.Set;

/** A request this node owns as a leader ({@link OwnerRole}): where its run of phases stands. */
final class Run extends Agenda.Item {

  /**
   * P1 entering, P2 max ticket, P3 adding, P4–P5 waiting for the requests that were entering, P6 activating;
   * then granted. {@code ADOPT}: a relocked grant waiting for this leader to act, to take its active ticket over.
   */
  enum Phase { NEW, ENTERING, MAXING, ADDING, WAIT_READY, READY, ACTIVATING, GRANTED, ADOPT }

  final ReqKey reqKey;
  final String client;
  final String name;
  Mode mode;
  final boolean attempt;
  Phase phase = Phase.NEW;
  long term;
  Acks acks;
  long maxSeen;
  /** The requests entering when its ticket was added (P5 waits for them to exit); shared and empty until one is. */
  Set<ReqKey> stillEntering = Set.of();
  /** The leaders that refused its activation; shared and empty until one does (a held lock keeps none). */
  Set<String> refusals = Set.of();
  Key key;
  ReqKey supersedes;
  /** The claim's tag, put on the ticket. */
  String tag = "";
  long echo;
  /** {@link #echo} when the activation was asked for: the grant's echo. */
  long activationEcho;
  long grantEcho;
  long lastHeard;
  Acks renewAcks;
  long renewEcho;
  long renewWanted;
  /** When the run last made progress through a phase that needs the leaders. */
  long progressAt;
  /** The next run of this name at its owner ({@code OwnerRole}'s index by name). */
  Run sameName;

  Run(ReqKey reqKey, String client, String name, Mode mode, boolean attempt) {
    this.reqKey = reqKey;
    this.client = client;
    this.name = name;
    this.mode = mode;
    this.attempt = attempt;
  }

  void heard(long seq, long now) {
    echo = Math.max(echo, seq);
    lastHeard = now;
  }

  /** Whether the run waits for the leaders' answers to a phase message it sent them (P1–P3). */
  boolean asksLeaders() {
    return phase == Phase.ENTERING || phase == Phase.MAXING || phase == Phase.ADDING;
  }

  /** Whether the run is waiting for the leaders themselves (not for holders or entering requests). */
  boolean needsLeaders() {
    return phase == Phase.NEW || phase == Phase.ADOPT || phase == Phase.ENTERING || phase == Phase.MAXING
        || phase == Phase.ADDING;
  }

  /** Whether its ticket is added and waits: for the requests that were entering, or for its activation. */
  boolean waiting() {
    return phase == Phase.WAIT_READY || phase == Phase.READY || phase == Phase.ACTIVATING;
  }
}
