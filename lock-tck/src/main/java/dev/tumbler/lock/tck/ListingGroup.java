package dev.tumbler.lock.tck;

import static dev.tumbler.lock.tck.LockTck.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.HeldLock;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockService;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The TCK group "listing" ({@link LockTck.Listing}; for providers whose {@link LockService#heldLocks()} answers,
 * skipped where it is empty, "cannot say"). It checks: every grant held through the service is listed under the
 * name the application gave, with its kind, a holder, its token (the holder's own, or at least it when the backend
 * keeps only the last one issued) and, where the backend keeps a term, no more time left than a term; nothing of
 * a name is listed once its grants are released; a listing covers its own namespace only.
 */
abstract class ListingGroup extends TckGroup {

  ListingGroup(LockTck tck) {
    super(tck);
  }

  private static List<HeldLock> listing(LockService s) {
    Optional<List<HeldLock>> l = s.heldLocks();
    Assumptions.assumeTrue(l.isPresent(), "this provider's heldLocks() cannot say (empty)");
    return l.get();
  }

  private static List<HeldLock> named(List<HeldLock> all, String name) {
    return all.stream().filter(h -> h.name().equals(name)).toList();
  }

  private void check(HeldLock h, String kind, Lease lease) {
    String what = "listed " + h;
    assertEquals(kind, h.kind(), what + ": kind");
    assertFalse(h.holder().isBlank(), what + ": no holder");
    if (declares(Capability.FENCING)) {
      assertTrue(h.token().isPresent(), what + ": no token on a fencing backend");
    }
    if (h.token().isPresent()) {
      if (h.tokenIsHolders()) {
        assertEquals(lease.fencingToken(), h.token().getAsLong(), what + ": not the holder's token");
      } else {
        assertTrue(h.token().getAsLong() >= lease.fencingToken(), what + ": below the holder's token "
            + lease.fencingToken());
      }
    }
    h.remaining().ifPresent(r -> {
      assertFalse(r.isNegative(), what + ": negative time left");
      if (declares(Capability.LEASE_EXPIRY)) {
        assertTrue(r.compareTo(leaseTime().plus(SLACK)) <= 0, what + ": more time left than a term " + leaseTime());
      }
    });
  }

  @Test
  @DisplayName("every grant is listed by name, kind, holder, token and time left; nothing once released")
  void listsWhatIsHeld() throws Exception {
    LockService s = open();
    listing(s);
    List<Lease> leases = new ArrayList<>();
    String mutex = name("listed-mutex");
    Lease m = held(s.lock(mutex).tryAcquire(GRANT_WAIT), "a free lock was not granted");
    leases.add(m);
    String sem = name("listed-semaphore");
    Lease p = null;
    if (declares(Capability.SEMAPHORE)) {
      p = held(s.semaphore(sem, 3).tryAcquire(2, GRANT_WAIT), "free permits were not granted");
      leases.add(p);
    }
    String rw = name("listed-rw");
    Lease r = null;
    if (declares(Capability.READ_WRITE)) {
      r = held(s.readWriteLock(rw).readLock().tryAcquire(GRANT_WAIT), "a free read lock was not granted");
      leases.add(r);
    }
    List<HeldLock> all = listing(s);
    List<HeldLock> ms = named(all, mutex);
    assertEquals(1, ms.size(), "the held lock '" + mutex + "' is listed " + ms.size() + " times in " + all);
    check(ms.get(0), "mutex", m);
    if (p != null) {
      List<HeldLock> ps = named(all, sem);
      assertFalse(ps.isEmpty(), "the held permits of '" + sem + "' are not listed in " + all);
      for (HeldLock h : ps) {
        check(h, "semaphore", p);
      }
    }
    if (r != null) {
      List<HeldLock> rs = named(all, rw);
      assertEquals(1, rs.size(), "the held read lock '" + rw + "' is listed " + rs.size() + " times in " + all);
      check(rs.get(0), "read", r);
    }
    leases.forEach(Lease::release);
    // a listing answers for one moment: a release is listed gone once it is done
    List<HeldLock> after = listing(s);
    for (String n : List.of(mutex, sem, rw)) {
      assertTrue(named(after, n).isEmpty(), "'" + n + "' is still listed after its release: " + named(after, n));
    }
  }

  @Test
  @Requires(url = true)
  @DisplayName("a listing covers its own namespace only")
  void namespacesAreRespected() throws Exception {
    Properties a = new Properties();
    a.setProperty("namespace", "tck-listing-a");
    Properties b = new Properties();
    b.setProperty("namespace", "tck-listing-b");
    LockService inA = connect(a);
    LockService inB = connect(b);
    listing(inA);
    String n = name("listed-ns");
    Lease l = held(inA.lock(n).tryAcquire(GRANT_WAIT), "a free lock was not granted");
    assertEquals(1, named(listing(inA), n).size(), "the lock held in namespace a is not listed there");
    assertTrue(named(listing(inB), n).isEmpty(), "namespace b lists the lock held in namespace a");
    l.release();
  }
}
