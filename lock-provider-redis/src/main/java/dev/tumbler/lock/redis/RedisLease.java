package dev.tumbler.lock.redis;

import dev.tumbler.lock.spi.AbstractLease;

/**
 * A grant on Redis: the SPI's lease state machine plus the two backend calls. The owner value is unique
 * per grant, so a renewal or release can only ever touch this grant. Thread safe.
 */
final class RedisLease extends AbstractLease {
  private final RedisLockService service;
  private final Primitive primitive;
  private final String owner;

  RedisLease(RedisLockService service, Primitive primitive, String owner, long token, int permits, long sentNanos) {
    super(primitive.name(), token, permits, service.settings(), service.ticker(), sentNanos);
    this.service = service;
    this.primitive = primitive;
    this.owner = owner;
  }

  @Override
  protected boolean doRenew() {
    return service.renew(primitive, owner);
  }

  @Override
  protected void doRelease() {
    service.release(primitive, owner);
  }
}
