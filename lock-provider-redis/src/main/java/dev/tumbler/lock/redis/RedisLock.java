package dev.tumbler.lock.redis;

import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.AbstractLock;
import dev.tumbler.lock.spi.Deadline;
import java.util.List;

/**
 * A mutex, one side of a read/write lock, or the lock behind an election, on Redis. A cheap handle:
 * holds nothing until acquired. Thread safe.
 */
final class RedisLock extends AbstractLock {
  private final RedisLockService service;
  private final Primitive primitive;
  private final String label;

  /**
   * @param label written with each grant so others can tell who holds it (the candidate id of an election)
   */
  RedisLock(RedisLockService service, String name, Primitive primitive, String label) {
    super(service, name);
    this.service = service;
    this.primitive = primitive;
    this.label = label;
  }

  @Override
  protected AbstractLease doAcquire(Deadline deadline) throws InterruptedException {
    return service.acquire(primitive, label, 1, List.of(), deadline);
  }
}
