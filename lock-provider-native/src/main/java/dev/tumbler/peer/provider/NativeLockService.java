package dev.tumbler.peer.provider;

import dev.tumbler.lock.HeldLock;
import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockTransaction;
import dev.tumbler.lock.ReadWriteLock;
import dev.tumbler.lock.Semaphore;
import dev.tumbler.lock.ServiceClosedException;
import dev.tumbler.lock.ServiceInfo;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.TransactionOptions;
import dev.tumbler.lock.spi.AbstractLockService;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.lock.spi.LockElection;
import dev.tumbler.lock.spi.SimpleReadWriteLock;
import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.node.NodeStats;
import dev.tumbler.peer.runtime.PeerNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * One client session on a native node. Several services may share a node (same node URL in one JVM);
 * each has its own session, and closing it releases its grants and ends its waits without touching the
 * others'. It keeps what its algorithm keeps ({@code Algorithm.capabilities()}): read/write locks and
 * elections only where the algorithm serves them. {@code unwrap(NodeStats.class)} gives the node's counters.
 * Thread safe.
 */
final class NativeLockService extends AbstractLockService {

  private static final AtomicLong SESSIONS = new AtomicLong();
  private static final AtomicLong CANDIDATES = new AtomicLong();
  /** Starts the name an election's lock has in the core: no qualified lock name starts with a letter. */
  private static final String ELECTION_PREFIX = "e";
  /** The longest a candidate that does not lead waits to learn who does (at most {@code peerTimeout}). */
  private static final Duration LEADER_LOOKUP_WAIT = Duration.ofSeconds(1);
  /** How much longer than {@code peerTimeout} a listing waits (the node's own wait for the server ends at it). */
  private static final Duration LISTING_GRACE = Duration.ofSeconds(1);
  /** The pause before a listing asks again when no server could be asked. */
  private static final Duration LISTING_RETRY = Duration.ofMillis(50);

  private final NativeSettings settings;
  private final NodeRegistry.Shared shared;
  private final String session;
  private final NodeStats stats;

  NativeLockService(String redactedUrl, NativeSettings settings) {
    super(new ServiceInfo("native", NativeLockProvider.VERSION, redactedUrl, settings.capabilities()),
        settings.lease(), Ticker.system());
    this.settings = settings;
    this.shared = NodeRegistry.acquire(settings, redactedUrl);
    this.session = shared.node.nodeId() + "#" + SESSIONS.incrementAndGet();
    this.stats = new NodeStatsView(shared.node);
  }

  @Override
  protected Lock createLock(String name) {
    return new NativeLock(this, name, Claim.exclusive(settings.qualify(name)));
  }

  @Override
  protected ReadWriteLock createReadWriteLock(String name) {
    String q = settings.qualify(name);
    return new SimpleReadWriteLock(name, new NativeLock(this, name, Claim.read(q)),
        new NativeLock(this, name, settings.algorithm().writeClaim(q, settings.algorithmSettings())));
  }

  /** {@inheritDoc} On every native node: see {@link NativeSemaphore}. */
  @Override
  protected Semaphore createSemaphore(String name, int maxPermits) {
    return new NativeSemaphore(this, name, maxPermits);
  }

  /** The term and renewal of this service's semaphore permits ({@link NativeSettings#semaphoreLease()}). */
  LeaseSettings semaphoreSettings() {
    return settings.semaphoreLease();
  }

  /** {@inheritDoc} Only where the algorithm serves transactions ({@code agent}): see {@link NativeTransaction}. */
  @Override
  protected LockTransaction createTransaction(TransactionOptions options) {
    return new NativeTransaction(this, options);
  }

  /** Every member of the cluster, this node included, sorted. */
  List<String> members() {
    java.util.TreeSet<String> all = new java.util.TreeSet<>(settings.peers());
    all.add(shared.node.nodeId());
    return List.copyOf(all);
  }

  /**
   * {@inheritDoc} Leadership is holding a lock of the election's own (never one of the locks), so the
   * election is as fair and as fault tolerant as the algorithm's locks. The claim carries the candidate id
   * as its tag: where the algorithm answers holder queries, a candidate that does not lead asks the core who
   * holds the lock; elsewhere who leads is known only to the leader.
   */
  @Override
  protected LeaderElection createElection(String name) {
    String candidate = session + "." + CANDIDATES.incrementAndGet();
    String lockName = ELECTION_PREFIX + settings.qualify(name);
    Lock lock = new NativeLock(this, name, Claim.exclusive(lockName).withTag(candidate));
    Supplier<Optional<String>> lookup = settings.algorithm().answersHolderQueries()
        ? () -> leaderLookup(lockName, candidate) : Optional::empty;
    return new LockElection(this, name, lock, candidate, lookup);
  }

  /**
   * Who holds the election lock {@code lockName}, by the node's holder query, waited for at most
   * {@link #LEADER_LOOKUP_WAIT} (or {@code peerTimeout} if shorter). Empty when the answer does not come in
   * time, the node is closed, the thread is interrupted (its flag is set again), or the core names
   * {@code candidate} itself: asked only when that candidate does not lead, the core can name it only while
   * the leaders still hold its lapsed or just released claim.
   */
  private Optional<String> leaderLookup(String lockName, String candidate) {
    long waitNanos = Math.min(LEADER_LOOKUP_WAIT.toNanos(), settings.peerTimeout().toNanos());
    CompletableFuture<Optional<String>> answer = shared.node.holder(lockName);
    try {
      return answer.get(waitNanos, TimeUnit.NANOSECONDS).filter(id -> !id.equals(candidate));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    } catch (ExecutionException | TimeoutException e) {
      return Optional.empty();
    } finally {
      answer.cancel(false); // forgets the query if it is still waiting
    }
  }

