package dev.tumbler.peer.sim;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.election.ElectionCore;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongFunction;

/**
 * The judges of one run: hands every grant, renewal and end to {@link Safety} and {@link Leases}, every view to
 * {@link Views}, every semaphore server's counters to {@link BucketChecks}, and checks what needs the run's clocks
 * and book: after every step, that every counted holder is live and that no live, running holder outlived its window
 * without a {@code Lost} (I-5); at a transaction's abort, AG-4; at the end, that every request and transaction ended
 * and every probe was granted. Those judges work on the holders' local times; this class turns real time into each
 * node's time. A broken rule is thrown as a {@link Violation}.
 */
final class Invariants<M extends PeerMessage> {

  private static final long MS = 1_000_000L;

  private final List<SimNode<M>> nodes;
  private final Scheduler scheduler;
  private final SimulationConfig config;
  /** The run's book, by request id. */
  private final LongFunction<Req> requests;
  private final Safety safety = new Safety();
  private final Leases leases;
  private final Views views = new Views();
  private final BucketChecks bucketChecks = new BucketChecks();
  /** The node of every grant made, by its claim's name and token (LI-2). */
  private final Map<String, Integer> grantedTo = new HashMap<>();
  /** Held requests with a window: I-5 watches them after every step. */
  private final Set<Req> heldLeased = new LinkedHashSet<>();

  Invariants(List<SimNode<M>> nodes, Scheduler scheduler, SimulationConfig config, long leaseNanos,
      LongFunction<Req> requests) {
    this.nodes = nodes;
    this.scheduler = scheduler;
    this.config = config;
    this.requests = requests;
    this.leases = new Leases(leaseNanos);
  }

  /** Judges a grant its client will use (I-1, I-2, I-4), and watches its window if it has one (I-5). */
  void granted(SimNode<M> node, Req r, Output.Granted<M> g) {
    judge(node, r, g, false);
    if (!g.unbounded()) {
      heldLeased.add(r);
    }
  }

  /**
   * Judges a grant that reached a client that had given its request up, before the core heard of it: the core's own
   * until the input that ends it arrives, never used, and over at once for the judges.
   */
  void grantedUnused(SimNode<M> node, Req r, Output.Granted<M> g) {
    judge(node, r, g, true);
    safety.ended(r.id, scheduler.now());
    leases.ended(r.id);
  }

  /**
   * Hands a grant to {@link Leases}, then to {@link Safety}, for which a grant counts while its request is held on a
   * live node and its window is open by that node's clock; an echo-rule grant was made when its client sent the
   * message it answers. Of a grant its client gave up before the core knew ({@code dropped}) only what the core
   * granted is judged (exclusion, permits, a token of its own), not the order of its token among the grants the
   * client's giving up ended: the core may still count those as its own hold.
   */
  private void judge(SimNode<M> node, Req r, Output.Granted<M> g, boolean dropped) {
    try {
      leases.granted(r.id, scheduler.local(node.clock), g.sentAt(), g.validUntil());
      long now = scheduler.now();
      long madeAt = g.unbounded() ? now : Math.min(now, node.clock.real(g.sentAt()));
      safety.granted(new Safety.Grant(r.id, r.session, r.claim, g.fencingToken(), g.permits(), madeAt,
          r.tx == null ? 0 : r.tx.id), other -> valid(requests.apply(other.requestId())), dropped);
      grantedTo.put(tokenKey(r.claim.name(), r.claim.mode(), g.fencingToken()), r.node);
    } catch (IllegalStateException e) {
      throw new Violation(e.getMessage());
    }
  }

  /** Whether the grant of {@code r} is valid now: held, its node alive, its window open by its clock. */
  private boolean valid(Req r) {
    SimNode<M> node = nodes.get(r.node);
    return r.state == Req.State.HELD && node.alive && leases.window(r.id).validAt(scheduler.local(node.clock));
  }

