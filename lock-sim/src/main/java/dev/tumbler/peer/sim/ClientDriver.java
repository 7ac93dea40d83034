package dev.tumbler.peer.sim;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.TxOptions;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;

/**
 * The applications on the nodes of one run, and the book of what they asked: they acquire, hold and release, give
 * up after a wait, make single attempts, close sessions, run transactions, and renew leased grants as the SPI's
 * renewer does; at the end, probes. The book keeps each request as the client sees it and as the core was told,
 * and checks each answer of a core against it (I-3, {@code bookkeeping:}) as it arrives, since the answer moves the
 * book on; what the answer means for safety goes to the {@link Invariants}.
 */
final class ClientDriver<M extends PeerMessage> {

  private static final long MS = 1_000_000L;

  private final List<SimNode<M>> nodes;
  private final Scheduler scheduler;
  private final Trace trace;
  private final Invariants<M> checks;
  private final SimulationConfig config;
  private final long leaseNanos;
  /** Steps a node's core with what its client does (a follow-up of the current step while one runs). */
  private final BiConsumer<SimNode<M>, Input<M>> step;
  /** The number of the step running: AG-4 ties an abort to a loss of the same step. */
  private final LongSupplier steps;
  private final Map<Long, Req> reqs = new LinkedHashMap<>();
  private final Map<Long, Tx> txs = new LinkedHashMap<>();
  private long nextTxId = 1;
  /** The listings asked and not answered: the grants valid when each was asked ({@link Invariants#validGrants}). */
  private final Map<Long, Map<Long, Long>> listings = new LinkedHashMap<>();
  private long nextQueryId = 1;
  private long nextRequestId = 1;
  private long grants;
  /** Requests not ended yet. */
  private int open;
  private boolean probing;

  ClientDriver(List<SimNode<M>> nodes, Scheduler scheduler, Trace trace, Invariants<M> checks, SimulationConfig config,
      long leaseNanos, BiConsumer<SimNode<M>, Input<M>> step, LongSupplier steps) {
    this.nodes = nodes;
    this.scheduler = scheduler;
    this.trace = trace;
    this.checks = checks;
    this.config = config;
    this.leaseNanos = leaseNanos;
    this.step = step;
    this.steps = steps;
  }

  Req request(long id) {
    return reqs.get(id);
  }

  Collection<Req> requests() {
    return reqs.values();
  }

  Collection<Tx> transactions() {
    return txs.values();
  }

  long grants() {
    return grants;
  }

  /** Whether every request ended since the probes were asked: an elected algorithm's run is then over. */
  boolean probedAndQuiet() {
    return probing && open == 0;
  }

  // ---- what the clients do

  void acquire(Op.Acquire a) {
    SimNode<M> node = nodes.get(a.node());
    if (!node.alive) {
      return;
    }
    Req r = newReq(node, sessionId(node, a.session()), a.claim(), a.holdNanos(), a.renews());
    step.accept(node, new Input.Acquire<>(r.id, r.session, r.claim, a.attempt()));
    if (a.waitNanos() >= 0 && !a.attempt()) {
      int inc = node.incarnation;
      scheduler.at(scheduler.now() + a.waitNanos(), () -> {
        if (r.state == Req.State.PENDING && node.living(inc)) {
          endByClient(r, "timed out");
          step.accept(node, new Input.Cancel<>(r.id));
        }
      });
    }
  }

  void closeSession(Op.CloseSession c) {
    SimNode<M> node = nodes.get(c.node());
    if (!node.alive) {
      return;
    }
    String session = sessionId(node, c.session());
    for (Req r : reqs.values()) {
      if (r.session.equals(session) && r.state != Req.State.ENDED) {
        endByClient(r, "session closed");
      }
    }
    for (Tx t : txs.values()) {
      if (t.session.equals(session)) {
        t.ended = true;
      }
    }
    node.sessionGen.merge(c.session(), 1, Integer::sum);
    step.accept(node, new Input.CloseSession<>(session));
  }

  void begin(Op.Transaction t) {
    SimNode<M> node = nodes.get(t.node());
    if (!node.alive) {
      return;
    }
    Tx tx = new Tx(nextTxId++, node.index, node.incarnation, sessionId(node, t.session()), t);
    txs.put(tx.id, tx);
    List<String> on = t.on() < 0 ? List.of() : List.of(nodes.get(t.on()).id);
    step.accept(node, new Input.Begin<>(tx.id, tx.session, new TxOptions(t.abortOnDeadlock(), t.quorum(), on, 0)));
    long at = scheduler.now();
    for (int i = 0; i < t.claims().size(); i++) {
      Claim claim = t.claims().get(i);
      at += t.gaps().get(i);
      scheduler.at(at, () -> {
        if (tx.ended || !node.living(tx.incarnation)) {
          return;
        }
        Req r = newReq(node, tx.session, claim, t.holdNanos(), t.renews());
        r.tx = tx;
        tx.reqs.add(r);
        step.accept(node, new Input.Acquire<>(r.id, r.session, r.claim, false, tx.id));
      });
    }
  }

