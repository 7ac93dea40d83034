package dev.tumbler.peer.lease;

import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.Moments;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.election.ElectedServer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The server's table of {@code lease} (§5.2 S-1 to S-8), on the node that serves: for every lock, the lease given out
 * (its node, incarnation, token, whether active, when it ends) and the requests waiting in arrival order; recalls.
 * The {@link ElectedServer} machine says when this node serves, decides and may grant, and keeps the grace. Mutable;
 * owned by one {@link LeaseCore}.
 */
final class LeaseServer implements ElectedServer.Server<LeaseMessage> {

  private final LeaseCore core;
  private final long term;
  private final long recallInterval;
  private final Map<String, SLock> locks = new TreeMap<>();

  /*
   * What the timer needs, kept as the table changes, so that a step costs what it touches and not every lock the
   * server knows (a timer walk of every lock was most of the CPU with 100,000 names): the locks a step changed are
   * indexed again before the table is next asked (reindex). A tick does the work of before on the locks that are due
   * or that wait with no holder, in name order, and a lock not visited would have been left unchanged; the timer is
   * set to the same moment. So a run goes exactly as before (the simulation digest of lease is the same line for line).
   */
  /** Locks changed in this step (once each), indexed again before the table is next asked. */
  private final List<SLock> changed = new ArrayList<>();
  /** By name: when the holder's lease ends, or the first waiter is due (gone silent, its attempt unanswered). */
  private final Moments<String> due = new Moments<>();
  /** By name, for locks held while others wait: when the holder is recalled again (while the server decides). */
  private final Moments<String> recalls = new Moments<>();
  /** The names of the locks that someone waits for, in name order. */
  private final Set<String> waiting = new TreeSet<>();

  /** A lease the server gave out: the node and incarnation holding it, the request it was granted to. */
  private static final class Holder {
    final String node;
    final long inc;
    final long leaseId;
    final long token;
    /** The request it was granted for, or -1 for one taken back from a restatement. */
    final long reqId;
    final long echo;
    boolean active;
    /** The tag of the request that uses it, as the holder last said. */
    String tag;
    long expiry;

    Holder(String node, long inc, long leaseId, long token, long reqId, long echo, boolean active, String tag,
        long expiry) {
      this.node = node;
      this.inc = inc;
      this.leaseId = leaseId;
      this.token = token;
      this.reqId = reqId;
      this.echo = echo;
      this.active = active;
      this.tag = tag;
      this.expiry = expiry;
    }

    boolean of(String node, long inc, long leaseId) {
      return this.node.equals(node) && this.inc == inc && this.leaseId == leaseId;
    }
  }

  private static final class SWait {
    final String node;
    final long inc;
    final long reqId;
    final boolean attempt;
    final String tag;
    /** Until when an attempt waits for the holder's answer to a recall. */
    final long deadline;
    long echo;
    long lastHeard;

    SWait(String node, long inc, long reqId, boolean attempt, String tag, long deadline, long echo, long lastHeard) {
      this.node = node;
      this.inc = inc;
      this.reqId = reqId;
      this.attempt = attempt;
      this.tag = tag;
      this.deadline = deadline;
      this.echo = echo;
      this.lastHeard = lastHeard;
    }

    boolean is(String node, long inc, long reqId) {
      return this.node.equals(node) && this.inc == inc && this.reqId == reqId;
    }
  }

  /** One lock on the server. */
  private static final class SLock {
    final String name;
    Holder holder;
    final Deque<SWait> queue = new ArrayDeque<>(0); // one per name held: small until someone waits
    long nextRecallAt = Long.MIN_VALUE;
    /** Its places in the server's indexes of moments, and whether it waits to be indexed again. */
    final Moments.Slot<String> dueSlot;
    final Moments.Slot<String> recallSlot;
    boolean changed;

    SLock(String name) {
      this.name = name;
      this.dueSlot = new Moments.Slot<>(name);
      this.recallSlot = new Moments.Slot<>(name);
    }
  }

  LeaseServer(LeaseCore core, long recallIntervalNanos) {
    this.core = core;
    this.term = core.term();
    this.recallInterval = recallIntervalNanos;
  }

  /** Whether this table lists {@code node} as the holder of {@code name}, and whether active; null if not. */
  Boolean holderActive(String name, String node) {
    SLock l = locks.get(name);
    return l == null || l.holder == null || !l.holder.node.equals(node) ? null : l.holder.active;
  }

  // ================================================================ the machine's hooks

  @Override
  public void forget() {
    locks.clear();
    for (SLock l : changed) {
      l.changed = false;
    }
    changed.clear();
    due.clear();
    recalls.clear();
    waiting.clear();
  }

