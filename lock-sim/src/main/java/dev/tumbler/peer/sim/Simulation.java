package dev.tumbler.peer.sim;

import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.AlgorithmSettings;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.composite.CompositeCore;
import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.composite.Hosting;
import dev.tumbler.peer.composite.Semaphores;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.MessageCodec;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.ProtocolCore;
import dev.tumbler.peer.election.ElectionSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.LongFunction;
import java.util.random.RandomGenerator;

/**
 * The deterministic simulator: runs the {@link ProtocolCore}s of a cluster under a seeded scheduler and
 * checks the lock invariants after every step (NATIVE-ALGORITHMS §2.10).
 *
 * <h2>The world</h2>
 * <ul>
 *   <li>Each node has its own monotonic clock with a fixed rate error of at most
 *       {@link SimulationConfig#maxDrift()}; timers fire by that clock.
 *   <li>Each directed link delivers in FIFO order with a random delay. A link breaks on a cut, a
 *       partition or a crash: messages in flight on it are lost and both ends are told
 *       {@link Input.PeerDown}; when it comes back both ends are told {@link Input.PeerUp}, ordered
 *       before anything sent over the new link (TCP semantics, as the real transports give). Half the runs,
 *       elected algorithms' included, report links as TCP does (each end on its own schedule, one direction
 *       breaking alone, the node runtime's send guard).
 *   <li>A crash throws the node's core away with its sessions (their holders die with them); a restart
 *       gives it a new core with empty state, made with its wall clock at the restart (the simulation's
 *       time, in microseconds), from which Lamport clocks start as on a real node. The last live
 *       <em>informed</em> node is never crashed: for the Lamport family one up since the start, or told by an
 *       informed node since its restart; for an elected algorithm one whose election core is informed and
 *       has adopted the highest term adopted anywhere (E11). Terms and tickets live only in memory. A
 *       crashed node of an elected algorithm stays down at least 10 ms.
 *   <li>A pause ({@link Op.Pause}, a GC pause) stops a node for a while: messages, timers and its clients'
 *       calls wait and are handled in order when it ends, by a clock that ran on meanwhile; its renewer
 *       waits too.
 *   <li>Clients ask for the claims of the config's {@link Workload}, hold for a while and release; give up
 *       after a wait ({@link Input.Cancel}); make single attempts; close their sessions. A holder of a
 *       leased grant that renews gets {@link Input.Renew} every T/3, and every T/12 while unanswered (the
 *       SPI's renewer); one that does not loses the grant. Every message goes through the codec and back.
 * </ul>
 *
 * <h2>Invariants, after every step</h2>
 * Violations name their rule.
 * <ul>
 *   <li>I-1, I-2: compatibility and fencing as {@link Safety} judges them: no conflicting <em>valid</em>
 *       grants (held, node alive, window open by the holder's clock), fencing F1–F3;
 *   <li>I-3: no grant for a request that is unknown, already ended (cancelled, closed, crashed) or already
 *       granted, no failure of a held request, no renewal or loss of a request that was never granted;
 *   <li>I-4: windows and renewals as {@link Leases} judges them ({@code lease:}, {@code renewal:});
 *   <li>I-5 ({@code timely loss:}): a held leased request of a live node that is not paused ends (released or
 *       lost) no later than the first step after its window closed;
 *   <li>the views of an elected algorithm as {@link Views} judges them (V-1, V-2);
 *   <li>codec round trips.
 * </ul>
 * At the end, once every fault has healed and the run is quiet, every request ended, and probes (one
 * request per node and name, made {@link SimulationConfig#probeDelayNanos()} after the last fault healed)
 * were all granted. A run of an elected algorithm ends once every request ended after the probes (its
 * leaders beat for ever).
 *
 * <h2>On failure</h2>
 * {@link #check} shrinks the op list (delta debugging), replays the smallest failing list with a trace
 * (facts included: views when their term, leaders or activity change), and reports the seed, the shrunk
 * ops, the trace's tail and the command that replays it.
 *
 * <h2>Its parts</h2>
 * This class is the entry point; each run builds a world of its own ({@code Run}): virtual time, the nodes' clocks
 * and timers ({@code Scheduler}); the links ({@code Network}); the nodes' cores, their crashes, restarts and pauses
 * ({@code NodeHost}); the applications and the book of their requests ({@code ClientDriver}); the judges
 * ({@code Invariants}, over {@link Safety}, {@link Leases}, {@link Views} and {@code BucketChecks}). A seed's ops
 * come from {@code OpGenerator}, a failure's report from {@code FailureReport}. A simulation is immutable; each run
 * is single-threaded.
 *
 * @param <M> the algorithm's message type
 */
