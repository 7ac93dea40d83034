package dev.tumbler.peer.sim;

import dev.tumbler.lock.TransactionOptions.Quorum;
import dev.tumbler.peer.core.Claim;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Draws the ops of a seed: the members' faults and requests as the config and its {@link Workload} say, then the
 * thin clients' from a generator of their own, so that a seed's member ops are the same with clients or without and
 * every seed replays as it did before clients existed. The draws are the seed's: any change to their order changes
 * every run.
 */
final class OpGenerator {

  private static final long MS = 1_000_000L;

  private final SimulationConfig config;
  private final int clients;
  private final long leaseNanos;

  OpGenerator(SimulationConfig config, int clients, long leaseNanos) {
    this.config = config;
    this.clients = clients;
    this.leaseNanos = leaseNanos;
  }

  /** The number of members of the run of {@code seed}. */
  int nodesFor(long seed) {
    return nodes(new SplittableRandom(seed));
  }

  private int nodes(SplittableRandom r) {
    return config.minNodes() + r.nextInt(config.maxNodes() - config.minNodes() + 1);
  }

  /** The ops of the run of {@code seed}, in time order. */
  List<Op> opsFor(long seed) {
    SplittableRandom r = new SplittableRandom(seed);
    int nodes = nodes(r);
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
}