  /** Serves the locks someone waits for (serving the others changes nothing). */
  @Override
  public void serveAll() {
    reindex();
    for (String name : List.copyOf(waiting)) {
      serve(locks.get(name));
    }
  }

  /** Leases not renewed for a term (S-6), silent waiters (S-2), attempts not answered, recalls again. */
  @Override
  public void tick() {
    reindex();
    long now = core.now();
    Set<String> names = due.due(now, new TreeSet<>());
    if (core.deciding()) {
      recalls.due(now, names);
    }
    for (String name : waiting) {
      if (locks.get(name).holder == null) {
        names.add(name); // granted once the server may grant (its grace ended) and reaches the waiter
      }
    }
    for (String name : names) {
      SLock l = locks.get(name);
      if (l.holder != null && now >= l.holder.expiry) {
        free(l);
      }
      l.queue.removeIf(w -> !w.attempt && now >= w.lastHeard + term);
      for (SWait w : List.copyOf(l.queue)) {
        if (w.attempt && now >= w.deadline) {
          l.queue.remove(w);
          core.sendTo(w.node, new LeaseMessage.Busy(core.servingTerm(), w.reqId, l.name));
        }
      }
      serve(l);
    }
  }

  @Override
  public long next(long next) {
    reindex();
    next = Math.min(next, due.first());
    if (core.deciding()) {
      next = Math.min(next, recalls.first()); // recalls wait for the lease (a new view serves them all)
    }
    if (!waiting.isEmpty() && core.inGrace()) {
      next = Math.min(next, core.graceUntil());
    }
    return next;
  }

  /** Indexes the locks changed since the last time again: their moments, and whether someone waits. */
  private void reindex() {
    for (SLock l : changed) {
      l.changed = false;
      if (locks.get(l.name) != l) { // forgotten: another lock of the name, if any, is indexed on its own
        due.set(l.dueSlot, Moments.NONE);
        recalls.set(l.recallSlot, Moments.NONE);
        if (!locks.containsKey(l.name)) {
          waiting.remove(l.name);
        }
        continue;
      }
      long at = l.holder == null ? Moments.NONE : l.holder.expiry;
      for (SWait w : l.queue) {
        at = Math.min(at, w.attempt ? w.deadline : w.lastHeard + term);
      }
      due.set(l.dueSlot, at);
      recalls.set(l.recallSlot, !l.queue.isEmpty() && l.holder != null ? l.nextRecallAt : Moments.NONE);
      if (l.queue.isEmpty()) {
        waiting.remove(l.name);
      } else {
        waiting.add(l.name);
      }
    }
    changed.clear();
  }

  /** {@code l} changed: indexed again before the table is next asked. */
  private void changed(SLock l) {
    if (!l.changed) {
      l.changed = true;
      changed.add(l);
    }
  }

  // ================================================================ the messages

  @Override
  public void receive(String from, LeaseMessage message) {
    switch ((LeaseMessage.ToServer) message) {
      case LeaseMessage.Acquire a -> acquire(from, a);
      case LeaseMessage.WhoHolds q -> whoHolds(from, q);
      case LeaseMessage.ListHeld q ->
          core.answerListing(from, q, () -> held(q.prefixes()), LeaseMessage.Listing::new); // once it grants
      case LeaseMessage.Cancel c -> cancel(from, c);
      case LeaseMessage.Renew r -> renew(from, r);
      case LeaseMessage.RecallReply r -> recallReply(from, r);
      case LeaseMessage.Release r -> release(from, r);
      case LeaseMessage.Restate r -> restate(from, r);
    }
  }

  private void acquire(String from, LeaseMessage.Acquire a) {
    if (core.heard(from, a.inc())) {
      request(from, a.inc(), a.reqId(), a.name(), a.attempt(), a.tag(), a.echo());
    }
  }

  /**
   * Request {@code reqId} of incarnation {@code inc} of {@code from} for {@code name} (S-1): granted when the lock is
   * free and nobody waits; else it waits, and the holder is recalled. An attempt waits only for the answer to that
   * recall: a lock cached on another node is free to the application, so it is recalled rather than refused. The same
   * request again is a keep-alive.
   */
  private void request(String from, long inc, long reqId, String name, boolean attempt, String tag, long echo) {
    SLock l = locks.computeIfAbsent(name, SLock::new);
    if (again(l, from, inc, reqId, echo)) {
      return;
    }
    if (attempt && (!core.granting() || !l.queue.isEmpty())) {
      core.sendTo(from, new LeaseMessage.Busy(core.servingTerm(), reqId, name));
      forgetIfIdle(l);
      return;
    }
    l.queue.addLast(new SWait(from, inc, reqId, attempt, tag, core.now() + recallInterval, echo, core.now()));
    serve(l);
  }

