package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.spi.AbstractLease;

/**
 * A grant in {@code mode=advisory}: session advisory locks held by one of the service's
 * {@linkplain Advisory.Session sessions}. Its settings are unbounded: no term, no renewal; it is lost when
 * the service drops its session. Thread safe.
 */
final class AdvisoryLease extends AbstractLease {
  private final Advisory advisory;
  private final Primitive primitive;
  private final Advisory.Session session;
  private final Long[] slots;

  /** @param slots a semaphore grant's slot keys; null otherwise */
  AdvisoryLease(Advisory advisory, JdbcLockService service, Primitive primitive, Advisory.Session session, long token,
      int permits, long sentNanos, Long[] slots) {
    super(primitive.name(), token, permits, service.settings(), service.ticker(), sentNanos);
    this.advisory = advisory;
    this.primitive = primitive;
    this.session = session;
    this.slots = slots;
  }

  Primitive primitive() {
    return primitive;
  }

  Advisory.Session session() {
    return session;
  }

  Long[] slots() {
    return slots;
  }

  @Override
  protected boolean doRenew() {
    return advisory.stillHeld(this);
  }

  @Override
  protected void doRelease() {
    advisory.release(this);
  }
}
