package dev.tumbler.peer.core;

import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * When a node of a fault-tolerant algorithm can tell that no quorum can form around it, so that its waits may end
 * before their deadlines: it has had fewer members connected (itself included) than an election needs for
 * {@code peerTimeout} on end. An election needs a majority of the members; a cluster of at most three that has not
 * elected yet needs every member (NATIVE-ALGORITHMS E1), and a node knows it has elected once it has seen a view.
 *
 * <p>Anything less is no reason to end a wait: a server or leader that is unreachable, not elected yet, or taking
 * over in its grace is what a failover looks like, and a majority of connected members elects a new one. The rule is
 * the node's own view of its links: a node cut off from most members but still linked to a server that reaches them
 * cannot tell that case from being on the small side of a partition, and ends its waits too. A link that comes back
 * starts the count again. Mutable; owned by one core and stepped with it.
 */
public final class QuorumWatch {

  private final Set<String> peers;
  private final long timeoutNanos;
  private final int majority;
  private final Set<String> connected = new TreeSet<>();
  private boolean elected;
  /** Since when fewer than {@link #needed()} members have been connected; {@link Long#MIN_VALUE} while enough are. */
  private long since = Long.MIN_VALUE;
  private boolean started;

  /**
   * @param peers the other members
   * @param timeoutNanos how long the node must have too few members connected: {@code peerTimeout}
   */
  public QuorumWatch(Set<String> peers, long timeoutNanos) {
    this.peers = Set.copyOf(Objects.requireNonNull(peers, "peers"));
    if (timeoutNanos <= 0) {
      throw new IllegalArgumentException("timeoutNanos must be positive: " + timeoutNanos);
    }
    this.timeoutNanos = timeoutNanos;
    this.majority = (this.peers.size() + 1) / 2 + 1;
  }

  /**
   * Notes, at {@code now}, which peers are connected and whether the node has ever seen a view (it elected, or was
   * told who leads). Call after every step that may change either; the first call starts the clock.
   */
  public void update(long now, Set<String> connectedPeers, boolean viewSeen) {
    started = true;
    elected |= viewSeen;
    int n = 0;
    boolean same = true;
    for (String p : connectedPeers) {
      if (peers.contains(p)) {
        n++;
        same &= connected.contains(p);
      }
    }
    if (!same || n != connected.size()) { // most steps change no link: the set is made again only when one did
      connected.clear();
      for (String p : connectedPeers) {
        if (peers.contains(p)) {
          connected.add(p);
        }
      }
    }
    if (connected.size() + 1 >= needed()) {
      since = Long.MIN_VALUE;
    } else if (since == Long.MIN_VALUE) {
      since = now;
    }
  }

  /** The members (this node included) an election needs connected. */
  public int needed() {
    return !elected && peers.size() + 1 <= 3 ? peers.size() + 1 : majority;
  }

  /** Whether the node has had too few members connected for the timeout: no quorum can form here, waits end. */
  public boolean lost(long now) {
    return started && since != Long.MIN_VALUE && now - since >= timeoutNanos;
  }

  /** When {@link #lost} turns true unless a link comes up first, or {@link Long#MAX_VALUE} while enough are connected. */
  public long lostAt() {
    return since == Long.MIN_VALUE ? Long.MAX_VALUE : since + timeoutNanos;
  }

  /** The peers that are not connected, sorted: what a wait that ends for want of a quorum names. */
  public Set<String> missing() {
    Set<String> m = new TreeSet<>(peers);
    m.removeAll(connected);
    return m;
  }

  /** Why waits end, for a failure's detail: how many members are connected and how many a quorum needs. */
  public String detail() {
    int members = peers.size() + 1;
    return "only " + (connected.size() + 1) + " of " + members + " members connected (this node included) for "
        + timeoutNanos / 1_000_000 + " ms, and " + (elected || members > 3 ? "a quorum needs " + needed()
        : "the first election of a cluster of " + members + " needs all " + members) + ": no quorum can form here";
  }
}
