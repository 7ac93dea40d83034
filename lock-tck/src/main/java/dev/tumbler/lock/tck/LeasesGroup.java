package dev.tumbler.lock.tck;

import static dev.tumbler.lock.tck.LockTck.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LeaseLostException;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ServiceUnavailableException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The TCK group "leases" ({@link LockTck.Leases}; needs: LEASE_EXPIRY). It checks: automatic renewal keeps a lock
 * across 5 terms; remaining() within the term, renew(); the lock of a cut-off holder becomes free; with
 * LOST_NOTIFICATION: the isolated holder's isValid() is false and its onLost fired before another client was
 * granted (same JVM, System.nanoTime), the late write is rejected, the lost lease stays lost after healing, and
 * releasing it does not free the new holder's lock; asJavaLock(): once the owner's lease expires (paused
 * renewals), another thread of the same adapter is granted the lock and becomes the owner, and the old owner's
 * unlock() throws LeaseLostException without freeing the new owner's lock.
 */
abstract class LeasesGroup extends TckGroup {

  LeasesGroup(LockTck tck) {
    super(tck);
  }

  @Test
  @DisplayName("automatic renewal keeps a lock across 5 terms")
  void renewalKeepsLockAcrossTerms() throws InterruptedException {
    LockService a = open();
    LockService b = open();
    String n = name("renew");
    Lease l = a.lock(n).acquire();
    long token = l.fencingToken();
    AtomicBoolean lost = new AtomicBoolean();
    l.onLost(e -> lost.set(true));
    long end = System.nanoTime() + leaseTime().multipliedBy(5).toNanos();
    while (System.nanoTime() - end < 0) {
      Thread.sleep(leaseTime().dividedBy(3).toMillis());
      assertTrue(l.isValid(), "the lease ended while renewed automatically");
      assertEquals(token, l.fencingToken(), "an automatic renewal changed the fencing token");
      assertTrue(probe(b.lock(n)).isEmpty(), "the renewed lock was granted to another service");
    }
    assertFalse(lost.get(), "a renewed lease fired its lost listener");
    assertTrue(l.remaining().compareTo(Duration.ZERO) > 0);
    l.release();
  }

  @Test
  @DisplayName("remaining() is within the term; renew() extends; a released lease cannot be renewed")
  void remainingAndRenew() throws InterruptedException {
    LockService a = open();
    Lease l = a.lock(name("remaining")).acquire();
    Duration r = l.remaining();
    assertTrue(r.compareTo(Duration.ZERO) > 0 && r.compareTo(leaseTime()) <= 0,
        "remaining() " + r + " is not within (0, " + leaseTime() + "]");
    long token = l.fencingToken();
    Thread.sleep(leaseTime().dividedBy(4).toMillis());
    l.renew();
    assertTrue(l.isValid());
    assertEquals(token, l.fencingToken());
    assertTrue(l.remaining().compareTo(leaseTime()) <= 0);
    l.release();
    assertThrows(LeaseLostException.class, l::renew, "renew() of a released lease");
  }

