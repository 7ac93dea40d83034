package dev.tumbler.bench;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.cp.lock.FencedLock;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockService;
import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.Algorithms;
import dev.tumbler.peer.node.NodeStats;
import dev.tumbler.peer.provider.LoopbackCluster;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingCluster;

/**
 * The native algorithms against three anchors, in one run, as ratios: an uncontended acquire and release
 * by one client on a 3-peer native cluster over TCP on loopback, against
 *
 * <ul>
 *   <li><b>raw round trip</b>: a one-byte TCP ping-pong on loopback (TCP_NODELAY), the floor of anything
 *       that must hear from another process;
 *   <li><b>raw fan-out to 2</b>: one byte to each of two echo servers, then both answers: the floor of
 *       Lamport and Ricart–Agrawala, which hear from both peers before they grant (printed as each one's "own
 *       floor");
 *   <li><b>ZooKeeper ensemble</b>: Curator's {@link InterProcessMutex} on a 3-server in-process ensemble;
 *   <li><b>Hazelcast FencedLock</b>: the CP subsystem's Raft-replicated lock on 3 CP members in this JVM
 *       (Hazelcast 5.4.0, whose CP subsystem is in the open-source edition), locked through a member.
 * </ul>
 *
 * Every side first runs alone until the JIT has compiled its path ({@value #WARM_UP_OPS} operations, or
 * {@value #WARM_UP_SECONDS} s for a slow side): after a few hundred operations the JIT was still compiling,
 * the anchors' paths above all, during the measured rounds and on the same cores, and the native sides
 * measured up to half again slower. Then every side runs in each round, in an order that rotates from round to round, so that drift of a shared
 * machine hits all alike; the result per side is the median of its per-round time per operation, and
 * each ratio is the median over rounds of (algorithm / anchor) within the round. It also prints the
 * native messages sent per entry, from {@link NodeStats#messagesSentByType()}. For an algorithm with elected
 * leaders the lock's name is one whose owner leader is not on the client's node (otherwise which node owns
 * it, and so whether an entry costs one round trip more, would change from run to run with the ports). Absolute times on a shared
 * machine are noise; ratios are the result. Not a test: {@code lock-bench/run NativeBench [rounds]
 * [iterations]}.
 */
public final class NativeBench {

  /** Operations each side runs alone before the rounds, so that its path is compiled. */
  static final int WARM_UP_OPS = 20_000;
  /** A side slower than this per warm-up (the ensemble's disk writes) stops warming up after it. */
  static final int WARM_UP_SECONDS = 5;

  private NativeBench() {}

  /** One operation (an acquire and a release, or one ping-pong) on the current thread. */
  @FunctionalInterface
  private interface Op {
    void run() throws Exception;
  }

