package dev.tumbler.lock.tck;

import static dev.tumbler.lock.tck.LockTck.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockService;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The TCK group "fencing" ({@link LockTck.Fencing}; needs: FENCING). It checks: tokens strictly increase across
 * services and are kept by renewals; a holder cut off (or paused) and woken after another holder was granted is
 * rejected by a FencedResource.
 */
abstract class FencingGroup extends TckGroup {

  FencingGroup(LockTck tck) {
    super(tck);
  }

  @Test
  @DisplayName("tokens strictly increase across grants through different services")
  void tokensIncrease() throws InterruptedException {
    List<LockService> s = List.of(open(), open(), open());
    String n = name("fence");
    FencedResource<Integer> resource = new FencedResource<>();
    long prev = Long.MIN_VALUE;
    for (int i = 0; i < 9; i++) {
      Lease l = held(s.get(i % 3).lock(n).tryAcquire(GRANT_WAIT), "a free lock was not granted");
      assertTrue(l.fencingToken() > prev, "grant " + i + " has token " + l.fencingToken() + ", not above " + prev);
      assertTrue(resource.write(l.fencingToken(), i));
      prev = l.fencingToken();
      if (i % 2 == 0) {
        l.renew();
        assertEquals(prev, l.fencingToken(), "renewal changed the fencing token");
      }
      l.release();
    }
    assertEquals(0, resource.staleWrites());
  }

  @Test
  @Requires(value = Capability.LEASE_EXPIRY, anyFault = {FaultInjector.Fault.CUT_OFF_CLIENT,
      FaultInjector.Fault.PAUSE_RENEWALS})
  @DisplayName("a holder cut off and woken after another was granted is rejected by the fenced resource")
  void staleHolderRejected() throws Exception {
    LockService a = open();
    LockService b = open();
    String n = name("stale");
    FencedResource<String> resource = new FencedResource<>();
    Lease la = a.lock(n).acquire();
    assertTrue(resource.write(la.fencingToken(), "a"));
    FaultInjector.Fault how = isolation();
    isolate(how, a);
    Lease lb;
    try {
      lb = held(b.lock(n).tryAcquire(expiryBound()), "the lock was never granted after its holder was cut off");
      assertTrue(resource.write(lb.fencingToken(), "b"), "the new holder's write was rejected");
    } finally {
      restore(how, a);
    }
    // the old holder wakes up and writes with the token it still has
    assertFalse(resource.write(la.fencingToken(), "a-late"), "the stale holder's write was accepted");
    assertEquals(1, resource.staleWrites());
    assertEquals("b", resource.value());
    lb.release();
  }
}