  /**
   * A request the server has already: a keep-alive. A queued one answers this message when granted; a granted one
   * gets its grant again (lost on a link that broke). Returns whether it was known.
   */
  private boolean again(SLock l, String from, long inc, long reqId, long echo) {
    for (SWait w : l.queue) {
      if (w.is(from, inc, reqId)) {
        w.echo = Math.max(w.echo, echo);
        w.lastHeard = core.now();
        changed(l);
        return true;
      }
    }
    Holder h = l.holder;
    if (h != null && h.node.equals(from) && h.inc == inc && h.reqId == reqId) {
      core.sendTo(from, new LeaseMessage.Grant(core.servingTerm(), reqId, l.name, h.leaseId, h.token, h.echo));
      return true;
    }
    return false;
  }

  private void cancel(String from, LeaseMessage.Cancel c) {
    if (!core.heard(from, c.inc())) {
      return;
    }
    SLock l = locks.get(c.name());
    if (l != null && l.queue.removeIf(w -> w.is(from, c.inc(), c.reqId()))) {
      serve(l);
    }
  }

  /** S-3: a renewal of the current lease; a cached one is not renewed while someone waits. */
  private void renew(String from, LeaseMessage.Renew r) {
    if (!core.heard(from, r.inc()) || !core.deciding()) {
      return; // an answer would extend a trust this server may not stand for now; the client's window runs out
    }
    SLock l = locks.get(r.name());
    Holder h = l == null ? null : l.holder;
    if (h == null || !h.of(from, r.inc(), r.leaseId())) {
      core.sendTo(from, new LeaseMessage.Revoked(core.servingTerm(), r.name(), r.leaseId()));
      return;
    }
    if (!r.active() && !l.queue.isEmpty()) {
      core.sendTo(from, new LeaseMessage.RenewDenied(core.servingTerm(), r.name(), r.leaseId()));
      free(l);
      serve(l);
      return;
    }
    h.expiry = core.now() + term;
    changed(l);
    h.active = r.active();
    if (r.active()) {
      h.tag = r.tag();
    }
    core.sendTo(from, new LeaseMessage.Renewed(core.servingTerm(), r.name(), r.leaseId(), r.echo()));
  }

  /** S-4: accepted, the lease is back and the next waiter gets the lock; denied, its holder uses it. */
  private void recallReply(String from, LeaseMessage.RecallReply r) {
    if (!core.heard(from, r.inc())) {
      return;
    }
    SLock l = locks.get(r.name());
    if (l == null || l.holder == null || !l.holder.of(from, r.inc(), r.leaseId())) {
      return; // about another lease
    }
    if (r.accepted()) {
      free(l);
    } else {
      l.holder.active = true;
      // an attempt waits no longer: the lock is in use
      for (SWait w : List.copyOf(l.queue)) {
        if (w.attempt) {
          l.queue.remove(w);
          core.sendTo(w.node, new LeaseMessage.Busy(core.servingTerm(), w.reqId, l.name));
        }
      }
    }
    serve(l);
  }

  private void release(String from, LeaseMessage.Release r) {
    if (!core.heard(from, r.inc())) {
      return;
    }
    SLock l = locks.get(r.name());
    if (l != null && l.holder != null && l.holder.of(from, r.inc(), r.leaseId())) {
      free(l);
      serve(l);
    }
  }

  /** Who holds a lock in use, as far as this server knows: nobody while it does not decide. */
  private void whoHolds(String from, LeaseMessage.WhoHolds q) {
    if (!core.heard(from, q.inc())) {
      return; // the client answers that it does not know when no answer comes
    }
    SLock l = locks.get(q.name());
    Holder h = l == null ? null : l.holder;
    String tag = core.deciding() && h != null && h.active ? h.tag : "";
    core.sendTo(from, new LeaseMessage.Holds(core.servingTerm(), q.queryId(), q.name(), tag));
  }

  /** The leases in use under {@code prefixes}, by what this server decided, for a listing. */
  private List<Output.Listed> held(List<String> prefixes) {
    long now = core.now();
    List<Output.Listed> held = new ArrayList<>();
    for (SLock l : locks.values()) {
      Holder h = l.holder;
      if (h != null && h.active && now < h.expiry && Input.ListQuery.covers(prefixes, l.name)) {
        held.add(new Output.Listed(l.name, Claim.Mode.EXCLUSIVE, 1, Output.Listed.holder(h.node, h.tag),
            h.token + LeaseCore.MAX_LOCAL - 1, false, h.expiry - now));
      }
    }
    return held;
  }

