package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.AbstractSemaphore;
import dev.tumbler.lock.spi.Deadline;

/**
 * A counting semaphore in the lock table: each grant is a row holding its permits until it is released
 * or expires by the database clock, so the permits of a crashed holder come back when its lease ends. In
 * lease mode its waiters are served strictly in line (in advisory mode, not fair). Every handle checks the limit it was created with, so all handles of one name should agree on
 * {@code maxPermits}. Thread safe.
 */
final class JdbcSemaphore extends AbstractSemaphore {
  private final JdbcLockService service;
  private final Primitive primitive;

  JdbcSemaphore(JdbcLockService service, String name, int maxPermits, Primitive primitive) {
    super(service, name, maxPermits);
    this.service = service;
    this.primitive = primitive;
  }

  @Override
  protected AbstractLease doAcquire(int permits, Deadline deadline) throws InterruptedException {
    return service.acquire(primitive, service.serviceId(), permits, maxPermits(), deadline);
  }

  @Override
  public int availablePermits() {
    return service.availablePermits(primitive, maxPermits());
  }
}
