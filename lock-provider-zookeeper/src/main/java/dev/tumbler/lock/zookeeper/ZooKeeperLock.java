package dev.tumbler.lock.zookeeper;

import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.AbstractLock;
import dev.tumbler.lock.spi.Deadline;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * An exclusive lock, or one side of a read/write lock, on ZooKeeper: a handle that holds nothing. Each
 * acquire queues one ephemeral sequential node and waits in Curator's lock engine (see
 * {@link QueueDriver}); waiters are granted first come, first served.
 *
 * <p>Timeout: a wait that ends deletes its node and returns empty. Interrupt: the node is deleted in the
 * background and {@link InterruptedException} thrown. Service closed during the wait:
 * {@link dev.tumbler.lock.ServiceClosedException}. Thread safe.
 */
final class ZooKeeperLock extends AbstractLock {
  private static final byte[] EMPTY = new byte[0];

  private final ZooKeeperLockService service;
  private final String dir;
  private final QueueDriver.Mode mode;
  private final boolean confirm;
  private final byte[] data;

  /**
   * @param confirm whether a grant is confirmed by a {@code setData} whose zxid is the token (shared grants,
   *     see {@link ZooKeeperLockService}); otherwise the token is the node's {@code czxid}
   * @param data what the queue node holds (an election candidate's id), or null for nothing
   */
  ZooKeeperLock(ZooKeeperLockService service, String name, String dir, QueueDriver.Mode mode, boolean confirm,
      byte[] data) {
    super(service, name);
    this.service = service;
    this.dir = dir;
    this.mode = mode;
    this.confirm = confirm;
    this.data = data;
  }

  /**
   * One acquire through Curator's lock engine.
   *
   * @return the lease, or null when the deadline passed (or the grant raced with a suspension)
   */
  @Override
  protected AbstractLease doAcquire(Deadline deadline) throws InterruptedException {
    CuratorFramework client = service.client();
    QueueDriver driver = new QueueDriver(mode, service.ticker(), service.newMarker(), data);
    InterProcessMutex engine = new InterProcessMutex(client, dir, driver);
    long gen = service.generation();
    boolean granted;
    try {
      if (deadline.isNone()) {
        engine.acquire();
        granted = true;
      } else {
        granted = engine.acquire(deadline.remainingNanos(), TimeUnit.NANOSECONDS);
      }
    } catch (InterruptedException e) {
      service.abandon(dir, driver.marker(), driver.ourPath());
      throw e;
    } catch (Exception e) {
      service.abandon(dir, driver.marker(), driver.ourPath());
      throw service.unavailable("acquire '" + name() + "'", e);
    }
    if (!granted) {
      service.checkOpen();
      return null;
    }
    String path = driver.ourPath();
    long sent = driver.grantedListingSent();
    long token = driver.czxid();
    long owner = driver.ephemeralOwner();
    try {
      if (confirm) {
        sent = service.ticker().read();
        Stat s = client.setData().forPath(path, EMPTY);
        token = s.getMzxid();
        owner = s.getEphemeralOwner();
      } else if (token == 0 || owner == 0) {
        // Curator found our node after a connection loss instead of reading the create reply
        sent = service.ticker().read();
        Stat s = client.checkExists().forPath(path);
        if (s == null) {
          return null;
        }
        token = s.getCzxid();
        owner = s.getEphemeralOwner();
      }
    } catch (KeeperException.NoNodeException e) {
      return null; // the session expired right after the grant: try again
    } catch (InterruptedException e) {
      service.abandon(dir, driver.marker(), path);
      throw e;
    } catch (Exception e) {
      service.abandon(dir, driver.marker(), path);
      throw service.unavailable("acquire '" + name() + "'", e);
    }
    return service.granted(name(), path, owner, token, 1, sent, gen);
  }

  @Override
  public String toString() {
    return "ZooKeeperLock[" + name() + (confirm ? ", " + mode : "") + " at " + dir + "]";
  }
}
