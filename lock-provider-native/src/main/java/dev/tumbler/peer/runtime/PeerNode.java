package dev.tumbler.peer.runtime;

import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.client.ClientCore;
import dev.tumbler.peer.composite.CompositeCore;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Input;
import dev.tumbler.peer.core.MessageCodec;
import dev.tumbler.peer.core.Observation;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.core.PeerMessage;
import dev.tumbler.peer.core.ProtocolCore;
import dev.tumbler.peer.core.TxOptions;
import dev.tumbler.peer.node.NodeStats;
import dev.tumbler.peer.transport.Transport;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node runtime: drives one {@link ProtocolCore} with a {@link Transport}, a real monotonic clock and
 * real timers. Every input — a payload or link change from the transport, a timer, a client call — is
 * stepped on the thread that brings it (the transport's reader, the timer thread, the client), under one
 * step lock, so the core is never called concurrently and sees inputs in one order (the order they take
 * the lock; a peer's payloads in the order the transport delivers them, since it delivers one at a time
 * per peer). The core's outputs are carried out under that lock too (sends go to the transport, which never
 * blocks; timers go to a scheduler whose thread steps them under the same lock), except the completion of
 * clients' futures: those run once the lock is released, so that code chained to a future never runs with
 * the core held. No hand-off to another thread lies between an input and the sends it causes: that is what
 * keeps an acquire close to one network round trip.
 *
 * <p>Payloads are decoded on the transport's thread, so bytes that are not a valid message throw
 * {@link dev.tumbler.peer.core.CodecException} back into the transport (the TCP transport then closes that
 * connection) instead of reaching the core.
 *
 * <p>Thread safe. {@link #close()} first waits for the step in progress (so releases reach the
 * transport), then closes the transport and fails every pending request's (and holder query's) future with
 * {@link NodeClosedException}.
 *
 * @param <M> the algorithm's message type
 */
