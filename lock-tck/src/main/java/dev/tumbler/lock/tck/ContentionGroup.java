package dev.tumbler.lock.tck;

import static dev.tumbler.lock.tck.LockTck.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The TCK group "exclusion under contention" ({@link LockTck.Contention}; needs: MUTEX). It checks: 3 services × 4
 * threads × 8 grants with an occupancy witness (blocking and tryAcquire(ZERO)-spinning variants); the grant count
 * and the witness agree; fencing tokens strictly increase in grant order (FENCING); asJavaLock() threads sharing a
 * handle; 3 services × 3 threads racing timed waits against grants for up to 2 s, each wait drawn from ¼ to 2× the
 * provider's own acquire-and-release time so that many end as their grant arrives: no overlap, tokens increase,
 * and the lock is free afterwards.
 */
abstract class ContentionGroup extends TckGroup {

  ContentionGroup(LockTck tck) {
    super(tck);
  }
  static final int SERVICES = 3;
  static final int THREADS = 4;
  static final int ROUNDS = 8;
  /**
   * How long {@link #waitsEndingAsGrantsArrive} races waits against grants once it has seen {@link #RACE_MIN} of
   * each (it goes on until then, up to {@link #GRANT_WAIT}).
   */
  static final Duration RACE_TIME = Duration.ofSeconds(2);
  /**
   * How far the deadline race's longest wait may widen when grants come slower than the waits: a quarter of
   * GRANT_WAIT. (It was a quarter of RACE_TIME, 500 ms: through the agent's thin clients on a loaded machine a
   * contended grant took longer than that, every wait ended before its grant, and the race saw 2 grants in 15 s.)
   */
  static final Duration WIDEST_WAIT = LockTck.GRANT_WAIT.dividedBy(4);
  /** The fewest grants, and the fewest waits ended empty, that make the deadline race a race. */
  static final int RACE_MIN = 10;

  @Test
  @DisplayName("services x threads: one holder at a time, every grant counted, tokens increase")
  void exclusion() throws Exception {
    run(false);
  }

  @Test
  @DisplayName("the same with tryAcquire(ZERO) retries")
  void exclusionWithTryZero() throws Exception {
    run(true);
  }

