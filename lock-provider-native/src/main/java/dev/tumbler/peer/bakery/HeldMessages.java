package dev.tumbler.peer.bakery;

import dev.tumbler.peer.core.Input;
import java.util.ArrayList;
import java.util.List;

/**
 * Leader messages this node cannot handle yet, kept for later rather than lost: those of its own term that arrive
 * while it leads but does not act (its table not taken over, its leader lease lapsed for a moment), handled once it
 * acts; and those of a term it has not adopted yet, handled once its view reaches it. A restatement from their
 * sender replaces them.
 */
final class HeldMessages {

  private static final int MAX_AHEAD = 10_000;

  private final List<Input.Message<BakeryMessage>> inbox = new ArrayList<>();
  private final List<Input.Message<BakeryMessage>> ahead = new ArrayList<>();

  /** Keeps a message of this node's term until it acts. */
  void keepUntilActing(String from, BakeryMessage m) {
    inbox.add(new Input.Message<>(from, m));
  }

  boolean anyUntilActing() {
    return !inbox.isEmpty();
  }

  /** The messages kept until this node acts, in arrival order; kept no longer. */
  List<Input.Message<BakeryMessage>> takeUntilActing() {
    List<Input.Message<BakeryMessage>> held = List.copyOf(inbox);
    inbox.clear();
    return held;
  }

  /** A new term: what was kept for the old one is of no use. */
  void dropUntilActing() {
    inbox.clear();
  }

  /** Keeps a message of a term this node has not adopted yet; its view reaches this node soon. */
  void keepAhead(String from, BakeryMessage m) {
    if (ahead.size() < MAX_AHEAD) {
      ahead.add(new Input.Message<>(from, m));
    }
  }

  /** The messages kept for terms up to {@code term}, in arrival order; kept no longer. */
  List<Input.Message<BakeryMessage>> takeAhead(long term) {
    List<Input.Message<BakeryMessage>> replay = new ArrayList<>();
    ahead.removeIf(m -> ((BakeryMessage.Termed) m.message()).term() <= term && replay.add(m));
    return replay;
  }

  /**
   * What {@code peer} sent on its earlier link and this node kept for later is replaced by its restatement: handled
   * after it, a kept AddTicket would bring back a ticket the peer has dropped since (its DropTicket was lost with the
   * link) and hold the name for ever.
   */
  void forget(String peer) {
    inbox.removeIf(k -> k.from().equals(peer));
    ahead.removeIf(k -> k.from().equals(peer));
  }
}
