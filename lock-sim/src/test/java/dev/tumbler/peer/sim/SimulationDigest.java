package dev.tumbler.peer.sim;

import dev.tumbler.peer.agent.AgentAlgorithm;
import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.AlgorithmSettings;
import dev.tumbler.peer.bakery.BakeryAlgorithm;
import dev.tumbler.peer.buckets.BucketsAlgorithm;
import dev.tumbler.peer.buckets.BucketsSettings;
import dev.tumbler.peer.client.ClientCore;
import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.composite.CompositeCore;
import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.election.ElectionParameters;
import dev.tumbler.peer.lamport.LamportAlgorithm;
import dev.tumbler.peer.lease.LeaseAlgorithm;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Not a check of its own: a tool for refactorings that must not change behaviour. It runs the first seeds of the
 * simulations of the elected-server algorithms ({@code lease}, {@code buckets} with and without bucket sizes, and the
 * thin clients of all four leased algorithms), with and without each of their test-only mutations, and of the members
 * of {@code lamport}, {@code ricart-agrawala}, {@code bakery} and {@code agent}, and writes one line per run: its counts, its violation, its messages by type and a hash of its whole trace. Run it before and after a
 * change and compare the two files: a line that differs is a run that went otherwise.
 *
 * <pre>
 * mvn -B -pl lock-sim -am test -Dtest=SimulationDigest -Ddigest.seeds=200 -Ddigest.file=/tmp/before.txt \
 *     -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 *
 * To see where two digests part, {@code -Ddigest.traceSeed=N} also writes seed N's whole trace beside the file, one
 * file per configuration ({@code /tmp/before.txt.clients-agent.N.trace}): {@code diff} those.
 *
 * Its name does not end in {@code Test}: the build does not run it.
 */
class SimulationDigest {

  private static final long MS = 1_000_000L;
  private static final long PEER_TIMEOUT = 500_000_000L;

  @Test
  void writeDigest() throws IOException {
    int seeds = Integer.getInteger("digest.seeds", 200);
    int mutationSeeds = Integer.getInteger("digest.mutationSeeds", 50);
    Path file = Path.of(System.getProperty("digest.file", "target/simulation-digest.txt"));
    String only = System.getProperty("digest.only", "");
    long traceSeed = Long.getLong("digest.traceSeed", 0); // that seed's whole trace, a file per configuration
    List<String> lines = new ArrayList<>();
    for (Map.Entry<String, Supplier<Simulation<Envelope>>> e : configurations().entrySet()) {
      if (!only.isEmpty() && !e.getKey().contains(only)) {
        continue;
      }
      Simulation<Envelope> sim = e.getValue().get();
      int n = e.getKey().contains("mutation") ? mutationSeeds : seeds;
      long started = System.nanoTime();
      for (long seed = 1; seed <= n; seed++) {
        Simulation.Result r = sim.run(seed, sim.opsFor(seed), true);
        if (seed == traceSeed) {
          Files.write(Path.of(file + "." + e.getKey().replace(' ', '-') + "." + seed + ".trace"), r.trace(),
              StandardCharsets.UTF_8);
        }
        lines.add(e.getKey() + " seed " + seed + ": violation " + r.violation() + "; requests " + r.requests()
            + ", grants " + r.grants() + ", events " + r.events() + ", messages " + new TreeMap<>(r.messagesByType())
            + ", trace " + r.trace().size() + " lines " + sha256(r.trace()));
      }
      System.out.println(e.getKey() + ": " + n + " seeds in " + (System.nanoTime() - started) / 1_000_000 + " ms");
    }
    Files.write(file, lines, StandardCharsets.UTF_8);
    System.out.println(lines.size() + " runs written to " + file.toAbsolutePath());
  }

