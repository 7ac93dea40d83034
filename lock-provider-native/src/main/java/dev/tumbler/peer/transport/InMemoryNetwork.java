package dev.tumbler.peer.transport;

import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A network inside one JVM for {@link InMemoryTransport}s: a named set of fixed members, links that tests
 * can cut and heal. Every member has one inbound queue drained by one thread, so delivery per link is
 * FIFO and {@code peerDown}/{@code peerUp} are ordered with the payloads around them: payloads sent
 * before a cut arrive before the {@code peerDown}, the {@code peerUp} after a heal arrives before anything
 * sent over the healed link, and payloads sent while a link is cut are dropped.
 *
 * <p>Networks are kept in a JVM-wide registry by name ({@link #named}) so that URLs can refer to them.
 * Thread safe.
 */
public final class InMemoryNetwork {

  private static final Map<String, InMemoryNetwork> NETWORKS = new ConcurrentHashMap<>();

  private final String name;
  private final Set<String> members;
  private final Map<String, InMemoryTransport> started = new ConcurrentHashMap<>();
  // guarded by this: unordered pairs, as "a\0b" with a < b
  private final Set<String> cuts = new HashSet<>();

  /**
   * A network with fixed {@code members}.
   *
   * @throws IllegalArgumentException if there are no members
   */
  public InMemoryNetwork(String name, Set<String> members) {
    this.name = Objects.requireNonNull(name, "name");
    if (members.isEmpty()) {
      throw new IllegalArgumentException("a network needs at least one member");
    }
    this.members = Set.copyOf(members);
  }

  /**
   * The network called {@code name} in this JVM, made with {@code members} if it does not exist yet.
   *
   * @throws IllegalArgumentException if it exists with other members
   */
  public static InMemoryNetwork named(String name, Set<String> members) {
    InMemoryNetwork n = NETWORKS.computeIfAbsent(name, k -> new InMemoryNetwork(k, members));
    if (!n.members.equals(Set.copyOf(members))) {
      throw new IllegalArgumentException("in-memory cluster '" + name + "' has members " + n.members
          + ", not " + new LinkedHashSet<>(members));
    }
    return n;
  }

  /** The network's name. */
  public String name() {
    return name;
  }

  /**
   * A transport for member {@code self}; start it to join.
   *
   * @throws IllegalArgumentException if {@code self} is not a member
   */
  public InMemoryTransport transport(String self) {
    if (!members.contains(self)) {
      throw new IllegalArgumentException("'" + self + "' is not a member of in-memory cluster '" + name
          + "' " + members);
    }
    Set<String> peers = new LinkedHashSet<>(members);
    peers.remove(self);
    return new InMemoryTransport(this, self, Set.copyOf(peers));
  }

  /** Cuts the link between {@code a} and {@code b}: both are told the other is down. Blocks nothing. */
  public void cut(String a, String b) {
    List<InMemoryTransport> ends;
    synchronized (this) {
      if (!cuts.add(key(a, b))) {
        return;
      }
      ends = endsIfStarted(a, b);
      if (ends != null) {
        ends.get(0).linkDown(b);
        ends.get(1).linkDown(a);
      }
    }
  }

  /** Heals the link between {@code a} and {@code b}; both are told the other is up if both are started. */
  public void heal(String a, String b) {
    synchronized (this) {
      if (!cuts.remove(key(a, b))) {
        return;
      }
      List<InMemoryTransport> ends = endsIfStarted(a, b);
      if (ends != null) {
        ends.get(0).linkUp(b);
        ends.get(1).linkUp(a);
      }
    }
  }

  /** Cuts every link of {@code member}. */
  public void isolate(String member) {
    for (String other : members) {
      if (!other.equals(member)) {
        cut(member, other);
      }
    }
  }

  /** Heals every link of {@code member}. */
  public void rejoin(String member) {
    for (String other : members) {
      if (!other.equals(member)) {
        heal(member, other);
      }
    }
  }

  // ---- for InMemoryTransport

  synchronized void join(InMemoryTransport t) {
    if (started.putIfAbsent(t.self(), t) != null) {
      throw new IllegalStateException("member '" + t.self() + "' of in-memory cluster '" + name
          + "' is already running");
    }
    for (InMemoryTransport other : started.values()) {
      if (other != t && !cuts.contains(key(t.self(), other.self()))) {
        t.linkUp(other.self());
        other.linkUp(t.self());
      }
    }
  }

  synchronized void leave(InMemoryTransport t) {
    if (!started.remove(t.self(), t)) {
      return;
    }
    for (InMemoryTransport other : started.values()) {
      if (!cuts.contains(key(t.self(), other.self()))) {
        other.linkDown(t.self());
      }
    }
    if (started.isEmpty() && cuts.isEmpty()) {
      NETWORKS.remove(name, this);
    }
  }

  /** Hands {@code payload} to {@code to}'s inbound queue if the link is up; under the lock, so cuts order with sends. */
  synchronized boolean route(String from, String to, byte[] payload) {
    InMemoryTransport dest = started.get(to);
    if (dest == null || !started.containsKey(from) || cuts.contains(key(from, to))) {
      return false;
    }
    dest.enqueuePayload(from, payload);
    return true;
  }

  private List<InMemoryTransport> endsIfStarted(String a, String b) {
    InMemoryTransport ta = started.get(a);
    InMemoryTransport tb = started.get(b);
    return ta == null || tb == null ? null : List.of(ta, tb);
  }

  private static String key(String a, String b) {
    return a.compareTo(b) < 0 ? a + '\0' + b : b + '\0' + a;
  }

  @Override
  public String toString() {
    return "InMemoryNetwork[" + name + ", members=" + members + "]";
  }
}