  @Test
  @Requires(value = Capability.LEASE_EXPIRY, url = true)
  @DisplayName("renew=manual: renew() keeps a lease; one not renewed ends within its term by the client's clock")
  void manualRenewal() throws Exception {
    Properties manual = new Properties();
    manual.setProperty("renew", "manual");
    LockService m = connect(manual);
    LockService b = open();
    Duration t = leaseTime();
    // renewed by hand every T/4: valid for two terms, and nobody else is granted the lock
    String kept = name("manual-kept");
    Lease k = m.lock(kept).acquire();
    long end = System.nanoTime() + t.multipliedBy(2).toNanos();
    while (System.nanoTime() - end < 0) {
      Thread.sleep(t.dividedBy(4).toMillis());
      k.renew();
      assertTrue(k.isValid(), "a lease renewed by hand every T/4 ended");
      assertTrue(probe(b.lock(kept)).isEmpty(), "a lease renewed by hand was granted to another");
    }
    // remaining() is the client's view on its monotonic clock: it falls at least as fast as time passes
    Duration r0 = k.remaining();
    Thread.sleep(t.dividedBy(4).toMillis());
    Duration r1 = k.remaining();
    assertTrue(r1.compareTo(r0.minus(t.dividedBy(4)).plusMillis(5)) <= 0,
        "remaining() went from " + r0 + " to " + r1 + " over " + t.dividedBy(4).toMillis() + " ms");
    k.release();
    // never renewed: invalid by the end of the term measured from the grant, told once, then granted to others
    String lapsed = name("manual-lapsed");
    Lease l = m.lock(lapsed).acquire();
    long granted = System.nanoTime();
    List<LeaseLostEvent> events = new CopyOnWriteArrayList<>();
    AtomicLong lostAt = new AtomicLong();
    l.onLost(e -> {
      lostAt.compareAndSet(0, System.nanoTime());
      events.add(e);
    });
    long sleep = t.toNanos() - (System.nanoTime() - granted);
    if (sleep > 0) {
      TimeUnit.NANOSECONDS.sleep(sleep);
    }
    assertFalse(l.isValid(), "a lease of a renew=manual service that was never renewed is valid after its term T");
    assertEquals(Duration.ZERO, l.remaining());
    Lease lb = held(b.lock(lapsed).tryAcquire(expiryBound()), "a lease that was never renewed never ended");
    long grantedB = System.nanoTime();
    if (declares(Capability.LOST_NOTIFICATION)) {
      assertEquals(1, events.size(), "the lost listener of an unrenewed lease ran " + events.size() + " times");
      assertEquals(LeaseLostEvent.Reason.EXPIRED, events.get(0).reason());
      assertTrue(lostAt.get() - grantedB < 0, "onLost ran after another client was granted the lock");
    }
    assertThrows(LeaseLostException.class, l::renew, "renew() after the term ended");
    lb.release();
  }

  @Test
  @Requires(value = Capability.LEASE_EXPIRY, faults = FaultInjector.Fault.CUT_OFF_CLIENT)
  @DisplayName("isValid() and remaining() answer locally; renew() of a cut-off client fails, it does not pretend")
  void cutOffClientAnswersLocally() throws Exception {
    LockService a = open();
    String n = name("local");
    Lease l = a.lock(n).acquire();
    // the end of the term by the client's own view; renewals only move it later
    long termEnds = System.nanoTime() + l.remaining().toNanos();
    AtomicReference<LeaseLostEvent> lost = new AtomicReference<>();
    l.onLost(lost::set);
    FaultInjector f = target.faults().orElseThrow();
    f.cutOff(a);
    try {
      long t0 = System.nanoTime();
      for (int i = 0; i < 100; i++) {
        l.isValid();
        l.remaining();
      }
      assertTrue(millisSince(t0) < SLACK.toMillis(), "100 calls of isValid() and remaining() took "
          + millisSince(t0) + " ms while cut off: they call the backend");
      Job<Void> renewal = start("cut-off-renew", () -> {
        l.renew();
        return null;
      });
      Throwable t = renewal.failure(expiryBound());
      assertTrue(t instanceof ServiceUnavailableException || t instanceof LeaseLostException,
          "renew() of a cut-off client " + (t == null ? "returned as if it had renewed" : "threw " + t));
      // a renewal that cannot reach the backend leaves the lease valid until its term ends: it may still be
      // lost for what the provider saw of the connection, but it has not expired
      boolean valid = l.isValid();
      if (t instanceof ServiceUnavailableException && !valid && System.nanoTime() - termEnds < 0) {
        eventually(SLACK, "the lease is no longer valid, yet its lost listener has not run", () -> lost.get() != null);
        assertNotEquals(LeaseLostEvent.Reason.EXPIRED, lost.get().reason(),
            "a renewal that could not reach the backend ended the lease as EXPIRED before its term was over");
      }
    } finally {
      f.heal(a);
    }
    l.release();
  }

