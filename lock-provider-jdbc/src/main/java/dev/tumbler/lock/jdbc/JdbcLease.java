package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.spi.AbstractLease;

/**
 * A grant in the lock table: the SPI's lease state machine plus the two database calls. The holder id is
 * unique per grant, so a renewal or release can only ever touch this grant's row. Thread safe.
 */
final class JdbcLease extends AbstractLease {
  private final JdbcLockService service;
  private final Primitive primitive;
  private final String holder;

  JdbcLease(JdbcLockService service, Primitive primitive, String holder, long token, int permits, long sentNanos) {
    super(primitive.name(), token, permits, service.settings(), service.ticker(), sentNanos);
    this.service = service;
    this.primitive = primitive;
    this.holder = holder;
  }

  @Override
  protected boolean doRenew() {
    return service.renew(primitive, holder);
  }

  @Override
  protected void doRelease() {
    service.release(primitive, holder);
  }
}