  /** Every fault is over: one client per node asks for every name, and must get it. */
  void probe() {
    trace.log("PROBES: every node asks for every name; each must be granted");
    probing = true;
    for (SimNode<M> node : nodes) {
      for (int i = 0; i < config.names(); i++) {
        Req r = newReq(node, node.id + "/probe." + node.incarnation, config.workload().probe("L" + i), MS, true);
        r.mustGrant = true;
        step.accept(node, new Input.Acquire<>(r.id, r.session, r.claim, false));
      }
    }
  }

  /** {@code node} crashed: its clients died with it. */
  void crashed(SimNode<M> node) {
    for (Req r : reqs.values()) {
      if (r.node == node.index && r.state != Req.State.ENDED) {
        end(r, "crashed");
      }
    }
    for (Tx t : txs.values()) {
      if (t.node == node.index) {
        t.ended = true;
      }
    }
  }

  /**
   * {@code node}'s core stepped {@code input}. Only now has the core seen an end its client sent: a composite core may
   * hand a view to its lock core, which may then grant, before that core gets the Cancel or CloseSession of the same
   * step.
   */
  void delivered(Input<M> input) {
    switch (input) {
      case Input.Cancel<M> c -> delivered(reqs.get(c.requestId()));
      case Input.Release<M> rl -> delivered(reqs.get(rl.requestId()));
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

  private static void delivered(Req r) {
    if (r != null) {
      r.endDelivered = true;
    }
  }

  /**
   * {@code node} is asked what is held under every name of the run (they all start with {@code L}); the answer owes
   * the grants valid now and made at least {@code staleNanos} ago.
   */
  void list(SimNode<M> node, long staleNanos) {
    if (!node.alive) {
      return;
    }
    long id = nextQueryId++;
    listings.put(id, checks.validGrants(staleNanos));
    trace.log(node.id + " LIST " + id);
    step.accept(node, new Input.ListQuery<>(id, List.of("L")));
  }

  // ---- what the cores answer

  void listed(SimNode<M> node, Output.Listing<M> l) {
    trace.log(node.id + " LISTING " + l);
    Map<Long, Long> asked = listings.remove(l.queryId());
    if (asked == null) {
      throw new Violation("bookkeeping: " + node.id + " answered listing " + l.queryId() + ", not asked or answered");
    }
    checks.listed(node, asked, l);
  }

  void granted(SimNode<M> node, Output.Granted<M> g) {
    Req r = reqs.get(g.requestId());
    trace.log(node.id + " GRANTED " + g + window(node, g.validUntil()));
    if (r == null || r.node != node.index) {
      throw new Violation(node.id + " granted unknown request " + g.requestId());
    }
    if (r.granted) {
      throw new Violation("bookkeeping: " + node.id + " granted request " + r + " a second time");
    }
    if (r.endedUnheard()) {
      // the client gave up (timeout, session closed) and the core has not seen it yet, as when a paused node
      // catches up: the grant is the core's until that input releases it, and nobody uses it
      trace.log(node.id + " grant of " + r + " arrived after its client gave up: dropped, released by what follows");
      checks.grantedUnused(node, r, g);
      return;
    }
    if (r.state != Req.State.PENDING) {
      throw new Violation(node.id + " granted request " + r + " whose client is gone (" + r.endReason + ")");
    }
    if (!r.claim.name().equals(g.name())) {
      throw new Violation(node.id + " granted request " + r + " on the wrong name " + g.name());
    }
    checks.granted(node, r, g);
    r.state = Req.State.HELD;
    r.granted = true;
    grants++;
    int inc = node.incarnation;
    if (!g.unbounded() && r.renews) {
      renewAt(node, r, node.clock.real(scheduler.local(node.clock) + leaseNanos / 3));
    }
    if (r.tx != null) {
      txProgress(node, r.tx);
      return;
    }
    scheduler.at(scheduler.now() + r.hold, () -> {
      if (r.state == Req.State.HELD && node.living(inc)) {
        endByClient(r, "released");
        step.accept(node, new Input.Release<>(r.id));
      }
    });
  }

  void failed(SimNode<M> node, Output.Failed<M> f) {
    trace.log(node.id + " FAILED " + f);
    Req r = reqs.get(f.requestId());
    if (r == null || r.node != node.index) {
      throw new Violation(node.id + " failed unknown request " + f.requestId());
    }
    if (r.state == Req.State.HELD) {
      throw new Violation(node.id + " failed request " + r + " which it had granted");
    }
    if (r.state == Req.State.PENDING) {
      end(r, "failed " + f.failure());
      if (r.tx != null) {
        endTx(node, r.tx, "a claim failed: " + f.failure()); // await failed: the client ends it
      }
    }
  }

  void lost(SimNode<M> node, Output.Lost<M> l) {
    trace.log(node.id + " LOST " + l);
    Req r = reqs.get(l.requestId());
    if (r == null || r.node != node.index) {
      throw new Violation("bookkeeping: " + node.id + " lost unknown request " + l.requestId());
    }
    if (r.state == Req.State.PENDING) {
      throw new Violation("bookkeeping: " + node.id + " lost request " + r + ", which it never granted");
    }
    boolean surrendered = r.tx != null && l.reason() == Output.LostReason.DEADLOCK;
    if (surrendered) {
      r.tx.toldLostAtStep = steps.getAsLong(); // AG-4: an abort for a deadlock comes with a told claim lost
    }
    if (r.state == Req.State.HELD && surrendered) {
      // surrendered to break a deadlock: asked for again, granted again later with a larger token
      checks.ended(r);
      r.state = Req.State.PENDING;
      r.granted = false;
      r.renewals++;
      r.tx.surrendered++;
    } else if (r.state == Req.State.HELD) {
      end(r, "lost " + l.reason());
      if (r.tx != null) {
        endTx(node, r.tx, "a claim was lost: " + l.reason());
      }
    } else if (r.endedUnheard() && surrendered) {
      // surrendered before the core saw its client give up (a paused node catching up): asked for again, as
      // any surrendered claim is, and a grant that follows is dropped like any grant of a request given up
      r.granted = false;
    }
  }

  void renewed(SimNode<M> node, Output.Renewed<M> rn) {
    trace.log(node.id + " RENEWED " + rn + window(node, rn.validUntil()));
    Req r = reqs.get(rn.requestId());
    if (r != null && r.node == node.index && r.endedUnheard()) {
      // released (or given up) while its node was paused: the core has not seen it yet, as with a grant
      trace.log(node.id + " renewal of " + r + " came after its client ended it: dropped");
      return;
    }
    if (r == null || r.node != node.index || r.state != Req.State.HELD) {
      throw new Violation("renewal: " + node.id + " renewed request " + rn.requestId() + " which it does not hold");
    }
    checks.renewed(node, r, rn);
    if (r.renews && leaseNanos > 0) {
      renewAt(node, r, node.clock.real(scheduler.local(node.clock) + leaseNanos / 3));
    }
  }

  void aborted(SimNode<M> node, Output.TxAborted<M> a) {
    trace.log(node.id + " TX ABORTED " + a);
    Tx tx = txs.get(a.txId());
    if (tx == null || tx.node != node.index) {
      throw new Violation("bookkeeping: " + node.id + " aborted unknown transaction " + a.txId());
    }
    checks.aborted(node, tx, a, steps.getAsLong());
    if (!tx.ended) {
      tx.ended = true;
      step.accept(node, new Input.End<>(tx.id)); // the client closes it, as after any failed await
    }
  }

  // ---- the book

  /**
   * The SPI's renewer: at {@code at}, and every T/12 after while unanswered, {@code Renew} for a held request; a
   * paused node's renewer is paused too. A later call replaces an earlier one.
   */
  private void renewAt(SimNode<M> node, Req r, long at) {
    long gen = ++r.renewals;
    int inc = node.incarnation;
    scheduler.at(at, () -> {
      if (r.renewals != gen || r.state != Req.State.HELD || !node.living(inc)) {
        return;
      }
      renewAt(node, r, scheduler.now() + Math.max(1, leaseNanos / 12));
      if (!node.paused) {
        step.accept(node, new Input.Renew<>(r.id));
      }
    });
  }

  /** Once every claim of {@code tx} was asked for and is held, it is held for its time, then ended. */
  private void txProgress(SimNode<M> node, Tx tx) {
    if (tx.ended || tx.holding || tx.reqs.size() < tx.op.claims().size()
        || tx.reqs.stream().anyMatch(r -> r.state != Req.State.HELD)) {
      return;
    }
    tx.holding = true;
    int inc = node.incarnation;
    scheduler.at(scheduler.now() + tx.op.holdNanos(), () -> {
      if (!tx.ended && node.living(inc)) {
        endTx(node, tx, "released");
      }
    });
  }

  /** The client ends {@code tx} (done, or given up): its claims end, then the core hears of it. */
  private void endTx(SimNode<M> node, Tx tx, String why) {
    if (tx.ended) {
      return;
    }
    tx.ended = true;
    for (Req r : tx.reqs) {
      if (r.state != Req.State.ENDED) {
        endByClient(r, why);
      }
    }
    step.accept(node, new Input.End<>(tx.id));
  }

  /** The client ends {@code r}, and tells the core next. */
  private void endByClient(Req r, String why) {
    end(r, why);
    r.endSentToCore = true;
  }

  private void end(Req r, String why) {
    if (r.state == Req.State.HELD) {
      checks.ended(r);
    }
    if (r.state != Req.State.ENDED) {
      open--;
    }
    r.state = Req.State.ENDED;
    r.endReason = why;
  }

  private Req newReq(SimNode<M> node, String session, Claim claim, long hold, boolean renews) {
    Req r = new Req(nextRequestId++, node.index, session, claim, hold, renews);
    reqs.put(r.id, r);
    open++;
    return r;
  }

  private String sessionId(SimNode<M> node, int slot) {
    return node.id + "/s" + slot + "." + node.incarnation + "." + node.sessionGen.getOrDefault(slot, 0);
  }

  private String window(SimNode<M> node, long validUntil) {
    return validUntil == Long.MAX_VALUE ? "" : " (valid for " + (validUntil - scheduler.local(node.clock)) / 1000
        + "us)";
  }
}
