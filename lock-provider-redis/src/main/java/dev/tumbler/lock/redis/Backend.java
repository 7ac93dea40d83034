package dev.tumbler.lock.redis;

import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.lock.spi.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * Where the scripts run: one server ({@link Single}), a majority of independent masters
 * ({@link Redlock}), or a server that can fail over to a replica ({@link Replicated}: Redis Cluster, a
 * primary watched by sentinels). Methods throw the client's {@link JedisException} (or
 * {@link ServiceUnavailableException} for a missing quorum); the lock layer turns them into
 * {@code LockException}s naming the lock. Thread safe.
 */
abstract sealed class Backend implements AutoCloseable {

  /**
   * The answer to an acquire.
   *
   * @param granted whether it was granted
   * @param token the fencing token, when granted
   * @param waitMs when refused: in how many ms the obstacle expires by itself, -1 if unknown
   * @param fence when refused by a fair script: the last token drawn for the primitive then (0: none), else -1
   */
  /**
   * @param holder on a Redlock refusal, who holds what refused it (an owner value, or {@code " readers"}); null where
   *     the script does not say (semaphores, and the fair scripts, whose third value is {@code fence})
   */
  /** A Redlock refusal's holder when the script does not say (never an owner value, which has no NUL). */
  private static final String UNKNOWN_HOLDER = "\0unknown";

  record Grant(boolean granted, long token, long waitMs, long fence, String holder, boolean uncertain) {
    Grant(boolean granted, long token, long waitMs, long fence, String holder) {
      this(granted, token, waitMs, fence, holder, false);
    }

    static Grant granted(long token) {
      return new Grant(true, token, 0, -1, null);
    }

    static Grant refused(long waitMs) {
      return new Grant(false, 0, waitMs, -1, null);
    }

    /** This refusal, noting that a server's answer was lost: the attempt may yet be granted there, late. */
    Grant lostAnswer() {
      return new Grant(granted, token, waitMs, fence, holder, true);
    }
  }

  abstract List<RedisNode> nodes();

  /** How many hubs must confirm a waiter's subscription before a release cannot be missed. */
  abstract int confirmationsNeeded();

  /** Runs {@code p}'s acquire script; {@code args} start with the owner value. */
  abstract Grant acquire(Primitive p, List<String> args);

  /**
   * The first attempt of an acquire, when the lock is most likely free: {@link #acquire} unless the backend
   * has a cheaper way to grant a free lock. {@code args} as for {@link #acquire}.
   */
  Grant acquireFirst(Primitive p, List<String> args) {
    return acquire(p, args);
  }

  /** @return true if renewed, false if the grant is no longer ours */
  abstract boolean renew(Scripts.Script script, List<String> keys, List<String> args);

  /** @return whether it gave back a grant (on every one of Redlock's masters) */
  abstract boolean release(Scripts.Script script, List<String> keys, List<String> args);

  /**
   * Whether {@link #acquireFirst} grants {@code p} with plain commands, not its script: such an attempt must ask with
   * an owner of its own, since the scripts' check of a fair wait's attempt numbers does not run.
   */
  boolean firstIsPlain(Primitive p) {
    return false;
  }

  /** Runs a read-only script where it can be answered (the server, or the first master that answers). */
  abstract Object read(Scripts.Script script, List<String> keys, List<String> args);

  /**
   * Who holds the mutex whose keys are {@code keys}, as its grants count: the owner value on the server,
   * or the one a majority of the Redlock masters holds; null when nobody does.
   */
  abstract String holder(List<String> keys);

  void register(String channel, Waiter w) {
    for (RedisNode n : nodes()) {
      n.hub().register(channel, w);
    }
  }

  void unregister(String channel, Waiter w) {
    for (RedisNode n : nodes()) {
      n.hub().unregister(channel, w);
    }
  }

  @Override
  public void close() {
    for (RedisNode n : nodes()) {
      n.close();
    }
  }

  static Grant parseGrant(Object reply) {
    List<?> r = (List<?>) reply;
    long granted = (Long) r.get(0);
    long value = (Long) r.get(1);
    if (granted == 1) {
      return Grant.granted(value);
    }
    Object third = r.size() > 2 ? r.get(2) : null;
    return new Grant(false, 0, value, third instanceof Long fence ? fence : -1, third instanceof String h ? h : null);
  }

  /** One server: every operation is one script call, one round trip. */
  static sealed class Single extends Backend permits Replicated {
    final RedisNode node;

