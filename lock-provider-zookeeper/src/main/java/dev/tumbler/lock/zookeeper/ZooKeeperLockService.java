package dev.tumbler.lock.zookeeper;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.HeldLock;
import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.ReadWriteLock;
import dev.tumbler.lock.Semaphore;
import dev.tumbler.lock.ServiceInfo;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.AbstractLockService;
import dev.tumbler.lock.spi.LockElection;
import dev.tumbler.lock.spi.SimpleReadWriteLock;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.lock.spi.Ticker;
import java.time.Duration;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.LockInternals;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.retry.RetryUntilElapsed;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link dev.tumbler.lock.LockService} on a ZooKeeper ensemble through one Curator client (one
 * ZooKeeper session).
 *
 * <h2>Layout</h2>
 * Every lock lives in a directory {@code <root>/<kind>/<escaped name>} (see {@link ZNodeNames}), where
 * {@code <root>} is the URL's chroot (default {@code /tumbler}) plus the escaped {@code namespace}, and
 * kind is {@code locks}, {@code rwlocks} or {@code semaphores}. Holders and waiters are ephemeral
 * sequential nodes in that directory, created in Curator's protected mode (a create whose reply is lost
 * to a connection loss is found again instead of leaving a ghost node). Directories are container nodes,
 * which ZooKeeper removes once empty.
 *
 * <h2>Connection state becomes lease state</h2>
 * Curator's locks never report their own loss. This service listens to Curator's connection state and
 * turns it into lease state: {@code SUSPENDED} marks every lease of the service lost
 * ({@link LeaseLostEvent.Reason#CONNECTION_LOST}), {@code LOST} (session expired) marks them
 * {@link LeaseLostEvent.Reason#REVOKED}. A grant that races with a suspension is given up, not returned.
 * See {@link ZooKeeperLease} for the timing argument.
 *
 * <h2>Fencing</h2>
 * Every fencing token is a ZooKeeper transaction id (zxid). Zxids are assigned by the ensemble's leader
 * in one total order and only grow, across leader changes (the epoch is the high half) and for the life
 * of the ensemble's data, whatever the clients do: so they keep growing after a lock's nodes and
 * directory were cleaned up, and across client restarts. Which zxid:
 *
 * <ul>
 *   <li>Exclusive lock: the {@code czxid} of the holder's queue node, read from the create reply (no
 *       extra round trip). Grants follow queue order, a node is granted only when every node created
 *       before it in the directory is gone, and nodes are numbered in creation (zxid) order; so a later
 *       grant's node was created after an earlier grant's node, and has the larger czxid. A directory
 *       that was removed when idle and created again does not break this: the new nodes are created
 *       after the old ones were deleted.
 *   <li>Read/write lock and semaphore: shared grants can be granted out of creation order (a slow reader
 *       created first may notice its grant after a later one), so the holder confirms its grant with a
 *       {@code setData} on its own node and the token is that write's {@code mzxid}: one round trip
 *       more, and tokens then strictly increase in the order grants are confirmed. A write grant comes
 *       after every earlier read grant was released, so it is larger than all of them, and vice versa.
 * </ul>
 *
 * <h2>Waits</h2>
 * Waits are Curator's: a waiter watches the node ahead of it (no polling, no herd). Curator times them
 * on the wall clock: a wait Curator ends early is resumed until the deadline on the service's
 * {@link Ticker}; a backward wall-clock jump can lengthen a wait by the jump.
 *
 * <h2>Interrupts, timeouts, close</h2>
 * A wait that times out deletes its node. An interrupted or failed attempt deletes in the background its
 * node and every other node carrying its marker: a create whose reply was lost, and which Curator sent again,
 * left one more; a delete that fails for want of a connection is tried again after the next reconnect, or at
 * once if a reconnect came while it ran (and dropped when the session expires, which deletes the node
 * anyway). {@link #close()} interrupts
 * waits, releases every lease and closes the session, which removes whatever node is left. Thread safe.
 */
final class ZooKeeperLockService extends AbstractLockService {
  private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperLockService.class);

  static final Set<Capability> CAPABILITIES = Set.of(Capability.MUTEX, Capability.FAIR, Capability.READ_WRITE,
      Capability.SEMAPHORE, Capability.FENCING, Capability.LEASE_EXPIRY, Capability.LOST_NOTIFICATION,
      Capability.LEADER_ELECTION, Capability.FAULT_TOLERANT);

  private final ZooKeeperSettings zk;
  private final CuratorFramework client;
  private final Set<ZooKeeperLease> live = ConcurrentHashMap.newKeySet();
  /** Bumped on every SUSPENDED or LOST: a grant that saw a bump in between is not trusted. */
  private final AtomicLong generation = new AtomicLong();
  private final ConnectionStateListener stateListener = this::stateChanged;
  /** Random per service; with a counter it names each attempt's node (cheaper than a UUID per acquire). */
  private final String markerPrefix = Long.toHexString(new SecureRandom().nextLong() | Long.MIN_VALUE);
  private final AtomicLong attempts = new AtomicLong();
  /** Bumped on every CONNECTED or RECONNECTED, before {@link #pending} is looked at. */
  private final AtomicLong reconnects = new AtomicLong();

  /** Whether the client is this service's own, closed with it; false for the application's. */
  private final boolean ownsClient;
  /** Deletes running in the background: a service on the application's client waits for them on close. */
  private final java.util.concurrent.atomic.AtomicInteger deleting = new java.util.concurrent.atomic.AtomicInteger();

  private ZooKeeperLockService(ServiceInfo info, ZooKeeperSettings zk, LeaseSettings leaseSettings,
      CuratorFramework client, boolean ownsClient, Ticker ticker) {
    super(info, leaseSettings, ticker);
    this.zk = zk;
    this.client = client;
    this.ownsClient = ownsClient;
  }

  /**
   * Connects and waits for the first session.
   *
   * @throws ServiceUnavailableException if no server answers within the connection timeout
   */
  static ZooKeeperLockService connect(ServiceInfo info, ZooKeeperSettings zk, Ticker ticker) {
    CuratorFramework client = CuratorFrameworkFactory.builder()
        .connectString(zk.connectString())
        .sessionTimeoutMs((int) zk.sessionTimeout().toMillis())
        .connectionTimeoutMs((int) zk.connectionTimeout().toMillis())
        // an operation retries for at most one connection timeout, then fails as unavailable
        .retryPolicy(new RetryUntilElapsed((int) zk.connectionTimeout().toMillis(), 100))
        // talk only to the servers the URL names: Curator's ensemble tracker would replace them with the
        // client addresses the ensemble advertises, so a client behind a proxy, a tunnel or NAT would go
        // around it, and one whose path to its server broke would carry on through another on a session
        // its owner believes lost
        .ensembleTracker(false)
        .build();
    client.start();
    return open(info, zk, client, true, ticker);
  }

  /**
   * A service on the application's started Curator client: its session is the service's, its namespace applies,
   * and closing the service leaves it open (the service deletes its own nodes instead, since the session that
   * would take them along lives on).
   *
   * @throws dev.tumbler.lock.InvalidLockUrlException if the client is not started
   * @throws ServiceUnavailableException if the client is not connected within the connection timeout
   */
  static ZooKeeperLockService connect(ServiceInfo info, ZooKeeperSettings zk, CuratorFramework client, Ticker ticker) {
    if (client.getState() != org.apache.curator.framework.imps.CuratorFrameworkState.STARTED) {
      throw new dev.tumbler.lock.InvalidLockUrlException("the application's Curator client passed under '"
          + ZooKeeperLockProvider.CURATOR + "' is " + client.getState() + ", not STARTED: start it before connecting");
    }
    return open(info, zk, client, false, ticker);
  }

  private static ZooKeeperLockService open(ServiceInfo info, ZooKeeperSettings zk, CuratorFramework client,
      boolean own, Ticker ticker) {
    boolean connected;
    try {
      connected = client.blockUntilConnected((int) zk.connectionTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      if (own) {
        closeInBackground(client);
      }
      throw new ServiceUnavailableException("interrupted while connecting to ZooKeeper at " + zk.connectString());
    }
    if (!connected) {
      // a server that accepts and never answers would hold close() for a whole session timeout
      if (own) {
        closeInBackground(client);
      }
      throw new ServiceUnavailableException("cannot connect to ZooKeeper at " + zk.connectString() + " within "
          + zk.connectionTimeout().toMillis() + "ms");
    }
    LeaseSettings lease = zk.lease();
    try {
      int negotiated = client.getZookeeperClient().getZooKeeper().getSessionTimeout();
      if (!own) {
        // the session is the application's: its timeout is the term
        lease = lease.withLeaseTime(Duration.ofMillis(Math.max(negotiated, LeaseSettings.MIN_LEASE_TIME.toMillis())));
      } else if (negotiated > 0 && negotiated != zk.sessionTimeout().toMillis()) {
        LOG.warn("ZooKeeper at {} negotiated a session timeout of {}ms instead of the {}ms asked; leases use {}ms",
            zk.connectString(), negotiated, zk.sessionTimeout().toMillis(), negotiated);
        lease = lease.withLeaseTime(Duration.ofMillis(Math.max(negotiated, LeaseSettings.MIN_LEASE_TIME.toMillis())));
      }
    } catch (Exception e) {
      if (own) {
        closeInBackground(client);
      }
      throw new ServiceUnavailableException("cannot open a ZooKeeper session at " + zk.connectString() + ": " + e, e);
    }
    ZooKeeperLockService s = new ZooKeeperLockService(info, zk, lease, client, own, ticker);
    client.getConnectionStateListenable().addListener(s.stateListener);
    return s;
  }

  /**
   * Whether nothing is left to delete: the service is closed and so is its own client, whose session took every
   * node along. On the application's client the session lives on, and the service's deletes go on after close.
   */
  private boolean sessionEnded() {
    return ownsClient && isClosed();
  }

  /** Runs a delete in the background, counted in {@link #deleting}. */
  private void inBackground(String name, Runnable delete) {
    deleting.incrementAndGet();
    try {
      Thread.ofVirtual().name(name).start(() -> {
        try {
          delete.run();
        } finally {
          deleting.decrementAndGet();
        }
      });
    } catch (RuntimeException | Error e) {
      deleting.decrementAndGet();
      throw e;
    }
  }

  // ---- handles

  /** The directory of the queue of {@code name} among the handles of {@code kind} ("locks", "rwlocks", ...). */
  String dir(String kind, String name) {
    return zk.path(kind, name);
  }

  @Override
  protected Lock createLock(String name) {
    return new ZooKeeperLock(this, name, dir("locks", name), QueueDriver.Mode.WRITE, false, null);
  }

  @Override
  protected ReadWriteLock createReadWriteLock(String name) {
    String dir = dir("rwlocks", name);
    return new SimpleReadWriteLock(name, new ZooKeeperLock(this, name, dir, QueueDriver.Mode.READ, true, null),
        new ZooKeeperLock(this, name, dir, QueueDriver.Mode.WRITE, true, null));
  }

  @Override
  protected Semaphore createSemaphore(String name, int maxPermits) {
    return new ZooKeeperSemaphore(this, name, zk.path("semaphores", name), maxPermits);
  }

  /**
   * An election is a fair exclusive lock in {@code <root>/elections/<name>} whose holder leads (see
   * {@link LockElection}); each candidate's queue node carries its candidate id, so anyone can tell who
   * leads by reading the node at the head of the queue.
   */
  @Override
  protected LeaderElection createElection(String name) {
    String dir = dir("elections", name);
    String candidate = UUID.randomUUID().toString();
    ZooKeeperLock lock = new ZooKeeperLock(this, name, dir, QueueDriver.Mode.WRITE, false,
        candidate.getBytes(StandardCharsets.UTF_8));
    return new LockElection(this, name, lock, candidate, () -> leaderOf(dir));
  }

  /** See {@link ZooKeeperHeldLocks}: the queues under the root; tokens are the grants' own zxids. */
  @Override
  protected Optional<List<HeldLock>> listHeldLocks() {
    try {
      return Optional.of(ZooKeeperHeldLocks.list(client, zk.root()));
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw unavailable("list the held locks under " + zk.root(), e);
    }
  }

  private Optional<String> leaderOf(String dir) {
    try {
      List<String> queue = LockInternals.getSortedChildren(client, dir, QueueDriver.LOCK_NAME,
          StandardLockInternalsDriver::standardFixForSorting);
      if (queue.isEmpty()) {
        return Optional.empty();
      }
      byte[] data = client.getData().forPath(dir + "/" + queue.get(0));
      return data.length == 0 ? Optional.empty() : Optional.of(new String(data, StandardCharsets.UTF_8));
    } catch (KeeperException.NoNodeException e) {
      return Optional.empty();
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw unavailable("read the leader of " + dir, e);
    }
  }

  @Override
  protected Object unwrapProvider(Class<?> type) {
    return type.isInstance(client) ? client : null;
  }

  @Override
  protected void doClose() {
    if (!ownsClient) {
      // the application's session lives on, and so would every node of this service left in it: wait (one
      // connection timeout at most) for the deletes of the leases just released and the attempts just ended, then
      // try once more what failed
      long end = System.nanoTime() + zk.connectionTimeout().toNanos();
      while (deleting.get() > 0 && System.nanoTime() < end) {
        java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
      }
      if (!pending.isEmpty() && client.getZookeeperClient().isConnected()) {
        List.copyOf(pending).forEach(this::deleteNow);
      }
      if (!pending.isEmpty()) {
        // left in the application's session, they would hold back every later waiter on their names for as long as
        // that session lives: this service keeps listening for a reconnect, deletes them then, and stops listening
        // once none is left (or the session is lost, which took them along)
        LOG.warn("closed with {} node(s) of {} still to delete in the application's ZooKeeper session: the backend "
            + "was not reachable; they are deleted at the next reconnect", pending.size(), zk.connectString());
      }
      stopListeningOnceDone();
      return;
    }
    client.getConnectionStateListenable().removeListener(stateListener);
    // closing the session deletes every node it still has, waiting or holding; an ensemble that does not
    // answer would hold the close for up to a session timeout: wait one connection timeout, then let the
    // close finish in the background (the server expires the session and its nodes in any case)
    Thread closer = closeInBackground(client);
    try {
      if (!closer.join(zk.connectionTimeout())) {
        LOG.debug("closing the ZooKeeper client of {} goes on in the background", zk.connectString());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static Thread closeInBackground(CuratorFramework client) {
    return Thread.ofVirtual().name("tumbler-zookeeper-close").start(() -> {
      try {
        client.close();
      } catch (RuntimeException e) {
        LOG.debug("closing a ZooKeeper client failed: {}", e.toString());
      }
    });
  }

  // ---- acquiring

  /**
   * Makes the lease of a grant, unless the connection was suspended since {@code gen} was read: then the
   * grant is given up (its node deleted) and null returned.
   */
  ZooKeeperLease granted(String name, String path, long owner, long token, int permits, long sent, long gen) {
    ZooKeeperLease lease = new ZooKeeperLease(this, name, path, owner, token, permits, settings(), ticker(), sent);
    // first listener: it only schedules the node's deletion, after every listener had time to run
    lease.onLost(e -> cleanUpLater(lease));
    live.add(lease);
    // add first, then check: stateChanged bumps first, then marks what is live; one of us sees the other
    if (generation.get() != gen) {
      live.remove(lease);
      deleteInBackground(path);
      LOG.debug("grant of '{}' raced with a connection suspension; given up", name);
      return null;
    }
    return lease;
  }

  // ---- lease support

  /** Whether {@code path} exists and belongs to session {@code sessionId}; throws if unreachable. */
  boolean stillOwned(String path, long sessionId) {
    try {
      Stat s = client.checkExists().forPath(path);
      return s != null && s.getEphemeralOwner() == sessionId;
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw unavailable("check the lease on " + path, e);
    }
  }

  /** Release: delete the node now (later, when the connection is down or the delete fails). */
  void released(ZooKeeperLease lease) {
    live.remove(lease);
    if (!client.getZookeeperClient().isConnected()) {
      deleteInBackground(lease.path());
      return;
    }
    deleteNow(new Cleanup(null, null, lease.path()));
  }

  private void cleanUpLater(ZooKeeperLease lease) {
    live.remove(lease);
    if (sessionEnded()) {
      return; // close() releases the lease and ends the session: no thread needs to wait for it
    }
    LeaseSettings s = lease.settings();
    long grace = s.expires() ? s.leaseTime().toNanos() - s.trustedNanos() : 0;
    Thread.ofVirtual().name("tumbler-zookeeper-cleanup").start(() -> {
      try {
        TimeUnit.NANOSECONDS.sleep(Math.max(0, grace));
      } catch (InterruptedException e) {
        return;
      }
      if (!lease.isReleased() && !sessionEnded()) {
        deleteInBackground(lease.path());
      }
    });
  }

  /**
   * Nodes to delete: {@code path} (null when an attempt's create reply never arrived), and, for an attempt
   * given up, every node in {@code dir} that carries {@code marker} (null for a release).
   */
  record Cleanup(String dir, String marker, String path) {}

  /**
   * Deletes that failed for want of a connection, tried again on every reconnect; dropped when the session
   * expires, which deletes the nodes itself. Curator's own retrying deletes ({@code guaranteed()}) and
   * protected creates are not used: while the ensemble is unreachable their background retries recurse
   * until {@code StackOverflowError} and log a stack trace per retry (CURATOR-106).
   */
  private final Set<Cleanup> pending = ConcurrentHashMap.newKeySet();

  /** Deletes a node without waiting; tried again after a reconnect if it fails. */
  void deleteInBackground(String path) {
    if (path == null || sessionEnded()) {
      return;
    }
    Cleanup c = new Cleanup(null, null, path);
    inBackground("tumbler-zookeeper-delete", () -> deleteNow(c));
  }

  /**
   * Gives up an attempt that failed or was interrupted: deletes its node, if it knows one, and every node in
   * {@code dir} carrying {@code marker} (a create reply that never arrived, a create Curator sent again). Runs
   * in the background, since the caller may be interrupted.
   */
  void abandon(String dir, String marker, String path) {
    if (sessionEnded()) {
      return;
    }
    Cleanup c = new Cleanup(dir, marker, path);
    inBackground("tumbler-zookeeper-abandon", () -> deleteNow(c));
  }

  /**
   * One try, on the calling thread: deletes the cleanup's node, then, for an attempt given up, every node of the
   * directory that carries its marker. On failure the cleanup waits in {@link #pending} for a reconnect, or is
   * tried again at once when a reconnect came while this try ran: that reconnect may have looked at
   * {@link #pending} before the cleanup was in it, and the next one may be far off.
   */
  void deleteNow(Cleanup c) {
    if (sessionEnded()) {
      return;
    }
    long seen = reconnects.get();
    try {
      if (c.path() != null) {
        try {
          client.delete().forPath(c.path());
        } catch (KeeperException.NoNodeException gone) {
          // deleted meanwhile, or by Curator itself
        }
      }
      if (c.marker() != null) {
        // a create Curator sent again after a lost reply left a node of ours beside c.path(): the queue driver
        // deletes it only at the next listing, which a failed or interrupted attempt may never reach
        for (String child : client.getChildren().forPath(c.dir())) {
          if (carries(child, c.marker())) {
            try {
              client.delete().forPath(c.dir() + "/" + child);
            } catch (KeeperException.NoNodeException gone) {
              // deleted meanwhile
            }
          }
        }
      }
      done(c);
    } catch (KeeperException.NoNodeException e) {
      done(c); // nothing left
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      if (pending.add(c)) {
        LOG.debug("cannot delete {} now; trying again after a reconnect: {}", c.path() != null ? c.path()
            : "the nodes of " + c.marker() + " in " + c.dir(), e.toString());
      }
      if (reconnects.get() != seen && !sessionEnded()) {
        inBackground("tumbler-zookeeper-cleanup", () -> deleteNow(c));
      }
    }
  }

  /**
   * A cleanup that succeeded is no longer pending. Most never were (a release deletes at once), so the record is
   * hashed only when something is pending at all: hashing its three fields on every release was the largest
   * cost of the provider's own on the release path.
   */
  private void done(Cleanup c) {
    if (!pending.isEmpty()) {
      pending.remove(c);
      stopListeningOnceDone();
    }
  }

  /**
   * A closed service listens to the application's client only while it has nodes to delete at a reconnect: once none
   * is left (deleted, or gone with a lost session) it lets go of the client.
   */
  private void stopListeningOnceDone() {
    if (isClosed() && pending.isEmpty()) {
      client.getConnectionStateListenable().removeListener(stateListener);
    }
  }

  /**
   * Whether queue node {@code child} was created by the attempt of {@code marker}: the marker starts the name
   * (older nodes: it follows Curator's protection prefix, after a '-') and is followed by '-'. Runs for every
   * node of every queue listing, so it builds no strings.
   */
  static boolean carries(String child, String marker) {
    int m = marker.length();
    for (int i = child.indexOf(marker); i >= 0; i = child.indexOf(marker, i + 1)) {
      if ((i == 0 || child.charAt(i - 1) == '-') && child.startsWith("-", i + m)) {
        return true;
      }
    }
    return false;
  }

  /** Deletes of this session that failed, tried again (iteratively, each once) after a reconnect. */
  int pendingCleanups() {
    return pending.size();
  }

  /** A marker no other attempt of any client uses, put in a queue node's name to find it again. */
  String newMarker() {
    return markerPrefix + Long.toHexString(attempts.incrementAndGet());
  }

  /** The generation of the connection: changes on every suspension or session loss. */
  long generation() {
    return generation.get();
  }

  CuratorFramework client() {
    return client;
  }

  /** A wait the ensemble left unanswered: unavailable if this client is not connected, else a plain time-out. */
  @Override
  protected RuntimeException unanswered() {
    if (client.getZookeeperClient().isConnected()) {
      return null;
    }
    return new ServiceUnavailableException("not connected to ZooKeeper at " + zk.connectString()
        + "; the acquire was not answered within its wait plus " + ANSWER_GRACE_MILLIS + "ms");
  }

  /** The typed error for a backend failure, naming the ensemble (never a secret: the URL has none). */
  ServiceUnavailableException unavailable(String what, Exception e) {
    if (e instanceof ServiceUnavailableException su) {
      return su;
    }
    checkOpen();
    return new ServiceUnavailableException("cannot " + what + " on ZooKeeper at " + zk.connectString() + ": "
        + e, e);
  }

  // ---- connection state

  private void stateChanged(CuratorFramework c, ConnectionState state) {
    switch (state) {
      case SUSPENDED, READ_ONLY -> loseAll(LeaseLostEvent.Reason.CONNECTION_LOST,
          "the connection to ZooKeeper was suspended; the session may expire before it is back");
      case LOST -> {
        pending.clear(); // the session's ephemeral nodes are gone with it
        stopListeningOnceDone();
        loseAll(LeaseLostEvent.Reason.REVOKED, "the ZooKeeper session expired; its nodes are gone");
      }
      case CONNECTED, RECONNECTED -> {
        LOG.debug("ZooKeeper connection {}", state);
        reconnects.incrementAndGet(); // before looking at pending: see deleteNow
        if (!pending.isEmpty()) {
          List<Cleanup> retry = List.copyOf(pending);
          Thread.ofVirtual().name("tumbler-zookeeper-cleanup").start(() -> retry.forEach(this::deleteNow));
        }
      }
    }
  }

  private void loseAll(LeaseLostEvent.Reason reason, String detail) {
    generation.incrementAndGet();
    for (ZooKeeperLease lease : live) {
      lease.markLost(reason, detail, null);
    }
  }
}
