package dev.tumbler.peer.sim;

import dev.tumbler.peer.composite.Channel;
import dev.tumbler.peer.composite.CompositeCore;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.election.ElectionCore;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Hosts the nodes' cores as the node runtime does: starts a core for each life of a node, crashes, restarts and
 * pauses nodes, steps a core with each input that reaches it (deferring what reaches a paused node), and carries
 * out its outputs: messages to the {@link Network}, timers to the {@link Scheduler}, answers to the
 * {@link ClientDriver}, facts to the {@link Invariants}.
 *
 * <p>The crash rule: the cluster's memory (clocks past every granted request, hence increasing fencing tokens) lives
 * in informed nodes, up since the start or told by an informed node since their restart. Losing the last of them is
 * losing the whole cluster at once, which no Lamport node survives with its tokens (the node runtime starts clocks
 * from wall-clock microseconds for that case), so the last informed live member is never crashed. An elected
 * algorithm's memory is its terms: informed election cores that adopted the highest term (E11).
 */
final class NodeHost<M extends PeerMessage> {

  private static final long MS = 1_000_000L;

  /**
   * How long a crashed node of an elected algorithm stays down at least: longer than any message delay, as the
   * election's informed rule (E11) assumes of a restart.
   */
  private static final long MIN_RESTART = 10 * MS;

  private final Simulation.Setup<M> setup;
  private final long seed;
  private final List<SimNode<M>> nodes;
  private final Scheduler scheduler;
  private final Trace trace;
  private final Network<M> network;
  private final ClientDriver<M> driver;
  private final Invariants<M> checks;
  // steps so far: the outputs of one step, and of the steps its outputs lead the clients to take at once (an End
  // after a failed claim), share its number
  private long steps;
  private int stepDepth;
  /** Inputs the clients give in answer to outputs, stepped once the outputs of the step are carried out. */
  private final ArrayDeque<Map.Entry<SimNode<M>, Input<M>>> followUps = new ArrayDeque<>();
  /** Whether the nodes run an election core (found at the first start). */
  private boolean elected;

  NodeHost(Simulation.Setup<M> setup, long seed, List<SimNode<M>> nodes, Scheduler scheduler, Trace trace,
      Network<M> network, ClientDriver<M> driver, Invariants<M> checks) {
    this.setup = setup;
    this.seed = seed;
    this.nodes = nodes;
    this.scheduler = scheduler;
    this.trace = trace;
    this.network = network;
    this.driver = driver;
    this.checks = checks;
  }

  /** Whether the nodes run an election core: its leaders beat for ever, so the run never goes quiet. */
  boolean elected() {
    return elected;
  }

  /** The number of the step running. */
  long steps() {
    return steps;
  }

  // ---- lives

  /** Starts a life of {@code node}: a new core with empty state. */
  void start(SimNode<M> node) {
    node.alive = true;
    node.informed = node.incarnation == 0;
    List<String> peers = new ArrayList<>();
    for (SimNode<M> o : nodes) {
      if (o != node && !o.client) {
        peers.add(o.id);
      }
    }
    node.core = (node.client ? setup.clientFactory() : setup.factory()).create(node.id, peers, node.incarnation,
        new SplittableRandom(seed ^ (node.index * 1_000_003L + node.incarnation)), scheduler.now() / 1_000);
    elected |= election(node) != null;
    node.loggedView = null;
    node.timers.clear();
    network.started(node);
    step(node, new Input.Start<>());
  }

  void crash(SimNode<M> node) {
    if (!node.alive) {
      return;
    }
    if (!node.client && lastMemory(node)) {
      trace.log(node.id + " crash skipped: it is the last informed live node");
      return;
    }
    trace.log(node.id + " CRASH");
    node.crashedAt = scheduler.now();
    if (elected && !node.client) {
      checks.down(node);
    }
    node.alive = false;
    node.core = null;
    node.incarnation++;
    node.timers.clear();
    node.paused = false;
    node.deferred.clear();
    driver.crashed(node);
    network.relink();
  }