    Single(RedisNode node) {
      this.node = node;
    }

    @Override
    List<RedisNode> nodes() {
      return List.of(node);
    }

    @Override
    int confirmationsNeeded() {
      return 1;
    }

    /** Runs {@code script} on the server. */
    Object call(Scripts.Script script, List<String> keys, List<String> args, boolean idempotent) {
      return node.eval(script, keys, args, idempotent);
    }

    @Override
    Grant acquire(Primitive p, List<String> args) {
      return parseGrant(call(p.acquire(), p.keys(), args, false));
    }

    /**
     * A fair mutex that nobody holds and nobody waits for is granted by four plain commands pipelined
     * (SET NX PX, EXISTS of the line, INCR and PEXPIRE of the counter): a script call costs the server several
     * times what they do. An INCR whose SET found the lock taken only skips a token (and keeps the counter
     * alive for a day, as a grant does). The INCR is not atomic with seeding the counter: a value below
     * {@link Scripts#SEEDED} is unseeded — a new counter, or one that a client left at a small value when it
     * stopped between its INCR and its seed (an interrupt, a cut link, a dead process) — and is never
     * reported: the grant's token is drawn again by {@link Scripts#SEED_FENCE}, which seeds the counter from
     * the server's clock in the same step, one more round trip only for a name's first grant (or its first
     * after the counter was lost). A SET that passed a line of waiters (the lock had expired with waiters in
     * line) is given back at once, which hands the lock to the line's first. A refusal joins no line: the
     * waiter joins by the script once it has subscribed.
     */
    @Override
    Grant acquireFirst(Primitive p, List<String> args) {
      if (!firstIsPlain(p)) {
        return acquire(p, args);
      }
      List<String> k = p.keys();
      String owner = args.get(0);
      List<Object> r = node.setIfFreePipelined(k.get(0), owner, args.get(1), k.get(1), k.get(2), Scripts.FENCE_TTL_MS);
      boolean set = r.get(0) != null;
      if (set && (Long) r.get(1) == 0) {
        long token = (Long) r.get(2);
        if (token < Scripts.SEEDED) {
          token = (Long) call(Scripts.SEED_FENCE, List.of(k.get(2)), List.of(), true);
        }
        return Grant.granted(token);
      }
      if (set) {
        call(p.release(), k, List.of(owner), true);
      }
      // (an owner of its own: a late copy of these commands, SET NX above all, is undone by that owner's release)
      // refused, with no place in line yet: a wait subscribes first and then joins by the script, the look it
      // takes after every subscription anyway, so a contended acquire pays no extra round trip. An unseeded
      // counter is left as it is: whoever draws the next token from it seeds it then
      return Grant.refused(-1);
    }

    @Override
    boolean firstIsPlain(Primitive p) {
      return p.acquire() == Scripts.FAIR_MUTEX_ACQUIRE && getClass() == Single.class;
    }

    @Override
    boolean renew(Scripts.Script script, List<String> keys, List<String> args) {
      return ((Long) call(script, keys, args, true)) == 1L;
    }

    @Override
    boolean release(Scripts.Script script, List<String> keys, List<String> args) {
      return Long.valueOf(1).equals(call(script, keys, args, true));
    }

    @Override
    Object read(Scripts.Script script, List<String> keys, List<String> args) {
      return call(script, keys, args, true);
    }

    @Override
    String holder(List<String> keys) {
      return call(Scripts.HOLDER, keys, List.of(), true) instanceof String s ? s : null;
    }
  }

  /**
   * Redlock over N independent masters (no replication between them). An acquire runs the same script
   * with the same owner on every master in parallel; it is granted when a majority granted it and time
   * is left of the lease: {@code T × safety − elapsed − drift > 0}, with {@code drift = T/100 + 2ms}
   * (the usual allowance for clock-rate differences). The lease's trusted window is counted from the
   * moment the first request was sent, which already subtracts the elapsed time Redlock's validity
   * formula subtracts. Otherwise the acquire is undone on every master.
   *
   * <p><b>Fencing.</b> Each master has its own counter. The token of a grant is the largest of the
   * majority's, and before the grant is reported it is written back to those masters (raising their
   * counters to it, one more parallel round trip). Any later grant shares at least one master with this
   * majority, whose counter is now at least this token, so its token is larger — provided that master
   * kept its counter (it did not restart without persistence, or its clock carries the seed forward,
   * see {@link Scripts}).
   *
   * <p>Renewal succeeds when a majority renews; it is refused when so many masters refuse that no
   * majority can renew. Releases go to every master.
   *
   * <p><b>When to use it:</b> locks must keep working while a minority of Redis servers is down, and the
   * protected resource checks fencing tokens. <b>When not to:</b> as a substitute for consensus. Its
   * safety rests on timing — bounded clock-rate differences between client and masters, and a master
   * that restarts without persistence staying down for at least a lease term before it rejoins (else a
   * second majority can form while the first holder still holds). Where correctness must not depend on
   * timing, use a consensus system (the ZooKeeper provider) with fencing. Semaphores are not offered:
   * permits counted separately on each master do not bound the total over a majority.
   */
  static final class Redlock extends Backend {
    private static final Logger LOG = LoggerFactory.getLogger(Redlock.class);