  @Test
  @Requires(value = Capability.LOST_NOTIFICATION, faults = FaultInjector.Fault.CUT_OFF_CLIENT)
  @DisplayName("a cut-off holder is told it lost the lock before another client is granted it")
  void lostBeforeOthersGrantedWhenCutOff() throws Exception {
    lostBeforeOthersGranted(FaultInjector.Fault.CUT_OFF_CLIENT);
  }

  @Test
  @Requires(value = Capability.LOST_NOTIFICATION, faults = FaultInjector.Fault.PAUSE_RENEWALS)
  @DisplayName("a holder whose renewals pause is told it lost the lock before another client is granted it")
  void lostBeforeOthersGrantedWhenPaused() throws Exception {
    lostBeforeOthersGranted(FaultInjector.Fault.PAUSE_RENEWALS);
  }

  @Test
  @Requires(value = Capability.LOST_NOTIFICATION, faults = FaultInjector.Fault.END_SESSIONS)
  @DisplayName("a holder whose sessions the backend ends is told it lost the lock before another client is granted it")
  void lostBeforeOthersGrantedWhenSessionsEnd() throws Exception {
    lostBeforeOthersGranted(FaultInjector.Fault.END_SESSIONS);
  }

  @Test
  @Requires(anyFault = {FaultInjector.Fault.CUT_OFF_CLIENT, FaultInjector.Fault.PAUSE_RENEWALS})
  @DisplayName("the lock of a cut-off holder becomes available to others")
  void lockFreedAfterHolderCutOff() throws Exception {
    LockService a = open();
    LockService b = open();
    String n = name("freed");
    Lease la = a.lock(n).acquire();
    FaultInjector.Fault how = isolation();
    isolate(how, a);
    try {
      Lease lb = held(b.lock(n).tryAcquire(expiryBound()), "the lock was never granted after its holder was cut off ("
          + how + "): the lease never expired");
      if (declares(Capability.LOST_NOTIFICATION)) {
        assertFalse(la.isValid(), "the cut-off holder still considers its lease valid after another was granted");
      }
      lb.release();
    } finally {
      restore(how, a);
    }
  }

