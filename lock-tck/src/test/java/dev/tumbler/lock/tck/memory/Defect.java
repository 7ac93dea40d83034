package dev.tumbler.lock.tck.memory;

/**
 * One deliberate bug the reference provider can be started with ({@code defect=...} in its URL), so the
 * TCK's self-test can prove the TCK catches it. {@link #NONE} is the correct provider.
 */
public enum Defect {
  NONE,
  /** The server grants an exclusive lock even while another client holds it. */
  NO_EXCLUSION,
  /** A grant that follows a release reuses the released grant's fencing token. */
  REPEATED_TOKEN,
  /** The server never expires a lease: a cut-off holder keeps the lock forever. */
  LEASE_NEVER_EXPIRES,
  /** Lost listeners are accepted and never called. */
  LOST_LISTENER_NEVER_CALLED,
  /** Closing the service does not give semaphore permits back (they end only by expiry). */
  PERMIT_LEAKED_ON_CLOSE,
  /** A reader is admitted while a writer holds the lock. */
  READER_BESIDE_WRITER,
  /** A timed wait gives up after half of the time asked for. */
  WAIT_RETURNS_EARLY,
  /** A cancelled acquireAsync still takes the lock, and keeps it. */
  CANCEL_LEAKS_LEASE,
  /** Waiters are granted newest first. */
  UNFAIR,
  /** A semaphore lets one permit more than its maximum out. */
  PERMIT_OVERCOUNT,
  /** Names are mapped to backend keys by replacing punctuation, so look-alike names collide. */
  NAME_COLLISION,
  /** Releasing a lease deletes whatever grant the key has now, even another client's. */
  STALE_RELEASE_FREES_OTHERS,
  /** A renewal says yes and extends nothing on the server: renewed leases expire there anyway. */
  RENEW_DOES_NOTHING,
  /** Transaction paths conflict only when equal: {@code [a]} and {@code [a, b]} are both granted. */
  HIERARCHY_IGNORED,
  /** Deadlocks between transactions are never detected. */
  DEADLOCK_UNDETECTED
}