public final class PeerNode<M extends PeerMessage> implements NodeStats, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PeerNode.class);

  /**
   * How long a grant on this node waits, at most, for the lost listeners started before it to return: a
   * holder's {@code onLost} runs before another client of the node gets the lock, and a listener that blocks
   * holds back no grant for longer than this.
   */
  static final long LOST_LISTENER_GRACE_MILLIS = 1_000;

  /**
   * How a request ended.
   *
   * @param requestId the request
   * @param name the claim's name
   * @param granted whether it was granted
   * @param fencingToken the grant's token, when granted
   * @param permits the permits granted, when granted
   * @param sentAt when granted with a term: the node-clock time the client message the grant answers was
   *     sent ({@link Output.Granted#sentAt()}); {@link Long#MIN_VALUE} otherwise
   * @param validUntil when granted: until when the grant may be trusted without a renewal (node clock)
   * @param failure why not, when not granted
   * @param missingPeers peers that were unreachable when it ended without a grant
   * @param detail more about the failure; empty if none
   */
  public record Outcome(long requestId, String name, boolean granted, long fencingToken, int permits, long sentAt,
      long validUntil, Output.Failure failure, Set<String> missingPeers, String detail) {

    static Outcome granted(Output.Granted<?> g) {
      return new Outcome(g.requestId(), g.name(), true, g.fencingToken(), g.permits(), g.sentAt(), g.validUntil(),
          null, Set.of(), "");
    }

    static Outcome failed(long requestId, String name, Output.Failure failure, Set<String> missingPeers,
        String detail) {
      return new Outcome(requestId, name, false, 0, 0, Long.MIN_VALUE, Long.MIN_VALUE, failure, missingPeers,
          detail);
    }
  }

  /**
   * How a renewal ended: renewed (with its window) or lost (with the reason).
   *
   * @param renewed whether the grant was renewed
   * @param sentAt when renewed: the node-clock time the renewal the answer echoes was sent
   * @param validUntil when renewed: until when the grant may now be trusted (node clock)
   * @param lost when not renewed: why the grant is lost
   * @param detail when not renewed: more about why; empty if none
   */
  public record Renewal(boolean renewed, long sentAt, long validUntil, Output.LostReason lost, String detail) {}

  /** Told when a grant is lost; run on a thread of its own, never on a thread stepping the core. */
  @FunctionalInterface
  public interface LostListener {
    /** The grant is lost for {@code reason}. */
    void lost(Output.LostReason reason, String detail);
  }

  /** Grants of one request handed over and not yet listened for, and the losses the core said of them meanwhile. */
  private static final class Unbound {
    int grants = 1;
    /** At most {@link #grants}: each the loss of the next grant whose lease listens. */
    final ArrayDeque<Output.Lost<?>> losses = new ArrayDeque<>(2);
  }

  /** A request in flight: its id (for {@link #release}, {@link #cancel}) and how it ends. */
  public record Pending(long requestId, CompletableFuture<Outcome> outcome) {}

  /**
   * What a transaction hears from the node ({@link #begin}). Called with no lock of the node held, on the thread
   * that stepped the core or, after a loss in the same step, on the thread of the last lost listener to return; in
   * the order the core said it. An implementation records what it hears and returns: it must not block.
   */
  public interface TransactionListener {
    /**
     * A claim of the transaction is held: {@code outcome} says granted, with its token and window. A claim that
     * was surrendered to break a deadlock is granted again, with a larger token, through this call too.
     */
    void granted(Outcome outcome);

    /** A claim of the transaction will not be granted: {@code outcome} says why. */
    void failed(Outcome outcome);

    /**
     * The transaction is over without its holder ending it: aborted to break a deadlock
     * ({@link Output.Failure#DEADLOCK}), its claims' nodes unreachable ({@link Output.Failure#UNAVAILABLE}),
     * or its session or node closed ({@link Output.Failure#CANCELLED}). Nothing of it is held any more.
     */
    void aborted(Output.Failure failure, Set<String> missingPeers, String detail);
  }

  private record Tx(String session, TransactionListener listener) {}

  private record TxClaim(long txId, TransactionListener listener) {}

  /** The node was closed before the request ended. */
  public static final class NodeClosedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NodeClosedException(String message) {
      super(message);
    }
  }

  /** How long {@link #leave()} waits, at most, for what it sent thin clients to be written. */
  private static final long LEAVE_FLUSH_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  private final ProtocolCore<M> core;
  private final MessageCodec<M> codec;
  private final Transport transport;
  private final Ticker ticker;
  /** Runs timers only; a timer that fires steps the core under {@link #stepLock} like every input. */
  private final ScheduledThreadPoolExecutor timerExecutor;
  /** Held while the core steps and its outputs are carried out; reentrant for the follow-ups of a step. */
  private final ReentrantLock stepLock = new ReentrantLock();
  private final Map<Long, Waiting> waiting = new ConcurrentHashMap<>();
  private final Map<Long, LostListener> lostListeners = new ConcurrentHashMap<>();
  /**
   * Grants handed over whose lease does not listen for its loss yet ({@link #onLost}), by request id. The lease is
   * made after the hand-over (by the caller that waited, or by a transaction told in the core's order), and the core
   * may say the grant is lost meanwhile (a transaction's claim surrendered to break a deadlock right after its grant):
   * that loss waits here for the lease instead of being dropped, which left the lease valid while the lock was
   * another's, and lost it later as REVOKED by a refused renewal. A value is {@link #ONE_UNBOUND} or, when a loss
   * waits or a claim was granted again before its lease listened, an {@link Unbound}. Guarded by itself.
   */
  private final Map<Long, Object> unbound = new HashMap<>();
  private static final Object ONE_UNBOUND = new Object();
  private final Map<Long, List<CompletableFuture<Renewal>>> renewals = new ConcurrentHashMap<>();
  private final Map<Long, CompletableFuture<Optional<String>>> holderQueries = new ConcurrentHashMap<>();
  private final Map<Long, CompletableFuture<Integer>> permitQueries = new ConcurrentHashMap<>();
  private final Map<Long, CompletableFuture<Optional<List<Output.Listed>>>> listQueries = new ConcurrentHashMap<>();
  /** The open transactions begun on this node, by id. */
  private final Map<Long, Tx> transactions = new ConcurrentHashMap<>();
  /** The claims of open transactions, by request id: told each grant (a surrendered claim is granted again). */
  private final Map<Long, TxClaim> txClaims = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> sentByType = new ConcurrentHashMap<>();
  // link callbacks made by the transport and not yet seen by the core, per peer
  private final Map<String, AtomicInteger> linkEventsQueued = new ConcurrentHashMap<>();
  private final Map<Long, ScheduledFuture<?>> timers = new HashMap<>(); // under stepLock
  private final AtomicLong nextRequestId = new AtomicLong(1);
  private final AtomicLong nextQueryId = new AtomicLong(1);
  private final AtomicLong nextTxId = new AtomicLong(1);
  private final AtomicLong sent = new AtomicLong();
  private final AtomicLong received = new AtomicLong();
  private final AtomicLong grants = new AtomicLong();
  private final AtomicLong lost = new AtomicLong();
  private final AtomicBoolean started = new AtomicBoolean();
  private final AtomicBoolean closed = new AtomicBoolean();
  private long lastNow = Long.MIN_VALUE; // under stepLock
  // completions of clients' futures the current step made, run once stepLock is released (under stepLock)
  private List<Runnable> completions = new ArrayList<>();
  /**
   * What the current step tells transactions (under stepLock), in the order the core said it: told at the end of the
   * step, after every lost listener the step started, whatever the order of its outputs (an abort's failed claim may
   * come before the held claim it loses: the core lists them in the order they were asked for).
   */
  private List<Runnable> txTells = new ArrayList<>();
  // the lost listeners started so far and not yet returned: a grant is handed over only after them (under
  // stepLock), so a holder on this node is told of its loss before a client on this node gets the lock
  private CompletableFuture<Void> lostDelivered = CompletableFuture.completedFuture(null);
  private volatile Observation.View view;
  /** The highest term of every view this node's elections made (0 before the first): see {@link #highestTerm()}. */
  private volatile long highestTerm;

  /**
   * A client waiting for its request. {@code decided} settles the race between the grant reaching the
   * client and the client giving up ({@link #cancel}): whichever sets it first wins, so that a grant is
   * either the client's (its outcome says granted; the core keeps it) or dropped (its outcome says
   * cancelled; the core releases it on the {@code Cancel} that follows), never both.
   */
  private record Waiting(String session, CompletableFuture<Outcome> future, AtomicBoolean decided) {
    Waiting(String session, CompletableFuture<Outcome> future) {
      this(session, future, new AtomicBoolean());
    }
  }

  /**
   * @param core the algorithm, with empty state
   * @param codec its codec
   * @param transport the links to the peers, not yet started; closed with this node
   * @param ticker the monotonic clock (the core's {@code now})
   */
  public PeerNode(ProtocolCore<M> core, MessageCodec<M> codec, Transport transport, Ticker ticker) {
    this.core = Objects.requireNonNull(core, "core");
    this.codec = Objects.requireNonNull(codec, "codec");
    this.transport = Objects.requireNonNull(transport, "transport");
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    if (!core.self().equals(transport.self())) {
      throw new IllegalArgumentException("core is " + core.self() + " but transport is " + transport.self());
    }
    this.timerExecutor = new ScheduledThreadPoolExecutor(1, Thread.ofPlatform().daemon()
        .name("tumbler-node-timers-" + core.self()).factory());
    this.timerExecutor.setRemoveOnCancelPolicy(true);
  }

  /** Connects to the peers and starts handling inputs. Called once. */
  public void start() {
    if (!started.compareAndSet(false, true)) {
      throw new IllegalStateException("node " + core.self() + " already started");
    }
    submit(new Input.Start<>()); // stepped before the transport can report a link or deliver a message
    transport.start(new Transport.Receiver() {
      @Override
      public void deliver(String peer, byte[] payload) {
        M m = codec.decode(payload); // throws CodecException into the transport for bad bytes
        received.incrementAndGet();
        submit(new Input.Message<>(peer, m));
      }

      @Override
      public void peerUp(String peer) {
        linkEvent(peer).incrementAndGet();
        submit(new Input.PeerUp<>(peer));
      }

      @Override
      public void peerDown(String peer) {
        linkEvent(peer).incrementAndGet();
        submit(new Input.PeerDown<>(peer));
      }
    });
  }

  /**
   * Asks for {@code claim} for {@code session}. The outcome completes with the grant or the failure, or
   * exceptionally with {@link NodeClosedException}.
   *
   * @param attempt a single attempt: fails with {@code CONTENDED} rather than waiting in the queue
   */
  public Pending acquire(String session, Claim claim, boolean attempt) {
    long id = nextRequestId.getAndIncrement();
    CompletableFuture<Outcome> f = new CompletableFuture<>();
    waiting.put(id, new Waiting(session, f));
    if (closed.get()) {
      waiting.remove(id);
      f.completeExceptionally(closedException());
      return new Pending(id, f);
    }
    submit(new Input.Acquire<>(id, session, claim, attempt));
    return new Pending(id, f);
  }

  /**
   * Begins a transaction for {@code session} ({@link Input.Begin}): its claims ({@link #acquire(long, Claim)})
   * hold together until {@link #end}. Only an algorithm that serves transactions takes it; another aborts it at
   * once ({@link TransactionListener#aborted}).
   *
   * @return the transaction's id
   */
  public long begin(String session, TxOptions options, TransactionListener listener) {
    Objects.requireNonNull(session, "session");
    Objects.requireNonNull(options, "options");
    Objects.requireNonNull(listener, "listener");
    long id = nextTxId.getAndIncrement();
    transactions.put(id, new Tx(session, listener));
    if (closed.get()) {
      abortLocally(id, "native node " + core.self() + " is closed");
      return id;
    }
    submit(new Input.Begin<>(id, session, options));
    return id;
  }

  /** A new request id, for {@link #acquire(long, long, Claim)}: the caller can file it before the grant can come. */
  public long newRequestId() {
    return nextRequestId.getAndIncrement();
  }

  /**
   * Asks for {@code claim} as request {@code requestId} ({@link #newRequestId()}) in the transaction {@code txId};
   * what comes of it goes to the transaction's listener, perhaps on this thread before this call returns (a claim on
   * this node alone is granted within the step). Lost grants go to {@link #onLost} listeners, as for any grant. A
   * transaction's claims are given back by {@link #end} only.
   *
   * @throws IllegalStateException if the transaction is not open on this node
   */
  public void acquire(long requestId, long txId, Claim claim) {
    Objects.requireNonNull(claim, "claim");
    Tx tx = transactions.get(txId);
    if (tx == null) {
      throw new IllegalStateException("transaction " + txId + " is not open on native node " + core.self());
    }
    txClaims.put(requestId, new TxClaim(txId, tx.listener()));
    submit(new Input.Acquire<>(requestId, tx.session(), claim, false, txId));
  }

  /** Ends the transaction {@code txId}: every claim of it is given back, held or not. Idempotent; asynchronous. */
  public void end(long txId) {
    if (forgetTransaction(txId) != null) {
      submit(new Input.End<>(txId));
    }
  }

  private Tx forgetTransaction(long txId) {
    Tx tx = transactions.remove(txId);
    if (tx != null) {
      txClaims.entrySet().removeIf(e -> {
        if (e.getValue().txId() == txId) {
          forgetLoss(e.getKey());
          return true;
        }
        return false;
      });
    }
    return tx;
  }

  /** The transaction {@code txId} is over on this side (its session or the node closed): its listener hears it. */
  private void abortLocally(long txId, String detail) {
    Tx tx = forgetTransaction(txId);
    if (tx != null) {
      tx.listener().aborted(Output.Failure.CANCELLED, Set.of(), detail);
    }
  }

  /**
   * Tells {@code listener} when the grant of {@code requestId} is lost (its term ran out, the deciding
   * node revoked it). At most one listener per grant; {@link #release} forgets it.
   */
  public void onLost(long requestId, LostListener listener) {
    Objects.requireNonNull(listener, "listener");
    Output.Lost<?> early = null;
    synchronized (unbound) {
      Object v = unbound.remove(requestId);
      if (v instanceof Unbound u) {
        early = u.losses.poll();
        if (--u.grants > 0) {
          unbound.put(requestId, u); // granted again since: the next lease to listen is that grant's
        }
      }
      if (early == null) {
        lostListeners.put(requestId, listener);
      }
    }
    if (early != null) {
      tellLost(listener, early, " before its lease listened");
    }
  }

  /** A grant of {@code requestId} that can be lost is handed over: its lease listens once it is made. */
  private void handedOver(long requestId) {
    synchronized (unbound) {
      Object v = unbound.putIfAbsent(requestId, ONE_UNBOUND);
      if (v != null) {
        unbound(requestId, v).grants++;
      }
    }
  }

  /** The entry of {@code requestId} as an {@link Unbound} (under the lock of {@link #unbound}). */
  private Unbound unbound(long requestId, Object v) {
    if (v instanceof Unbound u) {
      return u;
    }
    Unbound u = new Unbound();
    unbound.put(requestId, u);
    return u;
  }

  /**
   * The listener of the grant {@code l} says is lost, forgotten; null if none listens, and then, when a grant of the
   * request was handed over and its lease does not listen yet, the loss is kept for that lease ({@link #onLost}).
   */
  private LostListener listenerOf(Output.Lost<M> l) {
    synchronized (unbound) {
      LostListener listener = lostListeners.remove(l.requestId());
      if (listener == null) {
        Object v = unbound.get(l.requestId());
        if (v != null) {
          Unbound u = unbound(l.requestId(), v);
          if (u.losses.size() < u.grants) {
            u.losses.add(l);
          }
        }
      }
      return listener;
    }
  }

  /** Forgets who listens for the loss of {@code requestId}'s grant, and a loss kept for it. */
  private void forgetLoss(long requestId) {
    synchronized (unbound) {
      lostListeners.remove(requestId);
      unbound.remove(requestId);
    }
  }

  /**
   * Tells {@code listener} of the loss {@code l}: listeners run user code, so never on a stepping thread, but on a
   * thread of their own. Completes when the listener has returned.
   */
  private CompletableFuture<Void> tellLost(LostListener listener, Output.Lost<?> l, String when) {
    lost.incrementAndGet();
    LOG.debug("native node {}: grant {} on '{}' lost{}: {} {}", core.self(), l.requestId(), l.name(), when,
        l.reason(), l.detail());
    CompletableFuture<Void> returned = new CompletableFuture<>();
    Thread.ofVirtual().name("tumbler-lost-" + l.requestId()).start(() -> {
      try {
        listener.lost(l.reason(), l.detail());
      } finally {
        returned.complete(null);
      }
    });
    return returned;
  }

  /**
   * Asks the core to renew the grant of {@code requestId}. The future completes when the core answers:
   * renewed, or lost (the lost listener is told as well); exceptionally with {@link NodeClosedException}.
   */
  public CompletableFuture<Renewal> renew(long requestId) {
    CompletableFuture<Renewal> f = new CompletableFuture<>();
    renewals.compute(requestId, (k, list) -> {
      List<CompletableFuture<Renewal>> l = list == null ? new ArrayList<>() : list;
      l.add(f);
      return l;
    });
    if (closed.get()) {
      failRenewals(requestId);
      return f;
    }
    submit(new Input.Renew<>(requestId));
    return f;
  }

  /**
   * Asks the core who holds {@code name} ({@link Input.HolderQuery}). The future completes with the holder's
   * {@link Claim#tag()}, or empty when no claim holds the name, its holder has no tag or the core cannot tell;
   * exceptionally with {@link NodeClosedException}. It may never complete (the answer lost with a link): the
   * caller bounds its wait, and cancelling the future forgets the query.
   */
  public CompletableFuture<Optional<String>> holder(String name) {
    Objects.requireNonNull(name, "name");
    return query(holderQueries, id -> new Input.HolderQuery<>(id, name));
  }

  /**
   * Asks the core how many permits of semaphore {@code name} are free for a handle of {@code limit} permits
   * ({@link Input.PermitsQuery}): by the semaphore server's answer when it can ask it, else by the last it heard. The
   * future completes exceptionally with {@link NodeClosedException}; it may never complete (the answer lost with a
   * link): the caller bounds its wait, and cancelling the future forgets the query.
   */
  public CompletableFuture<Integer> permits(String name, int limit) {
    Objects.requireNonNull(name, "name");
    return query(permitQueries, id -> new Input.PermitsQuery<>(id, name, limit));
  }

  /**
   * Asks the core what is held under the names that start with one of {@code prefixes} ({@link Input.ListQuery}). The
   * future completes with the claims in use, or empty when the core cannot say; exceptionally with
   * {@link NodeClosedException}. It may never complete (the answer lost with a link): the caller bounds its wait, and
   * cancelling the future forgets the query.
   */
  public CompletableFuture<Optional<List<Output.Listed>>> listing(List<String> prefixes) {
    return query(listQueries, id -> new Input.ListQuery<>(id, prefixes));
  }

  /**
   * A query to the core under a new id, made by {@code input}: its future waits in {@code waiting} until the answer
   * completes it, it is cancelled, or the node closes.
   */
  private <T> CompletableFuture<T> query(Map<Long, CompletableFuture<T>> waiting, LongFunction<Input<M>> input) {
    long id = nextQueryId.getAndIncrement();
    CompletableFuture<T> f = new CompletableFuture<>();
    waiting.put(id, f);
    f.whenComplete((v, e) -> waiting.remove(id, f));
    if (closed.get()) {
      f.completeExceptionally(closedException());
      return f;
    }
    submit(input.apply(id));
    return f;
  }

  /** Gives back the grant of {@code requestId}. Idempotent; asynchronous. */
  public void release(long requestId) {
    forgetLoss(requestId);
    submit(new Input.Release<>(requestId));
  }

  /**
   * Stops waiting for {@code requestId}: its outcome then completes with a {@code CANCELLED} failure,
   * unless the grant won the race: when the outcome already says granted, the grant is the caller's, it
   * stays held and the caller must release it. Asynchronous.
   */
  public void cancel(long requestId) {
    Waiting w = waiting.get(requestId);
    if (w == null || !w.decided().compareAndSet(false, true)) {
      // decided already: granted (the grant is the client's, only its release ends it) or ended
      return;
    }
    submit(new Input.Cancel<>(requestId));
  }

  /** Releases every grant of {@code session} and drops its pending requests (their futures fail). */
  public void closeSession(String session) {
    submit(new Input.CloseSession<>(session));
    for (Map.Entry<Long, Tx> e : transactions.entrySet()) {
      if (e.getValue().session().equals(session)) {
        abortLocally(e.getKey(), "session " + session + " closed");
      }
    }
    for (Map.Entry<Long, Waiting> e : waiting.entrySet()) {
      if (e.getValue().session().equals(session) && waiting.remove(e.getKey(), e.getValue())) {
        e.getValue().future().completeExceptionally(new NodeClosedException("session " + session + " closed"));
      }
    }
  }

  /**
   * The node is about to stop on purpose: its cores tell whom it concerns now ({@link Input.Leave}: a member's thin
   * clients hear {@code Gone} and fail over at once). Call {@link #close()} after it; the messages it sends are
   * handed to the transport before this returns.
   */
  public void leave() {
    submit(new Input.Leave<>());
    try {
      transport.flush(LEAVE_FLUSH_NANOS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The transport, for tests and diagnostics. */
  public Transport transport() {
    return transport;
  }

  /** Whether {@link #close()} was called. */
  public boolean isClosed() {
    return closed.get();
  }

  @Override
  public void close() {
    if (closed.get()) {
      return;
    }
    // Let the step in progress (a release, a session close) finish, so that its messages reach the
    // transport before it closes: a graceful stop should not leave peers with stale queue entries. Inputs
    // already handed to the node were stepped when they were handed over; none is left queued.
    boolean locked = false;
    try {
      locked = stepLock.tryLock(2, TimeUnit.SECONDS);
      if (!locked) {
        LOG.debug("native node {}: the step in progress did not end within 2s of close", core.self());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    boolean first;
    try {
      first = closed.compareAndSet(false, true); // under the lock: no step starts after it
    } finally {
      if (locked) {
        stepLock.unlock();
      }
    }
    if (!first) {
      return;
    }
    transport.close();
    timerExecutor.shutdownNow();
    try {
      timerExecutor.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (Long id : waiting.keySet()) {
      Waiting w = waiting.remove(id);
      if (w != null) {
        w.future().completeExceptionally(closedException());
      }
    }
    for (Long id : renewals.keySet()) {
      failRenewals(id);
    }
    for (CompletableFuture<Optional<String>> f : List.copyOf(holderQueries.values())) {
      f.completeExceptionally(closedException());
    }
    for (CompletableFuture<Integer> f : List.copyOf(permitQueries.values())) {
      f.completeExceptionally(closedException());
    }
    for (CompletableFuture<Optional<List<Output.Listed>>> f : List.copyOf(listQueries.values())) {
      f.completeExceptionally(closedException());
    }
    for (Long id : List.copyOf(transactions.keySet())) {
      abortLocally(id, closedException().getMessage());
    }
  }

  private void failRenewals(long requestId) {
    List<CompletableFuture<Renewal>> l = renewals.remove(requestId);
    if (l != null) {
      for (CompletableFuture<Renewal> f : l) {
        f.completeExceptionally(closedException());
      }
    }
  }

  /** Under the step lock: the renewals of {@code requestId} complete with {@code r} once it is released. */
  private void completeRenewals(long requestId, Renewal r) {
    List<CompletableFuture<Renewal>> l = renewals.remove(requestId);
    if (l != null) {
      for (CompletableFuture<Renewal> f : l) {
        completeLater(f, r);
      }
    }
  }

  private NodeClosedException closedException() {
    return new NodeClosedException("native node " + core.self() + " is closed");
  }

  // ---- NodeStats

  @Override
  public String nodeId() {
    return core.self();
  }

  @Override
  public String algorithm() {
    return core.algorithm();
  }

  @Override
  public long messagesSent() {
    return sent.get();
  }

  @Override
  public long messagesReceived() {
    return received.get();
  }

  @Override
  public long grants() {
    return grants.get();
  }

  @Override
  public long lost() {
    return lost.get();
  }

  @Override
  public Optional<Observation.View> view() {
    return Optional.ofNullable(view);
  }

  /**
   * The highest term any view of this node had so far, over all its elections (the lock algorithm's, the semaphore
   * server's); 0 if it has none: a node started after it in the same process starts above it
   * ({@link CoreContext#termFloor()}).
   */
  public long highestTerm() {
    return highestTerm;
  }

  @Override
  public Map<String, Long> messagesSentByType() {
    Map<String, Long> m = new TreeMap<>();
    sentByType.forEach((k, v) -> m.put(k, v.sum()));
    return Collections.unmodifiableMap(m);
  }

  @Override
  public int heldLocks() {
    return lostListeners.size();
  }

  @Override
  public int clientSessions() {
    return inspect(c -> c instanceof CompositeCore composite && composite.gateway() != null
        ? composite.gateway().sessions() : 0);
  }

  @Override
  public Optional<String> home() {
    return inspect(c -> c instanceof ClientCore client ? Optional.ofNullable(client.home()) : Optional.empty());
  }

  /**
   * What {@code look} reads off the core, under the step lock, so that it sees the state between two steps; for
   * statistics and tests. {@code look} must not change the core.
   */
  public <T> T inspect(java.util.function.Function<? super ProtocolCore<M>, T> look) {
    stepLock.lock();
    try {
      return look.apply(core);
    } finally {
      stepLock.unlock();
    }
  }

  // ---- stepping

  /** Steps {@code input} on this thread, unless the node is closed. */
  private void submit(Input<M> input) {
    if (closed.get()) {
      return;
    }
    locked(() -> step(input));
  }

  /**
   * Runs {@code stepping} under the step lock, then, with the lock released, the completions of clients'
   * futures it made, in order, on this thread.
   */
  private void locked(Runnable stepping) {
    List<Runnable> done;
    stepLock.lock();
    try {
      stepping.run();
    } finally {
      done = List.of();
      if (stepLock.getHoldCount() == 1 && !completions.isEmpty()) {
        done = completions;
        completions = new ArrayList<>();
      }
      stepLock.unlock();
    }
    for (Runnable r : done) {
      try {
        r.run();
      } catch (RuntimeException e) {
        LOG.warn("native node {}: completing a client's future failed", core.self(), e);
      }
    }
  }

  /**
   * Runs {@code tell} once the step lock is released and every lost listener started so far has returned (or had
   * {@link #LOST_LISTENER_GRACE_MILLIS}): what a step tells after a loss is heard after it.
   */
  private void afterLostListeners(Runnable tell) {
    CompletableFuture<Void> after = lostDelivered;
    completions.add(after.isDone() ? tell : () -> after.thenRun(tell));
  }

  /** Completes {@code future} with {@code value} once the step lock is released. */
  private <T> void completeLater(CompletableFuture<T> future, T value) {
    completions.add(() -> future.complete(value));
  }

  private AtomicInteger linkEvent(String peer) {
    return linkEventsQueued.computeIfAbsent(peer, k -> new AtomicInteger());
  }

  /** One input to the core, and its outputs carried out. Under {@link #stepLock}. */
  private void step(Input<M> input) {
    if (closed.get()) {
      return;
    }
    switch (input) {
      case Input.PeerUp<M> u -> linkEvent(u.peer()).decrementAndGet();
      case Input.PeerDown<M> d -> linkEvent(d.peer()).decrementAndGet();
      default -> { }
    }
    long now = Math.max(lastNow, ticker.read());
    lastNow = now;
    List<Output<M>> outs;
    try {
      outs = core.step(now, input);
    } catch (RuntimeException e) {
      LOG.error("native node {}: the {} core failed on {}", core.self(), core.algorithm(), input, e);
      return;
    }
    // inputs the outputs call for (giving back a grant nobody waits for), run once every output of this
    // step is carried out, so that the messages leave in the order the core produced them
    List<Input<M>> followUps = List.of();
    // the messages of this step to one peer leave together, in the order the core produced them, once the other
    // outputs are carried out: one write and one wake-up of the peer instead of one per message (a step's sends
    // alternate between peers when it answers several). Only the order on each link counts: links are
    // independent, and no other output touches them
    Map<String, List<Output<M>>> sends = null;
    for (int i = 0; i < outs.size(); i++) {
      Output<M> o = outs.get(i);
      switch (o) {
        case Output.Send<M> s -> {
          if (sends == null) {
            sends = new LinkedHashMap<>();
          }
          sends.computeIfAbsent(s.to(), k -> new ArrayList<>(4)).add(s);
        }
        case Output.SetTimer<M> t -> {
          ScheduledFuture<?> old = timers.remove(t.timerId());
          if (old != null) {
            old.cancel(false);
          }
          long delay = Math.max(0, t.at() - ticker.read());
          long id = t.timerId();
          ScheduledFuture<?>[] self = new ScheduledFuture<?>[1];
          // the task needs the step lock, held here until self[0] and the map entry are set
          self[0] = timerExecutor.schedule(() -> locked(() -> {
            if (timers.get(id) == self[0]) {
              timers.remove(id);
              step(new Input.TimerFired<>(id));
            }
          }), delay, TimeUnit.NANOSECONDS);
          timers.put(id, self[0]);
        }
        case Output.CancelTimer<M> t -> {
          ScheduledFuture<?> old = timers.remove(t.timerId());
          if (old != null) {
            old.cancel(false);
          }
        }
        case Output.Granted<M> g when txClaims.containsKey(g.requestId()) -> {
          grants.incrementAndGet();
          TxClaim c = txClaims.get(g.requestId());
          Outcome granted = Outcome.granted(g);
          if (g.validUntil() != Long.MAX_VALUE) {
            handedOver(g.requestId());
          }
          // after the lost listeners started before it, like any grant of this node
          txTells.add(() -> c.listener().granted(granted));
        }
        case Output.Granted<M> g -> {
          grants.incrementAndGet();
          Waiting w = waiting.remove(g.requestId());
          if (w != null && !w.decided().compareAndSet(false, true)) {
            // the client gave up first: its Cancel, stepped after this step, releases the grant in the core
            completeLater(w.future(), Outcome.failed(g.requestId(), g.name(), Output.Failure.CANCELLED, Set.of(),
                ""));
          } else if (w == null) {
            // nobody waits for it any more (session closed under it): give it straight back
            followUps = followUps.isEmpty() ? new ArrayList<>() : followUps;
            followUps.add(new Input.Release<>(g.requestId()));
          } else {
            Outcome granted = Outcome.granted(g);
            long id = g.requestId();
            if (g.validUntil() != Long.MAX_VALUE) {
              handedOver(id);
            }
            Runnable handOver = () -> {
              if (!w.future().complete(granted)) {
                // the future was completed by someone else meanwhile (its holder cancelled it): nobody
                // takes this grant, so it is given back
                forgetLoss(id);
                submit(new Input.Release<>(id));
              }
            };
            afterLostListeners(handOver);
          }
        }
        case Output.Failed<M> f when txClaims.containsKey(f.requestId()) -> {
          TxClaim c = txClaims.remove(f.requestId());
          Outcome failed = Outcome.failed(f.requestId(), f.name(), f.failure(), f.missingPeers(), f.detail());
          // after the lost listeners of the step: a transaction told of a failure ends (its holder closes it,
          // releasing its held claims, whose loss is then no longer reported) before a lost listener that had not run
          // yet could be told (an abort loses the held claims and fails the waiting ones in one step)
          txTells.add(() -> c.listener().failed(failed));
        }
        case Output.Failed<M> f -> {
          Waiting w = waiting.remove(f.requestId());
          if (w != null) {
            completeLater(w.future(), Outcome.failed(f.requestId(), f.name(), f.failure(), f.missingPeers(),
                f.detail()));
          }
        }
        case Output.Fact<M> f -> {
          if (f.observation() instanceof Observation.View v) {
            view = v;
            highestTerm = Math.max(highestTerm, v.term());
          }
          LOG.debug("native node {}: {}", core.self(), f.observation());
        }
        case Output.Holder<M> h -> {
          CompletableFuture<Optional<String>> f = holderQueries.get(h.queryId());
          if (f != null) {
            completeLater(f, h.tag().isEmpty() ? Optional.empty() : Optional.of(h.tag()));
          }
        }
        case Output.Permits<M> p -> {
          CompletableFuture<Integer> f = permitQueries.get(p.queryId());
          if (f != null) {
            completeLater(f, p.available());
          }
        }
        case Output.Listing<M> l -> {
          CompletableFuture<Optional<List<Output.Listed>>> f = listQueries.get(l.queryId());
          if (f != null) {
            completeLater(f, l.known() ? Optional.of(l.held()) : Optional.empty());
          }
        }
        case Output.TxAborted<M> a -> {
          LOG.debug("native node {}: transaction {} aborted: {} {}", core.self(), a.txId(), a.failure(), a.detail());
          Tx tx = transactions.get(a.txId());
          if (tx != null) {
            forgetTransaction(a.txId());
            // after the lost listeners of its claims, which the core told first
            txTells.add(() -> tx.listener().aborted(a.failure(), a.missingPeers(), a.detail()));
          }
        }
        case Output.Renewed<M> r -> completeRenewals(r.requestId(), new Renewal(true, r.sentAt(), r.validUntil(),
            null, ""));
        case Output.Lost<M> l -> {
          completeRenewals(l.requestId(), new Renewal(false, Long.MIN_VALUE, Long.MIN_VALUE, l.reason(), l.detail()));
          LostListener listener = listenerOf(l);
          if (listener != null) {
            // grants this node makes from now on wait for the listener, up to LOST_LISTENER_GRACE_MILLIS (a listener
            // that blocks holds back no grant for longer)
            CompletableFuture<Void> bounded = tellLost(listener, l, "").completeOnTimeout(null,
                LOST_LISTENER_GRACE_MILLIS, TimeUnit.MILLISECONDS);
            lostDelivered = lostDelivered.isDone() ? bounded : CompletableFuture.allOf(lostDelivered, bounded);
          }
        }
      }
    }
    if (!txTells.isEmpty()) {
      List<Runnable> tells = txTells;
      txTells = new ArrayList<>();
      afterLostListeners(() -> tells.forEach(Runnable::run)); // one task: in the core's order
    }
    if (sends != null) {
      for (Map.Entry<String, List<Output<M>>> e : sends.entrySet()) {
        send(e.getKey(), e.getValue());
      }
    }
    for (Input<M> in : followUps) {
      step(in);
    }
  }

  /** Sends the messages of {@code sends} (outputs of one step, all to {@code to}) in one transport call. */
  private void send(String to, List<Output<M>> sends) {
    // While a link change is queued for the core, its view of that link is stale: what it sends now could
    // be the first thing on a new connection, ahead of the Sync that must open it. The core restates
    // everything in that Sync, so dropping is safe (like a loss in the break).
    AtomicInteger queued = linkEventsQueued.get(to);
    if (queued != null && queued.get() != 0) {
      return;
    }
    List<byte[]> payloads = new ArrayList<>(sends.size());
    for (Output<M> o : sends) {
      M m = ((Output.Send<M>) o).message();
      sent.incrementAndGet();
      sentByType.computeIfAbsent(m.typeName(), k -> new LongAdder()).increment();
      payloads.add(codec.encode(m));
    }
    try {
      transport.send(to, payloads);
    } catch (IllegalArgumentException e) {
      // a payload above the transport's frame cap (a listing of many claims): the others go one by one and the
      // oversized one is dropped as a lost message would be, so that the rest of the step is still carried out
      for (int i = 0; i < payloads.size(); i++) {
        try {
          transport.send(to, List.of(payloads.get(i)));
        } catch (IllegalArgumentException dropped) {
          LOG.warn("native node {}: a {} message to {} was not sent: {}", core.self(),
              ((Output.Send<M>) sends.get(i)).message().typeName(), to, dropped.getMessage());
        }
      }
    }
  }

  @Override
  public String toString() {
    return "PeerNode[" + core.self() + ", " + core.algorithm() + ", peers=" + transport.peers() + "]";
  }
}
