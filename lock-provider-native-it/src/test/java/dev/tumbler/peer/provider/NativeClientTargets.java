package dev.tumbler.peer.provider;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.FaultInjector;
import dev.tumbler.lock.tck.LoopbackPorts;
import dev.tumbler.lock.tck.TckTarget;
import dev.tumbler.lock.tck.TcpProxy;
import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.Algorithms;
import dev.tumbler.peer.node.NodeStats;
import dev.tumbler.peer.transport.Transport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The TCK through thin clients (CLIENTS.md): three TCP members that take clients, and every service the TCK opens a
 * thin client of them, each with a {@link TcpProxy} of its own in front of every member's client listener. The
 * clients' homes go round the members (each client lists the members from a different one on), so that the services
 * of one test are served by different members.
 *
 * <p>Faults: cutting a client off blackholes its own proxies (its home finds out by the idle timeout and expires its
 * session a term later); a minority crash stops the member that serves the most of the clients the fault does not
 * spare, and none of those it spares, so the clients it served fail over to another member; a minority partition
 * cuts that member off from the other members and from every client; the backend's crash cuts the members off from
 * each other. Restarting a member takes a lease term more than on a cluster without clients: a member that takes
 * clients joins a term after it starts (D11).
 */
final class NativeClientTargets {

  static final String CLIENT_SECRET = "tck-client-secret-abcdefghijkl";

  /**
   * The lease term through clients: 5 s, two more than the members' own targets. A holder survives the loss of the
   * server only when the failover (a leader timeout of 450 ms, a vote, the new server's first beat, the restatement and
   * a renewal) ends within the rest of its window, which may be as short as {@code 3T/4 - T/3 = 5T/12}; a client's
   * renewals cross one more hop, and four test JVMs of three members and a dozen clients each share two cores. At 2 s
   * (830 ms for all that) and at 3 s (1.25 s) a full run's minority partition now and then took a holder's lock; at 5 s
   * the failover has 2 s.
   */
  static final Duration LEASE_TIME = Duration.ofSeconds(5);

  private NativeClientTargets() {}