  /**
   * A client node restates (S-7, S-8): the leases and requests of its earlier incarnations are gone; a lease of this
   * incarnation it no longer has was released on a link that broke; the leases it holds are taken back in the grace
   * of a new server, renewed if this server has them, and revoked otherwise; the requests it waits for are queued if
   * they are not.
   */
  private void restate(String from, LeaseMessage.Restate r) {
    if (!core.takeRestatement(from, r.inc(), r.term())) {
      return;
    }
    core.sendTo(from, new LeaseMessage.Restated(r.inc(), core.servingTerm()));
    Set<Long> held = new HashSet<>();
    for (LeaseMessage.Held h : r.held()) {
      held.add(h.leaseId());
    }
    Set<Long> wanted = new HashSet<>();
    for (LeaseMessage.Wanted w : r.wanted()) {
      wanted.add(w.reqId());
    }
    Set<SLock> changed = new LinkedHashSet<>();
    for (SLock l : locks.values()) {
      Holder h = l.holder;
      if (h != null && h.node.equals(from)
          && (h.inc != r.inc() || !held.contains(h.leaseId) && !wanted.contains(h.reqId))) {
        free(l); // another life of the node's, or given back on a link that broke (a grant on its way is kept)
        changed.add(l);
      }
      if (l.queue.removeIf(w -> w.node.equals(from) && (w.inc != r.inc() || !wanted.contains(w.reqId)))) {
        changed.add(l);
      }
    }
    for (LeaseMessage.Held h : r.held()) {
      SLock l = locks.computeIfAbsent(h.name(), SLock::new);
      changed.add(l);
      if (l.holder != null && l.holder.of(from, r.inc(), h.leaseId())) {
        l.holder.active = h.active();
        l.holder.tag = h.tag();
      } else if (l.holder == null && core.inGrace()) {
        // a lease of the server before, with its token: a new token would be below none granted since
        l.holder = new Holder(from, r.inc(), h.leaseId(), h.token(), -1, r.echo(), h.active(), h.tag(),
            core.now() + term);
      } else {
        core.sendTo(from, new LeaseMessage.Revoked(core.servingTerm(), h.name(), h.leaseId()));
        continue;
      }
      if (core.deciding()) {
        l.holder.expiry = core.now() + term;
        core.sendTo(from, new LeaseMessage.Renewed(core.servingTerm(), h.name(), h.leaseId(), r.echo()));
      }
    }
    for (LeaseMessage.Wanted w : r.wanted()) {
      request(from, r.inc(), w.reqId(), w.name(), w.attempt(), w.tag(), r.echo());
    }
    core.restatementApplied();
    for (SLock l : changed) {
      serve(l);
    }
  }

  // ================================================================ the table

  /**
   * Gives the lock to the first waiter when it is free; recalls it from its holder, again every
   * {@code recallInterval}, while someone waits.
   */
  private void serve(SLock l) {
    changed(l);
    if (l.holder == null && !l.queue.isEmpty() && core.granting()) {
      if (!core.tokensLeft()) {
        return; // the term's tokens are used up: a new term (a new election) is needed
      }
      // the first waiter whose node this server can reach: a waiter on a node that is down keeps its place, and
      // is not granted a lease it could not hear of, which would keep the lock from every other waiter for a term
      SWait w = l.queue.stream().filter(x -> core.reaches(x.node)).findFirst().orElse(null);
      if (w == null) {
        return;
      }
      l.queue.remove(w);
      long token = core.nextToken();
      l.holder = new Holder(w.node, w.inc, token, token, w.reqId, w.echo, true, w.tag, core.now() + term);
      l.nextRecallAt = Long.MIN_VALUE;
      core.sendTo(w.node, new LeaseMessage.Grant(core.servingTerm(), w.reqId, l.name, token, token, w.echo));
    }
    if (l.holder != null && !l.queue.isEmpty() && core.deciding() && core.now() >= l.nextRecallAt) {
      l.nextRecallAt = core.now() + recallInterval;
      core.sendTo(l.holder.node, new LeaseMessage.Recall(core.servingTerm(), l.name, l.holder.leaseId));
      if (core.mutationGrantOnRecall && !core.inGrace()) {
        free(l);
        serve(l);
        return;
      }
    }
    forgetIfIdle(l);
  }

  private void free(SLock l) {
    changed(l);
    l.holder = null;
    l.nextRecallAt = Long.MIN_VALUE;
  }

  private void forgetIfIdle(SLock l) {
    if (l.holder == null && l.queue.isEmpty()) {
      locks.remove(l.name, l);
      changed(l);
    }
  }
}
