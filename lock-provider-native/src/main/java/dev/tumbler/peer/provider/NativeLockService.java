package dev.tumbler.peer.provider;

import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockTransaction;
import dev.tumbler.lock.ReadWriteLock;
import dev.tumbler.lock.Semaphore;
import dev.tumbler.lock.ServiceInfo;
import dev.tumbler.lock.TransactionOptions;
import dev.tumbler.lock.spi.AbstractLockService;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.lock.spi.LockElection;
import dev.tumbler.lock.spi.SimpleReadWriteLock;
import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.node.NodeStats;
import dev.tumbler.peer.runtime.PeerNode;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
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