  /**
   * A member's daemon stops on purpose and is started again (a deploy): {@code Input.Leave}, then a crash once
   * everything it sent has arrived (it closes its sockets after writing), then a restart, which for a member that
   * takes thin clients waits a term. While the crash would lose the cluster's memory, the stopping node waits, as a
   * daemon's stop would wait for its peers to catch up, and tries again.
   */
  void leave(SimNode<M> node) {
    if (!node.alive || node.client) {
      return;
    }
    trace.log(node.id + " LEAVE");
    step(node, new Input.Leave<>());
    int inc = node.incarnation;
    stopAfterLeave(node, inc);
  }

  private void stopAfterLeave(SimNode<M> node, int inc) {
    scheduler.at(scheduler.now() + 2 * setup.config().maxDelayNanos() + 1, () -> {
      if (!node.living(inc)) {
        return;
      }
      if (lastMemory(node)) {
        stopAfterLeave(node, inc);
        return;
      }
      crash(node);
      restart(node);
    });
  }

  void pause(SimNode<M> node, long nanos) {
    if (!node.alive || node.paused) {
      return;
    }
    trace.log(node.id + " PAUSE for " + nanos / 1000 + "us");
    node.paused = true;
    int inc = node.incarnation;
    scheduler.at(scheduler.now() + nanos, () -> {
      if (!node.living(inc)) {
        return;
      }
      trace.log(node.id + " PAUSE over, " + node.deferred.size() + " inputs waited");
      node.paused = false;
      List<Input<M>> waited = new ArrayList<>(node.deferred);
      node.deferred.clear();
      for (Input<M> in : waited) {
        step(node, in);
      }
    });
  }

  /** Whether crashing the member {@code node} now would lose the cluster's memory (see the class comment). */
  private boolean lastMemory(SimNode<M> node) {
    return elected ? lastKnower(node) : !otherInformed(node);
  }

  private boolean otherInformed(SimNode<M> node) {
    for (SimNode<M> o : nodes) {
      if (o != node && !o.client && o.alive && o.informed) {
        return true;
      }
    }
    return false;
  }

  /** Whether {@code node} is the last live node whose election core is informed and knows the highest term. */
  private boolean lastKnower(SimNode<M> node) {
    if (!knower(node)) {
      return false;
    }
    for (SimNode<M> o : nodes) {
      if (o != node && knower(o)) {
        return false;
      }
    }
    return true;
  }

  private boolean knower(SimNode<M> node) {
    ElectionCore e = node.alive ? election(node) : null;
    return e != null && e.informed() && e.view().term() >= checks.highestTerm();
  }

  private static ElectionCore election(SimNode<?> node) {
    return node.core instanceof CompositeCore c && c.core(Channel.ELECTION) instanceof ElectionCore e ? e : null;
  }

  void restart(SimNode<M> node) {
    if (node.alive || node.joining) {
      return;
    }
    if (waitsATermToJoin(node)) {
      joinLater(node);
      return;
    }
    if (elected && scheduler.now() < node.crashedAt + MIN_RESTART) {
      int inc = node.incarnation;
      scheduler.at(node.crashedAt + MIN_RESTART, () -> {
        if (!node.alive && node.incarnation == inc) {
          restart(node);
        }
      });
      return;
    }
    startAgain(node);
    network.relink();
  }

  /** The fault phase is over: every node that is down restarts, a member that takes thin clients a term later. */
  void restartAll() {
    for (SimNode<M> node : nodes) {
      if (waitsATermToJoin(node)) {
        restart(node);
      } else if (!node.alive) {
        startAgain(node);
      }
    }
  }

  private void startAgain(SimNode<M> node) {
    trace.log(node.id + " RESTART incarnation " + node.incarnation);
    start(node);
  }

  /** Whether {@code node} is a member that takes thin clients (CLIENTS.md D11), unless the D11 mutation is on. */
  private boolean waitsATermToJoin(SimNode<M> node) {
    return setup.clients() > 0 && !node.client && !setup.mutationJoinAtOnce();
  }

