package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;
import java.time.Duration;

/** The TCK against an in-memory H2 database, with paused renewals. */
class JdbcH2TckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return new H2Target(Duration.ofSeconds(2));
  }
}