public final class Simulation<M extends PeerMessage> {

  /** Makes the core of a node (again, after a crash). */
  @FunctionalInterface
  public interface CoreFactory<M extends PeerMessage> {
    /**
     * @param self the node's id
     * @param peers the other nodes' ids
     * @param incarnation 0 at first start, then 1, 2, ... after each restart
     * @param random a seeded generator for the core's randomness, if it needs any
     * @param wallMicros the node's wall clock when it starts, in microseconds: the simulation's time, as a
     *     real node reads the wall clock when it starts (algorithms that keep tokens in memory start their
     *     clocks or terms from it, so that a restarted node's tokens stay above the old ones)
     */
    ProtocolCore<M> create(String self, List<String> peers, int incarnation, RandomGenerator random,
        long wallMicros);
  }

  /**
   * The outcome of one run.
   *
   * @param seed the seed
   * @param violation what went wrong, or null
   * @param ops the ops run
   * @param grants grants made
   * @param requests acquires issued
   * @param events steps run
   * @param messagesByType messages sent, by {@link PeerMessage#typeName()}: {@code channel/Type}, as in
   *     {@code lock/Request}
   * @param trace the events, when traced; else empty
   */
  public record Result(long seed, String violation, List<Op> ops, long grants, long requests, long events,
      Map<String, Long> messagesByType, List<String> trace) {

    /**
     * The message types that are not part of any one entry (NATIVE-ALGORITHMS §2.10): the election
     * channel's, restatements, keep-alives of waiting requests, and renewals with their answers.
     */
    public static final Set<String> BACKGROUND_TYPES = Set.of("Sync", "Restate", "Waiting", "Renew", "Renewed",
        "RenewDenied", "SessionRenew", "SessionRenewed", "RenewTicket", "TicketRenewed");

    /** Whether messages of {@code type} ({@code channel/Type}) are background, not part of an entry. */
    public static boolean background(String type) {
      int slash = type.indexOf('/');
      return type.startsWith(Channel.ELECTION.label() + "/") || BACKGROUND_TYPES.contains(type.substring(slash + 1));
    }

    /** Whether no invariant failed. */
    public boolean ok() {
      return violation == null;
    }

    /** Messages of every type. */
    public long messages() {
      return messagesByType.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Messages of the types that serve entries: {@link #messages()} less the {@linkplain #background background}. */
    public long entryMessages() {
      return messagesByType.entrySet().stream().filter(e -> !background(e.getKey())).mapToLong(Map.Entry::getValue)
          .sum();
    }

    /** {@link #entryMessages()} per grant; 0 for a run without grants. */
    public double messagesPerEntry() {
      return grants == 0 ? 0 : (double) entryMessages() / grants;
    }
  }

  /**
   * What every run of a simulation is made of.
   *
   * @param leaseNanos the term {@code T} the cores were given for their grants; 0 when grants have none
   * @param clients thin client nodes ({@code c0}, {@code c1}, ...) beside the members; 0 for none
   * @param clientFactory what makes the thin clients' cores; null for none
   * @param mutationJoinAtOnce test-only mutation: members that take thin clients start their cores at once on a
   *     restart (no D11 wait)
   */
  record Setup<M extends PeerMessage>(SimulationConfig config, CoreFactory<M> factory, MessageCodec<M> codec,
      long leaseNanos, int clients, CoreFactory<M> clientFactory, boolean mutationJoinAtOnce, long listEveryNanos,
      long listStaleNanos) {}

  private final Setup<M> setup;
  private final OpGenerator generator;

  /**
   * A simulation of cores whose grants have no term.
   *
   * @param config the shape of runs
   * @param factory makes cores
   * @param codec the algorithm's codec; every message is encoded and decoded on its way
   */
  public Simulation(SimulationConfig config, CoreFactory<M> factory, MessageCodec<M> codec) {
    this(config, factory, codec, 0);
  }

  /**
   * @param config the shape of runs
   * @param factory makes cores
   * @param codec the algorithm's codec; every message is encoded and decoded on its way
   * @param leaseNanos the term {@code T} the cores were given for their grants; 0 when grants have none
   */
  public Simulation(SimulationConfig config, CoreFactory<M> factory, MessageCodec<M> codec, long leaseNanos) {
    this(new Setup<>(config, factory, codec, leaseNanos, 0, null, false, 0, 0));
  }

  private Simulation(Setup<M> setup) {
    this.setup = setup;
    this.generator = new OpGenerator(setup.config(), setup.clients(), setup.leaseNanos());
  }

  /**
   * Test-only: this simulation with the D11 rule broken, members that take thin clients starting their cores as soon
   * as they restart. The simulator must catch it (a restarted home freeing grants its clients still trust).
   */
  public Simulation<M> withMutationJoinAtOnce() {
    Setup<M> s = setup;
    return new Simulation<>(new Setup<>(s.config(), s.factory(), s.codec(), s.leaseNanos(), s.clients(),
        s.clientFactory(), true, s.listEveryNanos(), s.listStaleNanos()));
  }

  /**
   * This simulation with listings of what is held ({@code Input.ListQuery}) asked by the members in turn every
   * {@code everyNanos}, up to the probes, each answer judged against the book (LI-1, LI-2 in {@code Invariants}). Off
   * by default: the queries and their messages change every seed's run, and only algorithms that list can be asked.
   *
   * @param staleNanos how old a grant must be when a listing is asked for the listing to owe it (how long the
   *     algorithm's listing may lag a grant: a {@code lease} taken again from its node's cache reaches the server's
   *     listing at that node's next renewal)
   */
  public Simulation<M> withListings(long everyNanos, long staleNanos) {
    if (everyNanos <= 0 || staleNanos < 0) {
      throw new IllegalArgumentException("listings every " + everyNanos + " ns, owed after " + staleNanos
          + " ns: the first must be positive, the second not negative");
    }
    Setup<M> s = setup;
    return new Simulation<>(new Setup<>(s.config(), s.factory(), s.codec(), s.leaseNanos(), s.clients(),
        s.clientFactory(), s.mutationJoinAtOnce(), everyNanos, staleNanos));
  }

  /**
   * This simulation with {@code count} thin client nodes ({@code c0}, ...) beside the members, each made by
   * {@code clientFactory} (its {@code peers} are the members, in order). Clients ask for locks, crash, restart, pause
   * and lose their links to members; their ops are drawn after the members', from a generator of their own, so that
   * the members' ops of a seed are the same with clients or without.
   */
  public Simulation<M> withClients(int count, CoreFactory<M> clientFactory) {
    if (count < 1 || count > 8) {
      throw new IllegalArgumentException("1 to 8 client nodes, not " + count);
    }
    Setup<M> s = setup;
    return new Simulation<>(new Setup<>(s.config(), s.factory(), s.codec(), s.leaseNanos(), count,
        Objects.requireNonNull(clientFactory), s.mutationJoinAtOnce(), s.listEveryNanos(),
        s.listStaleNanos()));
  }

  /**
   * A simulation of nodes running {@code algorithm} with its default settings, each node's cores in a
   * composite as the node runtime hosts them, without semaphores; {@code tweak} sees every core made (to switch
   * on a test mutation in one of its channel cores).
   *
   * A leased algorithm's cores get {@link SimulationConfig#leaseNanos()} as their term; an elected
   * algorithm's runs need a probe delay long enough for an election and a server's grace.
   *
   * @param peerTimeoutNanos the cores' peer timeout, in simulation nanoseconds
   * @throws IllegalArgumentException if the config's probe delay is too short for the algorithm's election
   */
  public static Simulation<Envelope> of(SimulationConfig config, Algorithm<?> algorithm, long peerTimeoutNanos,
      Consumer<CompositeCore> tweak) {
    return of(config, algorithm, algorithm.defaults(), peerTimeoutNanos, null, tweak);
  }

  /**
   * A simulation of nodes running {@code algorithm} with {@code settings}, serving semaphores as {@code semaphores}
   * says (null: none beyond what the lock algorithm serves), each node's cores in a composite as the node runtime
   * hosts them. Runs with semaphores have leased grants of {@link SimulationConfig#leaseNanos()} whatever the lock
   * algorithm, and an election (the semaphore server's).
   *
   * @throws IllegalArgumentException if the config's probe delay is too short for the election
   */
  public static Simulation<Envelope> of(SimulationConfig config, Algorithm<?> algorithm, AlgorithmSettings settings,
      long peerTimeoutNanos, Semaphores semaphores, Consumer<CompositeCore> tweak) {
    long lockLease = algorithm.leased() ? config.leaseNanos() : 0;
    long lease = algorithm.leased() || semaphores != null ? config.leaseNanos() : 0;
    if (lease == 0 && algorithm.leased()) {
      throw new IllegalArgumentException("leaseNanos must be positive for the leased algorithm " + algorithm.name());
    }
    ElectionSettings e = null;
    if (algorithm.elected()) {
      e = algorithm.election(new CoreContext("n0", List.of(), peerTimeoutNanos, lockLease, 0, new SplittableRandom(0),
          settings));
    } else if (semaphores != null) {
      e = semaphores.election().settings(1, 0);
    }
    if (e != null) {
      long least = e.electionDelayNanos() + 3 * e.leaderTimeoutNanos() + lease;
      if (config.probeDelayNanos() < least) {
        throw new IllegalArgumentException("probeDelayNanos (" + config.probeDelayNanos() + ") must be at least "
            + "electionDelay + 2·leaderTimeout + T + leaderTimeout = " + least + " for " + algorithm.name());
      }
    }
    return new Simulation<>(config, (self, peers, incarnation, random, wallMicros) -> {
      CompositeCore core = Hosting.core(algorithm, new CoreContext(self, peers, peerTimeoutNanos, lockLease,
          wallMicros, random, settings), semaphores);
      tweak.accept(core);
      return core;
    }, Hosting.codec(algorithm, semaphores), lease);
  }

  // ---- generating ops

  /** The number of nodes of the run of {@code seed}. */
  public int nodesFor(long seed) {
    return generator.nodesFor(seed);
  }

  /** The ops of the run of {@code seed}. */
  public List<Op> opsFor(long seed) {
    return generator.opsFor(seed);
  }

  // ---- running

  /** Runs the ops of {@code seed}, untraced. */
  public Result run(long seed) {
    return run(seed, opsFor(seed), false);
  }

  /** Runs {@code ops} in the world of {@code seed}. */
  public Result run(long seed, List<Op> ops, boolean trace) {
    return new Run<>(setup, seed, nodesFor(seed), ops, trace).execute();
  }

  /** What a run of many seeds added up to. */
  public record Totals(int seeds, long requests, long grants, long renewals, long events) {
    /** The summary line, {@code "<label>: N seeds, 0 violations, …"}. */
    public String summary(String label) {
      return label + ": " + seeds + " seeds, 0 violations, " + requests + " requests, " + grants + " grants, "
          + (renewals > 0 ? renewals + " renewals answered over the network, " : "") + events + " events";
    }
  }

  /**
   * Runs every seed and stops at the first violation with an {@link AssertionError} carrying its report
   * ({@code replay} gives the command that runs that seed again). A run of 100,000 seeds or more prints a
   * progress line to stdout every tenth of the way (surefire keeps it in
   * {@code target/surefire-reports/<test>-output.txt}, which {@code tail -f} follows).
   */
  public Totals runAll(String label, long[] seeds, LongFunction<String> replay) {
    long requests = 0;
    long grants = 0;
    long renewals = 0;
    long events = 0;
    long started = System.nanoTime();
    int step = seeds.length >= 100_000 ? seeds.length / 10 : Integer.MAX_VALUE;
    for (int i = 0; i < seeds.length; i++) {
      Result r = run(seeds[i]);
      if (!r.ok()) {
        throw new AssertionError(report(r, replay.apply(seeds[i])));
      }
      requests += r.requests();
      grants += r.grants();
      renewals += r.messagesByType().getOrDefault("lock/Renewed", 0L);
      events += r.events();
      if ((i + 1) % step == 0 && i + 1 < seeds.length) {
        progress(String.format("%s: %d of %d seeds (up to seed %d), 0 violations, %d s%n", label, i + 1,
            seeds.length, seeds[i], (System.nanoTime() - started) / 1_000_000_000L));
      }
    }
    return new Totals(seeds.length, requests, grants, renewals, events);
  }

  /**
   * A progress line: to stdout, and appended to {@code -Dsim.progressFile} (default
   * {@code target/simulation-progress.txt} under the module), because surefire holds a test's stdout back in a
   * buffer and its report file may stay empty for most of a long run.
   */
  private static void progress(String line) {
    System.out.print(line);
    Path file = Path.of(System.getProperty("sim.progressFile", "target/simulation-progress.txt"));
    try {
      Files.writeString(file, line, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    } catch (IOException e) {
      System.out.println("progress file " + file + " not written: " + e);
    }
  }

  /**
   * Runs {@code seed}; on a violation shrinks it and returns the report (seed, violation, shrunk ops,
   * trace tail and {@code replayCommand}); null when the run is clean.
   */
  public String check(long seed, String replayCommand) {
    Result r = run(seed);
    if (r.ok()) {
      return null;
    }
    return report(r, replayCommand);
  }

  /** The report of a failed run: shrinks it first. */
  public String report(Result failed, String replayCommand) {
    return FailureReport.of(this, failed, replayCommand);
  }

  /** Delta debugging (ddmin) of {@code ops}: a smaller list on which the run of {@code seed} still fails. */
  public List<Op> shrink(long seed, List<Op> ops, int budget) {
    return FailureReport.shrink(this, seed, ops, budget);
  }

  /**
   * A supplier of seeds: {@code -Dsim.seed=S} alone, else {@code count} seeds from {@code -Dsim.seeds=N} or the
   * default, starting at {@code -Dsim.firstSeed=F} (1 by default).
   */
  public static long[] seeds(int defaultCount) {
    String one = System.getProperty("sim.seed");
    if (one != null && !one.isBlank()) {
      return new long[] {Long.parseLong(one.trim())};
    }
    String count = System.getProperty("sim.seeds");
    int c = count == null || count.isBlank() ? defaultCount : Integer.parseInt(count.trim());
    long first = Long.getLong("sim.firstSeed", 1L); // a long run split over several machines or cores
    long[] seeds = new long[c];
    for (int i = 0; i < c; i++) {
      seeds[i] = first + i;
    }
    return seeds;
  }
}
