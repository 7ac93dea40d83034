package dev.tumbler.lock.zookeeper;

import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.AbstractSemaphore;
import dev.tumbler.lock.spi.Deadline;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

/**
 * A counting semaphore on ZooKeeper: a fair queue of requests, each one ephemeral sequential node whose
 * name carries the permits it asks for ({@code <marker>-p<permits>-lock-<sequence>}).
 *
 * <h2>Rule</h2>
 * A request is granted when the permits of every node from the head of the queue up to and including it
 * add up to at most {@code maxPermits}. This is safe: take the granted node {@code g} furthest back in
 * the queue; every other current holder is ahead of it, so it was created before {@code g}, existed when
 * {@code g} was granted, and was counted then; nodes are never inserted ahead of existing ones. It is
 * fair: a large request at the head is not overtaken by smaller ones behind it. Requests are taken as one
 * block, so two clients each asking for most of the permits cannot deadlock each other (Curator's
 * {@code InterProcessSemaphoreV2} takes permits one by one and can).
 *
 * <h2>Fencing</h2>
 * The grant is confirmed by a {@code setData} on the request's own node; the token is that write's zxid
 * (see {@link ZooKeeperLockService}).
 *
 * <p>Every handle of one name must use the same {@code maxPermits}: each client applies its own. Waiters
 * watch the queue's children (any release may make room). Thread safe.
 */
final class ZooKeeperSemaphore extends AbstractSemaphore {
  private static final Pattern NODE = Pattern.compile("-p(\\d{1,10})-lock-(\\d+)$");
  private static final byte[] EMPTY = new byte[0];

  private final ZooKeeperLockService service;
  private final String dir;

  ZooKeeperSemaphore(ZooKeeperLockService service, String name, String dir, int maxPermits) {
    super(service, name, maxPermits);
    this.service = service;
    this.dir = dir;
  }

  /** One request in the queue, its name parsed once per listing. */
  record Request(String node, long sequence, long permits) {}

  @Override
  public int availablePermits() {
    service.checkOpen();
    List<Request> queue;
    try {
      queue = sorted(service.client().getChildren().forPath(dir));
    } catch (KeeperException.NoNodeException e) {
      return maxPermits();
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw service.unavailable("read the permits of '" + name() + "'", e);
    }
    long held = 0;
    for (Request r : queue) {
      long next = held + r.permits();
      if (next > maxPermits()) {
        break;
      }
      held = next;
    }
    return (int) (maxPermits() - held);
  }

  @Override
  public String toString() {
    return "ZooKeeperSemaphore[" + name() + ", max " + maxPermits() + " at " + dir + "]";
  }

  @Override
  protected AbstractLease doAcquire(int permits, Deadline deadline) throws InterruptedException {
    CuratorFramework client = service.client();
    String marker = service.newMarker();
    long gen = service.generation();
    java.util.concurrent.Semaphore wake = new java.util.concurrent.Semaphore(0);
    Watcher watcher = event -> wake.release();
    String path = null;
    try {
      // no withProtection(): see QueueDriver; duplicates of a retried create are deleted below
      path = client.create().creatingParentContainersIfNeeded()
          .withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(dir + "/" + marker + "-p" + permits + "-lock-", EMPTY);
      String node = ZKPaths.getNodeFromPath(path);
      while (true) {
        long sent = service.ticker().read();
        List<Request> queue = sorted(client.getChildren().usingWatcher(watcher).forPath(dir));
        // the permits asked by every request from the head up to ours; ours absent: our session expired
        long ahead = 0;
        boolean found = false;
        for (Request r : queue) {
          if (!r.node().equals(node) && ZooKeeperLockService.carries(r.node(), marker)) {
            service.deleteNow(new ZooKeeperLockService.Cleanup(null, null, dir + "/" + r.node()));
            continue; // an orphan of a create that Curator retried: ours, not ahead of us
          }
          ahead += r.permits();
          if (r.node().equals(node)) {
            found = true;
            break;
          }
        }
        if (!found) {
          path = null;
          return null; // our session expired while we waited: start over
        }
        if (ahead <= maxPermits()) {
          Stat s = client.setData().forPath(path, EMPTY);
          String granted = path;
          path = null; // from here the lease (or granted()) owns the node
          return service.granted(name(), granted, s.getEphemeralOwner(), s.getMzxid(), permits, sent, gen);
        }
        long remaining = deadline.remainingNanos();
        if (remaining == 0) {
          String timedOut = path;
          path = null;
          service.deleteNow(new ZooKeeperLockService.Cleanup(null, null, timedOut));
          return null;
        }
        if (wake.tryAcquire(remaining, TimeUnit.NANOSECONDS)) {
          wake.drainPermits();
        }
      }
    } catch (KeeperException.NoNodeException e) {
      // the node vanished between listing and confirming (session expired): start over
      return null;
    } catch (InterruptedException e) {
      service.abandon(dir, marker, path);
      throw e;
    } catch (Exception e) {
      service.abandon(dir, marker, path);
      throw service.unavailable("acquire " + permits + " permits of '" + name() + "'", e);
    }
  }

  /** The queue in sequence order; names that are not requests are left out. */
  static List<Request> sorted(List<String> children) {
    List<Request> out = new ArrayList<>(children.size());
    for (String c : children) {
      Matcher m = NODE.matcher(c);
      if (m.find()) {
        out.add(new Request(c, Long.parseLong(m.group(2)), Long.parseLong(m.group(1))));
      }
    }
    out.sort(Comparator.comparingLong(Request::sequence));
    return out;
  }
}