  @Test
  @Requires(value = Capability.LEASE_EXPIRY, faults = FaultInjector.Fault.PAUSE_RENEWALS)
  @DisplayName("asJavaLock: once the owner's lease expires another thread gets the lock; the owner's next call throws LeaseLostException")
  void javaLockPassesOnAfterExpiry() throws Exception {
    LockService a = open();
    LockService b = open();
    String n = name("java-expiry");
    java.util.concurrent.locks.Lock jl = a.lock(n).asJavaLock();
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch taken = new CountDownLatch(1);
    CompletableFuture<Throwable> firstUnlock = new CompletableFuture<>();
    Thread first = Thread.ofPlatform().name("tck-first-owner").start(() -> {
      try {
        jl.lock();
        held.countDown();
        taken.await();
        jl.unlock();
        firstUnlock.complete(null);
      } catch (Throwable t) {
        firstUnlock.complete(t);
      }
    });
    assertTrue(held.await(GRANT_WAIT.toMillis(), TimeUnit.MILLISECONDS), "the first thread never locked");
    boolean got;
    isolate(FaultInjector.Fault.PAUSE_RENEWALS, a);
    try {
      got = jl.tryLock(expiryBound().toMillis(), TimeUnit.MILLISECONDS);
    } finally {
      restore(FaultInjector.Fault.PAUSE_RENEWALS, a);
      taken.countDown();
    }
    assertTrue(got, "another thread never got the adapter after its owner's lease expired");
    Throwable t = firstUnlock.get(GRANT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    assertTrue(t instanceof LeaseLostException, "the displaced owner's unlock() did not throw LeaseLostException: " + t);
    assertTrue(probe(b.lock(n)).isEmpty(), "the displaced owner's unlock() freed the new owner's lock");
    jl.unlock(); // the new owner's unlock: no exception
    held(b.lock(n).tryAcquire(GRANT_WAIT), "the new owner's unlock() did not free the lock").release();
    first.join(GRANT_WAIT.toMillis());
  }

  private void lostBeforeOthersGranted(FaultInjector.Fault how) throws Exception {
    LockService a = open();
    LockService b = open();
    LockService c = open();
    String n = name("lost-" + how.name().toLowerCase(Locale.ROOT));
    FencedResource<String> resource = new FencedResource<>();
    Lease la = a.lock(n).acquire();
    assertTrue(resource.write(la.fencingToken(), "a"));
    AtomicLong lostAt = new AtomicLong();
    AtomicReference<LeaseLostEvent> event = new AtomicReference<>();
    AtomicBoolean validInListener = new AtomicBoolean(true);
    AtomicInteger calls = new AtomicInteger();
    la.onLost(e -> {
      calls.incrementAndGet();
      lostAt.set(System.nanoTime());
      validInListener.set(la.isValid());
      event.set(e);
    });
    Lease lb;
    isolate(how, a);
    try {
      lb = held(b.lock(n).tryAcquire(expiryBound()), "the lock was never granted after its holder was isolated ("
          + how + "): the lease never expired");
      long grantedAt = System.nanoTime();
      assertFalse(la.isValid(), "the isolated holder's lease is still valid after another client was granted the lock");
      assertNotNull(event.get(), "the isolated holder's onLost listener had not fired when another client was granted the lock");
      assertTrue(lostAt.get() - grantedAt < 0, "onLost fired after the other grant");
      assertFalse(validInListener.get(), "isValid() was still true inside the lost listener");
      LeaseLostEvent e = event.get();
      assertEquals(n, e.name());
      assertEquals(la.fencingToken(), e.fencingToken(), "the event's fencing token");
      assertTrue(Set.of(LeaseLostEvent.Reason.EXPIRED, LeaseLostEvent.Reason.CONNECTION_LOST,
          LeaseLostEvent.Reason.REVOKED).contains(e.reason()), "unexpected reason " + e.reason());
      if (declares(Capability.FENCING)) {
        assertTrue(lb.fencingToken() > la.fencingToken(), "the new grant's token is not above the lost one's");
      }
      assertTrue(resource.write(lb.fencingToken(), "b"));
      // a listener added after the loss runs at once, on the calling thread
      AtomicReference<Thread> ranOn = new AtomicReference<>();
      la.onLost(x -> ranOn.set(Thread.currentThread()));
      assertSame(Thread.currentThread(), ranOn.get(), "a listener added after the loss did not run at once");
    } finally {
      restore(how, a);
    }
    if (declares(Capability.FENCING)) {
      assertFalse(resource.write(la.fencingToken(), "a-late"), "the lost holder's late write was accepted");
      assertEquals(1, resource.staleWrites());
    }
    Thread.sleep(leaseTime().dividedBy(2).toMillis());
    assertFalse(la.isValid(), "a lost lease became valid again after the fault was undone");
    assertEquals(Duration.ZERO, la.remaining(), "a lost lease has time left");
    assertThrows(LeaseLostException.class, la::renew, "renew() of a lost lease");
    assertEquals(1, calls.get(), "the lost listener was not called exactly once");
    la.release();
    assertTrue(probe(c.lock(n)).isEmpty(), "releasing the lost lease freed the new holder's lock");
    assertTrue(lb.isValid(), "the new holder lost its lease when the old one was released");
    lb.release();
    held(a.lock(name("recovered")).tryAcquire(GRANT_WAIT), "the client cannot lock again after the fault was undone")
        .release();
  }
}
