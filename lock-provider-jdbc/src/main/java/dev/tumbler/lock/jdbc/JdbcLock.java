package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.AbstractLock;
import dev.tumbler.lock.spi.Deadline;

/**
 * A mutex, one side of a read/write lock, or the lock behind an election, in the lock table. A cheap
 * handle: holds nothing until acquired. Thread safe.
 */
final class JdbcLock extends AbstractLock {
  private final JdbcLockService service;
  private final Primitive primitive;
  private final String owner;

  /** @param owner written with each grant so others can tell who holds it (an election's candidate id) */
  JdbcLock(JdbcLockService service, Primitive primitive, String owner) {
    super(service, primitive.name());
    this.service = service;
    this.primitive = primitive;
    this.owner = owner;
  }

  @Override
  protected AbstractLease doAcquire(Deadline deadline) throws InterruptedException {
    return service.acquire(primitive, owner, 1, 1, deadline);
  }
}
