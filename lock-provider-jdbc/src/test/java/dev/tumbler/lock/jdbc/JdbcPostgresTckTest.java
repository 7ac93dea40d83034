package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;
import java.time.Duration;

/** The TCK against a real PostgreSQL server, with client cut-offs, paused renewals and server crashes. */
class JdbcPostgresTckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return new PostgresTarget(EmbeddedPg.get(), Duration.ofSeconds(2), "tck_locks");
  }
}
