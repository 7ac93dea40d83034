package dev.tumbler.lock.tck;

import static dev.tumbler.lock.tck.LockTck.*;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.LockTimeoutException;
import dev.tumbler.lock.ServiceUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The TCK group "outages" ({@link LockTck.Outages}; needs: CRASH_BACKEND). It checks: while the whole backend is
 * down, tryAcquire(w) and acquireAsync(w) (w = 0, 500 ms, 2 s) end within w + 3 s (OUTAGE_SLACK: the API's 2 s
 * answer grace and 1 s for a busy machine), empty or with ServiceUnavailableException / LockTimeoutException,
 * never granted; once the backend is back, nothing the abandoned attempts made is left held. A peer-to-peer target
 * "crashes" by cutting every node off from every other.
 */
abstract class OutagesGroup extends TckGroup {

  OutagesGroup(LockTck tck) {
    super(tck);
  }

  @Test
  @Requires(faults = FaultInjector.Fault.CRASH_BACKEND)
  @DisplayName("while the backend is down, tryAcquire(w) and acquireAsync(w) end within w plus the outage slack, holding nothing")
  void waitsBoundedDuringAnOutage() throws Exception {
    LockService a = open();
    // a connection that has been used: an outage must not hide behind a first connect
    held(a.lock(name("warm")).tryAcquire(GRANT_WAIT), "no grant before the outage").release();
    List<String> names = new ArrayList<>();
    List<String> seen = new ArrayList<>();
    FaultInjector f = target.faults().orElseThrow();
    tck.crashed = true;
    f.crashBackend();
    try {
      for (Duration w : List.of(Duration.ZERO, Duration.ofMillis(500), Duration.ofSeconds(2))) {
        String n = name("outage-" + w.toMillis());
        names.add(n);
        long t0 = System.nanoTime();
        try {
          Optional<Lease> l = a.lock(n).tryAcquire(w);
          l.ifPresent(Lease::release);
          assertTrue(l.isEmpty(), "tryAcquire(" + w.toMillis() + "ms) was granted while the backend was down");
          seen.add("tryAcquire(" + w.toMillis() + "ms): empty");
        } catch (ServiceUnavailableException e) {
          seen.add("tryAcquire(" + w.toMillis() + "ms): " + e.getClass().getSimpleName());
        }
        long took = millisSince(t0);
        assertTrue(took <= w.toMillis() + OUTAGE_SLACK.toMillis(), "tryAcquire(" + w.toMillis() + "ms) took "
            + took + " ms while the backend was down; the bound is " + (w.toMillis() + OUTAGE_SLACK.toMillis()) + " ms");
        t0 = System.nanoTime();
        CompletableFuture<Lease> async = a.lock(n).acquireAsync(w);
        try {
          Lease l = async.get(w.toMillis() + OUTAGE_SLACK.toMillis(), TimeUnit.MILLISECONDS);
          l.release();
          fail("acquireAsync(" + w.toMillis() + "ms) was granted while the backend was down");
        } catch (TimeoutException e) {
          async.cancel(true);
          fail("acquireAsync(" + w.toMillis() + "ms) had not completed " + (w.toMillis() + OUTAGE_SLACK.toMillis())
              + " ms after it was called, while the backend was down");
        } catch (ExecutionException e) {
          Throwable c = e.getCause();
          assertTrue(c instanceof LockTimeoutException || c instanceof ServiceUnavailableException,
              "acquireAsync(" + w.toMillis() + "ms) failed with " + c + "; expected LockTimeoutException or"
                  + " ServiceUnavailableException");
          seen.add("acquireAsync(" + w.toMillis() + "ms): " + c.getClass().getSimpleName());
        }
        assertTrue(millisSince(t0) <= w.toMillis() + OUTAGE_SLACK.toMillis(), "acquireAsync(" + w.toMillis()
            + "ms) took " + millisSince(t0) + " ms while the backend was down");
      }
    } finally {
      tck.crashed = false;
      f.restartBackend();
    }
    // whatever the abandoned attempts may have created is gone once the backend is back
    LockService b = open();
    for (String n : names) {
      held(b.lock(n).tryAcquire(GRANT_WAIT.plus(expiryBound())), "'" + n + "' stayed held after the outage, by an "
          + "attempt made while the backend was down (" + seen + ")").release();
    }
  }
}
