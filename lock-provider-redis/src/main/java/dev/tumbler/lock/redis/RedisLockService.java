package dev.tumbler.lock.redis;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.HeldLock;
import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.ReadWriteLock;
import dev.tumbler.lock.Semaphore;
import dev.tumbler.lock.ServiceInfo;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.AbstractLockService;
import dev.tumbler.lock.spi.Deadline;
import dev.tumbler.lock.spi.LockElection;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.lock.spi.SimpleReadWriteLock;
import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.lock.spi.UncertainAttempts;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * A lock service on one Redis server, on a majority of independent masters ({@code mode=redlock}), on a
 * Redis Cluster ({@code mode=cluster}) or on a primary watched by sentinels ({@code mode=sentinel}).
 *
 * <p>Every grant, renewal and release is one Lua script (one round trip on one server). Waiting threads
 * do not poll: they subscribe to the lock's release channel (see {@link WakeupHub}), retry when a
 * release is published, and otherwise only when the current holder's grant would expire by itself or
 * after {@code recheck} (1 s by default), whichever comes first — so a lost message costs at most that.
 * Leases are renewed in the background every {@code T/3} by the SPI's renewer; a lease is lost, and its
 * listeners run, {@code T × 3/4} after the last successful request was sent, before its key can expire on
 * the server.
 *
 * <p>Timeouts and interrupts: a wait that reaches its deadline returns empty; an interrupted wait throws
 * {@code InterruptedException} (or {@code ServiceClosedException} when {@link #close()} ended it) after
 * giving back any grant whose reply it did not see, so nothing is left held. A single call that takes
 * longer than {@code timeout} fails; an acquire whose reply was lost is undone at once (the server may
 * have granted it). A wait rides out a server outage of up to one lease term.
 *
 * <p>Errors of the Redis client never reach callers raw: an unreachable server is a
 * {@link ServiceUnavailableException}, anything the server refuses a {@link LockException}, both naming
 * the lock and the operation. Thread safe.
 */
final class RedisLockService extends AbstractLockService {
  private static final Logger LOG = LoggerFactory.getLogger(RedisLockService.class);
  private static final SecureRandom RANDOM = new SecureRandom();

  static final Set<Capability> SINGLE_CAPABILITIES = Set.of(Capability.MUTEX, Capability.READ_WRITE,
      Capability.SEMAPHORE, Capability.FENCING, Capability.LEASE_EXPIRY, Capability.LOST_NOTIFICATION,
      Capability.LEADER_ELECTION, Capability.FAIR);
  /**
   * No semaphore: permits counted separately on each master do not add up to a bound over a majority.
   * FAULT_TOLERANT: grants, renewals and releases go on while a minority of masters is down.
   */
  static final Set<Capability> REDLOCK_CAPABILITIES = Set.of(Capability.MUTEX, Capability.READ_WRITE,
      Capability.FENCING, Capability.LEASE_EXPIRY, Capability.LOST_NOTIFICATION, Capability.LEADER_ELECTION,
      Capability.FAULT_TOLERANT);
  /**
   * Cluster and sentinel modes: what one server offers. Not FAULT_TOLERANT, although they go on after a
   * failover: replication is asynchronous, so a failover can lose a grant and the promoted replica can
   * grant a held lock again; only fencing tokens stay increasing (floored at the server's clock).
   */
  static final Set<Capability> REPLICATED_CAPABILITIES = SINGLE_CAPABILITIES;

  private final RedisConfig config;
  /** Whether primitives queue their waiters in a line (every mode with one server deciding; not Redlock). */
  private final boolean fair;
  private final Backend backend;
  private final RedisKeys keys;
  private final String clientId;
  private final AtomicLong sequence = new AtomicLong();
  private final String ttlMs;
  private final long recheckNanos;
  private final long leaseNanos;
  /** How long a waiter's place in a line lasts without a new attempt: three rechecks and a call's timeout. */
  private final String liveMs;
  /** Acquire attempts in progress (guarded by itself). */
  private final int[] inFlight = new int[1];
  /** Grants that attempts with no answer may still make: released again and again. */
  private final UncertainAttempts uncertainAttempts;
  private static final long OUTAGE_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  /**
   * @param keys the key layout of {@code config}'s namespace
   * @param clientId this service's random id, the same its subscriber connections use for their control channel
   */
  RedisLockService(RedisConfig config, ServiceInfo info, Backend backend, RedisKeys keys, String clientId,
      Ticker ticker) {
    super(info, config.lease(), ticker);
    this.config = config;
    this.backend = backend;
    this.keys = keys;
    this.clientId = clientId;
    this.ttlMs = Long.toString(config.lease().leaseTime().toMillis());
    this.recheckNanos = config.recheck().toNanos();
    this.leaseNanos = config.lease().leaseTime().toNanos();
    this.liveMs = Long.toString(3 * config.recheck().toMillis() + config.timeout().toMillis());
    this.fair = config.mode() != RedisConfig.Mode.REDLOCK;
    this.uncertainAttempts = new UncertainAttempts(ticker(), config.lease().leaseTime(), this::isClosed,
        "tumbler-redis-undo");
  }

  static String randomId() {
    byte[] b = new byte[12];
    RANDOM.nextBytes(b);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  String clientId() {
    return clientId;
  }

  // ---- handles

  @Override
  protected Lock createLock(String name) {
    return new RedisLock(this, name, Primitive.mutex(keys, RedisKeys.Kind.MUTEX, name, fair), clientId);
  }

  @Override
  protected ReadWriteLock createReadWriteLock(String name) {
    return new SimpleReadWriteLock(name, new RedisLock(this, name, Primitive.read(keys, name, fair), clientId),
        new RedisLock(this, name, Primitive.write(keys, name, fair), clientId));
  }

  @Override
  protected Semaphore createSemaphore(String name, int maxPermits) {
    return new RedisSemaphore(this, name, maxPermits, Primitive.semaphore(keys, name, fair));
  }

  @Override
  protected LeaderElection createElection(String name) {
    String candidate = clientId + "." + sequence.incrementAndGet();
    Primitive p = Primitive.mutex(keys, RedisKeys.Kind.ELECTION, name, fair);
    RedisLock lock = new RedisLock(this, name, p, candidate);
    return new LockElection(this, name, lock, candidate, () -> leaderOf(p));
  }

  private Optional<String> leaderOf(Primitive p) {
    try {
      String holder = backend.holder(p.keys());
      if (holder != null && holder.indexOf('|') > 0) {
        return Optional.of(holder.substring(0, holder.indexOf('|')));
      }
      return Optional.empty();
    } catch (RuntimeException e) {
      LOG.debug("cannot look up the leader of '{}': {}", p.name(), e.toString());
      return Optional.empty();
    }
  }

  /** See {@link HeldLocks}: SCAN of the namespace; tokens are the names' counters (the last issued). */
  @Override
  protected Optional<List<HeldLock>> listHeldLocks() {
    try {
      List<RedisNode> nodes = backend.nodes();
      if (config.mode() != RedisConfig.Mode.REDLOCK) {
        return Optional.of(HeldLocks.list(nodes.getFirst().jedis(), keys));
      }
      List<List<HeldLock>> perNode = new ArrayList<>();
      for (RedisNode n : nodes) {
        try {
          perNode.add(HeldLocks.list(n.jedis(), keys));
        } catch (RuntimeException e) {
          LOG.debug("cannot list the locks on {}: {}", n, e.toString());
        }
      }
      int majority = nodes.size() / 2 + 1;
      if (perNode.size() < majority) {
        throw new ServiceUnavailableException("only " + perNode.size() + " of " + nodes.size()
            + " Redis masters answered the listing of held locks; Redlock needs " + majority);
      }
      return Optional.of(HeldLocks.majority(perNode, majority));
    } catch (RuntimeException e) {
      throw translate("listing the held locks", e);
    }
  }

  @Override
  protected Object unwrapProvider(Class<?> type) {
    if (config.mode() != RedisConfig.Mode.REDLOCK) {
      UnifiedJedis jedis = backend.nodes().getFirst().jedis();
      if (type.isInstance(jedis)) {
        return jedis;
      }
    }
    return null;
  }

  @Override
  protected void doClose() {
    // close() has interrupted every wait; let attempts in flight undo what they may have been granted
    // before the connections go away (bounded: each undo is one call with the socket timeout)
    long until = System.nanoTime() + 2 * config.timeout().toNanos();
    synchronized (inFlight) {
      while (inFlight[0] > 0 && until - System.nanoTime() > 0) {
        try {
          inFlight.wait(Math.max(1, (until - System.nanoTime()) / 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    backend.close();
  }

  // ---- the one wait loop every primitive uses

  /**
   * Tries to grant {@code p} until {@code deadline}: one attempt if it has expired, else waiting for
   * release notifications (bounded by the holder's own expiry and {@code recheck}). While there is time
   * left, an unreachable server is retried every 100 ms, for at most one lease term in a row; then, or at
   * the deadline, the {@link ServiceUnavailableException} is thrown.
   *
   * <p>Fair primitives: an attempt that will wait joins the line (and each later attempt keeps the place
   * alive); the release that frees the lock for this waiter grants it here and publishes the grant, so the
   * wait ends when that message arrives, without another round trip — unless its token is no larger than the
   * last token drawn when this waiter's last attempt was refused: then the message is late, its grant ended
   * before that attempt (which found nothing handed to it), and the waiter asks again. A wait that ends without a
   * lease leaves the line, giving back a grant that may have been handed to it meanwhile.
   *
   * @return the lease, not yet registered; null if the deadline passed
   */
  AbstractLease acquire(Primitive p, String label, int permits, List<String> extraArgs, Deadline deadline)
      throws InterruptedException {
    // fair: one owner for the whole wait, its place in line; unfair (Redlock): a fresh one per attempt, so that
    // each undo of a partial grant is a release of its own to the waiters that hear it
    String owner = newOwner(label);
    Waiter waiter = null;
    long outageStart = 0;
    boolean joined = false;
    AbstractLease lease = null;
    LostAnswers lost = new LostAnswers(uncertainAttempts.begin());
    synchronized (inFlight) {
      inFlight[0]++;
    }
    try {
      while (true) {
        long seen = waiter == null ? 0 : waiter.version();
        boolean join = p.fair() && !deadline.isExpired();
        Attempt a;
        try {
          a = attempt(p, p.fair() ? owner : null, label, permits, extraArgs, join, waiter == null, lost);
          outageStart = 0;
        } catch (ServiceUnavailableException e) {
          // a wait rides out a short outage (a server restart, a failover): it retries until its deadline,
          // but gives up once the server has been unreachable for a whole lease term
          long now = ticker().read();
          if (outageStart == 0) {
            outageStart = now;
          }
          if (deadline.isExpired() || now - outageStart >= leaseNanos) {
            throw e;
          }
          LOG.debug("{} unreachable while waiting for {}; retrying: {}", hostList(), p.describe(), e.getMessage());
          Thread.sleep(Duration.ofNanos(Math.min(deadline.remainingNanos(), OUTAGE_RETRY_NANOS)));
          continue;
        }
        if (a.lease() != null) {
          lease = a.lease();
          return lease;
        }
        joined |= join;
        if (deadline.isExpired()) {
          return null;
        }
        if (waiter == null) {
          waiter = new Waiter(owner);
          backend.register(p.channel(), waiter);
          waiter.awaitConfirmed(backend.confirmationsNeeded(), Math.min(deadline.remainingNanos(), recheckNanos));
          continue; // a release may have come before the subscription: look again at once
        }
        long wait = Math.min(deadline.remainingNanos(), recheckNanos);
        if (a.waitMs() >= 0) {
          // the holder's grant expires by itself then, with no message: look again right after
          wait = Math.min(wait, TimeUnit.MILLISECONDS.toNanos(a.waitMs() + 1));
        }
        waiter.awaitChange(seen, wait);
        long token = waiter.takeHandedToken();
        if (token > a.fence()) {
          // handed over by a release after our last attempt ran (its token was drawn after that attempt's
          // refusal): its term started after that attempt was sent
          lease = new RedisLease(this, p, owner, token, permits, a.sentNanos());
          return lease;
        }
        if (token >= 0) {
          // a message that arrived late: its grant had ended before our last attempt, which found nothing
          // handed to us; the line decides again at the next attempt
          LOG.debug("a hand-off of {} (token {}) arrived after it ended; asking again", p.describe(), token);
        }
      }
    } finally {
      if (waiter != null) {
        backend.unregister(p.channel(), waiter);
      }
      if (lease == null && (joined || lost.fair)) {
        // leave the line; a grant handed to us meanwhile, or made by an attempt whose answer was lost, goes to the
        // next waiter; after a lost answer, the wait's end is recorded, so that a late copy of an attempt does nothing
        boolean interrupted = Thread.interrupted();
        if (!releaseQuietly(p, owner, lost.fair) && lost.fair) {
          // the record of the wait's end must be written: again, until the release runs
          lost.owners.addUndoneOnce(() -> {
            release(p, owner, true);
            return true;
          }, ticker().read());
        }
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
      synchronized (inFlight) {
        if (--inFlight[0] == 0) {
          inFlight.notifyAll();
        }
      }
    }
  }

  /** @param fence a fair refusal's last token drawn (see {@link Backend.Grant#fence()}), else -1 */
  private record Attempt(RedisLease lease, long waitMs, long fence, long sentNanos) {}

  /**
   * What one acquire's attempts whose answer was lost leave to undo. A server may run such an attempt late (a request
   * slow to arrive), after an undo sent at once, and its grant would then hold the name for a term, for nobody.
   */
  private final class LostAnswers {
    /**
     * Attempts that asked with an owner of their own (unfair, Redlock, and the plain first attempt of a fair mutex):
     * that owner is released again and again until a late copy can do nothing more.
     */
    final UncertainAttempts.Wait owners;
    /**
     * Whether an attempt with the wait's own owner (fair) lost its answer: that owner cannot be released while the
     * wait goes on, so the fair scripts record the attempts that follow, and the wait's end when it gets no lock, and
     * refuse a late copy untouched ({@code Scripts.ATTEMPT}).
     */
    boolean fair;

    LostAnswers(UncertainAttempts.Wait owners) {
      this.owners = owners;
    }
  }

  /**
   * A fresh owner value: {@code <clientId>:<n>}, or {@code <label>|<clientId>:<n>} when the label says more
   * than the client (an election's candidate id, which {@link #leaderOf} reads back).
   */
  private String newOwner(String label) {
    long n = sequence.incrementAndGet();
    return label.equals(clientId) ? clientId + ":" + n : label + "|" + clientId + ":" + n;
  }

  /**
   * @param fixedOwner the owner to ask with (a fair wait's), or null for a fresh one per try
   * @param first whether this is the acquire's first attempt (the lock is most likely free)
   */
  private Attempt attempt(Primitive p, String fixedOwner, String label, int permits, List<String> extraArgs,
      boolean join, boolean first, LostAnswers lost) throws InterruptedException {
    for (int tries = 1; ; tries++) {
      boolean firstTry = first && tries == 1;
      // plain commands check no attempt number: they ask with an owner of their own
      String owner = fixedOwner != null && !(firstTry && backend.firstIsPlain(p)) ? fixedOwner : newOwner(label);
      List<String> args = new ArrayList<>(6 + extraArgs.size());
      args.add(owner);
      args.add(ttlMs);
      if (p.fair()) {
        args.add(join ? liveMs : "0");
      }
      args.addAll(extraArgs);
      if (p.fair()) {
        args.add(Long.toString(sequence.incrementAndGet())); // (increasing within the wait)
        args.add(lost.fair ? "1" : "0");
      }
      long sent = ticker().read();
      Backend.Grant g;
      try {
        g = firstTry ? backend.acquireFirst(p, args) : backend.acquire(p, args);
      } catch (RuntimeException e) {
        // The script may have run and its reply been lost (a timeout, or an interrupt that closed the socket), and
        // it may run later still (a request slow to arrive): what it may grant is undone, if need be again and again
        // until a late copy can do nothing (an owner of its own), or by the wait's next attempt and its end (the
        // wait's owner: the fair scripts give back a grant of it whose answer was lost, and fence late copies).
        // An owner of its own is released at once, on this thread, with its interrupt status set aside (it would
        // close the next socket too), and again later if that release found nothing.
        boolean interrupted = Thread.interrupted();
        if (owner.equals(fixedOwner)) {
          lost.fair = true;
        } else if (!releasedNow(p, owner)) {
          lost.owners.addUndoneOnce(() -> release(p, owner, false), sent);
        }
        if (interrupted) {
          throw new InterruptedException();
        }
        if (tries == 1 && e instanceof JedisConnectionException) {
          // most often a pooled connection that died quietly (server restart, idle timeout): one more try
          continue;
        }
        throw translate("acquiring " + p.describe(), e);
      }
      if (g.uncertain()) {
        lost.owners.addUndoneOnce(() -> release(p, owner, false), sent); // (Redlock: a master's answer was lost; the refusal undid it once)
      }
      if (!g.granted()) {
        return new Attempt(null, g.waitMs(), g.fence(), sent);
      }
      return new Attempt(new RedisLease(this, p, owner, g.token(), permits, sent), 0, -1, sent);
    }
  }

  /** Whether releasing {@code owner} now gave back a grant (false also when the release failed). */
  private boolean releasedNow(Primitive p, String owner) {
    try {
      return release(p, owner, false);
    } catch (LockException e) {
      LOG.debug("undoing an uncertain grant of {} failed; trying again: {}", p.describe(), e.toString());
      return false;
    }
  }

  /** @return whether the release ran (false: it failed, and what it gives back expires on the server) */
  private boolean releaseQuietly(Primitive p, String owner, boolean waitOver) {
    try {
      release(p, owner, waitOver);
      return true;
    } catch (LockException e) {
      LOG.debug("undoing an uncertain grant of {} failed; it expires on the server: {}", p.describe(), e.toString());
      return false;
    }
  }

  boolean renew(Primitive p, String owner) {
    try {
      return backend.renew(p.renew(), p.keys(), List.of(owner, ttlMs));
    } catch (RuntimeException e) {
      throw translate("renewing " + p.describe(), e);
    }
  }

  void release(Primitive p, String owner) {
    release(p, owner, false);
  }

  /**
   * @param waitOver a fair wait that had an attempt whose answer was lost is over with no lock: the release records
   *     that no copy of its attempts may act any more
   * @return whether it gave back a grant
   */
  private boolean release(Primitive p, String owner, boolean waitOver) {
    try {
      // a fair release publishes only a hand-off, on the channel its script derives from the line's key
      return backend.release(p.release(), p.keys(), !p.fair() ? List.of(owner, p.channel())
          : waitOver ? List.of(owner, ttlMs) : List.of(owner));
    } catch (RuntimeException e) {
      throw translate("releasing " + p.describe(), e);
    }
  }

  int availablePermits(Primitive p, int maxPermits) {
    checkOpen();
    try {
      return Math.toIntExact((Long) backend.read(Scripts.SEMAPHORE_AVAILABLE, p.keys(), List.of(Integer.toString(maxPermits))));
    } catch (RuntimeException e) {
      throw translate("reading the permits of " + p.describe(), e);
    }
  }

  /** The client's exceptions as Tumbler's, naming the operation and the servers (never a password). */
  LockException translate(String what, RuntimeException e) {
    if (e instanceof LockException le) {
      return le;
    }
    String where = config.client().map(c -> "Redis (" + c + ")")
        .orElseGet(() -> "Redis " + (config.hosts().size() == 1 ? "server " : "servers ") + hostList());
    return translate(where, what, e);
  }

  /**
   * {@code e}, thrown by the client while {@code what} on {@code where}, as Tumbler's: an answer that says "not now"
   * (a cluster or a failover changing its topology, a server loading its data) is an outage that waits ride out, like
   * a lost connection; any other answer is a refusal.
   */
  static LockException translate(String where, String what, RuntimeException e) {
    if (e instanceof LockException le) {
      return le;
    }
    if (e instanceof JedisDataException && Backend.Replicated.transientAnswer(e)) {
      return new ServiceUnavailableException(where + " could not serve " + what + " now: " + e.getMessage(), e);
    }
    if (e instanceof JedisDataException) {
      return new LockException(where + " refused " + what + ": " + e.getMessage(), e);
    }
    if (e instanceof JedisException) {
      return new ServiceUnavailableException(where + " unreachable while " + what + ": " + e.getMessage(), e);
    }
    return new LockException("unexpected failure " + what + " on " + where + ": " + e, e);
  }

  private String hostList() {
    return config.hosts().stream().map(LockUrl.HostAndPort::toString).collect(Collectors.joining(","));
  }
}
