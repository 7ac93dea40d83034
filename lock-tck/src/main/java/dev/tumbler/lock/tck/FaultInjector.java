package dev.tumbler.lock.tck;

import dev.tumbler.lock.LockService;
import dev.tumbler.lock.spi.LeaseRenewer;
import java.util.Set;

/**
 * Faults the TCK may inject into a provider's backend or clients. Every method blocks until the fault
 * is in effect. A provider implements the faults it can and lists them in {@link #supported()}; the TCK
 * skips tests that need the others, with the reason.
 */
public interface FaultInjector {

  /** The faults this injector can cause. */
  enum Fault {
    /** {@link #cutOff} and {@link #heal}. */
    CUT_OFF_CLIENT,
    /** {@link #pauseRenewals} and {@link #resumeRenewals}. */
    PAUSE_RENEWALS,
    /** {@link #crashBackend} and {@link #restartBackend}. */
    CRASH_BACKEND,
    /** {@link #endSessions} and {@link #allowSessions}: the backend ends a client's sessions. */
    END_SESSIONS,
    /** {@link #crashMinority} and {@link #restartMinority}: a node of a replicated backend crashes and restarts. */
    CRASH_MINORITY,
    /** {@link #partitionMinority} and {@link #healMinority}: a node of a replicated backend is cut off. */
    PARTITION_MINORITY
  }

  Set<Fault> supported();

  /**
   * Whether {@link #cutOff}, {@link #pauseRenewals} and {@link #endSessions} reach only the client given, so that tests
   * using them may run beside other tests (a client behind its own proxy, a session of its own). False, the default,
   * when they may reach other clients too: a cut-off of a peer node that other services also run on. The TCK then
   * runs a test that injects such a fault alone, from the fault to its end.
   */
  default boolean isolatesClients() {
    return false;
  }

  /**
   * Cuts {@code client} (a service from {@link TckTarget#open()}) off from the backend: its requests
   * and the backend's replies are dropped or refused until {@link #heal}. Other clients are unaffected.
   */
  default void cutOff(LockService client) {
    throw new UnsupportedOperationException("cutOff");
  }

  /** Undoes {@link #cutOff}. */
  default void heal(LockService client) {
    throw new UnsupportedOperationException("heal");
  }

  /**
   * Stops {@code client}'s lease renewals without cutting it off (a long GC pause, from the backend's
   * point of view): its leases expire on the backend and on the client. The default pauses the service's
   * {@link LeaseRenewer}, which every provider built on {@code AbstractLockService} has.
   */
  default void pauseRenewals(LockService client) {
    client.unwrap(LeaseRenewer.class).pause();
  }

  /** Undoes {@link #pauseRenewals}. */
  default void resumeRenewals(LockService client) {
    client.unwrap(LeaseRenewer.class).resume();
  }

  /**
   * Has the backend end every session or connection of {@code client} and refuse it new ones until
   * {@link #allowSessions}, as an administrator or a failover does ({@code pg_terminate_backend} with the
   * login revoked; a ZooKeeper session expired; Redis {@code CLIENT KILL}). The client's process and network
   * are fine: it is told by the backend, not cut off.
   */
  default void endSessions(LockService client) {
    throw new UnsupportedOperationException("endSessions");
  }

  /** Undoes {@link #endSessions}: the client may open sessions again. */
  default void allowSessions(LockService client) {
    throw new UnsupportedOperationException("allowSessions");
  }

  /** Stops the whole backend (every server), as a crash would. */
  default void crashBackend() {
    throw new UnsupportedOperationException("crashBackend");
  }

  /** Starts the backend again after {@link #crashBackend}, on the same addresses. */
  default void restartBackend() {
    throw new UnsupportedOperationException("restartBackend");
  }

  /**
   * Whether a backend crash ends every grant at once while its holder hears of it only later, as the provider
   * documents: grants bound to the backend's sessions, heard of at the holder's next check (PostgreSQL's advisory
   * locks), or a server that restarts without persistence, heard of at the holder's next renewal (Redis). The chaos
   * group then does not hold a lease granted before a backend restart to exclusion with the grants after it. False,
   * the default: a restart must never let two leases be valid at once.
   */
  default boolean crashEndsGrantsUnheard() {
    return false;
  }

  /**
   * Stops a minority of the backend's servers (of a replicated backend: ensemble members, Redlock masters,
   * peers), as crashes would; the rest keep a majority. A server that a client in {@code spare} depends on
   * alone is not chosen (the ZooKeeper server its session is connected to, the node a peer-to-peer client
   * runs on): those clients are on the majority side and must not notice more than a slower backend.
   *
   * @param spare clients that must stay on the majority side
   */
  default void crashMinority(java.util.Collection<LockService> spare) {
    throw new UnsupportedOperationException("crashMinority");
  }

  /** Starts the servers {@link #crashMinority} stopped again, on the same addresses, with what they persist. */
  default void restartMinority() {
    throw new UnsupportedOperationException("restartMinority");
  }

  /**
   * Cuts a minority of the backend's servers off from the other servers and from every client, as a
   * network partition would (connections stay open, bytes vanish); the same choice as {@link #crashMinority}.
   *
   * @param spare clients that must stay on the majority side
   */
  default void partitionMinority(java.util.Collection<LockService> spare) {
    throw new UnsupportedOperationException("partitionMinority");
  }

  /** Undoes {@link #partitionMinority}. */
  default void healMinority() {
    throw new UnsupportedOperationException("healMinority");
  }
}
