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
    CRASH_BACKEND
  }

  Set<Fault> supported();

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

  /** Stops the whole backend (every server), as a crash would. */
  default void crashBackend() {
    throw new UnsupportedOperationException("crashBackend");
  }

  /** Starts the backend again after {@link #crashBackend}, on the same addresses. */
  default void restartBackend() {
    throw new UnsupportedOperationException("restartBackend");
  }
}