  public static void main(String[] args) throws Exception {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    // the in-process ensemble complains at shutdown about connections the run closed; only results matter
    System.setProperty("org.slf4j.simpleLogger.log.org.apache.zookeeper", "off");
    System.setProperty("org.slf4j.simpleLogger.log.org.apache.curator", "off");
    System.setProperty("hazelcast.logging.type", "none");
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 20;

    List<AutoCloseable> resources = new ArrayList<>();
    try {
      Map<String, Op> sides = new LinkedHashMap<>();
      sides.put("raw round trip", pingPong(resources));
      sides.put("raw fan-out to 2", fanOut(resources));
      List<NativeSide> natives = new ArrayList<>();
      for (Algorithm<?> a : Algorithms.all()) {
        if (a.singleServer()) {
          natives.addAll(singleServer(a, resources));
          continue;
        }
        List<LockService> cluster = nativeCluster(a.name(), 3);
        resources.addAll(cluster);
        List<NodeStats> s = stats(cluster);
        Lock lock = a.elected() ? ownedElsewhere(cluster.get(0), s.get(0)) : cluster.get(0).lock("bench");
        natives.add(new NativeSide(a.name(), a, s, a.messagesPerEntry(3), () -> lock.acquire().release()));
      }
      for (NativeSide n : natives) {
        sides.put(n.label(), n.op());
      }
      sides.put("zookeeper ensemble", curatorOnEnsemble(resources));
      sides.put("hazelcast fencedlock", fencedLock(resources));

      System.out.printf(Locale.ROOT, "%d rounds of %d operations per side, after up to %d operations (%d s) per side"
          + " alone and %d warm-up rounds; 3 nodes each%n", rounds, iterations, WARM_UP_OPS, WARM_UP_SECONDS,
          warmUp(rounds));
      warmUpAlone(sides);
      Map<String, double[]> perRound = run(sides, rounds, iterations);

      System.out.println();
      System.out.printf(Locale.ROOT, "%-22s %10s %18s%n", "side", "us/op", "rounds p10..p90");
      for (Map.Entry<String, double[]> e : perRound.entrySet()) {
        System.out.printf(Locale.ROOT, "%-22s %10.1f %8.1f..%-8.1f%n", e.getKey(), median(e.getValue()) / 1000.0,
            quantile(e.getValue(), 0.1) / 1000.0, quantile(e.getValue(), 0.9) / 1000.0);
      }
      System.out.println();
      System.out.printf(Locale.ROOT, "%-18s %16s %20s %22s %18s%n", "algorithm", "x raw round trip",
          "x zookeeper ensemble", "x hazelcast fencedlock", "messages/entry");
      for (NativeSide n : natives) {
        double[] t = perRound.get(n.label());
        System.out.printf(Locale.ROOT, "%-18s %16.2f %20.2f %22.2f %18s%n", n.label(),
            ratio(t, perRound.get("raw round trip")), ratio(t, perRound.get("zookeeper ensemble")),
            ratio(t, perRound.get("hazelcast fencedlock")), messagesPerEntry(n.stats(), n.expected()));
      }
      System.out.println();
      for (NativeSide n : natives) {
        Algorithm<?> a = n.algorithm();
        if (a.singleServer()) {
          // a client that is not the server: its request to the server and the answer, one raw round trip; a
          // recalled lock adds the server's recall to the holder and its reply, a second one
          int trips = n.label().endsWith("(recalled)") ? 2 : n.label().endsWith("(cached)") ? 0 : 1;
          System.out.printf(Locale.ROOT, "%s against its own floor (%s): %s%n", n.label(), trips == 0
              ? "no message at all: a call on the client's own node" : trips + " raw round trip" + (trips == 1 ? ""
              : "s"), trips == 0 ? String.format(Locale.ROOT, "%.1f us per entry", median(perRound.get(n.label()))
              / 1000.0) : String.format(Locale.ROOT, "%.2fx", ratio(perRound.get(n.label()),
              perRound.get("raw round trip")) / trips));
        } else if (!a.elected()) {
          // a request to both peers and both answers, with no protocol: what the raw fan-out side measures
          System.out.printf(Locale.ROOT, "%s against its own floor (client -> both peers -> client, raw fan-out to 2):"
              + " %.2fx%n", a.name(), ratio(perRound.get(a.name()), perRound.get("raw fan-out to 2")));
        }
        if (a.elected() && !a.singleServer()) {
          // the least any quorum algorithm with an owner leader needs: the client's request to its owner, one
          // round to a majority of the leaders, the grant back: two raw round trips
          System.out.printf(Locale.ROOT, "%s against its own floor (client -> owner leader -> majority of leaders"
              + " -> client, 2 raw round trips): %.2fx%n", a.name(),
              ratio(perRound.get(a.name()), perRound.get("raw round trip")) / 2);
        }
      }
    } finally {
      for (int i = resources.size() - 1; i >= 0; i--) {
        try {
          resources.get(i).close();
        } catch (Exception e) {
          System.err.println("closing " + resources.get(i) + ": " + e);
        }
      }
    }
  }

  /** A native side: its label, its algorithm, its cluster's statistics, what an entry should cost, its operation. */
  private record NativeSide(String label, Algorithm<?> algorithm, List<NodeStats> stats, OptionalInt expected,
      Op op) {}

  private static List<NodeStats> stats(List<LockService> cluster) {
    List<NodeStats> s = new ArrayList<>();
    for (LockService svc : cluster) {
      s.add(svc.unwrap(NodeStats.class));
    }
    return s;
  }