  private static Map<String, Supplier<Simulation<Envelope>>> configurations() {
    Map<String, Supplier<Simulation<Envelope>>> m = new LinkedHashMap<>();
    m.put("lease LEASE", () -> lease(c -> { }));
    for (String mutation : List.of("mutationTrustFromReceipt", "mutationGrantOnRecall", "mutationNoGrace",
        "mutationLocalGrantDuringInactiveRenew", "mutationGiveBackOnLoss", "mutationServeWithoutLeaderLease")) {
      m.put("lease LEASE " + mutation, () -> lease(c -> set(c, mutation)));
    }
    for (Workload w : new Workload[] {Workload.SEMAPHORE, Workload.SEMAPHORE_BUCKETS}) {
      m.put("buckets " + w, () -> buckets(w, c -> { }));
      for (String mutation : List.of("mutationFreeOnPeerDown", "mutationNoGrace", "mutationGiveBackOnLoss",
          "mutationNoSessionExpiry", "mutationReleaseLowestFirst", "mutationCeilingOffByOne")) {
        m.put("buckets " + w + " " + mutation, () -> buckets(w, c -> set(c, mutation)));
      }
    }
    for (Algorithm<?> a : List.<Algorithm<?>>of(LeaseAlgorithm.LEASE, BakeryAlgorithm.BAKERY, AgentAlgorithm.AGENT,
        BucketsAlgorithm.BUCKETS)) {
      m.put("clients " + a.name(), () -> clients(a, member -> { }, client -> { }));
    }
    m.put("members lamport", () -> Simulation.of(SimulationConfig.standard(), LamportAlgorithm.LAMPORT, PEER_TIMEOUT,
        node -> { }));
    m.put("members ricart-agrawala", () -> Simulation.of(SimulationConfig.standard(),
        LamportAlgorithm.RICART_AGRAWALA, PEER_TIMEOUT, node -> { }));
    for (Workload w : new Workload[] {Workload.READ_WRITE, Workload.MUTEX}) {
      m.put("members bakery " + w, () -> Simulation.of(config(w), BakeryAlgorithm.BAKERY, PEER_TIMEOUT, node -> { }));
    }
    m.put("members agent READ_WRITE", () -> Simulation.of(config(Workload.READ_WRITE), AgentAlgorithm.AGENT,
        PEER_TIMEOUT, node -> { }));
    m.put("members agent TRANSACTIONS", () -> Simulation.of(config(Workload.TRANSACTIONS), AgentAlgorithm.AGENT,
        PEER_TIMEOUT, node -> { }));
    m.put("clients lease mutationTrustFromReply+ReleaseOnLoss+GiveBackOnLoss", () -> clients(LeaseAlgorithm.LEASE,
        member -> set(member.core(Channel.LOCK), "mutationGiveBackOnLoss"), client -> {
          client.mutationTrustFromReply = true;
          client.mutationReleaseOnLoss = true;
        }));
    m.put("clients buckets mutationReleaseOnLoss", () -> clients(BucketsAlgorithm.BUCKETS, member -> { },
        client -> client.mutationReleaseOnLoss = true));
    return m;
  }

  private static SimulationConfig config(Workload w) {
    return SimulationConfig.standard().withWorkload(w).withOps(2_000 * MS, 10, 50);
  }

  private static Simulation<Envelope> lease(Consumer<Object> tweak) {
    return Simulation.of(config(Workload.LEASE), LeaseAlgorithm.LEASE, PEER_TIMEOUT,
        node -> tweak.accept(node.core(Channel.LOCK)));
  }

  private static Simulation<Envelope> buckets(Workload w, Consumer<Object> tweak) {
    SimulationConfig config = config(w);
    return Simulation.of(config, BucketsAlgorithm.BUCKETS,
        new BucketsSettings(ElectionParameters.simulation(), config.workload().bucketSize()), PEER_TIMEOUT, null,
        node -> {
          Object core = node.core(Channel.LOCK);
          set(core, "reportBuckets");
          tweak.accept(core);
        });
  }

  private static Simulation<Envelope> clients(Algorithm<?> a, Consumer<CompositeCore> member,
      Consumer<ClientCore> client) {
    Workload w = a == LeaseAlgorithm.LEASE ? Workload.LEASE : a == BakeryAlgorithm.BAKERY ? Workload.READ_WRITE
        : a == AgentAlgorithm.AGENT ? Workload.TRANSACTIONS : Workload.SEMAPHORE;
    SimulationConfig config = config(w);
    AlgorithmSettings settings = a == BucketsAlgorithm.BUCKETS
        ? new BucketsSettings(ElectionParameters.simulation(), w.bucketSize()) : a.defaults();
    long lease = config.leaseNanos();
    return Simulation.of(config, a, settings, PEER_TIMEOUT, null, member)
        .withClients(2, (self, members, incarnation, random, wallMicros) -> {
          ClientCore core = new ClientCore(self, members, a.name(), lease, PEER_TIMEOUT, random);
          client.accept(core);
          return core;
        });
  }

  /** Switches on the test-only boolean {@code field} of {@code core} (package-private in the core's package). */
  private static void set(Object core, String field) {
    try {
      Field f = find(core.getClass(), field);
      f.setAccessible(true);
      f.setBoolean(core, true);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(core.getClass() + " has no switch " + field, e);
    }
  }

  private static Field find(Class<?> c, String field) throws NoSuchFieldException {
    for (Class<?> k = c; k != null; k = k.getSuperclass()) {
      try {
        return k.getDeclaredField(field);
      } catch (NoSuchFieldException e) {
        // the next class up
      }
    }
    throw new NoSuchFieldException(c.getName() + "." + field);
  }

  private static String sha256(List<String> lines) {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      for (String l : lines) {
        d.update(l.getBytes(StandardCharsets.UTF_8));
        d.update((byte) '\n');
      }
      return HexFormat.of().formatHex(d.digest(), 0, 12);
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }
}
