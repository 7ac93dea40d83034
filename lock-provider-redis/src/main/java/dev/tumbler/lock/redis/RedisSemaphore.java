package dev.tumbler.lock.redis;

import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.AbstractSemaphore;
import dev.tumbler.lock.spi.Deadline;
import java.util.List;

/**
 * A counting semaphore on Redis with expirable permits: each grant is a holder entry scored by its
 * expiry (server time) plus its permit count; every acquire first drops the entries whose time has
 * passed, so the permits of a crashed holder come back when its lease ends. Fair on one server: waiters
 * are granted strictly in the order they asked (see {@link Scripts}). Every handle checks the limit it was
 * created with, so all handles of one name should agree on {@code maxPermits}. Thread safe.
 */
final class RedisSemaphore extends AbstractSemaphore {
  private final RedisLockService service;
  private final Primitive primitive;

  RedisSemaphore(RedisLockService service, String name, int maxPermits, Primitive primitive) {
    super(service, name, maxPermits);
    this.service = service;
    this.primitive = primitive;
  }

  @Override
  protected AbstractLease doAcquire(int permits, Deadline deadline) throws InterruptedException {
    return service.acquire(primitive, service.clientId(), permits,
        List.of(Integer.toString(permits), Integer.toString(maxPermits())), deadline);
  }

  @Override
  public int availablePermits() {
    return service.availablePermits(primitive, maxPermits());
  }
}