  /**
   * A timed wait can end in the instant its grant arrives. The grant then either reaches the caller
   * (and stays held until the caller releases it) or is given back; a grant returned to the caller and
   * freed behind its back lets a second holder in. Waits here are drawn around this provider's own
   * acquire-and-release time, so that many of them end as a grant comes; where contention makes grants
   * slower than that (a quorum protocol whose tickets wait for the requests entering beside them), the
   * longest wait doubles after every 200 ms without a grant, up to {@link #WIDEST_WAIT}. An occupancy witness
   * counts overlaps, and afterwards the lock must be free (no grant leaked).
   */
  @Test
  @DisplayName("waits that end as their grant arrives: the grant is the caller's or given back, never both")
  void waitsEndingAsGrantsArrive() throws Exception {
    String n = name("deadline-race");
    LockService calibrate = open();
    long[] samples = new long[15];
    for (int i = 0; i < samples.length; i++) {
      long t0 = System.nanoTime();
      held(calibrate.lock(n).tryAcquire(GRANT_WAIT), "uncontended grant").release();
      samples[i] = System.nanoTime() - t0;
    }
    java.util.Arrays.sort(samples);
    long typical = samples[samples.length / 2];
    long shortest = Math.max(20_000, typical / 4);
    long longest = Math.max(2 * shortest, 2 * typical);
    AtomicInteger occupancy = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    AtomicLong grants = new AtomicLong();
    AtomicLong empties = new AtomicLong();
    List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
    long started = System.nanoTime();
    long end = started + RACE_TIME.toNanos();
    long giveUp = started + GRANT_WAIT.toNanos();
    AtomicLong longestNow = new AtomicLong(longest);
    AtomicLong lastGrant = new AtomicLong(System.nanoTime());
    long widenAfter = Duration.ofMillis(200).toNanos();
    List<Job<Void>> jobs = new ArrayList<>();
    for (int s = 0; s < SERVICES; s++) {
      LockService svc = s == 0 ? calibrate : open();
      for (int t = 0; t < 3; t++) {
        jobs.add(start("deadline-race-" + s + "-" + t, () -> {
          Lock lock = svc.lock(n);
          while (racing(end, giveUp, grants.get(), empties.get())) {
            long hi = longestNow.get();
            Duration wait = Duration.ofNanos(ThreadLocalRandom.current().nextLong(shortest, hi + 1));
            Optional<Lease> o = lock.tryAcquire(wait);
            if (o.isEmpty()) {
              empties.incrementAndGet();
              long last = lastGrant.get();
              if (System.nanoTime() - last > widenAfter && lastGrant.compareAndSet(last, System.nanoTime())) {
                longestNow.compareAndSet(hi, Math.min(2 * hi, WIDEST_WAIT.toNanos()));
              }
              continue;
            }
            lastGrant.set(System.nanoTime());
            Lease l = o.get();
            try {
              if (occupancy.incrementAndGet() != 1) {
                overlaps.incrementAndGet();
              }
              tokens.add(l.fencingToken());
              Thread.onSpinWait();
              occupancy.decrementAndGet();
              grants.incrementAndGet();
            } finally {
              l.release();
            }
          }
          return null;
        }));
      }
    }
    for (Job<Void> j : jobs) {
      j.get(GRANT_WAIT.plus(RACE_TIME).plus(WIDEST_WAIT)); // a wait may start just before giving up
    }
    String counts = grants + " grants, " + empties + " waits ended empty (waits of " + shortest / 1000 + "-"
        + longest / 1000 + " us" + (longestNow.get() == longest ? "" : ", widened to " + longestNow.get() / 1000
        + " us") + ")";
    assertEquals(0, overlaps.get(), "two holders at once: " + counts);
    assertTrue(grants.get() >= RACE_MIN && empties.get() >= RACE_MIN,
        "too little contention to race waits with grants: " + counts);
    if (declares(Capability.FENCING)) {
      for (int i = 1; i < tokens.size(); i++) {
        assertTrue(tokens.get(i) > tokens.get(i - 1), "fencing tokens not strictly increasing in grant order at "
            + "grant " + i + ": " + tokens.get(i - 1) + " then " + tokens.get(i));
      }
    }
    held(open().lock(n).tryAcquire(GRANT_WAIT), "the lock is not free after the race (a grant leaked): " + counts)
        .release();
  }

  /**
   * Whether the deadline race goes on: for {@link #RACE_TIME}, or until 2,000 grants and 2,000 empty waits; past
   * {@code end} still while fewer than {@link #RACE_MIN} of either were seen (the widening of the waits takes up
   * to ten steps of 200 ms under a slow quorum, and a busy machine slows it more), but never past {@code giveUp}.
   */
  private static boolean racing(long end, long giveUp, long grants, long empties) {
    long now = System.nanoTime();
    if (now - giveUp >= 0) {
      return false;
    }
    if (grants < RACE_MIN || empties < RACE_MIN) {
      return true;
    }
    return now - end < 0 && (grants < 2000 || empties < 2000);
  }