  /**
   * The sides of a single-server algorithm, whose client is a node that is not the server (on the server's node an
   * entry is a call). {@code lease} gives two, each on a cluster of its own: the same node again and again, every
   * entry from its cache after the first ({@code (cached)}); and two nodes in turn, every entry a recall of the
   * other's cached lock ({@code (recalled)}).
   */
  private static List<NativeSide> singleServer(Algorithm<?> a, List<AutoCloseable> resources) throws Exception {
    List<NativeSide> out = new ArrayList<>();
    boolean cache = a.name().equals("lease");
    for (String kind : cache ? List.of("cached", "recalled") : List.of("")) {
      List<LockService> cluster = nativeCluster(a.name(), 3);
      resources.addAll(cluster);
      List<NodeStats> s = stats(cluster);
      List<LockService> clients = new ArrayList<>();
      String server = serverOf(s);
      for (int i = 0; i < cluster.size(); i++) {
        if (!s.get(i).nodeId().equals(server)) {
          clients.add(cluster.get(i));
        }
      }
      Lock first = clients.get(0).lock("bench");
      Lock second = clients.get(1).lock("bench");
      Op op;
      OptionalInt expected;
      if (kind.equals("recalled")) {
        boolean[] turn = {false};
        op = () -> {
          turn[0] = !turn[0];
          (turn[0] ? first : second).acquire().release();
        };
        expected = OptionalInt.of(4);
      } else {
        op = () -> first.acquire().release();
        expected = cache ? OptionalInt.of(0) : a.messagesPerEntry(3);
      }
      out.add(new NativeSide(kind.isEmpty() ? a.name() : a.name() + " (" + kind + ")", a, s, expected, op));
    }
    return out;
  }

  /** The server of a single-server algorithm: the first leader of the view every node holds, once they agree. */
  private static String serverOf(List<NodeStats> stats) throws InterruptedException {
    for (int i = 0; i < 1_000; i++) {
      List<String> firsts = new ArrayList<>();
      for (NodeStats s : stats) {
        s.view().filter(v -> !v.leaders().isEmpty()).ifPresent(v -> firsts.add(v.leaders().get(0).nodeId()));
      }
      if (firsts.size() == stats.size() && firsts.stream().distinct().count() == 1) {
        return firsts.get(0);
      }
      Thread.sleep(10);
    }
    throw new IllegalStateException("the nodes did not agree on a server within 10 s");
  }

  /**
   * A lock of {@code client} whose name's owner leader is another node, the case the elected algorithms' floor
   * describes (client, owner leader, majority, client): with an owner on the client's own node the client's
   * request and grant are calls, not messages, and an entry costs one round trip less. Found by trying names
   * until an entry sends the client's {@code Lock} message.
   */
  private static Lock ownedElsewhere(LockService client, NodeStats stats) throws InterruptedException {
    for (int i = 0; i < 64; i++) {
      Lock lock = client.lock("bench-" + i);
      long before = stats.messagesSentByType().getOrDefault("lock/Lock", 0L);
      lock.acquire().release();
      if (stats.messagesSentByType().getOrDefault("lock/Lock", 0L) > before) {
        return lock;
      }
    }
    throw new IllegalStateException("no name among 64 is owned by a leader on another node");
  }

