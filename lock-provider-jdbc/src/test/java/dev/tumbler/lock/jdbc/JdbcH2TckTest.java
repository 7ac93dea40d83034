package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;
import java.time.Duration;

/** The TCK against an in-memory H2 database behind its own TCP server, with client cut-offs and paused renewals. */
class JdbcH2TckTest extends LockTck {
  @Override
  protected TckTarget createTarget() {
    return new H2Target(Duration.ofSeconds(2));
  }
}
