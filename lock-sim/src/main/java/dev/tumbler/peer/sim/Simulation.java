package dev.tumbler.peer.sim;

import dev.tumbler.lock.TransactionOptions.Quorum;
import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.AlgorithmSettings;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.composite.CompositeCore;
import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.composite.Hosting;
import dev.tumbler.peer.composite.Semaphores;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.MessageCodec;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.TxOptions;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.ProtocolCore;
import dev.tumbler.peer.election.ElectionCore;
import dev.tumbler.peer.election.ElectionSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
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
 * ops, the trace's tail and the command that replays it. Single-threaded; one instance per run.
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

  private static final long MS = 1_000_000L;

  /**
   * How long a crashed node of an elected algorithm stays down at least: longer than any message delay, as
   * the election's informed rule (E11) assumes of a restart.
   */
  private static final long MIN_RESTART = 10 * MS;

  private final SimulationConfig config;
  private final CoreFactory<M> factory;
  private final MessageCodec<M> codec;
  private final long leaseNanos;
  /** Thin client nodes ({@code c0}, {@code c1}, ...) beside the members, and what makes their cores; 0 and null for none. */
  private final int clients;
  private final CoreFactory<M> clientFactory;
  /** Test-only mutation: members that take thin clients start their cores at once on a restart (no D11 wait). */
  private final boolean mutationJoinAtOnce;

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
    this(config, factory, codec, leaseNanos, 0, null);
  }

  private Simulation(SimulationConfig config, CoreFactory<M> factory, MessageCodec<M> codec, long leaseNanos,
      int clients, CoreFactory<M> clientFactory) {
    this(config, factory, codec, leaseNanos, clients, clientFactory, false);
  }

  private Simulation(SimulationConfig config, CoreFactory<M> factory, MessageCodec<M> codec, long leaseNanos,
      int clients, CoreFactory<M> clientFactory, boolean mutationJoinAtOnce) {
    this.config = config;
    this.factory = factory;
    this.codec = codec;
    this.leaseNanos = leaseNanos;
    this.clients = clients;
    this.clientFactory = clientFactory;
    this.mutationJoinAtOnce = mutationJoinAtOnce;
  }

  /**
   * Test-only: this simulation with the D11 rule broken, members that take thin clients starting their cores as soon
   * as they restart. The simulator must catch it (a restarted home freeing grants its clients still trust).
   */
  public Simulation<M> withMutationJoinAtOnce() {
    return new Simulation<>(config, factory, codec, leaseNanos, clients, clientFactory, true);
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
    return new Simulation<>(config, factory, codec, leaseNanos, count, java.util.Objects.requireNonNull(clientFactory));
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
      java.util.function.Consumer<CompositeCore> tweak) {
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
      long peerTimeoutNanos, Semaphores semaphores, java.util.function.Consumer<CompositeCore> tweak) {
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
    SplittableRandom r = new SplittableRandom(seed);
    return config.minNodes() + r.nextInt(config.maxNodes() - config.minNodes() + 1);
  }

  /** The ops of the run of {@code seed}. */
  public List<Op> opsFor(long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    int nodes = config.minNodes() + r.nextInt(config.maxNodes() - config.minNodes() + 1);
    int count = config.minOps() + r.nextInt(config.maxOps() - config.minOps() + 1);
    int names = 1 + r.nextInt(config.names());
    List<Op> ops = new ArrayList<>();
    long start = config.workloadStartNanos();
    long span = config.faultPhaseNanos() - start;
    // Half the ops crowd around a few hot moments, a few delays wide: races between a fault and the
    // messages around it need several things to happen within milliseconds of each other.
    long[] hot = new long[1 + r.nextInt(4)];
    for (int i = 0; i < hot.length; i++) {
      hot[i] = start + r.nextLong(span);
    }
    Map<String, Integer> lastNode = new HashMap<>();
    for (int i = 0; i < count; i++) {
      long at = r.nextBoolean() ? start + r.nextLong(span)
          : Math.clamp(hot[r.nextInt(hot.length)] + r.nextLong(-4 * config.maxDelayNanos(), 4 * config.maxDelayNanos()),
              start, config.faultPhaseNanos() - 1);
      int node = r.nextInt(nodes);
      int dice = r.nextInt(100);
      if (config.faults() && nodes > 1 && dice < 30) {
        int other = (node + 1 + r.nextInt(nodes - 1)) % nodes;
        ops.add(switch (dice / 3) {
          case 0 -> new Op.Crash(at, node);
          case 1, 2 -> new Op.Restart(at, node);
          case 3, 4 -> new Op.Cut(at, node, other);
          case 5 -> new Op.Heal(at, node, other);
          case 6 -> new Op.Partition(at, 1 + r.nextInt((1 << nodes) - 2));
          case 7 -> new Op.Flap(at, node, other, 1 + r.nextLong(2 * config.maxDelayNanos()));
          case 8 -> new Op.OneWayFlap(at, node, other, 1 + r.nextLong(2 * config.maxDelayNanos()));
          default -> new Op.HealAll(at);
        });
      } else if (config.maxPauseNanos() > 0 && dice >= 92 && dice < 95) {
        ops.add(new Op.Pause(at, node, 1 + r.nextLong(config.maxPauseNanos())));
      } else if (config.closes() && dice >= 95) {
        ops.add(new Op.CloseSession(at, node, r.nextInt(config.sessionsPerNode())));
      } else {
        workOp(r, ops, at, node, nodes, names, lastNode);
      }
    }
    if (clients > 0) {
      clientOps(seed, ops, nodes, names, start, span);
    }
    ops.sort(Comparator.comparingLong(Op::at));
    return List.copyOf(ops);
  }

  /** An op that asks for something: a lock, or a transaction, as the workload says (drawn from {@code r}). */
  private void workOp(SplittableRandom r, List<Op> ops, long at, int node, int nodes, int names,
      Map<String, Integer> lastNode) {
    String name = "L" + r.nextInt(names);
    if (config.workload().sticky()) {
      Integer last = lastNode.put(name, node);
      if (last != null && r.nextBoolean()) {
        node = last;
        lastNode.put(name, node);
      }
    }
    Claim claim = config.workload().claim(r, name);
    long hold = config.workload().hold(r, leaseNanos);
    long wait = -1;
    boolean attempt = false;
    if (config.timeouts()) {
      int w = r.nextInt(10);
      if (w < 3) {
        wait = (1 + r.nextInt(300)) * MS;
      } else if (w < 5) {
        wait = 0;
        attempt = true;
      }
    }
    int session = r.nextInt(config.sessionsPerNode());
    if (config.workload().transactions() && r.nextInt(4) == 0) {
      // a plain lock on a root among the transactions: it conflicts with every path below it, so that cycles
      // through plain claims (which give way to older claims rather than by the analysis alone) are tried too
      Claim plain = r.nextBoolean() ? Claim.exclusive("L" + r.nextInt(names)) : Claim.read("L" + r.nextInt(names));
      ops.add(new Op.Acquire(at, node, session, plain, hold, wait, attempt, config.workload().renews(r)));
      return;
    }
    if (config.workload().transactions()) {
      // one in four claims its paths on one node (a lock server of its own: those are told on that server's
      // word alone), under roots of their own, since claims over other sets of nodes do not exclude them
      int on = nodes < 2 ? -1 : config.workload() == Workload.TRANSACTIONS_ONE_SERVER ? 0
          : r.nextInt(4) == 0 ? r.nextInt(nodes) : -1;
      String suffix = on < 0 ? "" : "@n" + on;
      List<Claim> claims = new ArrayList<>();
      List<Long> gaps = new ArrayList<>();
      int k = 1 + r.nextInt(3);
      for (int c = 0; c < k; c++) {
        Claim next = c > 0 && r.nextInt(6) == 0 && claims.get(c - 1).mode() == Claim.Mode.READ
            ? Claim.tx(claims.get(c - 1).path(), Claim.Mode.WRITE) // an upgrade
            : config.workload().claim(r, "L" + r.nextInt(names) + suffix);
        claims.add(next);
        gaps.add(c == 0 ? 0 : r.nextLong(20 * MS));
      }
      // one in three needs every node: those claims are told with no stamp round (a write's token is the
      // largest of its servers' versions), so what the agent believes of its queues decides alone
      ops.add(new Op.Transaction(at, node, session, claims, gaps, hold, r.nextInt(3) == 0,
          config.workload().renews(r), r.nextInt(3) == 0 ? Quorum.ALL : Quorum.MAJORITY, on));
      return;
    }
    ops.add(new Op.Acquire(at, node, session, claim, hold, wait, attempt, config.workload().renews(r)));
  }

  /**
   * The thin clients' ops of {@code seed}: requests of every kind from the clients, and their faults (a client
   * crashed, restarted or paused; a link between a client and a member cut, healed or flapping), from a generator of
   * their own.
   */
  private void clientOps(long seed, List<Op> ops, int nodes, int names, long start, long span) {
    SplittableRandom r = new SplittableRandom(seed * 0x2545F4914F6CDD1DL + 0xC11E);
    int count = config.minOps() + r.nextInt(config.maxOps() - config.minOps() + 1);
    Map<String, Integer> lastNode = new HashMap<>();
    for (int i = 0; i < count; i++) {
      long at = start + r.nextLong(span);
      int client = nodes + r.nextInt(clients);
      int member = r.nextInt(nodes);
      int dice = r.nextInt(100);
      if (config.faults() && dice < 25) {
        ops.add(switch (dice / 5) {
          case 0 -> new Op.Crash(at, client);
          case 1 -> new Op.Restart(at, client);
          case 2 -> new Op.Cut(at, client, member);
          case 3 -> new Op.Heal(at, client, member);
          default -> new Op.Flap(at, client, member, 1 + r.nextLong(config.leaseNanos() > 0 ? config.leaseNanos()
              : 2 * config.maxDelayNanos()));
        });
      } else if (config.faults() && nodes > 1 && dice < 27) {
        ops.add(new Op.Leave(at, member)); // a member's daemon stops, and is started again
      } else if (config.maxPauseNanos() > 0 && dice < 28) {
        ops.add(new Op.Pause(at, client, 1 + r.nextLong(config.maxPauseNanos())));
      } else if (config.closes() && dice < 30) {
        ops.add(new Op.CloseSession(at, client, r.nextInt(config.sessionsPerNode())));
      } else {
        workOp(r, ops, at, client, nodes, names, lastNode);
      }
    }
  }

  // ---- running

  /** Runs the ops of {@code seed}, untraced. */
  public Result run(long seed) {
    return run(seed, opsFor(seed), false);
  }

  /** Runs {@code ops} in the world of {@code seed}. */
  public Result run(long seed, List<Op> ops, boolean trace) {
    return new Run(seed, nodesFor(seed), ops, trace).execute();
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
    List<Op> shrunk = shrink(failed.seed(), failed.ops(), 3000);
    Result traced = run(failed.seed(), shrunk, true);
    StringBuilder sb = new StringBuilder();
    sb.append("simulation violation, seed ").append(failed.seed()).append(" (").append(nodesFor(failed.seed()))
        .append(" nodes): ").append(failed.violation()).append('\n');
    sb.append("shrunk to ").append(shrunk.size()).append(" of ").append(failed.ops().size()).append(" ops: ")
        .append(traced.ok() ? "(the shrunk run passed; showing it anyway)" : traced.violation()).append('\n');
    for (Op op : shrunk) {
      sb.append("  ").append(op).append('\n');
    }
    List<String> t = traced.trace();
    int from = Math.max(0, t.size() - 400);
    sb.append("trace of the shrunk run (").append(t.size() - from).append(" of ").append(t.size())
        .append(" lines):\n");
    for (String line : t.subList(from, t.size())) {
      sb.append("  ").append(line).append('\n');
    }
    String file = System.getProperty("sim.traceFile");
    if (file != null) {
      try {
        java.nio.file.Files.write(java.nio.file.Path.of(file), t);
        sb.append("full trace: ").append(file).append('\n');
      } catch (java.io.IOException e) {
        sb.append("full trace not written to ").append(file).append(": ").append(e).append('\n');
      }
    }
    sb.append("replay: ").append(replayCommand).append('\n');
    return sb.toString();
  }

  /** Delta debugging (ddmin) of {@code ops}: a smaller list on which the run of {@code seed} still fails. */
  public List<Op> shrink(long seed, List<Op> ops, int budget) {
    String kind = kind(run(seed, ops, false).violation());
    List<Op> current = ops;
    int n = 2;
    int runs = 0;
    while (current.size() >= 2 && runs < budget) {
      int chunk = (current.size() + n - 1) / n;
      boolean reduced = false;
      for (int start = 0; start < current.size() && runs < budget; start += chunk) {
        List<Op> complement = new ArrayList<>(current.subList(0, start));
        complement.addAll(current.subList(Math.min(current.size(), start + chunk), current.size()));
        runs++;
        if (!complement.isEmpty() && failsAlike(run(seed, complement, false), kind)) {
          current = complement;
          n = Math.max(n - 1, 2);
          reduced = true;
          break;
        }
      }
      if (!reduced) {
        if (n >= current.size()) {
          break;
        }
        n = Math.min(current.size(), n * 2);
      }
    }
    // then one op at a time, from the end, until no single op can go
    for (int i = current.size() - 1; i >= 0 && current.size() > 1 && runs < budget; i--) {
      List<Op> without = new ArrayList<>(current);
      without.remove(i);
      runs++;
      if (failsAlike(run(seed, without, false), kind)) {
        current = without;
      }
    }
    return List.copyOf(current);
  }

  /**
   * Whether {@code r} fails with a violation of {@code kind}: a shrink keeps the kind it started with, so a
   * safety violation is not traded for a liveness one that smaller runs find more easily.
   */
  private static boolean failsAlike(Result r, String kind) {
    return !r.ok() && (kind == null || kind.equals(kind(r.violation())));
  }

  /** A violation's kind: "liveness" for a request or probe that never ended, else the text before ':'. */
  static String kind(String violation) {
    if (violation == null) {
      return null;
    }
    if (violation.contains(" never ended") || violation.contains(" never granted")) {
      return "liveness";
    }
    int colon = violation.indexOf(':');
    return colon < 0 ? violation : violation.substring(0, colon);
  }

  // ---- one run

  private enum State { PENDING, HELD, ENDED }

  private static final class Violation extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Violation(String message) {
      super(message, null, false, false);
    }
  }

  private final class Run {
    private final long seed;
    private final int n;
    private final List<Op> ops;
    private final List<String> trace;
    private final SplittableRandom net;
    private final PriorityQueue<Event> queue = new PriorityQueue<>();
    private final List<Node> nodes;
    private final long[][] epoch;
    private final long[][] lastAt;
    private final boolean[][] linkUp;
    private final boolean[][] cut;
    // TCP-like link reports: each node learns of its links on its own schedule, not in line with the
    // data from the peer; one direction can break alone; and the node runtime's guard is modelled (sends
    // to a peer are dropped while a report about that peer is on its way to the core)
    private boolean tcpLike;
    private final long[][] notifyAt;
    private final int[][] reportsQueued;
    private final long[][] oneWayFlap; // token of the one-way flap in effect on from -> to, or 0
    private long flapTokens;
    // steps so far: the outputs of one step, and of the steps its outputs lead the clients to take at once (an
    // End after a failed claim), share its number
    private long steps;
    private int stepDepth;
    /** Inputs the clients give in answer to outputs, stepped once the outputs of the step are carried out. */
    private final ArrayDeque<Map.Entry<Node, Input<M>>> followUps = new ArrayDeque<>();
    private int partition; // bit set: side A
    private final Map<Long, Req> reqs = new LinkedHashMap<>();
    private final Map<Long, Tx> txs = new LinkedHashMap<>();
    private long nextTxId = 1;
    private final Safety safety = new Safety();
    private final Leases leases = new Leases(leaseNanos);
    private final Views views = new Views();
    private final BucketChecks bucketChecks = new BucketChecks();
    /** Held requests with a window: I-5 watches them after every step. */
    private final Set<Req> heldLeased = new LinkedHashSet<>();
    private final Map<String, Long> messages = new TreeMap<>();
    private long now;
    private long seq;
    private long nextRequestId = 1;
    private long grants;
    private long events;
    /** Requests not ended yet. */
    private int open;
    private boolean probing;
    /** Whether the nodes run an election core (found at the first start). */
    private boolean elected;

    /** The members: nodes 0 to {@code members - 1}; the thin clients follow them. */
    private final int members;

    Run(long seed, int members, List<Op> ops, boolean traced) {
      this.seed = seed;
      this.members = members;
      int n = members + clients;
      this.n = n;
      this.ops = ops;
      this.trace = traced ? new ArrayList<>() : null;
      this.net = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + 1);
      this.nodes = new ArrayList<>(n);
      this.epoch = new long[n][n];
      this.lastAt = new long[n][n];
      this.linkUp = new boolean[n][n];
      this.cut = new boolean[n][n];
      this.tcpLike = net.nextBoolean();
      this.notifyAt = new long[n][n];
      this.reportsQueued = new int[n][n];
      this.oneWayFlap = new long[n][n];
      for (int i = 0; i < n; i++) {
        double rate = 1 + (net.nextDouble() * 2 - 1) * config.maxDrift();
        boolean client = i >= members;
        nodes.add(new Node(i, client ? "c" + (i - members) : "n" + i, rate, net.nextLong(1_000_000 * MS), client));
      }
    }

    Result execute() {
      String violation = null;
      try {
        for (Node node : nodes) {
          start(node);
        }
        log(members + " nodes" + (clients > 0 ? " and " + clients + " thin clients" : "") + ", " + (tcpLike ? "TCP-like link reports (independent per node, one-way breaks, send guard)"
            : "link reports in line with the data (no send guard)"));
        relink();
        for (Op op : ops) {
          schedule(op.at(), () -> apply(op));
        }
        schedule(config.faultPhaseNanos(), this::healEverything);
        long end = config.faultPhaseNanos() + config.settleNanos();
        while (!queue.isEmpty()) {
          Event e = queue.poll();
          if (e.at > end) {
            break;
          }
          now = Math.max(now, e.at);
          e.action.run();
          events++;
          checkInvariants();
          if (events > config.maxEvents()) {
            throw new Violation("no quiescence after " + events + " events (livelock?)");
          }
          if (elected && probing && open == 0) {
            log("every request ended after the probes: the run is over (the election beats on for ever)");
            break;
          }
        }
        for (Req r : reqs.values()) {
          if (r.mustGrant && !r.granted) {
            throw new Violation("probe " + r + " asked " + (config.probeDelayNanos() / MS) + "ms after every fault "
                + "healed was " + (r.state == State.PENDING ? "never granted" : "not granted: " + r.endReason));
          }
          if (r.state == State.PENDING) {
            throw new Violation("request " + r + " never ended although every fault healed "
                + (config.settleNanos() / MS) + "ms before the end");
          }
        }
        for (Tx t : txs.values()) {
          if (!t.ended) {
            throw new Violation("transaction " + t.id + " on n" + t.node + " never ended although every fault healed "
                + (config.settleNanos() / MS) + "ms before the end (" + t.reqs + ")");
          }
        }
      } catch (Violation v) {
        violation = v.getMessage();
        log("VIOLATION " + violation);
      }
      long requests = reqs.size();
      return new Result(seed, violation, ops, grants, requests, events, Map.copyOf(messages),
          trace == null ? List.of() : List.copyOf(trace));
    }

    // -- nodes

    private void start(Node node) {
      node.alive = true;
      node.informed = node.incarnation == 0;
      List<String> peers = new ArrayList<>();
      for (Node o : nodes) {
        if (o != node && !o.client) {
          peers.add(o.id);
        }
      }
      node.core = (node.client ? clientFactory : factory).create(node.id, peers, node.incarnation,
          new SplittableRandom(seed ^ (node.index * 1_000_003L + node.incarnation)), now / 1_000);
      elected |= election(node) != null;
      node.loggedView = null;
      node.timers.clear();
      java.util.Arrays.fill(reportsQueued[node.index], 0);
      step(node, new Input.Start<>());
    }

    private void crash(Node node) {
      // The cluster's memory (clocks past every granted request, hence increasing fencing tokens) lives
      // in informed nodes: up since the start, or told by an informed node since their restart. Losing
      // the last of them is losing the whole cluster at once, which no Lamport node survives with its
      // tokens (the node runtime starts clocks from wall-clock microseconds for that case). An elected
      // algorithm's memory is its terms: informed election cores that adopted the highest term (E11).
      if (!node.alive) {
        return;
      }
      if (!node.client && (elected ? lastKnower(node) : !otherInformed(node))) {
        log(node.id + " crash skipped: it is the last informed live node");
        return;
      }
      log(node.id + " CRASH");
      node.crashedAt = now;
      if (elected && !node.client) {
        views.down(node.id);
      }
      node.alive = false;
      node.core = null;
      node.incarnation++;
      node.timers.clear();
      node.paused = false;
      node.deferred.clear();
      for (Req r : reqs.values()) {
        if (r.node == node.index && r.state != State.ENDED) {
          end(r, "crashed");
        }
      }
      for (Tx t : txs.values()) {
        if (t.node == node.index) {
          t.ended = true;
        }
      }
      relink();
    }

    /**
     * A member's daemon stops on purpose and is started again (a deploy): {@code Input.Leave}, then a crash once
     * everything it sent has arrived (it closes its sockets after writing), then a restart, which for a member that
     * takes thin clients waits a term. While the crash would lose the cluster's term memory (the last informed node),
     * the stopping node waits, as a daemon's stop would wait for its peers to catch up, and tries again.
     */
    private void leave(Node node) {
      if (!node.alive || node.client) {
        return;
      }
      log(node.id + " LEAVE");
      step(node, new Input.Leave<>());
      int inc = node.incarnation;
      stopAfterLeave(node, inc);
    }

    private void stopAfterLeave(Node node, int inc) {
      schedule(now + 2 * config.maxDelayNanos() + 1, () -> {
        if (!node.alive || node.incarnation != inc) {
          return;
        }
        if (elected ? lastKnower(node) : !otherInformed(node)) {
          stopAfterLeave(node, inc);
          return;
        }
        crash(node);
        restart(node);
      });
    }

    private void pause(Node node, long nanos) {
      if (!node.alive || node.paused) {
        return;
      }
      log(node.id + " PAUSE for " + nanos / 1000 + "us");
      node.paused = true;
      int inc = node.incarnation;
      schedule(now + nanos, () -> {
        if (!node.alive || node.incarnation != inc) {
          return;
        }
        log(node.id + " PAUSE over, " + node.deferred.size() + " inputs waited");
        node.paused = false;
        List<Input<M>> waited = new ArrayList<>(node.deferred);
        node.deferred.clear();
        for (Input<M> in : waited) {
          step(node, in);
        }
      });
    }

    private boolean otherInformed(Node node) {
      for (Node o : nodes) {
        if (o != node && !o.client && o.alive && o.informed) {
          return true;
        }
      }
      return false;
    }

    /** Whether {@code node} is the last live node whose election core is informed and knows the highest term. */
    private boolean lastKnower(Node node) {
      if (!knower(node)) {
        return false;
      }
      for (Node o : nodes) {
        if (o != node && knower(o)) {
          return false;
        }
      }
      return true;
    }

    private boolean knower(Node node) {
      ElectionCore e = node.alive ? election(node) : null;
      return e != null && e.informed() && e.view().term() >= views.highestTerm();
    }

    private ElectionCore election(Node node) {
      return node.core instanceof CompositeCore c && c.core(Channel.ELECTION) instanceof ElectionCore e ? e : null;
    }

    private void restart(Node node) {
      if (node.alive || node.joining) {
        return;
      }
      if (clients > 0 && !node.client && !mutationJoinAtOnce) {
        joinLater(node);
        return;
      }
      if (elected && now < node.crashedAt + MIN_RESTART) {
        int inc = node.incarnation;
        schedule(node.crashedAt + MIN_RESTART, () -> {
          if (!node.alive && node.incarnation == inc) {
            restart(node);
          }
        });
        return;
      }
      log(node.id + " RESTART incarnation " + node.incarnation);
      start(node);
      relink();
    }

    /**
     * A member that takes thin clients starts its cores a lease term {@code T}, by its own clock, after its process
     * started (CLIENTS.md D11): the clients of its earlier life trust grants it made until their windows close, at
     * most {@code 3T/4} after it died, and its restatement as a new incarnation would free those grants at once.
     * Until then it is down to everyone.
     */
    private void joinLater(Node node) {
      node.joining = true;
      int inc = node.incarnation;
      long at = realFor(node, local(node) + config.leaseNanos()); // the thin clients' term
      log(node.id + " RESTART incarnation " + node.incarnation + ": its process waits a term, until "
          + at / 1000 + "us, before it joins (it takes thin clients)");
      schedule(at, () -> {
        node.joining = false;
        if (!node.alive && node.incarnation == inc) {
          log(node.id + " JOINS incarnation " + node.incarnation);
          start(node);
          relink();
        }
      });
    }

    private long local(Node node) {
      return node.offset + (long) (now * node.rate);
    }

    private long realFor(Node node, long localAt) {
      return (long) Math.ceil((localAt - node.offset) / node.rate);
    }

    /**
     * Steps {@code node} with {@code input} and carries out its outputs. An input a client gives in answer to an
     * output (an End after a lost claim) waits until every output of the step is carried out, as in the node
     * runtime: the core's last timer is the one set last, and the step's messages leave before the answer's.
     */
    private void step(Node node, Input<M> input) {
      if (stepDepth > 0) {
        followUps.add(Map.entry(node, input));
        return;
      }
      stepNow(node, input);
      while (!followUps.isEmpty()) {
        Map.Entry<Node, Input<M>> f = followUps.poll();
        stepDepth++; // the answers share the step's number
        try {
          stepNow(f.getKey(), f.getValue());
        } finally {
          stepDepth--;
        }
      }
    }

    private void stepNow(Node node, Input<M> input) {
      if (!node.alive) {
        return;
      }
      if (node.paused) {
        node.deferred.add(input); // handled in order when the pause ends
        return;
      }
      if (trace != null && !(input instanceof Input.Message<M> m && isBeat(m.message()))) {
        log(node.id + " <- " + input);
      }
      // the core sees the link change now: from here on it restates what the new link needs, so the send
      // guard lets its messages to that peer pass again, this step's first (the node runtime counts the same way)
      switch (input) {
        case Input.PeerUp<M> u -> reportsQueued[node.index][indexOf(u.peer())]--;
        case Input.PeerDown<M> d -> reportsQueued[node.index][indexOf(d.peer())]--;
        default -> { }
      }
      List<Output<M>> outs;
      if (stepDepth == 0) {
        steps++;
      }
      try {
        outs = node.core.step(local(node), input);
      } catch (IllegalStateException e) {
        // a core's own check (AG-1: ...) names its rule first
        throw new Violation(e.getMessage() + " (" + node.id + ", stepping " + input + ")");
      }
      stepDepth++;
      try {
        for (Output<M> o : outs) {
          handle(node, o);
        }
      } finally {
        stepDepth--;
      }
      // only now has the core seen the end: a composite core may hand a view to its lock core, which may then
      // grant, before that core gets the Cancel or CloseSession of the same step
      switch (input) {
        case Input.Cancel<M> c -> {
          Req r = reqs.get(c.requestId());
          if (r != null) {
            r.endDelivered = true;
          }
        }
        case Input.Release<M> rl -> {
          Req r = reqs.get(rl.requestId());
          if (r != null) {
            r.endDelivered = true;
          }
        }
        case Input.CloseSession<M> cs -> {
          for (Req r : reqs.values()) {
            if (r.session.equals(cs.session())) {
              r.endDelivered = true;
            }
          }
        }
        case Input.End<M> e -> {
          for (Req r : reqs.values()) {
            if (r.tx != null && r.tx.id == e.txId()) {
              r.endDelivered = true;
            }
          }
        }
        default -> { }
      }
    }

    private void handle(Node node, Output<M> o) {
      switch (o) {
        case Output.Send<M> s -> send(node, s.to(), s.message());
        case Output.SetTimer<M> t -> {
          long token = ++node.timerTokens;
          node.timers.put(t.timerId(), token);
          int inc = node.incarnation;
          long at = Math.max(now, realFor(node, t.at()));
          schedule(at, () -> {
            Long current = node.timers.get(t.timerId());
            if (node.alive && node.incarnation == inc && current != null && current == token) {
              node.timers.remove(t.timerId());
              step(node, new Input.TimerFired<>(t.timerId()));
            }
          });
        }
        case Output.CancelTimer<M> t -> node.timers.remove(t.timerId());
        case Output.Granted<M> g -> granted(node, g);
        case Output.Failed<M> f -> {
          log(node.id + " FAILED " + f);
          Req r = reqs.get(f.requestId());
          if (r == null || r.node != node.index) {
            throw new Violation(node.id + " failed unknown request " + f.requestId());
          }
          if (r.state == State.HELD) {
            throw new Violation(node.id + " failed request " + r + " which it had granted");
          }
          if (r.state == State.PENDING) {
            end(r, "failed " + f.failure());
            if (r.tx != null) {
              endTx(node, r.tx, "a claim failed: " + f.failure()); // await failed: the client ends it
            }
          }
        }
        case Output.Fact<M> f -> fact(node, f.observation());
        case Output.Renewed<M> rn -> renewed(node, rn);
        case Output.Holder<M> h -> log(node.id + " HOLDER " + h); // the workloads ask no holder queries
        case Output.Permits<M> p -> log(node.id + " PERMITS " + p); // nor permit queries
        case Output.TxAborted<M> a -> aborted(node, a);
        case Output.Lost<M> l -> {
          log(node.id + " LOST " + l);
          Req r = reqs.get(l.requestId());
          if (r == null || r.node != node.index) {
            throw new Violation("bookkeeping: " + node.id + " lost unknown request " + l.requestId());
          }
          if (r.state == State.PENDING) {
            throw new Violation("bookkeeping: " + node.id + " lost request " + r + ", which it never granted");
          }
          if (r.tx != null && l.reason() == Output.LostReason.DEADLOCK) {
            r.tx.toldLostAtStep = steps; // AG-4: an abort for a deadlock comes with a told claim lost
          }
          if (r.state == State.HELD && r.tx != null && l.reason() == Output.LostReason.DEADLOCK) {
            // surrendered to break a deadlock: asked for again, granted again later with a larger token
            Node n = nodes.get(r.node);
            long validUntil = leases.window(r.id).validUntil();
            safety.ended(r.id, Math.min(now, realFor(n, validUntil)));
            leases.ended(r.id);
            heldLeased.remove(r);
            r.state = State.PENDING;
            r.granted = false;
            r.renewals++;
            r.tx.surrendered++;
          } else if (r.state == State.HELD) {
            end(r, "lost " + l.reason());
            if (r.tx != null) {
              endTx(node, r.tx, "a claim was lost: " + l.reason());
            }
          } else if (r.state == State.ENDED && r.endSentToCore && !r.endDelivered && r.tx != null
              && l.reason() == Output.LostReason.DEADLOCK) {
            // surrendered before the core saw its client give up (a paused node catching up): asked for again, as
            // any surrendered claim is, and a grant that follows is dropped like any grant of a request given up
            r.granted = false;
          }
        }
      }
    }

    private void granted(Node node, Output.Granted<M> g) {
      Req r = reqs.get(g.requestId());
      log(node.id + " GRANTED " + g + window(node, g.validUntil()));
      if (r == null || r.node != node.index) {
        throw new Violation(node.id + " granted unknown request " + g.requestId());
      }
      if (r.granted) {
        throw new Violation("bookkeeping: " + node.id + " granted request " + r + " a second time");
      }
      if (r.state == State.ENDED && !r.endDelivered && r.endSentToCore) {
        // the client gave up (timeout, session closed) and the core has not seen it yet, as when a paused
        // node catches up: the grant is the core's until that input releases it, and nobody uses it
        log(node.id + " grant of " + r + " arrived after its client gave up: dropped, released by what follows");
        judge(node, r, g, true);
        safety.ended(r.id, now);
        leases.ended(r.id);
        return;
      }
      if (r.state != State.PENDING) {
        throw new Violation(node.id + " granted request " + r + " whose client is gone (" + r.endReason + ")");
      }
      if (!r.claim.name().equals(g.name())) {
        throw new Violation(node.id + " granted request " + r + " on the wrong name " + g.name());
      }
      judge(node, r, g, false);
      r.state = State.HELD;
      r.granted = true;
      grants++;
      int inc = node.incarnation;
      if (!g.unbounded()) {
        heldLeased.add(r);
        if (r.renews) {
          renewAt(node, r, realFor(node, local(node) + leaseNanos / 3));
        }
      }
      if (r.tx != null) {
        txProgress(node, r.tx);
        return;
      }
      schedule(now + r.hold, () -> {
        if (r.state == State.HELD && node.alive && node.incarnation == inc) {
          end(r, "released");
          r.endSentToCore = true;
          step(node, new Input.Release<>(r.id));
        }
      });
    }

    // -- transactions

    private void begin(Op.Transaction t) {
      Node node = nodes.get(t.node());
      if (!node.alive) {
        return;
      }
      Tx tx = new Tx(nextTxId++, node.index, node.incarnation, sessionId(node, t.session()), t);
      txs.put(tx.id, tx);
      List<String> on = t.on() < 0 ? List.of() : List.of(nodes.get(t.on()).id);
      step(node, new Input.Begin<>(tx.id, tx.session, new TxOptions(t.abortOnDeadlock(), t.quorum(), on, 0)));
      long at = now;
      for (int i = 0; i < t.claims().size(); i++) {
        Claim claim = t.claims().get(i);
        at += t.gaps().get(i);
        schedule(at, () -> {
          if (tx.ended || !node.alive || node.incarnation != tx.incarnation) {
            return;
          }
          Req r = newReq(node, tx.session, claim, t.holdNanos(), t.renews());
          r.tx = tx;
          tx.reqs.add(r);
          step(node, new Input.Acquire<>(r.id, r.session, r.claim, false, tx.id));
        });
      }
    }

    /** Once every claim of {@code tx} was asked for and is held, it is held for its time, then ended. */
    private void txProgress(Node node, Tx tx) {
      if (tx.ended || tx.holding || tx.reqs.size() < tx.op.claims().size()
          || tx.reqs.stream().anyMatch(r -> r.state != State.HELD)) {
        return;
      }
      tx.holding = true;
      int inc = node.incarnation;
      schedule(now + tx.op.holdNanos(), () -> {
        if (!tx.ended && node.alive && node.incarnation == inc) {
          endTx(node, tx, "released");
        }
      });
    }

    /** The client ends {@code tx} (done, or given up): its claims end, then the core hears of it. */
    private void endTx(Node node, Tx tx, String why) {
      if (tx.ended) {
        return;
      }
      tx.ended = true;
      for (Req r : tx.reqs) {
        if (r.state != State.ENDED) {
          end(r, why);
          r.endSentToCore = true;
        }
      }
      step(node, new Input.End<>(tx.id));
    }

    private void aborted(Node node, Output.TxAborted<M> a) {
      log(node.id + " TX ABORTED " + a);
      Tx tx = txs.get(a.txId());
      if (tx == null || tx.node != node.index) {
        throw new Violation("bookkeeping: " + node.id + " aborted unknown transaction " + a.txId());
      }
      if (a.failure() == Output.Failure.DEADLOCK && !tx.op.abortOnDeadlock()) {
        throw new Violation("AG-4: " + node.id + " aborted transaction " + tx.id + " for a deadlock although it "
            + "surrenders instead");
      }
      if (a.failure() == Output.Failure.DEADLOCK && tx.toldLostAtStep != steps) {
        throw new Violation("AG-4: " + node.id + " aborted transaction " + tx.id + " for a deadlock although none "
            + "of its claims was told (a victim not yet told it holds surrenders and waits again)");
      }
      for (Req r : tx.reqs) {
        if (r.state != State.ENDED && !tx.ended) {
          throw new Violation("bookkeeping: transaction " + tx.id + " aborted with " + r + " not ended first");
        }
      }
      if (!tx.ended) {
        tx.ended = true;
        step(node, new Input.End<>(tx.id)); // the client closes it, as after any failed await
      }
    }

    /**
     * Hands a grant to the checkers: its window to {@link Leases}, then the grant to {@link Safety}, for which
     * a grant counts while its request is held on a live node and its window is open by that node's clock;
     * an echo-rule grant was made when its client sent the message it answers.
     */
    /**
     * Judges a grant: exclusion, permits and fencing. A grant its client gave up before the core knew ({@code dropped})
     * is never used, so only what the core granted is judged (exclusion, permits, a token of its own), not the order
     * of its token among the grants the client's giving up ended: the core may still count those as its own hold.
     */
    private void judge(Node node, Req r, Output.Granted<M> g, boolean dropped) {
      try {
        leases.granted(r.id, local(node), g.sentAt(), g.validUntil());
        long madeAt = g.unbounded() ? now : Math.min(now, realFor(node, g.sentAt()));
        safety.granted(new Safety.Grant(r.id, r.session, r.claim, g.fencingToken(), g.permits(), madeAt,
            r.tx == null ? 0 : r.tx.id),
            other -> valid(reqs.get(other.requestId())), dropped);
      } catch (IllegalStateException e) {
        throw new Violation(e.getMessage());
      }
    }

    /** Whether the grant of {@code r} is valid now: held, its node alive, its window open by its clock. */
    private boolean valid(Req r) {
      Node node = nodes.get(r.node);
      return r.state == State.HELD && node.alive && leases.window(r.id).validAt(local(node));
    }

    private void renewed(Node node, Output.Renewed<M> rn) {
      log(node.id + " RENEWED " + rn + window(node, rn.validUntil()));
      Req r = reqs.get(rn.requestId());
      if (r != null && r.node == node.index && r.state == State.ENDED && r.endSentToCore && !r.endDelivered) {
        // released (or given up) while its node was paused: the core has not seen it yet, as with a grant
        log(node.id + " renewal of " + r + " came after its client ended it: dropped");
        return;
      }
      if (r == null || r.node != node.index || r.state != State.HELD) {
        throw new Violation("renewal: " + node.id + " renewed request " + rn.requestId() + " which it does not hold");
      }
      try {
        leases.renewed(r.id, local(node), rn.sentAt(), rn.validUntil());
      } catch (IllegalStateException e) {
        throw new Violation(e.getMessage());
      }
      if (r.renews && leaseNanos > 0) {
        renewAt(node, r, realFor(node, local(node) + leaseNanos / 3));
      }
    }

    /**
     * The SPI's renewer: at {@code at}, and every T/12 after while unanswered, {@code Renew} for a held
     * request; a paused node's renewer is paused too. A later call replaces an earlier one.
     */
    private void renewAt(Node node, Req r, long at) {
      long gen = ++r.renewals;
      int inc = node.incarnation;
      schedule(at, () -> {
        if (r.renewals != gen || r.state != State.HELD || !node.alive || node.incarnation != inc) {
          return;
        }
        renewAt(node, r, now + Math.max(1, leaseNanos / 12));
        if (!node.paused) {
          step(node, new Input.Renew<>(r.id));
        }
      });
    }

    private void fact(Node node, Observation o) {
      if (o instanceof Observation.View v) {
        ElectionCore e = election(node);
        if (e != null) {
          try {
            views.published(node.id, e.leader(), v, id -> local(nodes.get(indexOf(id))));
          } catch (IllegalStateException ex) {
            throw new Violation(ex.getMessage());
          }
        }
        // a leader's lease is extended at every beat: the trace shows only changes of the view and of activity
        Observation.View before = node.loggedView;
        boolean active = v.activeUntil() > local(node);
        if (before == null || before.term() != v.term() || !before.leaders().equals(v.leaders())
            || active != node.loggedActive) {
          log(node.id + " FACT " + v + (active ? " (active for " + (v.activeUntil() - local(node)) / 1000 + "us)"
              : ""));
        }
        node.loggedView = v;
        node.loggedActive = active;
        return;
      }
      if (o instanceof Observation.Serving) {
        bucketChecks.serving(node.id + "#" + node.incarnation); // a new server's counters start afresh
      }
      if (o instanceof Observation.Buckets b) {
        String problem = bucketChecks.published(node.id + "#" + node.incarnation, b);
        if (problem != null) {
          throw new Violation(problem);
        }
      }
      log(node.id + " FACT " + o);
    }

    private String window(Node node, long validUntil) {
      return validUntil == Long.MAX_VALUE ? "" : " (valid for " + (validUntil - local(node)) / 1000 + "us)";
    }

    private boolean isBeat(M message) {
      String type = message.typeName();
      return type.endsWith("/Beat") || type.endsWith("/BeatAck");
    }

    private void end(Req r, String why) {
      if (r.state == State.HELD) {
        Node node = nodes.get(r.node);
        long validUntil = leases.window(r.id).validUntil();
        // a grant whose window closed before its end was reported ended when it closed
        long at = validUntil == Long.MAX_VALUE ? now : Math.min(now, realFor(node, validUntil));
        safety.ended(r.id, at);
        leases.ended(r.id);
        heldLeased.remove(r);
      }
      if (r.state != State.ENDED) {
        open--;
      }
      r.state = State.ENDED;
      r.endReason = why;
    }

    // -- network

    private void send(Node from, String toId, M message) {
      int to = indexOf(toId);
      byte[] bytes = codec.encode(message);
      M decoded = codec.decode(bytes);
      if (!decoded.equals(message)) {
        throw new Violation("codec: " + message + " came back as " + decoded);
      }
      if (tcpLike && reportsQueued[from.index][to] > 0) {
        log(from.id + " -> " + toId + " DROPPED (a link report is queued for the core) " + message);
        return;
      }
      messages.merge(message.typeName(), 1L, Long::sum);
      if (!linkUp[from.index][to] || oneWayFlap[from.index][to] != 0) {
        log(from.id + " -> " + toId + " DROPPED (link down) " + message);
        return;
      }
      long e = epoch[from.index][to];
      boolean informed = from.informed;
      Node dest = nodes.get(to);
      schedule(channelTime(from.index, to), () -> {
        if (epoch[from.index][to] == e && dest.alive) {
          if (informed) {
            dest.informed = true;
          }
          step(dest, new Input.Message<>(from.id, decoded));
        }
      });
    }

    private long channelTime(int from, int to) {
      long at = Math.max(now + 1 + net.nextLong(config.maxDelayNanos()), lastAt[from][to] + 1);
      lastAt[from][to] = at;
      return at;
    }

    private int indexOf(String id) {
      for (Node node : nodes) {
        if (node.id.equals(id)) {
          return node.index;
        }
      }
      throw new Violation("message to unknown node " + id);
    }

    private boolean connected(int a, int b) {
      boolean separated = ((partition >> a) & 1) != ((partition >> b) & 1);
      return nodes.get(a).alive && nodes.get(b).alive && !cut[a][b] && !separated;
    }

    /** Recomputes every link; tells both ends of each link that changed. */
    private void relink() {
      for (int a = 0; a < n; a++) {
        for (int b = a + 1; b < n; b++) {
          if (nodes.get(a).client && nodes.get(b).client) {
            continue; // thin clients talk to members only
          }
          boolean c = connected(a, b);
          if (c != linkUp[a][b]) {
            linkUp[a][b] = c;
            linkUp[b][a] = c;
            epoch[a][b]++;
            epoch[b][a]++;
            oneWayFlap[a][b] = 0;
            oneWayFlap[b][a] = 0;
            log("link " + nodes.get(a).id + "-" + nodes.get(b).id + (c ? " UP" : " DOWN"));
            notifyLink(a, b, c);
            notifyLink(b, a, c);
          }
        }
      }
    }

    /** Tells {@code to} about its link to {@code from}, in order with the messages on that channel. */
    private void notifyLink(int from, int to, boolean up) {
      Node dest = nodes.get(to);
      if (!dest.alive) {
        return;
      }
      int inc = dest.incarnation;
      String peer = nodes.get(from).id;
      long at;
      if (tcpLike) {
        at = Math.max(now + 1 + net.nextLong(config.maxDelayNanos()), notifyAt[to][from] + 1);
        notifyAt[to][from] = at;
      } else {
        at = channelTime(from, to);
      }
      reportsQueued[to][from]++;
      schedule(at, () -> {
        if (dest.alive && dest.incarnation == inc) {
          // still queued for the core until it steps it: a paused node defers it (see step)
          step(dest, up ? new Input.PeerUp<>(peer) : new Input.PeerDown<>(peer));
        }
      });
    }

    // -- ops

    private void apply(Op op) {
      log("OP " + op);
      switch (op) {
        case Op.Acquire a -> acquire(a);
        case Op.Transaction t -> begin(t);
        case Op.CloseSession c -> {
          Node node = nodes.get(c.node());
          if (!node.alive) {
            return;
          }
          String session = sessionId(node, c.session());
          for (Req r : reqs.values()) {
            if (r.session.equals(session) && r.state != State.ENDED) {
              end(r, "session closed");
              r.endSentToCore = true;
            }
          }
          for (Tx t : txs.values()) {
            if (t.session.equals(session)) {
              t.ended = true;
            }
          }
          node.sessionGen.merge(c.session(), 1, Integer::sum);
          step(node, new Input.CloseSession<>(session));
        }
        case Op.Pause p -> pause(nodes.get(p.node()), p.nanos());
        case Op.Crash c -> crash(nodes.get(c.node()));
        case Op.Restart r -> restart(nodes.get(r.node()));
        case Op.Leave l -> leave(nodes.get(l.node()));
        case Op.Cut c -> {
          cut[c.a()][c.b()] = true;
          cut[c.b()][c.a()] = true;
          relink();
        }
        case Op.Flap f -> {
          cut[f.a()][f.b()] = true;
          cut[f.b()][f.a()] = true;
          relink();
          schedule(now + f.downNanos(), () -> {
            log("flap over: " + nodes.get(f.a()).id + "-" + nodes.get(f.b()).id);
            cut[f.a()][f.b()] = false;
            cut[f.b()][f.a()] = false;
            relink();
          });
        }
        case Op.OneWayFlap f -> {
          if (!tcpLike) {
            apply(new Op.Flap(f.at(), f.from(), f.to(), f.downNanos()));
            return;
          }
          int a = f.from();
          int b = f.to();
          if (!linkUp[a][b] || oneWayFlap[a][b] != 0) {
            return;
          }
          long token = ++flapTokens;
          oneWayFlap[a][b] = token;
          epoch[a][b]++;
          log("link " + nodes.get(a).id + "->" + nodes.get(b).id + " DOWN (one way; only " + nodes.get(a).id
              + " is told)");
          notifyLink(b, a, false);
          schedule(now + f.downNanos(), () -> {
            if (oneWayFlap[a][b] == token) {
              oneWayFlap[a][b] = 0;
              log("link " + nodes.get(a).id + "->" + nodes.get(b).id + " UP again (one way)");
              notifyLink(b, a, true);
            }
          });
        }
        case Op.Heal h -> {
          cut[h.a()][h.b()] = false;
          cut[h.b()][h.a()] = false;
          relink();
        }
        case Op.Partition p -> {
          partition = p.side();
          relink();
        }
        case Op.HealAll h -> {
          partition = 0;
          for (boolean[] row : cut) {
            java.util.Arrays.fill(row, false);
          }
          relink();
        }
      }
    }

    private void healEverything() {
      log("FAULT PHASE OVER: heal everything, restart every node");
      partition = 0;
      for (boolean[] row : cut) {
        java.util.Arrays.fill(row, false);
      }
      for (Node node : nodes) {
        if (clients > 0 && !node.client && !mutationJoinAtOnce) {
          restart(node); // a term later, as every restart of a member that takes thin clients
        } else if (!node.alive) {
          log(node.id + " RESTART incarnation " + node.incarnation);
          start(node);
        }
      }
      relink();
      // every fault is over: a little later, one client per node asks for every name and must get it
      schedule(now + config.probeDelayNanos(), () -> {
        log("PROBES: every node asks for every name; each must be granted");
        probing = true;
        for (Node node : nodes) {
          for (int i = 0; i < config.names(); i++) {
            Req r = newReq(node, node.id + "/probe." + node.incarnation, config.workload().probe("L" + i), MS, true);
            r.mustGrant = true;
            step(node, new Input.Acquire<>(r.id, r.session, r.claim, false));
          }
        }
      });
    }

    private void acquire(Op.Acquire a) {
      Node node = nodes.get(a.node());
      if (!node.alive) {
        return;
      }
      Req r = newReq(node, sessionId(node, a.session()), a.claim(), a.holdNanos(), a.renews());
      step(node, new Input.Acquire<>(r.id, r.session, r.claim, a.attempt()));
      if (a.waitNanos() >= 0 && !a.attempt()) {
        int inc = node.incarnation;
        schedule(now + a.waitNanos(), () -> {
          if (r.state == State.PENDING && node.alive && node.incarnation == inc) {
            end(r, "timed out");
            r.endSentToCore = true;
            step(node, new Input.Cancel<>(r.id));
          }
        });
      }
    }

    private Req newReq(Node node, String session, Claim claim, long hold, boolean renews) {
      Req r = new Req(nextRequestId++, node.index, session, claim, hold, renews);
      reqs.put(r.id, r);
      open++;
      return r;
    }

    private String sessionId(Node node, int slot) {
      return node.id + "/s" + slot + "." + node.incarnation + "." + node.sessionGen.getOrDefault(slot, 0);
    }

    // -- invariants

    private void checkInvariants() {
      for (Safety.Grant g : safety.live()) {
        Req h = reqs.get(g.requestId());
        if (h.state != State.HELD || !nodes.get(h.node).alive) {
          throw new Violation("bookkeeping: holder " + h + " of " + g.claim().name() + " is not live");
        }
      }
      // I-5: a live, running holder hears of the end of its window no later than the first step after it
      for (Req r : heldLeased) {
        Node node = nodes.get(r.node);
        long validUntil = leases.window(r.id).validUntil();
        if (node.alive && !node.paused && now > realFor(node, validUntil)) {
          throw new Violation("timely loss: " + node.id + " still holds " + r + " " + (local(node) - validUntil) / 1000
              + "us after its window closed (validUntil " + validUntil + ") without a Lost");
        }
      }
    }

    // -- plumbing

    private void schedule(long at, Runnable action) {
      queue.add(new Event(at, seq++, action));
    }

    private void log(String line) {
      if (trace != null) {
        trace.add(String.format("%9.3fms %s", now / 1e6, line));
      }
    }
  }

  private record Event(long at, long seq, Runnable action) implements Comparable<Event> {
    @Override
    public int compareTo(Event o) {
      int c = Long.compare(at, o.at);
      return c != 0 ? c : Long.compare(seq, o.seq);
    }
  }

  private final class Node {
    final int index;
    /** A thin client: attached to the members, none itself. */
    final boolean client;
    final String id;
    final double rate;
    final long offset;
    final Map<Long, Long> timers = new HashMap<>();
    final Map<Integer, Integer> sessionGen = new HashMap<>();
    /** Inputs that came while the node was paused, in order. */
    final List<Input<M>> deferred = new ArrayList<>();
    boolean paused;
    /** A member that takes thin clients, restarted and waiting a term before its cores start. */
    boolean joining;
    ProtocolCore<M> core;
    boolean alive;
    boolean informed;
    int incarnation;
    long timerTokens;
    long crashedAt = Long.MIN_VALUE / 2;
    /** The last view traced, and whether it was active then. */
    Observation.View loggedView;
    boolean loggedActive;

    Node(int index, String id, double rate, long offset, boolean client) {
      this.index = index;
      this.id = id;
      this.rate = rate;
      this.offset = offset;
      this.client = client;
    }
  }

  /** A transaction a client began ({@link Op.Transaction}). */
  private static final class Tx {
    final long id;
    final int node;
    final int incarnation;
    final String session;
    final Op.Transaction op;
    final List<Req> reqs = new ArrayList<>();
    boolean holding;
    boolean ended;
    int surrendered;
    /** The step in which a told claim of it was last lost to a deadlock (AG-4). */
    long toldLostAtStep = -1;

    Tx(long id, int node, int incarnation, String session, Op.Transaction op) {
      this.id = id;
      this.node = node;
      this.incarnation = incarnation;
      this.session = session;
      this.op = op;
    }
  }

  private static final class Req {
    final long id;
    final int node;
    final String session;
    final Claim claim;
    final long hold;
    final boolean renews;
    State state = State.PENDING;
    String endReason;
    boolean mustGrant;
    boolean granted;
    /** The client ended the request and the input telling the core (Release, Cancel, CloseSession) was issued. */
    boolean endSentToCore;
    /** The core has stepped that input. */
    boolean endDelivered;
    /** The renewer's generation: a scheduled renewal of an older one does nothing. */
    long renewals;
    /** The transaction it is a claim of, or null. */
    Tx tx;

    Req(long id, int node, String session, Claim claim, long hold, boolean renews) {
      this.id = id;
      this.node = node;
      this.session = session;
      this.claim = claim;
      this.hold = hold;
      this.renews = renews;
    }

    @Override
    public String toString() {
      int slash = session.indexOf('/');
      return "#" + id + "@" + (slash > 0 ? session.substring(0, slash) : "n" + node) + "(" + (claim.mode() == Claim.Mode.EXCLUSIVE ? "" : claim.mode() + " ")
          + claim.name() + ", " + session + ")";
    }
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
