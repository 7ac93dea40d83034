package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;
import java.time.Duration;

/**
 * The TCK against a real PostgreSQL server in {@code mode=advisory}: session advisory locks. It declares
 * fewer capabilities (no {@code LEASE_EXPIRY}, no {@code LOST_NOTIFICATION}); what it declares must pass
 * with the same faults as lease mode.
 */
class JdbcPostgresAdvisoryTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return new PostgresTarget(EmbeddedPg.get(), Duration.ofSeconds(2), "tck_advisory", "&mode=advisory");
  }
}
