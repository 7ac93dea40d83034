package dev.tumbler.peer.composite;

/**
 * The channels of a node's {@link CompositeCore}: one per hosted core, each with its own messages and
 * codec. The number is the envelope's channel byte on the wire; it never changes for a channel.
 */
public enum Channel {
  /** The election core: views and leader leases, shared by the algorithms that need elected leaders. */
  ELECTION(0, "election"),
  /** The lock core chosen by {@code algorithm=}. */
  LOCK(1, "lock"),
  /** The semaphore core. */
  BUCKETS(2, "buckets"),
  /** The transaction core. */
  AGENT(3, "agent"),
  /** Thin clients and the members they use (CLIENTS.md): a member's gateway, a client's core. */
  CLIENT(4, "client");

  private final byte number;
  private final String label;

  Channel(int number, String label) {
    this.number = (byte) number;
    this.label = label;
  }

  /** The envelope's channel byte. */
  public byte number() {
    return number;
  }

  /** The channel's name in counters and traces ({@code lock/Request}). */
  public String label() {
    return label;
  }

  /** The channel numbered {@code number}, or null if there is none. */
  static Channel of(byte number) {
    for (Channel c : values()) {
      if (c.number == number) {
        return c;
      }
    }
    return null;
  }
}
