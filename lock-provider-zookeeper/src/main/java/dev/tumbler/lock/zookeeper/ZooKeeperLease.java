package dev.tumbler.lock.zookeeper;

import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.lock.spi.Ticker;

/**
 * A grant on ZooKeeper: one ephemeral sequential node of this client's session, plus the client's safe
 * view of it.
 *
 * <h2>The session is the lease</h2>
 * ZooKeeper has no per-lock term: a node lives until it is deleted or its session expires, and the
 * session lives while the client talks to the ensemble (the ZooKeeper client pings every third of the
 * session timeout when idle). The lease's term {@code T} is therefore the <em>negotiated</em> session
 * timeout. On top of that, the lease is marked lost as soon as the client cannot be sure the session
 * still holds the node:
 *
 * <ul>
 *   <li>Connection suspended (Curator's {@code SUSPENDED}: the ZooKeeper client heard nothing from its
 *       server for 2/3 of the session timeout, or the connection broke) → lost with
 *       {@code CONNECTION_LOST} at once. The server cannot expire the session earlier than a full session
 *       timeout after it last heard from the client, so this comes first.
 *   <li>Session expired (Curator's {@code LOST}) → lost with {@code REVOKED}.
 *   <li>"Renewal" is a check that the node still exists and is owned by this session, sent every
 *       {@code T/3}; the client trusts the lease until {@code sent + T × 3/4} of the last successful
 *       check (or of the grant). A node deleted behind our back is {@code REVOKED}.
 * </ul>
 *
 * The grant's window starts when the queue listing that granted it was sent: exactly (the moment our
 * create returned) for a lock granted at once; for a lock granted after a wait, the moment the granting
 * listing arrived, which is at most one round trip late because Curator sends that listing from inside
 * its wait loop, out of our sight. A round trip cannot take as long as 2/3 of the session timeout without
 * the connection being suspended, which loses the grant anyway.
 *
 * A lost lease's node is deleted by the service after {@code T/4} more (when the server would have
 * expired a silent client anyway), so that a holder whose session survives does not block the lock
 * forever; the lost listeners have run by then. {@link #release()} deletes it at once. Thread safe.
 */
final class ZooKeeperLease extends AbstractLease {
  private final ZooKeeperLockService service;
  private final String path;
  private final long sessionId;

  ZooKeeperLease(ZooKeeperLockService service, String name, String path, long sessionId, long fencingToken,
      int permits, LeaseSettings settings, Ticker ticker, long sentNanos) {
    super(name, fencingToken, permits, settings, ticker, sentNanos);
    this.service = service;
    this.path = path;
    this.sessionId = sessionId;
  }

  /** The lock node. */
  String path() {
    return path;
  }

  @Override
  protected boolean doRenew() {
    return service.stillOwned(path, sessionId);
  }

  @Override
  protected void doRelease() {
    service.released(this);
  }
}
