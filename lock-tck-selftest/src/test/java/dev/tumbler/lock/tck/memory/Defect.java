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
  DEADLOCK_UNDETECTED,
  /** The namespace is joined to the name with {@code /}: namespace {@code a} with {@code b/c} is {@code a/b/c}. */
  NAMESPACE_JOINED,
  /** {@code renew=manual} is ignored: leases are renewed in the background anyway. */
  MANUAL_RENEW_IGNORED,
  /** A lease is owned by the thread that acquired it: a release from another thread is ignored. */
  THREAD_OWNED_RELEASE,
  /** Lost listeners run newest first. */
  LISTENERS_REVERSED,
  /** A lost listener that throws stops the listeners after it. */
  THROWING_LISTENER_STOPS_OTHERS,
  /** Lost listeners run later, each on a thread of its own, not on the thread that detected the loss. */
  LISTENERS_ON_OTHER_THREAD,
  /** Every lost listener is called twice. */
  LOST_LISTENER_TWICE,
  /** {@code isValid()} asks the server instead of reading local state. */
  IS_VALID_ASKS_BACKEND,
  /** {@code renew()} swallows a failure to reach the server and returns as if it had renewed. */
  RENEW_HIDES_FAILURE,
  /** A {@code renew()} that cannot reach the server ends the lease at once, as EXPIRED. */
  RENEW_FAILURE_EXPIRES,
  /** {@code asJavaLock().lock()} gives up when its thread is interrupted. */
  JAVA_LOCK_INTERRUPTIBLE,
  /** {@code remaining()} always says a full term is left while the lease is valid. */
  REMAINING_FROZEN,
  /** A leader hears {@code onLeadershipChange(false)} a lease term late, after the next leader took over. */
  ELECTION_LOSS_HEARD_LATE,
  /** {@code leader()} keeps the first leader it saw, even after that leader resigned or left. */
  STALE_LEADER,
  /** {@code availablePermits()} always says every permit is free. */
  AVAILABLE_PERMITS_WRONG,
  /** Semaphore permits never expire on the server: a cut-off holder keeps them. */
  PERMITS_NEVER_EXPIRE,
  /** Every read/write lock is one lock, whatever its name. */
  READ_WRITE_NAMES_SHARED,
  /** A transaction's WRITE on a path it reads is granted but stays a read lock. */
  UPGRADE_IGNORED,
  /**
   * A grant that comes as a timed wait ends is handed to the caller and also freed on the server, as a
   * client that cancels its request after the grant reached it would.
   */
  GRANT_AT_DEADLINE_FREED,
  /** When one of the backend's three replicas crashes or is cut off, every grant is forgotten. */
  MINORITY_FAULT_DROPS_GRANTS,
  /**
   * The token counter restarts at 1 when a grant's caller goes away between the grant and the second step that
   * would have seeded the counter (interrupted, abandoned at its deadline, its service closed): the Redis fast path
   * that pipelined an {@code INCR} and seeded a new counter in a second round trip.
   */
  TOKEN_COUNTER_RESTARTS,
  /**
   * A release gives back whatever this client holds on the lock, not the lease it was called on, and a second call
   * does it again: an old lease released twice frees the newer lease the same service was granted meanwhile.
   */
  RELEASE_BY_CLIENT,
  /** {@code info().url()} shows a password that came in the connect properties rather than in the URL. */
  INFO_URL_SHOWS_PROPERTIES_SECRET,
  /** {@code release()} returns at once, and the server frees the lock 2 s later. */
  RELEASE_FREES_LATE
}