  /**
   * A member that takes thin clients starts its cores a lease term {@code T}, by its own clock, after its process
   * started (CLIENTS.md D11): the clients of its earlier life trust grants it made until their windows close, at
   * most {@code 3T/4} after it died, and its restatement as a new incarnation would free those grants at once.
   * Until then it is down to everyone.
   */
  private void joinLater(SimNode<M> node) {
    node.joining = true;
    int inc = node.incarnation;
    long at = node.clock.real(scheduler.local(node.clock) + setup.config().leaseNanos()); // the thin clients' term
    trace.log(node.id + " RESTART incarnation " + node.incarnation + ": its process waits a term, until "
        + at / 1000 + "us, before it joins (it takes thin clients)");
    scheduler.at(at, () -> {
      node.joining = false;
      if (!node.alive && node.incarnation == inc) {
        trace.log(node.id + " JOINS incarnation " + node.incarnation);
        start(node);
        network.relink();
      }
    });
  }

  // ---- steps

  /**
   * Steps {@code node} with {@code input} and carries out its outputs. An input a client gives in answer to an
   * output (an End after a lost claim) waits until every output of the step is carried out, as in the node
   * runtime: the core's last timer is the one set last, and the step's messages leave before the answer's.
   */
  void step(SimNode<M> node, Input<M> input) {
    if (stepDepth > 0) {
      followUps.add(Map.entry(node, input));
      return;
    }
    stepNow(node, input);
    while (!followUps.isEmpty()) {
      Map.Entry<SimNode<M>, Input<M>> f = followUps.poll();
      stepDepth++; // the answers share the step's number
      try {
        stepNow(f.getKey(), f.getValue());
      } finally {
        stepDepth--;
      }
    }
  }

  private void stepNow(SimNode<M> node, Input<M> input) {
    if (!node.alive) {
      return;
    }
    if (node.paused) {
      node.deferred.add(input); // handled in order when the pause ends
      return;
    }
    if (trace.on() && !(input instanceof Input.Message<M> m && isBeat(m.message()))) {
      trace.log(node.id + " <- " + input);
    }
    network.stepping(node, input);
    List<Output<M>> outs;
    if (stepDepth == 0) {
      steps++;
    }
    try {
      outs = node.core.step(scheduler.local(node.clock), input);
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
    driver.delivered(input);
  }

  private void handle(SimNode<M> node, Output<M> o) {
    switch (o) {
      case Output.Send<M> s -> network.send(node, s.to(), s.message());
      case Output.SetTimer<M> t -> {
        int inc = node.incarnation;
        scheduler.setTimer(node.timers, t.timerId(), node.clock, t.at(), () -> node.living(inc),
            () -> step(node, new Input.TimerFired<>(t.timerId())));
      }
      case Output.CancelTimer<M> t -> node.timers.cancel(t.timerId());
      case Output.Granted<M> g -> driver.granted(node, g);
      case Output.Failed<M> f -> driver.failed(node, f);
      case Output.Fact<M> f -> fact(node, f.observation());
      case Output.Renewed<M> rn -> driver.renewed(node, rn);
      case Output.Holder<M> h -> trace.log(node.id + " HOLDER " + h); // the workloads ask no holder queries
      case Output.Permits<M> p -> trace.log(node.id + " PERMITS " + p); // nor permit queries
      case Output.Listing<M> l -> driver.listed(node, l);
      case Output.TxAborted<M> a -> driver.aborted(node, a);
      case Output.Lost<M> l -> driver.lost(node, l);
    }
  }

  private void fact(SimNode<M> node, Observation o) {
    if (o instanceof Observation.View v) {
      ElectionCore e = election(node);
      if (e != null) {
        checks.viewPublished(node, e, v);
      }
      // a leader's lease is extended at every beat: the trace shows only changes of the view and of activity
      Observation.View before = node.loggedView;
      long local = scheduler.local(node.clock);
      boolean active = v.activeUntil() > local;
      if (before == null || before.term() != v.term() || !before.leaders().equals(v.leaders())
          || active != node.loggedActive) {
        trace.log(node.id + " FACT " + v + (active ? " (active for " + (v.activeUntil() - local) / 1000 + "us)" : ""));
      }
      node.loggedView = v;
      node.loggedActive = active;
      return;
    }
    if (o instanceof Observation.Serving) {
      checks.serving(node);
    }
    if (o instanceof Observation.Buckets b) {
      checks.buckets(node, b);
    }
    trace.log(node.id + " FACT " + o);
  }

  private static boolean isBeat(PeerMessage message) {
    String type = message.typeName();
    return type.endsWith("/Beat") || type.endsWith("/BeatAck");
  }
}
