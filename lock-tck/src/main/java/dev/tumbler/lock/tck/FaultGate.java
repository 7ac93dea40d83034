package dev.tumbler.lock.tck;

import java.util.concurrent.Semaphore;

/**
 * Lets TCK tests run at the same time without one's faults reaching another's clients. Every test holds a share of
 * the gate while it runs; a test about to inject a fault that may reach other clients (a cut-off of a peer node that
 * other tests' services also run on) first trades its share for the whole gate, waiting for the tests running beside
 * it to end, and keeps it to its end. Tests that fault the whole backend (a crash, a minority, the chaos storms) are
 * kept apart by JUnit already ({@code @ResourceLock} on {@link LockTck#BACKEND}, read-write).
 *
 * <p>Not owned by threads: a test's {@code @BeforeEach}, body and {@code @AfterEach} may run on different threads
 * (JUnit's time-out runs the body on a thread of its own). Fair: a test waiting for the whole gate goes before tests
 * that arrive after it, so it waits at most for the tests already running.
 */
final class FaultGate {
  private static final int SHARES = Integer.MAX_VALUE / 2;
  private final Semaphore permits = new Semaphore(SHARES, true);

  /** What one test holds of the gate. */
  final class Hold {
    private int held;

    /** Takes a share, as a test starts. */
    synchronized void enter() throws InterruptedException {
      if (held == 0) {
        permits.acquire();
        held = 1;
      }
    }

    /** Trades the share for the whole gate, once: the test runs alone from then on. */
    synchronized void exclusive() {
      if (held == SHARES) {
        return;
      }
      permits.release(held);
      held = 0;
      permits.acquireUninterruptibly(SHARES);
      held = SHARES;
    }

    /** Gives back what the test holds, as it ends. */
    synchronized void leave() {
      if (held > 0) {
        permits.release(held);
        held = 0;
      }
    }
  }

  Hold hold() {
    return new Hold();
  }
}
