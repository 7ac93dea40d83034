package dev.tumbler.peer.sim;

import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.PeerMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One run of one seed: builds its world (clocks, links, nodes, clients, judges), plays the ops and, once the fault
 * phase is over, the heal, the restarts and the probes; runs events until the settle phase ends or the run is quiet,
 * judging after every one; and sums it up as a {@link Simulation.Result}. Single use.
 */
final class Run<M extends PeerMessage> {

  private static final long MS = 1_000_000L;

  private final Simulation.Setup<M> setup;
  private final long seed;
  private final int members;
  private final List<Op> ops;
  private final Scheduler scheduler = new Scheduler();
  private final Trace trace;
  private final List<SimNode<M>> nodes;
  private final Network<M> network;
  private final Invariants<M> checks;
  private final ClientDriver<M> driver;
  private final NodeHost<M> host;

  /** @param members the members: nodes 0 to {@code members - 1}; the thin clients follow them */
  Run(Simulation.Setup<M> setup, long seed, int members, List<Op> ops, boolean traced) {
    this.setup = setup;
    this.seed = seed;
    this.members = members;
    this.ops = ops;
    this.trace = new Trace(scheduler, traced);
    int n = members + setup.clients();
    // the order of these draws is part of every seed's world: how links are reported, then each node's clock
    SplittableRandom net = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + 1);
    boolean tcpLike = net.nextBoolean();
    List<SimNode<M>> all = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      double rate = 1 + (net.nextDouble() * 2 - 1) * setup.config().maxDrift();
      boolean client = i >= members;
      all.add(new SimNode<>(i, client ? "c" + (i - members) : "n" + i,
          new Scheduler.Clock(rate, net.nextLong(1_000_000 * MS)), client));
    }
    this.nodes = List.copyOf(all);
    // the parts that step nodes or read the book reach the host and the driver, made after them, through this
    this.network = new Network<>(nodes, scheduler, trace, net, tcpLike, setup.config().maxDelayNanos(),
        setup.codec(), this::step);
    this.checks = new Invariants<>(nodes, scheduler, setup.config(), setup.leaseNanos(), this::request);
    this.driver = new ClientDriver<>(nodes, scheduler, trace, checks, setup.config(), setup.leaseNanos(), this::step,
        this::steps);
    this.host = new NodeHost<>(setup, seed, nodes, scheduler, trace, network, driver, checks);
  }

  private void step(SimNode<M> node, Input<M> input) {
    host.step(node, input);
  }

  private long steps() {
    return host.steps();
  }

  private Req request(long id) {
    return driver.request(id);
  }

  Simulation.Result execute() {
    SimulationConfig config = setup.config();
    String violation = null;
    try {
      for (SimNode<M> node : nodes) {
        host.start(node);
      }
      trace.log(members + " nodes" + (setup.clients() > 0 ? " and " + setup.clients() + " thin clients" : "") + ", "
          + network.reporting());
      network.relink();
      for (Op op : ops) {
        scheduler.at(op.at(), () -> apply(op));
      }
      scheduler.at(config.faultPhaseNanos(), this::healEverything);
      long every = setup.listEveryNanos();
      for (long at = every, k = 0; every > 0 && at < config.faultPhaseNanos() + config.probeDelayNanos(); at += every) {
        SimNode<M> lister = nodes.get((int) (k++ % nodes.size())); // the thin clients too, after the members
        scheduler.at(at, () -> driver.list(lister, setup.listStaleNanos()));
      }
      long end = config.faultPhaseNanos() + config.settleNanos();
      while (scheduler.runNext(end)) {
        checks.afterStep();
        if (scheduler.events() > config.maxEvents()) {
          throw new Violation("no quiescence after " + scheduler.events() + " events (livelock?)");
        }
        if (host.elected() && driver.probedAndQuiet()) {
          trace.log("every request ended after the probes: the run is over (the election beats on for ever)");
          break;
        }
      }
      checks.atEnd(driver.requests(), driver.transactions());
    } catch (Violation v) {
      violation = v.getMessage();
      trace.log("VIOLATION " + violation);
    }
    return new Simulation.Result(seed, violation, ops, driver.grants(), driver.requests().size(), scheduler.events(),
        network.messages(), trace.lines());
  }

  private void apply(Op op) {
    trace.log("OP " + op);
    switch (op) {
      case Op.Acquire a -> driver.acquire(a);
      case Op.Transaction t -> driver.begin(t);
      case Op.CloseSession c -> driver.closeSession(c);
      case Op.Pause p -> host.pause(nodes.get(p.node()), p.nanos());
      case Op.Crash c -> host.crash(nodes.get(c.node()));
      case Op.Restart r -> host.restart(nodes.get(r.node()));
      case Op.Leave l -> host.leave(nodes.get(l.node()));
      case Op.Cut c -> network.cut(c.a(), c.b());
      case Op.Flap f -> network.flap(f.a(), f.b(), f.downNanos());
      case Op.OneWayFlap f -> {
        if (network.tcpLike()) {
          network.oneWayFlap(f.from(), f.to(), f.downNanos());
        } else {
          apply(new Op.Flap(f.at(), f.from(), f.to(), f.downNanos())); // reports in line with the data: no one-way
        }
      }
      case Op.Heal h -> network.heal(h.a(), h.b());
      case Op.Partition p -> network.partition(p.side());
      case Op.HealAll h -> network.healAll();
    }
  }

  private void healEverything() {
    trace.log("FAULT PHASE OVER: heal everything, restart every node");
    network.clearFaults();
    host.restartAll();
    network.relink();
    scheduler.at(scheduler.now() + setup.config().probeDelayNanos(), driver::probe);
  }
}
