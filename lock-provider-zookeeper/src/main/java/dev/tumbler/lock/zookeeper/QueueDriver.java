package dev.tumbler.lock.zookeeper;

import dev.tumbler.lock.spi.Ticker;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.LockInternalsDriver;
import org.apache.curator.framework.recipes.locks.PredicateResults;
import org.apache.curator.framework.recipes.locks.StandardLockInternalsDriver;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * The strategy Curator's lock engine ({@code InterProcessMutex} and its {@code LockInternals} wait loop)
 * runs with for one acquire attempt of an exclusive lock, or of the read or write side of a read/write
 * lock. Curator's own recipe creates the queue node, lists the queue, asks this driver whether the node
 * is granted and, if not, which node to watch; it then waits for that node's deletion. This driver adds
 * what Tumbler needs and the stock driver hides:
 *
 * <ul>
 *   <li>the created node's path and {@link Stat} (its {@code czxid}, the fencing token of an exclusive
 *       grant), read from the create reply itself, so no round trip is added;
 *   <li>a marker of its own in the node name ({@code <marker>-w-lock-}), so that a node whose create
 *       reply never arrived (interrupt, connection loss) can still be found and deleted, and a duplicate
 *       left by a create that Curator retried is deleted rather than waited for;
 *   <li>read and write nodes in one queue: a write (or exclusive) node is granted when it is first; a read
 *       node when no write node is ahead of it. Both are first come, first served.
 *   <li>the moment the granting queue listing was requested, for the lease's client-side window.
 * </ul>
 *
 * <p>One instance per acquire attempt; used by the acquiring thread only (Curator calls it on that
 * thread), published to others through the lease.
 */
final class QueueDriver implements LockInternalsDriver {
  /** What the node asks for. */
  enum Mode {
    WRITE("w-"), READ("r-");

    final String tag;

    Mode(String tag) {
      this.tag = tag;
    }
  }

  static final String LOCK_NAME = "lock-";
  private static final byte[] NO_DATA = new byte[0];

  private final Mode mode;
  private final Ticker ticker;
  private final String marker;
  private final Stat stat = new Stat();
  private volatile String ourPath;
  private long createdAt;
  private long grantedListingSent;
  private int checks;

  private final byte[] data;

  /**
   * @param marker unique to this attempt (see {@link ZooKeeperLockService#newMarker()})
   * @param data what the node holds (an election candidate's id), or null for nothing
   */
  QueueDriver(Mode mode, Ticker ticker, String marker, byte[] data) {
    this.mode = mode;
    this.marker = marker;
    this.ticker = ticker;
    // an explicit empty payload: without one, Curator stores the client's IP address in the node
    this.data = data == null ? NO_DATA : data;
  }

  @Override
  public String createsTheLock(CuratorFramework client, String path, byte[] lockNodeBytes) throws Exception {
    // path is "<dir>/lock-"; ours is "<dir>/<marker>-<tag>lock-", built in one go (this runs on every acquire)
    int node = path.lastIndexOf('/') + 1;
    String ours = new StringBuilder(path.length() + marker.length() + 1 + mode.tag.length())
        .append(path, 0, node).append(marker).append('-').append(mode.tag).append(path, node, path.length())
        .toString();
    // no withProtection(): our marker finds a node whose create reply was lost, and Curator's protected
    // mode recurses in the background while the ensemble is unreachable (see ZooKeeperLockService)
    String created = client.create().storingStatIn(stat).creatingParentContainersIfNeeded()
        .withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(ours, data);
    ourPath = created;
    createdAt = ticker.read();
    checks = 0;
    return created;
  }

  @Override
  public PredicateResults getsTheLock(CuratorFramework client, List<String> children, String sequenceNodeName,
      int maxLeases) throws Exception {
    long now = ticker.read();
    children = withoutOrphans(client, children, sequenceNodeName);
    int ours = children.indexOf(sequenceNodeName);
    if (ours < 0) {
      // our node is gone (session expired); Curator's engine starts over with a new node
      throw new KeeperException.NoNodeException("lock node vanished: " + sequenceNodeName);
    }
    String watch = null;
    if (mode == Mode.WRITE) {
      watch = ours == 0 ? null : children.get(ours - 1);
    } else {
      for (int i = ours - 1; i >= 0; i--) {
        if (isWrite(children.get(i))) {
          watch = children.get(i);
          break;
        }
      }
    }
    if (watch == null) {
      // the listing that granted us was sent after our create returned (first check) or after the
      // previous check; see ZooKeeperLease for why the second case is within one round trip
      grantedListingSent = checks == 0 ? createdAt : now;
    }
    checks++;
    return new PredicateResults(watch, watch == null);
  }

  /**
   * The queue without this attempt's orphans: a create retried after a lost reply may have left an earlier
   * node with our marker, which would otherwise stand ahead of ours for as long as the session lives. Each is
   * deleted here.
   */
  private List<String> withoutOrphans(CuratorFramework client, List<String> children, String ours) throws Exception {
    List<String> kept = null;
    for (int i = 0; i < children.size(); i++) {
      String c = children.get(i);
      if (!c.equals(ours) && ZooKeeperLockService.carries(c, marker)) {
        if (kept == null) {
          kept = new java.util.ArrayList<>(children.subList(0, i));
        }
        try {
          client.delete().forPath(ZKPaths.makePath(ZKPaths.getPathAndNode(ourPath).getPath(), c));
        } catch (KeeperException.NoNodeException gone) {
          // deleted meanwhile
        }
      } else if (kept != null) {
        kept.add(c);
      }
    }
    return kept == null ? children : kept;
  }

  @Override
  public String fixForSorting(String str, String lockName) {
    return StandardLockInternalsDriver.standardFixForSorting(str, lockName);
  }

  static boolean isWrite(String child) {
    int i = child.lastIndexOf(LOCK_NAME);
    return i >= 2 && child.startsWith(Mode.WRITE.tag, i - 2);
  }

  /** The marker in this attempt's node name, to find the node when its create reply was lost. */
  String marker() {
    return marker;
  }

  /** The node created by the last create, or null. */
  String ourPath() {
    return ourPath;
  }

  /** The create's zxid, or 0 when Curator recovered the node without a reply (protection after a loss). */
  long czxid() {
    return ourPath == null ? 0 : stat.getCzxid();
  }

  /** The session that owns the node, or 0 when unknown. */
  long ephemeralOwner() {
    return ourPath == null ? 0 : stat.getEphemeralOwner();
  }

  /** Ticker reading no later than the sending of the queue listing that granted the node. */
  long grantedListingSent() {
    return grantedListingSent;
  }
}