  /**
   * {@inheritDoc} Where the algorithm has a server that knows every node's grants ({@code lease}, {@code buckets}; and
   * semaphores, which a server serves beside every algorithm): the grants under this service's namespace by that
   * server's word, this node's own as this node knows them (a thin client's: by its member's listing); under
   * {@code bakery}, by a majority of its leaders' tables; under {@code agent}, by the word of a majority of the members'
   * lock servers. Elsewhere empty (cannot say). While no
   * server can be asked (an election under way, too few members reachable) it asks again; it waits at most
   * {@code peerTimeout} and a second for the answer.
   *
   * <p>An interrupt ends the wait at once with {@link ServiceUnavailableException}, the thread's interrupt status kept;
   * closing the service during the wait ends it with {@link ServiceClosedException}. A listing changes nothing: an
   * abandoned one is forgotten by the node within {@code peerTimeout}.
   *
   * @throws ServiceUnavailableException if no server answers in time (none elected, or too few reachable), the node
   *     stopped, or the thread was interrupted
   * @throws ServiceClosedException if the service was closed
   */
  @Override
  protected Optional<List<HeldLock>> listHeldLocks() {
    if (!settings.algorithm().listsHeld()) {
      return Optional.empty();
    }
    String prefix = settings.qualify("");
    long waitNanos = settings.peerTimeout().plus(LISTING_GRACE).toNanos();
    long deadline = System.nanoTime() + waitNanos;
    while (true) {
      Optional<List<Output.Listed>> got = listingOnce(List.of(prefix, ELECTION_PREFIX + prefix), deadline);
      if (isClosed()) {
        throw closedException(); // closed while it waited: what the node said no longer answers for this service
      }
      if (got.isPresent()) {
        List<HeldLock> held = new ArrayList<>();
        for (Output.Listed l : got.get()) {
          held.add(heldLock(l, prefix));
        }
        return Optional.of(List.copyOf(held));
      }
      // no server reachable now (an election under way, a link coming up): ask again until the wait ends
      if (System.nanoTime() - deadline >= 0) {
        throw new ServiceUnavailableException("no " + settings.algorithm().name() + " server answered the listing of "
            + "held locks of " + info().url() + " within " + TimeUnit.NANOSECONDS.toMillis(waitNanos)
            + " ms (none elected, too few reachable from node " + shared.node.nodeId() + ", or an answer larger than "
            + "the links' maxFrameSize)");
      }
      try {
        Thread.sleep(Math.max(1, Math.min(LISTING_RETRY.toMillis(),
            TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ServiceUnavailableException("interrupted while listing the held locks of " + info().url(), e);
      }
    }
  }

  /** One listing by the node, waited for until {@code deadline}: empty when the node could not ask a server. */
  private Optional<List<Output.Listed>> listingOnce(List<String> prefixes, long deadline) {
    CompletableFuture<Optional<List<Output.Listed>>> answer = shared.node.listing(prefixes);
    try {
      return answer.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ServiceUnavailableException("interrupted while listing the held locks of " + info().url(), e);
    } catch (TimeoutException e) {
      return Optional.empty();
    } catch (ExecutionException e) {
      if (isClosed()) {
        ServiceClosedException c = closedException();
        c.initCause(e.getCause());
        throw c;
      }
      // the node stopped under a service nobody closed (it crashed): the service is cut off, not closed
      throw new ServiceUnavailableException("cannot list the held locks of " + info().url() + ": native node "
          + shared.node.nodeId() + " stopped (" + e.getCause().getMessage() + ")", e.getCause());
    } finally {
      answer.cancel(false); // forgets the query if it is still waiting
    }
  }

  /** A listed claim under this service's namespace ({@code prefix}) as the API gives it. */
  private static HeldLock heldLock(Output.Listed l, String prefix) {
    boolean election = l.name().startsWith(ELECTION_PREFIX + prefix);
    String name = l.name().substring((election ? ELECTION_PREFIX + prefix : prefix).length());
    String kind = election ? "election" : switch (l.mode()) {
      case EXCLUSIVE -> "mutex";
      case READ -> "read";
      case WRITE -> "write";
      case PERMITS -> "semaphore";
    };
    OptionalLong token = l.token() > 0 ? OptionalLong.of(l.token()) : OptionalLong.empty();
    Optional<Duration> remaining = l.remainingNanos() >= 0 ? Optional.of(Duration.ofNanos(l.remainingNanos()))
        : Optional.empty();
    return new HeldLock(name, kind, l.holder(), token, l.tokenIsHolders() && token.isPresent(), remaining);
  }

  @Override
  protected void doClose() {
    shared.node.closeSession(session);
    NodeRegistry.release(shared);
  }

  /** {@inheritDoc} {@code NodeStats} only, as a view: the node runtime itself is not handed out. */
  @Override
  protected Object unwrapProvider(Class<?> type) {
    return type == NodeStats.class ? stats : null;
  }

  NativeSettings nativeSettings() {
    return settings;
  }

  PeerNode<?> node() {
    return shared.node;
  }

  String session() {
    return session;
  }
}
