package dev.tumbler.lock.tck;

import static dev.tumbler.lock.tck.LockTck.*;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ServiceUnavailableException;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The TCK group "faults" ({@link LockTck.Faults}; needs: fault injector). It checks: a cut-off client does not
 * block others and can lock again once healed; after a backend crash and restart, locks work again and fencing
 * tokens do not go back; END_SESSIONS: the lock of a holder whose sessions the backend ended becomes free (with a
 * larger token), the holder is told, and it can lock again once allowed; with LOST_NOTIFICATION (in Leases), told
 * before another client is granted.
 */
abstract class FaultsGroup extends TckGroup {

  FaultsGroup(LockTck tck) {
    super(tck);
  }

  @Test
  @Requires(faults = FaultInjector.Fault.CUT_OFF_CLIENT)
  @DisplayName("a client cut off and healed can lock again; others are unaffected meanwhile (or, without FAULT_TOLERANT, refused cleanly)")
  void cutOffAndHeal() throws Exception {
    LockService a = open();
    LockService b = open();
    FaultInjector f = target.faults().orElseThrow();
    f.cutOff(a);
    try {
      try {
        held(b.lock(name("unaffected")).tryAcquire(GRANT_WAIT), "another client could not lock while one was cut off")
            .release();
      } catch (ServiceUnavailableException e) {
        // A provider whose clients are members of its quorum (a peer-to-peer node) may refuse everyone
        // while one member is cut off -- but must say so, not hang; a fault-tolerant one must not refuse.
        assertFalse(declares(Capability.FAULT_TOLERANT),
            "a FAULT_TOLERANT provider refused another client while one client was cut off: " + e.getMessage());
      }
      long t0 = System.nanoTime();
      try {
        Optional<Lease> o = a.lock(name("cut")).tryAcquire(SHORT_WAIT);
        assertTrue(o.isEmpty(), "a cut-off client was granted a lock");
      } catch (LockException e) {
        // ServiceUnavailableException (or a timeout) is the honest answer
      }
      assertTrue(millisSince(t0) < GRANT_WAIT.toMillis(), "a cut-off client's tryAcquire hung");
    } finally {
      f.heal(a);
    }
    held(a.lock(name("healed")).tryAcquire(GRANT_WAIT.plus(leaseTime().multipliedBy(2))),
        "the healed client cannot lock again").release();
  }

  @Test
  @Requires(faults = FaultInjector.Fault.END_SESSIONS)
  @DisplayName("the lock of a holder whose sessions the backend ended becomes available to others; the holder hears")
  void lockFreedAfterHolderSessionsEnd() throws Exception {
    LockService a = open();
    LockService b = open();
    String n = name("sessions-ended");
    Lease la = a.lock(n).acquire();
    isolate(FaultInjector.Fault.END_SESSIONS, a);
    try {
      Lease lb = held(b.lock(n).tryAcquire(expiryBound()), "the lock was never granted after the backend ended its "
          + "holder's sessions");
      if (declares(Capability.FENCING)) {
        assertTrue(lb.fencingToken() > la.fencingToken(), "the new grant's token is not above the ended holder's");
      }
      // told before the grant (LOST_NOTIFICATION) or after it, but told: the client is not cut off
      eventually(expiryBound(), "the holder whose sessions ended was never told it lost the lock", () -> !la.isValid());
      lb.release();
    } finally {
      restore(FaultInjector.Fault.END_SESSIONS, a);
    }
    la.release();
    held(a.lock(name("sessions-back")).tryAcquire(GRANT_WAIT.plus(expiryBound())),
        "the client cannot lock again once it may open sessions").release();
  }

  @Test
  @Requires(faults = FaultInjector.Fault.CRASH_BACKEND)
  @DisplayName("after a backend crash and restart, locks work again")
  void crashAndRestart() throws Exception {
    LockService a = open();
    String n = name("crash");
    Lease before = a.lock(n).acquire();
    long token = before.fencingToken();
    FaultInjector f = target.faults().orElseThrow();
    tck.crashed = true;
    f.crashBackend();
    try {
      if (declares(Capability.LOST_NOTIFICATION) && declares(Capability.LEASE_EXPIRY)) {
        eventually(expiryBound(), "a holder was not told it lost its lease while the backend was down",
            () -> !before.isValid());
      }
    } finally {
      tck.crashed = false;
      f.restartBackend();
    }
    before.release();
    LockService b = open();
    Lease after = held(b.lock(n).tryAcquire(GRANT_WAIT.plus(expiryBound())), "no grant after the backend restarted");
    if (declares(Capability.FENCING)) {
      assertTrue(after.fencingToken() > token, "fencing token went back after a restart: " + token + " then "
          + after.fencingToken());
    }
    after.release();
  }
}