  /**
   * The grants valid now and made at least {@code staleNanos} ago, each one's token by its request id: what a listing
   * asked now is judged against.
   */
  Map<Long, Long> validGrants(long staleNanos) {
    Map<Long, Long> held = new HashMap<>();
    for (Safety.Grant g : safety.live()) {
      if (valid(requests.apply(g.requestId())) && g.madeAt() <= scheduler.now() - staleNanos) {
        held.put(g.requestId(), g.token());
      }
    }
    return held;
  }

  /**
   * Judges the listing {@code lister} answered, when it says it knows: LI-1, every grant valid when it was asked (and
   * made long enough before: {@link #validGrants}) and still valid (the same grant) when answered is listed under its
   * name and its node (a thin client's: any holder, as its member holds it for it), with its own token, or a token at
   * least its own where the listing says the token is not the holder's, or none; except the transaction claims of other
   * nodes (an {@code agent} listing may only know a transaction's claims from its node). LI-2, a token listed as a
   * holder's own was not granted to another node, a thin client's aside (it may be one whose grant is still on its way
   * to its client, or one its client gave up).
   */
  void listed(SimNode<M> lister, Map<Long, Long> validWhenAsked, Output.Listing<M> l) {
    if (!l.known()) {
      return;
    }
    Map<Long, Safety.Grant> live = new HashMap<>();
    for (Safety.Grant g : safety.live()) {
      live.put(g.requestId(), g);
    }
    for (Map.Entry<Long, Long> e : validWhenAsked.entrySet()) {
      Req r = requests.apply(e.getKey());
      Safety.Grant g = live.get(e.getKey());
      if (g == null || g.token() != e.getValue() || !valid(r) || r.tx != null && r.node != lister.index) {
        continue;
      }
      String node = nodes.get(r.node).id;
      boolean client = nodes.get(r.node).client; // a thin client's grant is held for it by its member, and named so
      boolean found = false;
      for (Output.Listed x : l.held()) {
        found |= x.name().equals(r.claim.name()) && (client || node(x).equals(node))
            && (x.tokenIsHolders() ? x.token() == g.token() : x.token() == 0 || x.token() >= g.token());
      }
      if (!found) {
        throw new Violation("LI-1: " + lister.id + " listed " + l.held() + " without " + g + " of " + node
            + ", valid from the question to the answer");
      }
    }
    for (Output.Listed x : l.held()) {
      Integer to = x.tokenIsHolders() ? grantedTo.get(tokenKey(x.name(), x.mode(), x.token())) : null;
      if (to != null && !nodes.get(to).client && !nodes.get(to).id.equals(node(x))) {
        throw new Violation("LI-2: " + lister.id + " listed " + x + ", whose token was granted to " + nodes.get(to).id);
      }
    }
  }

  /** The node a listed claim names as its holder: before the tag (after a space) or the session (after a '#'). */
  private static String node(Output.Listed x) {
    String h = x.holder();
    int end = h.length();
    for (char c : new char[] {' ', '#'}) {
      int i = h.indexOf(c);
      end = i >= 0 ? Math.min(end, i) : end;
    }
    return h.substring(0, end);
  }

  private static String tokenKey(String name, Claim.Mode mode, long token) {
    return (mode == Claim.Mode.PERMITS ? "permits:" : "lock:") + name + "#" + token;
  }

  /** Judges a renewal of the held request {@code r} (I-4). */
  void renewed(SimNode<M> node, Req r, Output.Renewed<M> rn) {
    try {
      leases.renewed(r.id, scheduler.local(node.clock), rn.sentAt(), rn.validUntil());
    } catch (IllegalStateException e) {
      throw new Violation(e.getMessage());
    }
  }

  /**
   * The grant of the held request {@code r} ended: released, lost, given up or surrendered. A grant whose window
   * closed before its end was reported ended when it closed.
   */
  void ended(Req r) {
    SimNode<M> node = nodes.get(r.node);
    long validUntil = leases.window(r.id).validUntil();
    long now = scheduler.now();
    safety.ended(r.id, validUntil == Long.MAX_VALUE ? now : Math.min(now, node.clock.real(validUntil)));
    leases.ended(r.id);
    heldLeased.remove(r);
  }