    private final List<RedisNode> nodes;
    private final int majority;
    private final LeaseSettings lease;
    private final Ticker ticker;
    private final long callTimeoutNanos;
    private final ExecutorService calls = Executors.newVirtualThreadPerTaskExecutor();
    private final java.util.Map<RedisNode, Health> health = new java.util.IdentityHashMap<>();
    private static final int TRIP_AFTER = 3;
    private static final long SKIP_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    Redlock(List<RedisNode> nodes, LeaseSettings lease, Ticker ticker, Duration timeout) {
      this.nodes = List.copyOf(nodes);
      this.majority = nodes.size() / 2 + 1;
      this.lease = lease;
      this.ticker = ticker;
      this.callTimeoutNanos = timeout.toNanos();
      for (RedisNode n : this.nodes) {
        health.put(n, new Health());
      }
    }

    @Override
    List<RedisNode> nodes() {
      return nodes;
    }

    @Override
    int confirmationsNeeded() {
      // any releaser held a majority; a majority of confirmed subscriptions shares a master with it
      return majority;
    }

    long driftNanos() {
      return lease.leaseTime().toNanos() / 100 + TimeUnit.MILLISECONDS.toNanos(2);
    }

    private List<Object> onAll(List<RedisNode> targets, Scripts.Script script, List<String> keys, List<String> args,
        boolean idempotent) {
      List<CompletableFuture<Object>> fs = new ArrayList<>();
      for (RedisNode n : targets) {
        fs.add(CompletableFuture.supplyAsync(() -> call(n, script, keys, args, idempotent), calls));
      }
      long until = ticker.read() + callTimeoutNanos;
      List<Object> out = new ArrayList<>();
      boolean interrupted = false;
      for (CompletableFuture<Object> f : fs) {
        // an interrupt does not abandon the calls: their grants must be known, to keep or to undo
        while (true) {
          try {
            out.add(f.get(Math.max(0, until - ticker.read()), TimeUnit.NANOSECONDS));
            break;
          } catch (ExecutionException e) {
            out.add(e.getCause());
            break;
          } catch (TimeoutException e) {
            out.add(new ServiceUnavailableException("no answer within the timeout"));
            break;
          } catch (InterruptedException e) {
            interrupted = true;
          }
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
      return out;
    }

    /** Consecutive connection failures of a master, and until when it is skipped. */
    private static final class Health {
      int failures;
      long skipUntil;
    }

    /**
     * One call to one master. A master that failed {@value #TRIP_AFTER} calls in a row is skipped for
     * {@link #SKIP_NANOS} (its calls fail at once, the majority decides meanwhile), then tried again: a
     * master that is down then costs the others almost nothing per attempt. One failure alone (a pooled
     * connection that died quietly) never trips it.
     */
    private Object call(RedisNode n, Scripts.Script script, List<String> keys, List<String> args, boolean idempotent) {
      Health h = health.get(n);
      synchronized (h) {
        if (h.failures >= TRIP_AFTER && ticker.read() - h.skipUntil < 0) {
          throw new ServiceUnavailableException("Redis master " + n + " failed " + h.failures
              + " calls in a row; not asked again yet");
        }
      }
      try {
        Object r = n.eval(script, keys, args, idempotent);
        synchronized (h) {
          h.failures = 0;
        }
        return r;
      } catch (JedisConnectionException e) {
        synchronized (h) {
          h.failures++;
          h.skipUntil = ticker.read() + SKIP_NANOS;
        }
        throw e;
      }
    }

    @Override
    Grant acquire(Primitive p, List<String> args) {
      long start = ticker.read();
      // not tried again on a master whose answer was lost: a copy that reached it late would be a grant nobody
      // undoes; a lost answer is reported instead (Grant.lostAnswer), and the caller undoes the attempt until a
      // late copy can do nothing more
      List<Object> replies = onAll(nodes, p.acquire(), p.keys(), args, false);
      List<RedisNode> granted = new ArrayList<>();
      // where a grant may exist, to undo on failure: masters that granted, and masters whose answer was lost
      List<RedisNode> uncertain = new ArrayList<>();
      int answered = 0;
      long token = 0;
      long wait = -1;
      // who refused: the masters each holder holds (UNKNOWN_HOLDER: a refusal that does not say)
      Map<String, Integer> refusedBy = new HashMap<>();
      Throwable error = null;
      for (int i = 0; i < nodes.size(); i++) {
        Object r = replies.get(i);
        if (r instanceof Throwable t) {
          error = t;
          uncertain.add(nodes.get(i));
          continue;
        }
        answered++;
        Grant g = parseGrant(r);
        if (g.granted()) {
          granted.add(nodes.get(i));
          uncertain.add(nodes.get(i));
          token = Math.max(token, g.token());
        } else {
          refusedBy.merge(g.holder() == null ? UNKNOWN_HOLDER : g.holder(), 1, Integer::sum);
          if (g.waitMs() >= 0) {
            wait = wait < 0 ? g.waitMs() : Math.min(wait, g.waitMs());
          }
        }
      }
      if (granted.size() >= majority) {
        List<Object> raised = onAll(granted, Scripts.RAISE_FENCE, List.of(p.keys().getLast()), List.of(Long.toString(token)),
            true);
        long ok = raised.stream().filter(r -> !(r instanceof Throwable)).count();
        long left = lease.trustedNanos() - (ticker.read() - start) - driftNanos();
        if (ok >= majority && left > 0) {
          return Grant.granted(token);
        }
      }
      // Refused by a majority held by one holder: the lock is held. The undo then wakes nobody: its release
      // message would wake every waiter, this one too, to a lock still held, and each retry takes the masters
      // outside the holder's majority and undoes them again, so the waiters would wake each other in a loop of
      // round trips to every master for as long as the holder holds. Refused by a majority split among several
      // holders (contenders that each won some masters, all undoing now), the lock is about to be free: the undo
      // wakes the others, who would otherwise sleep until `recheck` with nobody holding it. A refusal that does
      // not say who holds (a semaphore) counts as one holder.
      boolean heldElsewhere = answered - granted.size() >= majority
          && (refusedBy.containsKey(UNKNOWN_HOLDER) || refusedBy.values().stream().anyMatch(n -> n >= majority));
      undo(uncertain, p, args.getFirst(), !heldElsewhere);
      if (granted.size() < majority && answered < majority) {
        throw new ServiceUnavailableException("only " + answered + " of " + nodes.size()
            + " Redis masters answered; Redlock needs " + majority
            + (error != null ? " (last error: " + error.getMessage() + ")" : ""), error);
      }
      return error != null ? Grant.refused(wait).lostAnswer() : Grant.refused(wait);
    }

    private static long countErrors(List<Object> replies) {
      return replies.stream().filter(r -> r instanceof Throwable).count();
    }

    /**
     * Gives back a grant that did not win: synchronous, so that nothing is left behind when the caller
     * returns (or its service closes). With {@code wake}, the release is published, so that waiters the
     * partial grant turned away look again at once.
     */
    private void undo(List<RedisNode> targets, Primitive p, String owner, boolean wake) {
      if (targets.isEmpty()) {
        return;
      }
      boolean interrupted = Thread.interrupted();
      for (Object r : onAll(targets, p.release(), p.keys(), List.of(owner, wake ? p.channel() : ""), true)) {
        if (r instanceof Throwable t) {
          LOG.debug("undoing a partial Redlock grant failed; it expires on that master: {}", t.toString());
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }

    @Override
    boolean renew(Scripts.Script script, List<String> keys, List<String> args) {
      List<Object> replies = onAll(nodes, script, keys, args, true);
      int ours = 0;
      int refused = 0;
      Throwable error = null;
      for (Object r : replies) {
        if (r instanceof Throwable t) {
          error = t;
        } else if ((Long) r == 1L) {
          ours++;
        } else {
          refused++;
        }
      }
      if (ours >= majority) {
        return true;
      }
      if (refused > nodes.size() - majority) {
        return false;
      }
      throw new ServiceUnavailableException("renewal reached " + ours + " of the " + majority
          + " Redis masters needed", error);
    }

    @Override
    boolean release(Scripts.Script script, List<String> keys, List<String> args) {
      List<Object> replies = onAll(nodes, script, keys, args, true);
      if (countErrors(replies) == nodes.size()) {
        Object first = replies.getFirst();
        throw first instanceof RuntimeException e ? e : new ServiceUnavailableException("no Redis master answered");
      }
      // (an undo of a late attempt is done only once every master gave it back: a late copy may reach any of them)
      return replies.stream().filter(r -> Long.valueOf(1).equals(r)).count() == nodes.size();
    }

    @Override
    Object read(Scripts.Script script, List<String> keys, List<String> args) {
      RuntimeException last = null;
      for (RedisNode n : nodes) {
        try {
          return call(n, script, keys, args, true);
        } catch (RuntimeException e) {
          last = e;
        }
      }
      throw last;
    }

    /**
     * Asks every master, like a grant does: a grant holds a majority, and the masters outside it say
     * nothing about who leads. One of them may hold nothing (its key expired after a term ended there, or it
     * was down when the grant was made), or the grant of a candidate that won only that master and is
     * about to give it back; a single master's answer can name nobody, or a loser, for a whole term.
     *
     * @throws ServiceUnavailableException if fewer than a majority answered
     */
    @Override
    String holder(List<String> keys) {
      Map<String, Integer> votes = new HashMap<>();
      int answered = 0;
      Throwable error = null;
      for (Object r : onAll(nodes, Scripts.HOLDER, keys, List.of(), true)) {
        if (r instanceof Throwable t) {
          error = t;
          continue;
        }
        answered++;
        if (r instanceof String owner && votes.merge(owner, 1, Integer::sum) >= majority) {
          return owner;
        }
      }
      if (answered < majority) {
        throw new ServiceUnavailableException("only " + answered + " of " + nodes.size()
            + " Redis masters answered; Redlock needs " + majority, error);
      }
      return null;
    }

    @Override
    public void close() {
      super.close();
      calls.shutdownNow();
    }
  }

  /**
   * Redis Cluster ({@code mode=cluster}) or a primary watched by sentinels ({@code mode=sentinel}): one
   * logical server per lock, as in {@link Single} (every lock's keys share a hash slot, so each script
   * runs on one master), reached through a client that follows the topology (see {@link RedisNode}).
   *
   * <p><b>Failover.</b> Replication is asynchronous: a primary may acknowledge a grant, renewal or
   * counter increment and fail before its replica has it. Nothing here can stop the promoted replica from
   * granting a lock that was held (the holder's next renewal is refused and it is told, {@code REVOKED}),
   * but fencing tokens stay increasing: every script that draws a token (acquires, and the releases of fair
   * primitives, which hand the lock on) runs as {@link Scripts#clockFloored}, so each token is at least the granting server's clock in microseconds. Answers a server gives while the
   * topology changes ({@code CLUSTERDOWN}, {@code TRYAGAIN}, {@code MASTERDOWN}, {@code READONLY},
   * {@code LOADING}) are {@link ServiceUnavailableException}s, so waits ride them out like an outage.
   */
  static final class Replicated extends Single {
    private static final Pattern TRANSIENT =
        Pattern.compile("^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|LOADING)\\b.*", Pattern.DOTALL);

    private final Map<Scripts.Script, Scripts.Script> floored = new ConcurrentHashMap<>();

    Replicated(RedisNode node) {
      super(node);
    }

    /** Runs {@code script}, its tokens floored at the server's clock if it draws any (acquires, fair releases). */
    @Override
    Object call(Scripts.Script script, List<String> keys, List<String> args, boolean idempotent) {
      Scripts.Script run = floored.computeIfAbsent(script, s -> Scripts.drawsTokens(s) ? Scripts.clockFloored(s) : s);
      try {
        return node.eval(run, keys, args, idempotent);
      } catch (JedisDataException e) {
        if (transientAnswer(e)) {
          throw new ServiceUnavailableException("Redis " + node + " is changing its topology: " + e.getMessage(), e);
        }
        throw e;
      }
    }

    /** Whether {@code e} is an answer a server gives while the topology changes or it loads its data. */
    static boolean transientAnswer(RuntimeException e) {
      return e.getMessage() != null && TRANSIENT.matcher(e.getMessage()).matches();
    }
  }
}
