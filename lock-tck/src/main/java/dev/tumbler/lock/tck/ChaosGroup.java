package dev.tumbler.lock.tck;

import static dev.tumbler.lock.tck.LockTck.*;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.HeldLock;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostException;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.LockTimeoutException;
import dev.tumbler.lock.ServiceClosedException;
import dev.tumbler.lock.ServiceUnavailableException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The {@code Chaos} group: it opens, on purpose, the windows between the round trips of an acquire, a renewal
 * and a release, where no other group looks. Workers on several services loop over a few names, taking and giving
 * back locks; meanwhile their calls are interrupted at random points inside them (a delay drawn from zero to twice
 * the provider's own acquire-and-release time, so that most land mid-call), waits are abandoned as their deadline
 * falls mid-call, {@code acquireAsync} is cancelled, whole services are closed under their workers, clients are cut
 * off from the backend and healed (where the {@link FaultInjector} can), and the backend is crashed and restarted
 * (where it can). Thousands of faults per run on a fast backend.
 *
 * <p>After each storm, with every worker stopped and every cut healed:
 * <ul>
 *   <li>the next grant of every name comes within one lease term and the slack (no leftover of an abandoned call
 *       keeps a name unavailable longer than a term), and its fencing token is larger than every token any grant
 *       of the storm carried (FENCING; the Redis defect this group was written for left a counter at 1);
 *   <li>no two grants of a name carried the same token (FENCING);
 *   <li>no lease was held twice at once: whenever a worker was granted a name, every other worker's lease of it was
 *       already invalid (a provider with LOST_NOTIFICATION, or without LEASE_EXPIRY; for the latter, where the target
 *       says a crash ends grants unheard ({@link FaultInjector#crashEndsGrantsUnheard}), a lease granted before a
 *       backend restart is left out: the restart ended its session, and the provider says its holder hears only at
 *       its next check);
 *   <li>every call ended in a lease, an empty answer or one of the exceptions the contract names for it; listings
 *       ({@link LockService#heldLocks()}) are among the calls, one in sixteen, faulted as the acquires are;
 *   <li>where the provider lists its grants ({@link LockService#heldLocks()}), none of the storm's names is listed
 *       once everything was released.
 * </ul>
 *
 * <p>Each of the two storms ends once it has injected 1,000 faults (after 1 s at least, 5 s at most);
 * {@code -Dtck.chaos.seconds=N} makes the two last N seconds in all instead: a long run is that and nothing else
 * ({@code -Dtck.chaos.seconds=600}). The seed of the random choices is printed and taken from
 * {@code -Dtck.chaos.seed}; timing makes a run unrepeatable anyway, so it only fixes the choices.
 */
abstract class ChaosGroup extends TckGroup {
  private static final int SERVICES = 3;
  private static final int WORKERS_PER_SERVICE = 3;
  private static final int NAMES = 3;
  private static final int STORMS = 2;
  /** At most this many services closed and replaced per storm: opening one can be slow (a peer node). */
  private static final int CLOSES_PER_STORM = 2;

  ChaosGroup(LockTck tck) {
    super(tck);
  }

  /** Faults a storm injects before it ends, by default (unless it reaches {@link #MAX_STORM} first). */
  private static final int FAULTS_PER_STORM = 1000;
  private static final Duration MIN_STORM = Duration.ofSeconds(1);
  private static final Duration MAX_STORM = Duration.ofSeconds(5);

  /**
   * How long each storm lasts: {@code [min, max]}, ending at {@link #FAULTS_PER_STORM} faults in between; both the
   * storms' total over two from {@code tck.chaos.seconds} when it is set (a long run lasts exactly that).
   */
  static Duration[] stormLength() {
    String s = System.getProperty("tck.chaos.seconds");
    if (s == null || s.isBlank()) {
      return new Duration[] {MIN_STORM, MAX_STORM};
    }
    try {
      Duration d = Duration.ofMillis((long) (Double.parseDouble(s.trim()) * 1000));
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException("tck.chaos.seconds must be positive: " + s);
      }
      return new Duration[] {d.dividedBy(STORMS), d.dividedBy(STORMS)};
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("tck.chaos.seconds is not a number of seconds: " + s, e);
    }
  }

  @Test
  @DisplayName("interrupts, abandoned waits, closes and cuts inside acquire, renew and release: tokens go on "
      + "increasing, names come back within a term, no lease is held twice, nothing stays held")
  // the class's 120 s bound holds for the storms' own time on top of it, enforced below (a long run is minutes)
  @Timeout(value = 1, unit = TimeUnit.DAYS)
  void storm() throws Exception {
    long seed = Long.getLong("tck.chaos.seed", ThreadLocalRandom.current().nextLong());
    Duration[] each = stormLength();
    Duration bound = Duration.ofSeconds(120).plus(each[1].multipliedBy(STORMS));
    Storm storm = new Storm(seed);
    assertTimeoutPreemptively(bound, () -> {
      try {
        storm.calibrate();
        for (int i = 1; i <= STORMS; i++) {
          storm.run(i, each[0], each[1]);
          storm.checkAfter(i);
        }
        storm.checkNothingListed();
      } catch (AssertionError e) {
        throw new AssertionError(e.getMessage() + "\n  " + storm.summary(), e);
      }
    }, () -> "the storms (" + STORMS + " × at most " + each[1].toSeconds() + " s) and their checks took more than "
        + bound.toSeconds() + " s in all\n  " + storm.summary());
    TckReport.line("[tck chaos] " + tck.getClass().getSimpleName() + ": " + storm.summary());
  }

  /** One run: the services, the names, what was seen. */
  private final class Storm {
    final long seed;
    final SplittableRandom random;
    final List<String> names = new ArrayList<>();
    final AtomicReferenceArray<LockService> services = new AtomicReferenceArray<>(SERVICES);
    /** Services cut off from the backend now (index → true). */
    final AtomicReferenceArray<Boolean> cut = new AtomicReferenceArray<>(SERVICES);
    final boolean fencing = tck.declares(Capability.FENCING);
    /** Whether another grant while a lease still says it is valid breaks a promise the provider makes. */
    final boolean exclusive = tck.declares(Capability.LOST_NOTIFICATION) || !tck.declares(Capability.LEASE_EXPIRY);
    /**
     * Whether a backend restart ends grants before their holders hear of it, as the target says the provider documents
     * ({@link FaultInjector#crashEndsGrantsUnheard}): a lease granted before a restart may then still say it is valid
     * when another is granted.
     */
    final boolean restartEndsGrantsUnheard = target.faults().map(FaultInjector::crashEndsGrantsUnheard).orElse(false);
    /**
     * For each lease held now, the backend crashes known to be over ({@link #crashesOver}) when its acquire began and
     * the restarts begun ({@link #restartsBegun}) when it came back. A lease the old server granted began its acquire
     * before the crash, so with fewer crashes over than the restarts begun when a lease of the new server came back.
     */
    final Map<Lease, Life> lives = new ConcurrentHashMap<>();

    /** Where a lease's grant may lie among the backend's restarts. */
    record Life(long crashesOverAtStart, long restartsBegunAtGrant) {
      /** Whether a restart may lie between one of these grants and the other's, in either order. */
      boolean mayDiffer(Life o) {
        return crashesOverAtStart < o.restartsBegunAtGrant || o.crashesOverAtStart < restartsBegunAtGrant;
      }
    }
    final Set<FaultInjector.Fault> faults = tck.faultsSupported();
    final Map<String, AtomicLong> highest = new ConcurrentHashMap<>();
    final Map<String, Map<Long, Boolean>> tokens = new ConcurrentHashMap<>();
    final Map<String, Set<Lease>> holding = new ConcurrentHashMap<>();
    final List<String> violations = new CopyOnWriteArrayList<>();
    /** What each worker is doing (the name, the service, the call), for a worker that does not come back. */
    final Map<Thread, String> doing = new ConcurrentHashMap<>();
    /** Each worker's current name, to list its holders when the worker does not come back. */
    final Map<Thread, String> doingName = new ConcurrentHashMap<>();
    final List<String> unexpected = new CopyOnWriteArrayList<>();
    final LongAdder grants = new LongAdder();
    final LongAdder empty = new LongAdder();
    final LongAdder interruptsArmed = new LongAdder();
    final LongAdder interruptsLanded = new LongAdder();
    final LongAdder abandoned = new LongAdder();
    final LongAdder abandonedCalls = new LongAdder();
    final LongAdder cancelled = new LongAdder();
    final LongAdder renewals = new LongAdder();
    final LongAdder unavailable = new LongAdder();
    final LongAdder closedUnder = new LongAdder();
    /** Listings asked in the storm ({@link #list}), and those that answered. */
    final LongAdder listingsAsked = new LongAdder();
    final LongAdder listingsAnswered = new LongAdder();
    /** The longest listing call of the storms, in nanoseconds. */
    final AtomicLong longestListing = new AtomicLong();
    final AtomicLong closes = new AtomicLong();
    final AtomicLong cuts = new AtomicLong();
    final AtomicLong restarts = new AtomicLong();
    /** Counted once the backend is down, after {@code crashBackend()} returned. */
    final AtomicLong crashesOver = new AtomicLong();
    /** Counted before {@code restartBackend()} is called: no grant of the new server comes back before it. */
    final AtomicLong restartsBegun = new AtomicLong();
    final List<String> afterStorm = new ArrayList<>();
    final ScheduledThreadPoolExecutor interrupter;
    long opNanos;

    Storm(long seed) {
      this.seed = seed;
      this.random = new SplittableRandom(seed);
      for (int i = 0; i < NAMES; i++) {
        names.add(LockTck.name("chaos-" + i));
      }
      for (int i = 0; i < SERVICES; i++) {
        services.set(i, open());
        cut.set(i, false);
      }
      interrupter = new ScheduledThreadPoolExecutor(1, r -> Thread.ofPlatform().daemon().name("tck-chaos-interrupter")
          .unstarted(r));
      interrupter.setRemoveOnCancelPolicy(true);
    }

    /** The provider's own uncontended acquire-and-release time: the scale of every delay drawn. */
    void calibrate() throws InterruptedException {
      LockService s = services.get(0);
      long[] took = new long[15];
      for (int i = 0; i < took.length; i++) {
        long t0 = System.nanoTime();
        Lease l = LockTck.held(s.lock(names.get(i % NAMES)).tryAcquire(LockTck.GRANT_WAIT),
            "a free lock was not granted before the storm");
        record(names.get(i % NAMES), l);
        l.release();
        took[i] = System.nanoTime() - t0;
      }
      Arrays.sort(took);
      opNanos = Math.max(TimeUnit.MICROSECONDS.toNanos(50), took[took.length / 2]);
    }

    /** Faults injected so far: interrupts armed, deadlines inside calls, cancels, closes, cuts, restarts. */
    long faults() {
      return interruptsArmed.sum() + abandonedCalls.sum() + cancelled.sum() + closes.get() + cuts.get() + restarts.get();
    }

    void run(int number, Duration min, Duration max) throws Exception {
      AtomicBoolean stop = new AtomicBoolean();
      List<Thread> workers = new ArrayList<>();
      List<Throwable> crashed = new CopyOnWriteArrayList<>();
      for (int i = 0; i < SERVICES * WORKERS_PER_SERVICE; i++) {
        long workerSeed = random.nextLong();
        int home = i % SERVICES;
        Runnable body = () -> {
          try {
            work(home, new SplittableRandom(workerSeed), stop);
          } catch (Throwable e) {
            crashed.add(e);
          }
        };
        // half on virtual threads (an interrupt closes a socket they are blocked on), half on platform threads
        workers.add(i % 2 == 0 ? Thread.ofVirtual().name("tck-chaos-v" + i).start(body)
            : Thread.ofPlatform().daemon().name("tck-chaos-p" + i).start(body));
      }
      try {
        inflict(min, max, new SplittableRandom(random.nextLong()));
      } finally {
        stop.set(true);
        for (int i = 0; i < SERVICES; i++) {
          heal(i);
        }
        long until = System.nanoTime() + tck.leaseTime().plus(LockTck.GRANT_WAIT).toNanos();
        for (Thread t : workers) {
          t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime())));
          if (t.isAlive()) {
            String name = doingName.get(t);
            violations.add("worker " + t.getName() + " was still in a call " + LockTck.GRANT_WAIT.plus(tck.leaseTime())
                .toMillis() + " ms after the storm ended, " + doing.get(t)
                + (name == null ? "" : listing(services.get(0), name) + "; the highest token seen "
                    + highest.get(name) + ", leases of it still in a worker's hands "
                    + holding.getOrDefault(name, Set.of()).stream().map(l -> l.fencingToken() + (l.isValid() ? " valid"
                        : " not valid")).toList()) + ":\n" + stack(t));
            t.interrupt();
          }
        }
      }
      for (Throwable e : crashed) {
        unexpected.add("a worker died: " + trace(e));
      }
    }

    /** The faults that hit whole services and the backend, for {@code length}; the calls' own are in {@link #work}. */
    void inflict(Duration min, Duration max, SplittableRandom r) throws InterruptedException {
      long start = System.nanoTime();
      long end = start + max.toNanos();
      long goal = faults() + FAULTS_PER_STORM;
      int closesLeft = CLOSES_PER_STORM;
      boolean restarted = !faults.contains(FaultInjector.Fault.CRASH_BACKEND);
      long restartAt = start + min.toNanos() / 3 + r.nextLong(Math.max(1, min.toNanos() / 3));
      while (System.nanoTime() - end < 0 && (System.nanoTime() - start < min.toNanos() || faults() < goal
          || !restarted)) {
        Thread.sleep(Math.max(1, Math.min(r.nextLong(10, 150), TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()))));
        int i = r.nextInt(SERVICES);
        int what = r.nextInt(4);
        if (!restarted && System.nanoTime() - restartAt >= 0) {
          restarted = true;
          restartBackend(r);
        } else if (what == 0 && closesLeft > 0 && !cut.get(i)) {
          closesLeft--;
          LockService old = services.getAndSet(i, open());
          closes.incrementAndGet();
          old.close();
        } else if (what == 1 && faults.contains(FaultInjector.Fault.CUT_OFF_CLIENT)) {
          if (cut.get(i)) {
            heal(i);
          } else {
            target.faults().orElseThrow().cutOff(services.get(i));
            cut.set(i, true);
            cuts.incrementAndGet();
          }
        }
      }
    }

    void restartBackend(SplittableRandom r) throws InterruptedException {
      FaultInjector f = target.faults().orElseThrow();
      tck.crashed = true;
      f.crashBackend();
      crashesOver.incrementAndGet();
      try {
        Thread.sleep(r.nextLong(0, 300));
      } finally {
        restartsBegun.incrementAndGet();
        f.restartBackend();
        tck.crashed = false;
      }
      restarts.incrementAndGet();
    }

    void heal(int i) {
      if (cut.get(i)) {
        target.faults().orElseThrow().heal(services.get(i));
        cut.set(i, false);
      }
    }

    /** One worker: take a lock, hold it a moment, maybe renew, give it back; with faults at random points. */
    void work(int home, SplittableRandom r, AtomicBoolean stop) {
      Thread self = Thread.currentThread();
      AtomicLong armed = new AtomicLong(IDLE);
      while (!stop.get()) {
        String name = names.get(r.nextInt(NAMES));
        long crashesBefore = crashesOver.get();
        // mostly the worker's own service; sometimes another's, so that two workers share a service's handles
        int at = r.nextInt(4) == 0 ? r.nextInt(SERVICES) : home;
        LockService s = services.get(at);
        Lock lock;
        try {
          lock = s.lock(name);
        } catch (ServiceClosedException e) {
          closedUnder.increment();
          continue;
        }
        if (r.nextInt(16) == 0) {
          list(s, r, self, armed);
          continue;
        }
        int how = r.nextInt(8);
        doing.put(self, "in acquire (way " + how + ") of '" + name + "' on service " + at);
        doingName.put(self, name);
        if (r.nextInt(3) == 0) {
          arm(self, armed, r.nextLong(2 * opNanos + 1));
        }
        Lease lease = null;
        try {
          lease = switch (how) {
            case 0 -> lock.acquire();
            case 1, 2 -> async(lock, r);
            case 3, 4 -> {
              // a deadline that falls inside the call: abandoned mid-round-trip
              abandonedCalls.increment();
              Optional<Lease> l = lock.tryAcquire(Duration.ofNanos(r.nextLong(2 * opNanos + 1)));
              if (l.isEmpty()) {
                abandoned.increment();
              }
              yield l.orElse(null);
            }
            default -> lock.tryAcquire(tck.leaseTime()).orElse(null);
          };
          if (lease == null) {
            empty.increment();
          }
        } catch (InterruptedException e) {
          interruptsLanded.increment();
        } catch (ServiceClosedException e) {
          closedUnder.increment();
        } catch (ServiceUnavailableException e) {
          unavailable.increment();
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        } catch (RuntimeException e) {
          unexpected.add("acquire of '" + name + "' (" + how + ") threw " + trace(e));
        }
        if (lease != null) {
          hold(lease, crashesBefore, r, self, armed);
        }
        disarm(armed);
      }
      disarm(armed);
    }

    Lease async(Lock lock, SplittableRandom r) throws InterruptedException {
      CompletableFuture<Lease> f = lock.acquireAsync(tck.leaseTime());
      LockSupport.parkNanos(r.nextLong(2 * opNanos + 1));
      if (r.nextBoolean() && f.cancel(true)) {
        cancelled.increment();
        return null;
      }
      try {
        return f.get(tck.leaseTime().plus(LockTck.OUTAGE_SLACK).toMillis(), TimeUnit.MILLISECONDS);
      } catch (CancellationException e) {
        cancelled.increment();
        return null;
      } catch (TimeoutException e) {
        if (!f.cancel(true)) {
          // it ended between the wait and the cancel: a lease it brings is given back, not left held (and renewed)
          releaseIfGranted(f);
        }
        violations.add("acquireAsync(" + tck.leaseTime().toMillis() + " ms) of '" + lock.name()
            + "' had not ended " + LockTck.OUTAGE_SLACK.toMillis() + " ms after its wait");
        return null;
      } catch (ExecutionException e) {
        Throwable c = e.getCause();
        if (c instanceof LockTimeoutException) {
          return null;
        }
        if (c instanceof ServiceUnavailableException) {
          unavailable.increment();
          return null;
        }
        if (c instanceof ServiceClosedException) {
          closedUnder.increment();
          return null;
        }
        if (c instanceof InterruptedException || c instanceof CancellationException) {
          return null;
        }
        unexpected.add("acquireAsync of '" + lock.name() + "' failed with " + trace(c));
        return null;
      } catch (InterruptedException e) {
        // the interrupt armed for this call landed while this thread waited for the future: the call goes on
        interruptsLanded.increment();
        f.cancel(true);
        try {
          Lease l = f.get(tck.leaseTime().plus(LockTck.OUTAGE_SLACK).toMillis(), TimeUnit.MILLISECONDS);
          if (l != null) {
            l.release();
          }
        } catch (ExecutionException | TimeoutException | CancellationException ignored) {
          // gone with the cancel; what it may have been granted is the provider's to give back
        }
        return null;
      }
    }

    /** Releases the lease {@code f} completed with, if it completed with one. */
    void releaseIfGranted(CompletableFuture<Lease> f) {
      try {
        Lease late = f.getNow(null);
        if (late != null) {
          late.release();
        }
      } catch (CompletionException | CancellationException ignored) {
        // it ended without a lease
      }
    }

    /** @param crashesBefore {@link #crashesOver} when the acquire that granted {@code lease} began */
    void hold(Lease lease, long crashesBefore, SplittableRandom r, Thread self, AtomicLong armed) {
      String name = lease.name();
      doing.put(self, "holding '" + name + "' (token " + lease.fencingToken() + "), then renew and release");
      grants.increment();
      Set<Lease> others = holding.computeIfAbsent(name, k -> ConcurrentHashMap.newKeySet());
      Life life = new Life(crashesBefore, restartsBegun.get());
      lives.put(lease, life);
      if (exclusive) {
        for (Lease o : others) {
          // the two grants may come from server lives a restart apart: one acquire began before the restart's crash
          // was over and the other grant came back after the restart began (a grant the restarted server made in the
          // moment before the restart call returned is covered too)
          Life ol = lives.get(o);
          if (restartEndsGrantsUnheard && ol != null && life.mayDiffer(ol)) {
            continue; // the older life's session ended in the restart: the provider's documented window
          }
          if (o.isValid() && lease.isValid()) {
            violations.add("two leases of '" + name + "' valid at once: tokens " + o.fencingToken() + " and "
                + lease.fencingToken());
          }
        }
      }
      others.add(lease);
      record(name, lease);
      try {
        if (r.nextInt(4) == 0) {
          LockSupport.parkNanos(r.nextLong(2 * opNanos + 1));
        }
        if (r.nextInt(3) == 0) {
          if (r.nextInt(3) == 0) {
            arm(self, armed, r.nextLong(opNanos + 1));
          }
          try {
            lease.renew();
            renewals.increment();
          } catch (LeaseLostException | ServiceUnavailableException | ServiceClosedException e) {
            // a renewal cut short: the lease is lost, or stays valid until its deadline
          } catch (RuntimeException e) {
            unexpected.add("renew of '" + name + "' threw " + trace(e));
          }
        }
        if (r.nextInt(3) == 0) {
          arm(self, armed, r.nextLong(opNanos + 1));
        }
      } finally {
        others.remove(lease);
        lives.remove(lease);
        try {
          lease.release();
        } catch (RuntimeException e) {
          unexpected.add("release of '" + name + "' threw " + trace(e));
        }
      }
    }

    void record(String name, Lease lease) {
      if (!fencing) {
        return;
      }
      long t = lease.fencingToken();
      highest.computeIfAbsent(name, k -> new AtomicLong(Long.MIN_VALUE)).accumulateAndGet(t, Math::max);
      if (tokens.computeIfAbsent(name, k -> new ConcurrentHashMap<>()).putIfAbsent(t, Boolean.TRUE) != null) {
        violations.add("two grants of '" + name + "' carried the same fencing token " + t);
      }
    }

    /**
     * A listing in the storm, among the acquires: it may be interrupted, its service closed or its client cut off
     * mid-call, and must end in an answer (a list, or empty where the provider cannot say) or an exception the contract
     * names for it, as every call does.
     */
    void list(LockService s, SplittableRandom r, Thread self, AtomicLong armed) {
      if (r.nextInt(3) == 0) {
        arm(self, armed, r.nextLong(2 * opNanos + 1));
      }
      doing.put(self, "listing");
      doingName.remove(self);
      listingsAsked.increment();
      long t0 = System.nanoTime();
      try {
        s.heldLocks();
        listingsAnswered.increment();
      } catch (ServiceClosedException e) {
        closedUnder.increment();
      } catch (ServiceUnavailableException e) {
        unavailable.increment(); // an interrupted listing ends so too, its interrupt status kept
      } catch (RuntimeException e) {
        unexpected.add("heldLocks() threw " + trace(e));
      } finally {
        longestListing.accumulateAndGet(System.nanoTime() - t0, Math::max);
        disarm(armed);
      }
    }

    static final long IDLE = -1;
    static final long FIRING = -2;

    final AtomicLong tickets = new AtomicLong();

    /** Has {@code thread} interrupted after {@code delayNanos}, unless {@link #disarm}ed first. */
    void arm(Thread thread, AtomicLong armed, long delayNanos) {
      disarm(armed);
      long ticket = tickets.incrementAndGet();
      armed.set(ticket);
      interruptsArmed.increment();
      interrupter.schedule(() -> {
        if (armed.compareAndSet(ticket, FIRING)) {
          thread.interrupt();
          armed.set(IDLE);
        }
      }, delayNanos, TimeUnit.NANOSECONDS);
    }

    /** Calls off a pending interrupt (or waits for one being delivered) and clears the interrupt status. */
    void disarm(AtomicLong armed) {
      while (true) {
        long a = armed.get();
        if (a == FIRING) {
          Thread.onSpinWait();
          continue;
        }
        if (a == IDLE || armed.compareAndSet(a, IDLE)) {
          break;
        }
      }
      Thread.interrupted();
    }

    /** With the storm over: each name free within a term, with a token above every token of the storm. */
    void checkAfter(int number) throws InterruptedException {
      assertTrue(unexpected.isEmpty(), "calls ended in exceptions the contract does not name for them ("
          + unexpected.size() + "), the first: " + unexpected.subList(0, Math.min(3, unexpected.size())));
      assertTrue(violations.isEmpty(), "storm " + number + ": " + violations.subList(0, Math.min(5, violations.size())));
      LockService fresh = open();
      Duration bound = tck.leaseTime().plus(LockTck.SLACK);
      for (String n : names) {
        long t0 = System.nanoTime();
        Optional<Lease> l = fresh.lock(n).tryAcquire(bound);
        long took = LockTck.millisSince(t0);
        if (l.isEmpty()) {
          fail("storm " + number + ": '" + n + "' was still unavailable " + bound.toMillis() + " ms (a lease term and "
              + "the slack) after the storm ended: a call cut short left it held" + listing(fresh, n));
        }
        try (Lease lease = l.get()) {
          afterStorm.add(took + "ms");
          if (fencing) {
            long before = highest.getOrDefault(n, new AtomicLong(Long.MIN_VALUE)).get();
            assertTrue(lease.fencingToken() > before, "storm " + number + ": the first grant of '" + n
                + "' after the storm has fencing token " + lease.fencingToken() + ", not above " + before
                + ", the largest of the grants before it: a token went back");
            record(n, lease);
          }
        }
      }
    }

    /**
     * Where the provider lists its grants: none of the storm's names, once all is released, within a term and the
     * slack. A backend may hear of a release only at the releasing node's next renewal: the native {@code lease}
     * keeps a released lock cached on its node, and its server lists it until that node says it is unused. A grant
     * that leaked (still renewed) stays listed.
     */
    void checkNothingListed() throws InterruptedException {
      LockService s = open();
      long end = System.nanoTime() + tck.leaseTime().plus(LockTck.SLACK).toNanos();
      List<HeldLock> left;
      do {
        Optional<List<HeldLock>> listed = s.heldLocks();
        if (listed.isEmpty()) {
          return;
        }
        left = listed.get().stream().filter(h -> names.contains(h.name())).toList();
        if (left.isEmpty()) {
          return;
        }
        Thread.sleep(50);
      } while (System.nanoTime() - end < 0);
      fail("after the storms, with every lease released, the backend still lists " + left);
    }

    String listing(LockService s, String name) {
      try {
        return s.heldLocks().map(l -> "; the backend lists " + l.stream().filter(h -> h.name().equals(name)).toList())
            .orElse("");
      } catch (RuntimeException e) {
        return "";
      }
    }

    String summary() {
      interrupter.shutdownNow();
      return String.format("seed %d, op %d us: %d faults; %d grants, %d empty, %d waits with a deadline inside the call"
              + " (%d ended empty), %d async cancelled, %d interrupts armed / %d landed in acquires, %d renewals, %d unavailable,"
              + " %d calls on closed services, %d services closed, %d cuts, %d backend restarts; %d listings asked, %d"
              + " answered, the longest %d ms; first grant after each storm: %s",
          seed, TimeUnit.NANOSECONDS.toMicros(opNanos), faults(), grants.sum(), empty.sum(), abandonedCalls.sum(),
          abandoned.sum(), cancelled.sum(),
          interruptsArmed.sum(), interruptsLanded.sum(), renewals.sum(), unavailable.sum(), closedUnder.sum(),
          closes.get(), cuts.get(), restarts.get(), listingsAsked.sum(), listingsAnswered.sum(),
          TimeUnit.NANOSECONDS.toMillis(longestListing.get()), afterStorm);
    }
  }

  /** The exception and each of its causes: its message and its top frames, so the failing call's origin shows. */
  private static String trace(Throwable e) {
    StringBuilder b = new StringBuilder();
    int depth = 0;
    for (Throwable t = e; t != null && depth < 5; t = t.getCause(), depth++) {
      b.append(depth == 0 ? "" : "\n  caused by ").append(t).append('\n');
      StackTraceElement[] frames = t.getStackTrace();
      for (int i = 0; i < Math.min(8, frames.length); i++) {
        b.append("      at ").append(frames[i]).append('\n');
      }
    }
    return b.toString();
  }

  private static String stack(Thread t) {
    StringBuilder b = new StringBuilder();
    for (StackTraceElement e : t.getStackTrace()) {
      b.append("    at ").append(e).append('\n');
    }
    return b.toString();
  }
}