  private void run(boolean spin) throws Exception {
    String n = name("contention");
    AtomicInteger occupancy = new AtomicInteger();
    AtomicInteger maxOccupancy = new AtomicInteger();
    AtomicInteger grants = new AtomicInteger();
    List<Long> tokens = Collections.synchronizedList(new ArrayList<>());
    // when anyone was last granted: spinning tries promise no thread its turn (no provider is fair to
    // tryAcquire(ZERO)), only that the lock keeps being granted while they spin
    AtomicLong lastGrant = new AtomicLong(System.nanoTime());
    long stall = GRANT_WAIT.multipliedBy(2).toNanos();
    AtomicLong longestWait = new AtomicLong();
    long started = System.nanoTime();
    List<Job<Void>> jobs = new ArrayList<>();
    for (int s = 0; s < SERVICES; s++) {
      LockService svc = open();
      for (int t = 0; t < THREADS; t++) {
        jobs.add(start("contender-" + s + "-" + t, () -> {
          Lock lock = svc.lock(n);
          for (int r = 0; r < ROUNDS; r++) {
            Lease l = null;
            long asked = System.nanoTime();
            while (l == null) {
              Optional<Lease> o = spin ? lock.tryAcquire(Duration.ZERO) : lock.tryAcquire(GRANT_WAIT.multipliedBy(2));
              if (o.isPresent()) {
                l = o.get();
              } else if (!spin) {
                throw new AssertionError("no grant within " + GRANT_WAIT.multipliedBy(2));
              } else if (System.nanoTime() - lastGrant.get() > stall) {
                throw new AssertionError("nobody was granted the lock for " + GRANT_WAIT.multipliedBy(2)
                    + " while " + SERVICES * THREADS + " threads tried it with tryAcquire(ZERO)");
              } else {
                Thread.sleep(ThreadLocalRandom.current().nextInt(1, 4));
              }
            }
            lastGrant.set(System.nanoTime());
            longestWait.accumulateAndGet(lastGrant.get() - asked, Math::max);
            int o = occupancy.incrementAndGet();
            maxOccupancy.accumulateAndGet(o, Math::max);
            grants.incrementAndGet();
            tokens.add(l.fencingToken());
            if (r % 2 == 0) {
              Thread.sleep(1);
            } else {
              Thread.yield();
            }
            occupancy.decrementAndGet();
            l.release();
          }
          return null;
        }));
      }
    }
    for (Job<Void> j : jobs) {
      j.get(Duration.ofSeconds(90));
    }
    // how fair the provider is under load, to compare runs: the longest any thread waited for one grant
    TckReport.line(String.format("[tck contention] %s %s: %d grants in %.1f s, the longest wait for one %.2f s",
        tck.getClass().getSimpleName(), spin ? "tryAcquire(ZERO)" : "tryAcquire(wait)", grants.get(),
        (System.nanoTime() - started) / 1e9, longestWait.get() / 1e9));
    assertEquals(1, maxOccupancy.get(), "two holders were inside the critical section at once");
    assertEquals(SERVICES * THREADS * ROUNDS, grants.get(), "grant count");
    assertEquals(grants.get(), tokens.size(), "the witness and the grant count disagree");
    if (declares(Capability.FENCING)) {
      for (int i = 1; i < tokens.size(); i++) {
        assertTrue(tokens.get(i) > tokens.get(i - 1), "fencing tokens not strictly increasing in grant order at grant "
            + i + ": " + tokens.get(i - 1) + " then " + tokens.get(i));
      }
    }
  }

  @Test
  @DisplayName("asJavaLock: threads sharing a handle exclude each other")
  void javaLockExclusion() throws Exception {
    String n = name("java-contention");
    AtomicInteger occupancy = new AtomicInteger();
    AtomicInteger max = new AtomicInteger();
    List<Job<Void>> jobs = new ArrayList<>();
    for (int s = 0; s < 2; s++) {
      java.util.concurrent.locks.Lock jl = open().lock(n).asJavaLock();
      for (int t = 0; t < 3; t++) {
        jobs.add(start("java-" + s + "-" + t, () -> {
          for (int r = 0; r < 5; r++) {
            assertTrue(jl.tryLock(GRANT_WAIT.toMillis(), TimeUnit.MILLISECONDS), "no grant");
            try {
              max.accumulateAndGet(occupancy.incrementAndGet(), Math::max);
              Thread.sleep(1);
              occupancy.decrementAndGet();
            } finally {
              jl.unlock();
            }
          }
          return null;
        }));
      }
    }
    for (Job<Void> j : jobs) {
      j.get(Duration.ofSeconds(90));
    }
    assertEquals(1, max.get(), "two threads held the java lock at once");
  }
}
