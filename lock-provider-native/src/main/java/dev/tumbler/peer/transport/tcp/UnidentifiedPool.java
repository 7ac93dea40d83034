package dev.tumbler.peer.transport.tcp;

import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;

/**
 * The accepted connections that have not yet named a member (sent their HELLO): at most {@code capacity} at
 * once, and which one to close to admit another.
 *
 * <p>A connection is <em>queued</em> from its accept until its handshake thread starts reading it, then
 * <em>read</em>. Only a read connection may be evicted, the one read longest first: it has had its chance to
 * send a HELLO and has not. A queued one has not had it: how long it waits for its thread depends on the
 * node's load, not on the peer. Under load the accept loop admits connections faster than their threads
 * start, and evicting the oldest admitted one would close connections nobody had read, a member's among
 * them with its HELLO waiting in the socket. So when every connection in a full pool is queued, none is
 * evicted and {@link #hasRoom} is false: the owner stops accepting (new connections wait in the listen
 * backlog) until a thread starts reading, and the accept rate follows the rate at which connections are read.
 *
 * <p>Not thread safe: the owner guards it.
 */
final class UnidentifiedPool<C> {
  private final int capacity;
  private final Set<C> queued = new LinkedHashSet<>();
  private final Set<C> read = new LinkedHashSet<>(); // in the order their reads began

  /**
   * @throws IllegalArgumentException if {@code capacity} is less than 1
   */
  UnidentifiedPool(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1, was " + capacity);
    }
    this.capacity = capacity;
  }

  /** Whether a connection may be admitted now: the pool is not full, or it holds one that may be evicted. */
  boolean hasRoom() {
    return size() < capacity || !read.isEmpty();
  }

  /**
   * Admits {@code c}, queued; returns the connection evicted to make room for it (the one read longest), or
   * null if there was room.
   *
   * @throws IllegalStateException if there is no room (see {@link #hasRoom})
   * @throws IllegalArgumentException if {@code c} is in the pool already
   */
  C admit(C c) {
    Objects.requireNonNull(c, "c");
    if (!hasRoom()) {
      throw new IllegalStateException("no room: all " + capacity + " connections are queued, none read yet");
    }
    if (queued.contains(c) || read.contains(c)) {
      throw new IllegalArgumentException("admitted twice: " + c);
    }
    C evicted = null;
    if (size() >= capacity) {
      Iterator<C> it = read.iterator();
      evicted = it.next();
      it.remove();
    }
    queued.add(c);
    return evicted;
  }

  /** {@code c}'s handshake thread starts reading it; nothing happens if {@code c} is not queued. */
  void reading(C c) {
    if (queued.remove(c)) {
      read.add(c);
    }
  }

  /** {@code c} leaves the pool (its HELLO named a member, or it ended); returns whether it was in it. */
  boolean remove(C c) {
    return queued.remove(c) || read.remove(c);
  }

  int size() {
    return queued.size() + read.size();
  }
}
