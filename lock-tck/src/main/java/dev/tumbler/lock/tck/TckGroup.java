package dev.tumbler.lock.tck;

import static dev.tumbler.lock.tck.LockTck.*;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockService;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What every TCK group stands on: the run's {@link LockTck} (its target, the services and threads it closes after
 * each test) and the helpers the groups share. A group is an abstract class of its own file, entered from a small
 * {@code @Nested} class of {@link LockTck} that carries its name, its display name and what it requires; the
 * static helpers ({@code name}, {@code held}, {@code eventually}, the slacks) are {@link LockTck}'s, imported.
 */
abstract class TckGroup {
  /** The run this group belongs to. */
  final LockTck tck;
  /** The target, as {@link LockTck#createTarget()} made it. */
  final TckTarget target;
  /** What this test opened and started (a group's instance serves one test): closed after it. */
  private final TestResources resources = new TestResources();
  /** Services the test opened: closed after it. */
  final List<LockService> opened = resources.opened;

  /** This test's share of the run's {@link FaultGate}. */
  private final FaultGate.Hold hold;

  TckGroup(LockTck tck) {
    this.tck = tck;
    this.hold = tck.gate.hold();
    this.target = new GatedTarget(tck.target(), hold);
  }

  private long startedNanos;

  @BeforeEach
  final void enterTheGate() throws InterruptedException {
    hold.enter();
    startedNanos = System.nanoTime();
  }

  @AfterEach
  final void closeThisTestsResources() throws InterruptedException {
    try {
      resources.closeAll();
    } finally {
      hold.leave();
      tck.timings.record(getClass(), startedNanos, System.nanoTime());
    }
  }

  /** Opens a fresh service that is closed after the test. */
  final LockService open() {
    return resources.open(target);
  }

  /** A service on the target's URL with {@code overrides} as its connect properties; closed after the test. */
  final LockService connect(Properties overrides) {
    return resources.connect(target, overrides);
  }

  final Set<Capability> capabilities() {
    return tck.capabilities();
  }

  final boolean declares(Capability c) {
    return tck.declares(c);
  }

  final Set<FaultInjector.Fault> faultsSupported() {
    return tck.faultsSupported();
  }

  final Duration leaseTime() {
    return tck.leaseTime();
  }

  final Duration expiryBound() {
    return tck.expiryBound();
  }

  final Duration releaseBound() {
    return tck.releaseBound();
  }

  /** A background task on its own thread; interrupted and joined after the test. */
  final <T> LockTck.Job<T> start(String what, Callable<T> body) {
    return resources.start(what, body);
  }

  final void awaitBlocked(LockTck.Job<?> job) throws InterruptedException {
    tck.awaitBlocked(job);
  }

  final void isolate(FaultInjector.Fault how, LockService s) {
    FaultInjector f = target.faults().orElseThrow();
    switch (how) {
      case CUT_OFF_CLIENT -> f.cutOff(s);
      case PAUSE_RENEWALS -> f.pauseRenewals(s);
      case END_SESSIONS -> f.endSessions(s);
      default -> throw new IllegalArgumentException(how.name());
    }
  }

  final void restore(FaultInjector.Fault how, LockService s) {
    FaultInjector f = target.faults().orElseThrow();
    switch (how) {
      case CUT_OFF_CLIENT -> f.heal(s);
      case PAUSE_RENEWALS -> f.resumeRenewals(s);
      case END_SESSIONS -> f.allowSessions(s);
      default -> throw new IllegalArgumentException(how.name());
    }
  }

  final FaultInjector.Fault isolation() {
    return tck.isolation();
  }

  /**
   * Asserts that {@code other} cannot be taken while {@code leases[i]}, which {@code holder} gave, holds it. A grant of
   * {@code other} is a collision unless that lease had run out: with a term of 2 s, on a loaded machine a renewal can
   * come late (a PostgreSQL target's did in suite runs: with 47 leases held, and with six write locks held), and a lease
   * that ran out is the backend's to give again. Then {@code holder} takes it back and it is checked again, up to three
   * times; a lease that runs out every time fails as a collision would.
   */
  final void notGrantedWhileHeld(Lock other, Lock holder, List<Lease> leases, int i, String collision)
      throws InterruptedException {
    for (int attempt = 0; ; attempt++) {
      Optional<Lease> o = probe(other);
      if (o.isEmpty()) {
        return;
      }
      boolean ranOut = declares(Capability.LEASE_EXPIRY) && !leases.get(i).isValid();
      o.get().release();
      assertTrue(ranOut, collision + " (the holder's lease is still valid)");
      assertTrue(attempt < 2, collision + ": the holder's lease had run out, three times in a row");
      leases.set(i, held(holder.tryAcquire(GRANT_WAIT), "'" + holder.name() + "' was not granted again to its holder "
          + "after its lease ran out"));
    }
  }
}
