package dev.tumbler.lock.zookeeper;

import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.AbstractLock;
import dev.tumbler.lock.spi.Deadline;

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
  private final ZooKeeperLockService service;
  private final String dir;
  private final QueueDriver.Mode mode;
  private final boolean confirm;
  private final byte[] data;

  ZooKeeperLock(ZooKeeperLockService service, String name, String dir, QueueDriver.Mode mode, boolean confirm,
      byte[] data) {
    super(service, name);
    this.service = service;
    this.dir = dir;
    this.mode = mode;
    this.confirm = confirm;
    this.data = data;
  }

  @Override
  protected AbstractLease doAcquire(Deadline deadline) throws InterruptedException {
    return service.acquireQueued(name(), dir, mode, confirm, data, deadline);
  }

  @Override
  public String toString() {
    return "ZooKeeperLock[" + name() + (confirm ? ", " + mode : "") + " at " + dir + "]";
  }
}