  /** Judges the view {@code node} published (V-1, V-2, view), its election core being {@code election}. */
  void viewPublished(SimNode<M> node, ElectionCore election, Observation.View v) {
    try {
      views.published(node.id, election.leader(), v, id -> scheduler.local(SimNode.named(nodes, id).clock));
    } catch (IllegalStateException ex) {
      throw new Violation(ex.getMessage());
    }
  }

  /** {@code node} crashed: its views no longer act. */
  void down(SimNode<M> node) {
    views.down(node.id);
  }

  /** The highest term adopted anywhere so far. */
  long highestTerm() {
    return views.highestTerm();
  }

  /** {@code node} serves semaphores in a new term: its counters start afresh. */
  void serving(SimNode<M> node) {
    bucketChecks.serving(node.id + "#" + node.incarnation);
  }

  /** Judges the counters {@code node} published (BU-2). */
  void buckets(SimNode<M> node, Observation.Buckets b) {
    String problem = bucketChecks.published(node.id + "#" + node.incarnation, b);
    if (problem != null) {
      throw new Violation(problem);
    }
  }

  /**
   * Judges an abort of {@code tx} that {@code node} reported in step {@code step}: for a deadlock only by a
   * transaction that asked for it, and only with a told claim lost in the same step (AG-4); with every claim ended
   * first.
   */
  void aborted(SimNode<M> node, Tx tx, Output.TxAborted<M> a, long step) {
    if (a.failure() == Output.Failure.DEADLOCK && !tx.op.abortOnDeadlock()) {
      throw new Violation("AG-4: " + node.id + " aborted transaction " + tx.id + " for a deadlock although it "
          + "surrenders instead");
    }
    if (a.failure() == Output.Failure.DEADLOCK && tx.toldLostAtStep != step) {
      throw new Violation("AG-4: " + node.id + " aborted transaction " + tx.id + " for a deadlock although none "
          + "of its claims was told (a victim not yet told it holds surrenders and waits again)");
    }
    for (Req r : tx.reqs) {
      if (r.state != Req.State.ENDED && !tx.ended) {
        throw new Violation("bookkeeping: transaction " + tx.id + " aborted with " + r + " not ended first");
      }
    }
  }

  /** After every step: every counted holder is live; I-5. */
  void afterStep() {
    for (Safety.Grant g : safety.live()) {
      Req h = requests.apply(g.requestId());
      if (h.state != Req.State.HELD || !nodes.get(h.node).alive) {
        throw new Violation("bookkeeping: holder " + h + " of " + g.claim().name() + " is not live");
      }
    }
    // a live, running holder hears of the end of its window no later than the first step after it
    for (Req r : heldLeased) {
      SimNode<M> node = nodes.get(r.node);
      long validUntil = leases.window(r.id).validUntil();
      if (node.alive && !node.paused && scheduler.now() > node.clock.real(validUntil)) {
        throw new Violation("timely loss: " + node.id + " still holds " + r + " "
            + (scheduler.local(node.clock) - validUntil) / 1000 + "us after its window closed (validUntil "
            + validUntil + ") without a Lost");
      }
    }
  }

  /** At the end of the run, every fault long healed: every probe was granted, every request and transaction ended. */
  void atEnd(Collection<Req> reqs, Collection<Tx> txs) {
    for (Req r : reqs) {
      if (r.mustGrant && !r.granted) {
        throw new Violation("probe " + r + " asked " + (config.probeDelayNanos() / MS) + "ms after every fault "
            + "healed was " + (r.state == Req.State.PENDING ? "never granted" : "not granted: " + r.endReason));
      }
      if (r.state == Req.State.PENDING) {
        throw new Violation("request " + r + " never ended although every fault healed "
            + (config.settleNanos() / MS) + "ms before the end");
      }
    }
    for (Tx t : txs) {
      if (!t.ended) {
        throw new Violation("transaction " + t.id + " on n" + t.node + " never ended although every fault healed "
            + (config.settleNanos() / MS) + "ms before the end (" + t.reqs + ")");
      }
    }
  }
}
