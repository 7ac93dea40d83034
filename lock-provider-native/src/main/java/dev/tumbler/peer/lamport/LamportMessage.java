package dev.tumbler.peer.lamport;

import dev.tumbler.peer.core.PeerMessage;
import java.util.List;
import java.util.Objects;

/**
 * The messages of {@link LamportCore}, for both variants. {@code ts} is always the sender's logical
 * clock at sending; a request is identified by its lock name, its timestamp and its sender.
 */
public sealed interface LamportMessage extends PeerMessage {

  /** The sender's logical clock when it sent the message. */
  long ts();

  /** Rule 1: "I ask for {@code name}", stamped {@code ts}; the request's place in the total order is (ts, sender). */
  record Request(String name, long ts, boolean attempt) implements LamportMessage {
    public Request {
      Objects.requireNonNull(name, "name");
    }
  }

  /** Rule 2 (Lamport): acknowledges a request; its only content is its later timestamp. */
  record Ack(long ts) implements LamportMessage {}

  /** Rule 3 (Lamport): the sender's request {@code (requestTs, sender)} on {@code name} is gone. */
  record Release(String name, long requestTs, long ts) implements LamportMessage {
    public Release {
      Objects.requireNonNull(name, "name");
    }
  }

  /** Ricart–Agrawala: permission for the request {@code (requestTs, receiver)} on {@code name}. */
  record Reply(String name, long requestTs, long ts) implements LamportMessage {
    public Reply {
      Objects.requireNonNull(name, "name");
    }
  }

  /** Ricart–Agrawala: the single-attempt request {@code (requestTs, receiver)} found the lock taken. */
  record Busy(String name, long requestTs, long ts) implements LamportMessage {
    public Busy {
      Objects.requireNonNull(name, "name");
    }
  }

  /** One request restated by {@link Sync}. */
  record Entry(String name, long requestTs, boolean attempt) {
    public Entry {
      Objects.requireNonNull(name, "name");
    }
  }

  /**
   * Sent first whenever a link comes up ({@code answer} set), and in answer to such a Sync ({@code answer}
   * clear): the complete list of the sender's live requests (Lamport: pending and held; Ricart–Agrawala:
   * pending). It replaces whatever the receiver knew of the sender's requests, which repairs requests and
   * releases lost while the link was down and drops the entries of a sender that crashed and restarted with
   * empty state. The answer makes every node receive a Sync sent after it saw the link come back, whatever
   * order its transport reported the two directions in.
   */
  record Sync(long ts, List<Entry> entries, boolean answer) implements LamportMessage {
    public Sync {
      entries = List.copyOf(entries);
    }
  }
}