  /** Runs each side alone, {@link #WARM_UP_OPS} operations or {@link #WARM_UP_SECONDS}, whichever ends first. */
  private static void warmUpAlone(Map<String, Op> sides) throws Exception {
    for (Map.Entry<String, Op> e : sides.entrySet()) {
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WARM_UP_SECONDS);
      int ops = 0;
      while (ops < WARM_UP_OPS && System.nanoTime() < end) {
        e.getValue().run();
        ops++;
      }
      System.out.printf(Locale.ROOT, "  warmed up %-22s %6d operations%n", e.getKey(), ops);
    }
  }

  /** Per side, the time per operation of every measured round (nanoseconds). */
  private static Map<String, double[]> run(Map<String, Op> sides, int rounds, int iterations) throws Exception {
    List<String> names = new ArrayList<>(sides.keySet());
    Map<String, double[]> out = new LinkedHashMap<>();
    for (String n : names) {
      out.put(n, new double[rounds]);
    }
    int warmUp = warmUp(rounds);
    for (int round = 0; round < rounds + warmUp; round++) {
      for (int k = 0; k < names.size(); k++) {
        String n = names.get((round + k) % names.size());
        Op op = sides.get(n);
        long t0 = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
          op.run();
        }
        long per = (System.nanoTime() - t0) / iterations;
        if (round >= warmUp) {
          out.get(n)[round - warmUp] = per;
        }
      }
      if (round == warmUp - 1) {
        System.out.println("warm-up done");
      }
    }
    return out;
  }

  private static int warmUp(int rounds) {
    return Math.max(5, rounds / 10);
  }

  /** The median over rounds of {@code side / anchor} within each round. */
  private static double ratio(double[] side, double[] anchor) {
    double[] r = new double[side.length];
    for (int i = 0; i < r.length; i++) {
      r[i] = side[i] / anchor[i];
    }
    return median(r);
  }

  private static double quantile(double[] values, double q) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[(int) Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))];
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  /** Messages per entry over the whole run, against what the algorithm's descriptor says it costs. */
  private static String messagesPerEntry(List<NodeStats> stats, OptionalInt expectedCount) {
    long sent = 0;
    for (NodeStats s : stats) {
      for (Map.Entry<String, Long> e : s.messagesSentByType().entrySet()) {
        // restatements when links come up, and the election's heartbeats, are not per entry
        if (!e.getKey().endsWith("/Sync") && !e.getKey().startsWith("election/")) {
          sent += e.getValue();
        }
      }
    }
    long grants = 0;
    for (NodeStats s : stats) {
      grants += s.grants();
    }
    String expected = expectedCount.isPresent() ? " (expected " + expectedCount.getAsInt() + ")" : "";
    return String.format(Locale.ROOT, "%.2f%s", grants == 0 ? Double.NaN : (double) sent / grants, expected);
  }

  // ---- the sides

  private static Op pingPong(List<AutoCloseable> resources) throws IOException {
    Socket client = echoed(resources);
    InputStream in = client.getInputStream();
    OutputStream out = client.getOutputStream();
    return () -> {
      out.write(1);
      out.flush();
      if (in.read() < 0) {
        throw new IOException("the echo server went away");
      }
    };
  }

  /**
   * One byte to each of two echo servers, then both answers: the least a peer-to-peer algorithm that hears from
   * both of its peers before it grants can cost, with no protocol at all.
   */
  private static Op fanOut(List<AutoCloseable> resources) throws IOException {
    Socket[] clients = {echoed(resources), echoed(resources)};
    InputStream[] ins = {clients[0].getInputStream(), clients[1].getInputStream()};
    OutputStream[] outs = {clients[0].getOutputStream(), clients[1].getOutputStream()};
    return () -> {
      for (OutputStream out : outs) {
        out.write(1);
        out.flush();
      }
      for (InputStream in : ins) {
        if (in.read() < 0) {
          throw new IOException("the echo server went away");
        }
      }
    };
  }

  /** A loopback connection to an echo server on a platform thread of its own (TCP_NODELAY both ways). */
  private static Socket echoed(List<AutoCloseable> resources) throws IOException {
    ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    resources.add(server);
    Thread echo = Thread.ofPlatform().daemon().name("bench-echo").start(() -> {
      try (Socket s = server.accept()) {
        s.setTcpNoDelay(true);
        InputStream in = s.getInputStream();
        OutputStream out = s.getOutputStream();
        int b;
        while ((b = in.read()) >= 0) {
          out.write(b);
          out.flush();
        }
      } catch (IOException e) {
        // closed at the end of the run
      }
    });
    Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
    client.setTcpNoDelay(true);
    resources.add(client);
    resources.add(echo::interrupt);
    return client;
  }

  /** A cluster of {@code n} native peers over TCP on loopback, every link up before timing starts. */
  private static List<LockService> nativeCluster(String algorithm, int n) throws Exception {
    List<LockService> services = LoopbackCluster.start(algorithm, n);
    for (LockService s : services) {
      s.lock("bench-warm").acquire().release(); // one grant on each node
    }
    return services;
  }

  private static Op curatorOnEnsemble(List<AutoCloseable> resources) throws Exception {
    TestingCluster cluster = new TestingCluster(3);
    cluster.start();
    resources.add(cluster);
    CuratorFramework c = CuratorFrameworkFactory.builder().connectString(cluster.getConnectString())
        .sessionTimeoutMs(20_000).connectionTimeoutMs(15_000).retryPolicy(new RetryOneTime(100)).build();
    c.start();
    resources.add(c);
    if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("Curator cannot connect to " + cluster.getConnectString());
    }
    InterProcessMutex m = new InterProcessMutex(c, "/bench-native-anchor");
    return () -> {
      m.acquire();
      m.release();
    };
  }

  private static Op fencedLock(List<AutoCloseable> resources) throws Exception {
    HazelcastInstance first = HazelcastCp.start("tumbler-bench-", resources).get(0);
    FencedLock lock = first.getCPSubsystem().getLock("bench");
    return () -> {
      lock.lock();
      lock.unlock();
    };
  }
}