  /** Three TCP members running {@code algorithm} that take clients, with a thin client for every service. */
  static Clients tcp(String algorithm) {
    Algorithm<?> a = Algorithms.byName(algorithm).orElseThrow();
    List<String> clientListen = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      clientListen.add("127.0.0.1:" + LoopbackPorts.freePort());
    }
    int[] k = {0};
    String membersT = "&leaseTime=" + NativeTargets.LEASE_TIME.toMillis() + "ms";
    String clientsT = "&leaseTime=" + LEASE_TIME.toMillis() + "ms";
    NativeTargets.Cluster members = NativeTargets.tcp(algorithm, Duration.ofSeconds(5),
        url -> {
          if (!url.contains(membersT)) {
            throw new IllegalStateException("a member's URL without " + membersT + ": " + url);
          }
          return url.replace(membersT, a.leased() ? clientsT : membersT) + "&clientListen="
              + clientListen.get(k[0]++) + "&clientSecret=" + CLIENT_SECRET;
        });
    return new Clients(a, members, clientListen);
  }

  /** Thin clients of a cluster of members, and the faults they take. */
  static final class Clients implements TckTarget, FaultInjector {
    private final NativeTargets.Cluster members;
    private final List<String> clientListen;
    private final String parameters;
    private final Set<Fault> supported;
    /** Each client's proxies, one per member in member order, by the client's node id. */
    private final Map<String, List<TcpProxy>> proxies = new ConcurrentHashMap<>();
    /** Each client's proxy addresses (its member ids), mapped to the member index behind them. */
    private final Map<String, Integer> memberOf = new ConcurrentHashMap<>();
    private final List<LockService> opened = new ArrayList<>();
    private final AtomicInteger next = new AtomicInteger();
    /** The member a minority fault stopped or cut off, or -1. */
    private int minority = -1;

    Clients(Algorithm<?> algorithm, NativeTargets.Cluster members, List<String> clientListen) {
      this.members = members;
      this.clientListen = clientListen;
      this.parameters = "algorithm=" + algorithm.name() + "&peerTimeout=5s&idleTimeout=2s&backoffMin=50ms"
          + "&backoffMax=500ms&leaseTime=" + LEASE_TIME.toMillis() + "ms&clientSecret=" + CLIENT_SECRET;
      EnumSet<Fault> faults = EnumSet.of(Fault.CUT_OFF_CLIENT, Fault.CRASH_BACKEND, Fault.PAUSE_RENEWALS);
      if (algorithm.capabilities().contains(Capability.FAULT_TOLERANT)) {
        faults.add(Fault.CRASH_MINORITY);
        faults.add(Fault.PARTITION_MINORITY);
      }
      this.supported = Set.copyOf(faults);
    }

    /** A thin client whose members are listed from member {@code first} on, each through a proxy of its own. */
    @Override
    public LockService open() {
      int first = Math.floorMod(next.getAndIncrement(), clientListen.size());
      List<TcpProxy> mine = new ArrayList<>();
      List<String> addresses = new ArrayList<>();
      try {
        for (int j = 0; j < clientListen.size(); j++) {
          int m = (first + j) % clientListen.size();
          String target = clientListen.get(m);
          TcpProxy p = TcpProxy.start("127.0.0.1", Integer.parseInt(target.substring(target.lastIndexOf(':') + 1)));
          mine.add(p);
          addresses.add(p.address());
          memberOf.put(p.address(), m);
        }
        LockService s = LockProviders.connect("lock:native://" + String.join(",", addresses) + "?" + parameters);
        proxies.put(s.unwrap(NodeStats.class).nodeId(), mine);
        synchronized (opened) {
          opened.add(s);
        }
        return s;
      } catch (RuntimeException e) {
        mine.forEach(TcpProxy::close);
        throw e;
      }
    }

    @Override
    public Duration leaseTime() {
      return LEASE_TIME;
    }

    /** A member's own service on member {@code i}: for comparing a member's holder with a client's. */
    LockService member(int i) {
      return members.open(i);
    }

    /** Member {@code i}'s id. */
    String memberId(int i) {
      return members.ids.get(i);
    }

    /** The member index behind a client's member id. */
    int memberIndex(String clientMemberId) {
      return memberOf.get(clientMemberId);
    }

    @Override
    public Optional<String> url() {
      return Optional.of("lock:native://" + String.join(",", clientListen) + "?" + parameters);
    }

    @Override
    public Optional<FaultInjector> faults() {
      return Optional.of(this);
    }

    @Override
    public Set<Fault> supported() {
      return supported;
    }

    /** Blackholes the client's links to every member; returns once the client sees them all down. */
    /** Each client reaches the backend through proxies, a session and renewals of its own: its faults stay with it. */
    @Override
    public boolean isolatesClients() {
      return true;
    }

    @Override
    public void cutOff(LockService client) {
      for (TcpProxy p : proxiesOf(client)) {
        p.blackhole();
      }
      awaitClient(client, false);
    }

    @Override
    public void heal(LockService client) {
      for (TcpProxy p : proxiesOf(client)) {
        p.heal();
      }
      awaitClient(client, true);
    }

    private List<TcpProxy> proxiesOf(LockService client) {
      List<TcpProxy> l = proxies.get(client.unwrap(NodeStats.class).nodeId());
      if (l == null) {
        throw new IllegalArgumentException("not a client of this target: " + client);
      }
      return l;
    }

    /** Waits until {@code client}'s links to the members are all {@code up}, or all down. */
    private void awaitClient(LockService client, boolean up) {
      Transport t = NativeNodes.of(client).transport();
      long deadline = System.nanoTime() + NativeTargets.LINK_WAIT.toNanos();
      while (t.peers().stream().anyMatch(m -> t.isUp(m) != up)) {
        if (System.nanoTime() > deadline) {
          throw new AssertionError("the links of client " + t.self() + " did not go " + (up ? "up" : "down")
              + " within " + NativeTargets.LINK_WAIT);
        }
        NativeTargets.sleep(20);
      }
    }

    /** Stops the member that serves the most unspared clients and no spared one: their home, killed. */
    @Override
    public synchronized void crashMinority(Collection<LockService> spare) {
      minority = victim(spare);
      members.crash(minority);
    }

    /** Starts the stopped member again: a new incarnation, which joins a lease term after it starts. */
    @Override
    public synchronized void restartMinority() {
      members.restart(minority);
      minority = -1;
    }

    /** Cuts the chosen member off from the other members and from every client. */
    @Override
    public synchronized void partitionMinority(Collection<LockService> spare) {
      partition(victim(spare));
    }

    /** Cuts member {@code k} off from the other members and from every client. */
    synchronized void partition(int k) {
      minority = k;
      for (List<TcpProxy> l : proxies.values()) {
        for (TcpProxy p : l) {
          if (memberOf.get(p.address()) == minority) {
            p.blackhole();
          }
        }
      }
      members.cutOff(minority);
    }

    @Override
    public synchronized void healMinority() {
      for (List<TcpProxy> l : proxies.values()) {
        for (TcpProxy p : l) {
          if (memberOf.get(p.address()) == minority) {
            p.heal();
          }
        }
      }
      members.heal(minority);
      minority = -1;
      members.awaitView();
    }

    /**
     * The member that is the home of no spared client and of the most others (the one with the highest index among
     * equals); a client without a home counts for none.
     */
    private int victim(Collection<LockService> spare) {
      Set<Integer> spared = new HashSet<>();
      for (LockService s : spare) {
        homeOf(s).ifPresent(spared::add);
      }
      int[] served = new int[clientListen.size()];
      List<LockService> all;
      synchronized (opened) {
        all = List.copyOf(opened);
      }
      for (LockService s : all) {
        if (!spare.contains(s) && !NativeNodes.of(s).isClosed()) {
          homeOf(s).ifPresent(m -> served[m]++);
        }
      }
      int best = -1;
      for (int m = clientListen.size() - 1; m >= 0; m--) {
        if (!spared.contains(m) && (best < 0 || served[m] > served[best])) {
          best = m;
        }
      }
      if (best < 0) {
        throw new IllegalStateException("every member serves a spared client");
      }
      return best;
    }

    private Optional<Integer> homeOf(LockService client) {
      return client.unwrap(NodeStats.class).home().map(memberOf::get);
    }

    @Override
    public void crashBackend() {
      members.crashBackend();
    }

    @Override
    public void restartBackend() {
      members.restartBackend();
    }

    @Override
    public void close() {
      List<LockService> all;
      synchronized (opened) {
        all = List.copyOf(opened);
      }
      for (LockService s : all) {
        s.close();
      }
      members.close();
      proxies.values().forEach(l -> l.forEach(TcpProxy::close));
    }
  }
}
