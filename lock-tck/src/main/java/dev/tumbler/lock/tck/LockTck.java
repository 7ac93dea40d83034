package dev.tumbler.lock.tck;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.Checks;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.function.Executable;

/**
 * The Tumbler technology compatibility kit: the definition of a provider that "works". A provider
 * module adds {@code lock-tck} with {@code test} scope and writes one class:
 *
 * <pre>{@code
 * class RedisTckTest extends LockTck {
 *   @Override
 *   protected TckTarget createTarget() throws Exception {
 *     RedisServer server = ...;  // start the backend on a free loopback port
 *     return new TckTarget() { ... };
 *   }
 * }
 * }</pre>
 *
 * <p>This class is the table of contents: the groups are the small {@link Nested} classes at its end, each entering
 * the group's tests from a file of their own ({@code MutexGroup}, {@code LeasesGroup}, …). Each runs when the provider
 * declares the
 * {@link Capability capabilities} it needs (and its {@link FaultInjector} can cause the faults it needs),
 * and is reported as skipped with the reason otherwise. {@link #excludedTests()} lets a provider skip a
 * single test with a written reason.
 *
 * <p>Life cycle: one instance per provider class ({@link TestInstance.Lifecycle#PER_CLASS});
 * {@link #createTarget()} runs once before the first test, {@link TckTarget#close()} after the last.
 * Every service a test opens is closed after that test. Timing assertions use {@link System#nanoTime()}
 * and generous slack: they check semantics (a wait never ends early, a holder is told of a loss before
 * another holder is granted), never speed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith({TckConditions.class, TckTargetNames.class})
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
// TckConditions and TckTargetNames are package-private on purpose: JUnit instantiates them (the package is open to
// JUnit), not a subclass
@SuppressWarnings("exports")
public abstract class LockTck {

  /** How late a wait may end, or a release may take effect, before the TCK calls it a failure. */
  protected static final Duration SLACK = Duration.ofSeconds(2);

  /** How long the TCK waits for something that must happen (a free lock granted). */
  protected static final Duration GRANT_WAIT = Duration.ofSeconds(15);

  /** The wait that tests of "a wait is honoured" ask for. */
  protected static final Duration SHORT_WAIT = Duration.ofMillis(300);

  /**
   * How far past its {@code maxWait} an acquire may return during a backend outage: the API's answer grace
   * ({@code AbstractLockService.ANSWER_GRACE_MILLIS}, 2 s) and 1 s for a busy machine.
   */
  protected static final Duration OUTAGE_SLACK = Duration.ofSeconds(3);

  /**
   * The resource every group shares: groups that may run beside others read it; groups that fault the whole backend,
   * or time the provider under contention, write it and run alone ({@code @ResourceLock}). Groups run at the same time
   * only when JUnit's parallel execution is enabled ({@code junit.jupiter.execution.parallel.enabled=true}); a test
   * whose client fault may reach other clients runs alone from the fault on ({@link FaultGate}).
   */
  static final String BACKEND = "dev.tumbler.lock.tck.backend";

  /** Lets tests run side by side while keeping a test's client faults from other tests' clients. */
  final FaultGate gate = new FaultGate();

  /** How long each group's tests took, printed after the last test: where a target's run spends its time. */
  final GroupTimings timings = new GroupTimings();

  /** The groups, in the order the TCK reports them. */
  static final List<Class<?>> GROUPS = List.of(Registry.class, Mutex.class, Contention.class, Fencing.class,
      Leases.class, Semaphores.class, ReadWrite.class, Fairness.class, Transactions.class, Elections.class,
      Names.class, Listing.class, BadInput.class, Closed.class, Faults.class, Outages.class, FaultTolerance.class, Chaos.class);

  static final String RUN = UUID.randomUUID().toString().substring(0, 8);
  private static final AtomicLong NAMES = new AtomicLong();

  private TckTarget target;
  private Set<Capability> capabilities = Set.of();
  /** What tests of the provider's own class opened (each group's tests have their own). */
  private final TestResources resources = new TestResources();

  /**
   * Starts the backend if needed and says how to reach it. Called once, before the first test.
   *
   * @throws Exception if the backend cannot be started; every test then fails with it
   */
  protected abstract TckTarget createTarget() throws Exception;

  /**
   * Tests this provider skips, each with the reason reported in its place: keys are
   * {@code "Group.method"} (as in {@code "Leases.renewalKeepsLockAcrossTerms"}) or a whole
   * {@code "Group"}. Use sparingly and say why: a skipped test is a promise not kept.
   */
  protected Map<String, String> excludedTests() {
    return Map.of();
  }

  /**
   * For {@link #excludedTests()} of a second target of a provider whose other groups another TCK class
   * already runs (a replicated set-up that exists for the fault-tolerance group): every group but
   * {@code keep}, each with {@code reason}.
   */
  protected static Map<String, String> everyGroupBut(Set<String> keep, String reason) {
    Map<String, String> m = new java.util.LinkedHashMap<>();
    for (Class<?> g : GROUPS) {
      if (!keep.contains(g.getSimpleName())) {
        m.put(g.getSimpleName(), reason);
      }
    }
    return m;
  }

  @BeforeAll
  final void startTarget() throws Exception {
    target = createTarget();
    if (target == null) {
      throw new IllegalStateException(getClass().getName() + ".createTarget() returned null");
    }
    try (LockService probe = target.open()) {
      EnumSet<Capability> caps = EnumSet.of(Capability.MUTEX);
      caps.addAll(probe.info().capabilities());
      capabilities = Collections.unmodifiableSet(caps);
    }
    preflight = releasePreflight();
  }

  /**
   * What the first check saw, when it failed: a release that does not free the lock in time. Every test depends on
   * releases taking effect, and against such a provider each would wait out its own time-outs (minutes in all) to
   * report the same thing; so each fails at once with this instead.
   */
  private volatile String preflight;

  @BeforeEach
  final void failFastAfterPreflight() {
    if (preflight != null) {
      fail(preflight);
    }
  }

  /**
   * A lock taken and released by one service must be granted to another within {@link #releaseBound()}; three
   * tries on fresh names, so that one slow moment of a busy machine is not taken for a broken provider.
   *
   * @return null if it was; else what was seen, for every test's failure
   */
  private String releasePreflight() throws InterruptedException {
    try (LockService a = target.open(); LockService b = target.open()) {
      Duration bound = releaseBound();
      long lateMs = -1;
      for (int i = 0; i < 3; i++) {
        String n = name("preflight");
        Optional<Lease> first = a.lock(n).tryAcquire(GRANT_WAIT);
        if (first.isEmpty()) {
          return null; // no grant at all: the tests will say so, each in its own words
        }
        first.get().release();
        long t0 = System.nanoTime();
        Optional<Lease> next = b.lock(n).tryAcquire(bound);
        if (next.isPresent()) {
          next.get().release();
          return null;
        }
        Optional<Lease> late = b.lock(n).tryAcquire(GRANT_WAIT);
        lateMs = late.isPresent() ? millisSince(t0) : -1;
        late.ifPresent(Lease::release);
      }
      return "the TCK's first check failed: a lock released by one service was not granted to another within "
          + bound.toMillis() + " ms, three times in a row ("
          + (lateMs >= 0 ? "the last time it was granted after " + lateMs + " ms" : "the last time not within "
              + (GRANT_WAIT.toMillis() + bound.toMillis()) + " ms")
          + "): release() returns before the backend frees the lock. Every test depends on releases taking effect,"
          + " so this test was not run";
    } catch (RuntimeException e) {
      return null; // the tests will meet the same failure and report it where it belongs
    }
  }

  @AfterAll
  final void stopTarget() {
    try {
      if (target != null) {
        target.close();
      }
    } finally {
      timings.print(getClass().getSimpleName());
    }
  }

  @AfterEach
  final void closeEverything(TestInfo test) throws InterruptedException {
    // a group's test closes its own (TckGroup); groups run beside the provider's own tests, so not these
    if (test.getTestClass().filter(TckGroup.class::isAssignableFrom).isEmpty()) {
      resources.closeAll();
    }
    if (crashed) {
      // a failed crash test may have left the backend down: restart it for the next one
      crashed = false;
      safely(() -> target.faults().orElseThrow().restartBackend());
    }
    Runnable repair = minorityRepair;
    if (repair != null) {
      minorityRepair = null;
      safely(repair::run);
    }
  }

  /** Set while a test has the backend crashed, so that a test that ends abruptly does not leave it down. */
  volatile boolean crashed;

  /** Set while a test has a minority of the backend crashed or cut off: repaired if the test ends abruptly. */
  volatile Runnable minorityRepair;

  // ---------------------------------------------------------------- helpers for the groups

  /** The target created by {@link #createTarget()}. */
  protected final TckTarget target() {
    return target;
  }

  /** What the provider declares (as the first service opened said), MUTEX always included. */
  protected final Set<Capability> capabilities() {
    return capabilities;
  }

  final Set<FaultInjector.Fault> faultsSupported() {
    return target.faults().map(FaultInjector::supported).orElse(Set.of());
  }

  final boolean declares(Capability c) {
    return capabilities.contains(c);
  }

  /** Opens a fresh service that is closed after the test. */
  protected final LockService open() {
    return resources.open(target);
  }

  /**
   * Opens a service on the target's URL with {@code overrides} as the connect properties (which override
   * URL parameters of the same name); closed after the test. Only for tests that require a URL.
   */
  final LockService connect(Properties overrides) {
    return resources.connect(target, overrides);
  }

  /** The remaining time of a valid lease of a provider without {@link Capability#LEASE_EXPIRY}. */
  static final Duration UNBOUNDED = Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);

  /** A name no other test or run uses. */
  protected static String name(String base) {
    return "tck-" + RUN + "-" + base + "-" + NAMES.incrementAndGet();
  }

  final Duration leaseTime() {
    return target.leaseTime();
  }

  /** How long a cut-off holder's lease may take to end on the backend before the TCK gives up. */
  final Duration expiryBound() {
    return leaseTime().multipliedBy(3).plus(Duration.ofSeconds(3));
  }

  /** How soon a released (or closed) lease must be grantable again: well before it could expire. */
  final Duration releaseBound() {
    if (!declares(Capability.LEASE_EXPIRY)) {
      return SLACK;
    }
    Duration half = leaseTime().dividedBy(2);
    return half.compareTo(SLACK) < 0 ? half : SLACK;
  }

  /** A background task on its own thread; interrupted and joined after the test. */
  final <T> Job<T> start(String what, Callable<T> body) {
    return resources.start(what, body);
  }

  /** Waits (up to the slack) until {@code job}'s thread is blocked: in a test, waiting for what it asked for. */
  final void awaitBlocked(Job<?> job) throws InterruptedException {
    eventually(SLACK, "task " + job.thread().getName() + " did not start waiting", () -> {
      Thread.State st = job.thread().getState();
      return st == Thread.State.WAITING || st == Thread.State.TIMED_WAITING || job.result().isDone();
    });
  }

  /** A task started by {@link #start}. */
  record Job<T>(Thread thread, CompletableFuture<T> result) {
    T get(Duration max) throws Exception {
      try {
        return result.get(max.toMillis(), TimeUnit.MILLISECONDS);
      } catch (ExecutionException e) {
        if (e.getCause() instanceof Exception ex) {
          throw ex;
        }
        throw e;
      } catch (TimeoutException e) {
        throw new AssertionError("task " + thread.getName() + " did not finish within " + max + "; it is "
            + thread.getState() + " at" + stack(thread), e);
      }
    }

    /**
     * Where a thread is now, a frame a line (at most 40): what a task that did not finish is stuck in; then every
     * platform thread that holds a lock (a {@code ReentrantLock} or a monitor) with where it is, since the stuck
     * task often waits for one of them.
     */
    static String stack(Thread thread) {
      StringBuilder b = new StringBuilder();
      StackTraceElement[] frames = thread.getStackTrace();
      for (int i = 0; i < Math.min(frames.length, 40); i++) {
        b.append("\n\t  ").append(frames[i]);
      }
      if (frames.length == 0) {
        b.append(" (no frames: ended, or not started)");
      }
      try {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        for (java.lang.management.ThreadInfo t : mx.dumpAllThreads(true, true)) {
          if (t.getLockedSynchronizers().length == 0 && t.getLockedMonitors().length == 0) {
            continue;
          }
          b.append("\n\tholding ").append(java.util.Arrays.toString(t.getLockedSynchronizers()))
              .append(java.util.Arrays.toString(t.getLockedMonitors())).append(": \"").append(t.getThreadName())
              .append("\" ").append(t.getThreadState())
              .append(t.getLockName() == null ? "" : " on " + t.getLockName() + " owned by " + t.getLockOwnerName());
          StackTraceElement[] st = t.getStackTrace();
          for (int i = 0; i < Math.min(st.length, 30); i++) {
            b.append("\n\t    ").append(st[i]);
          }
        }
      } catch (RuntimeException | LinkageError e) {
        b.append("\n\t(no thread dump: ").append(e).append(')');
      }
      return b.toString();
    }

    Throwable failure(Duration max) throws Exception {
      try {
        result.get(max.toMillis(), TimeUnit.MILLISECONDS);
        return null;
      } catch (ExecutionException e) {
        return e.getCause();
      } catch (TimeoutException e) {
        throw new AssertionError("task " + thread.getName() + " did not finish within " + max + "; it is "
            + thread.getState() + " at" + stack(thread), e);
      }
    }
  }

  static void eventually(Duration max, String what, BooleanSupplier condition) throws InterruptedException {
    eventually(max, () -> what, condition);
  }

  /** Like {@link #eventually(Duration, String, BooleanSupplier)}, with a message made when it fails. */
  static void eventually(Duration max, java.util.function.Supplier<String> what, BooleanSupplier condition)
      throws InterruptedException {
    long end = System.nanoTime() + max.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - end > 0) {
        fail(what.get() + " (waited " + max.toMillis() + " ms)");
      }
      Thread.sleep(10);
    }
  }

  static long millisSince(long startNanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
  }

  /**
   * {@code lock.tryAcquire(ZERO)}, as a probe of a name someone holds: empty if refused, the lease if granted (for the
   * caller to report). A provider may answer a zero wait with {@link ServiceUnavailableException} when its backend does
   * not answer within the provider's own bound, which a loaded machine can pass with no fault injected (PostgreSQL
   * through JDBC has 1.5 s for a zero wait: a soak run under load once passed it, and
   * {@code ReadWrite.readersExcludeWriter} failed with that exception). That is not an answer to the probe, so it asks
   * again, for {@link #GRANT_WAIT} at most; a provider that keeps failing so fails the test with its exception. For
   * the groups that inject no fault: where one is injected, that exception is what a test looks at.
   */
  static Optional<Lease> probe(Lock lock) throws InterruptedException {
    long end = System.nanoTime() + GRANT_WAIT.toNanos();
    while (true) {
      try {
        return lock.tryAcquire(Duration.ZERO);
      } catch (ServiceUnavailableException e) {
        if (System.nanoTime() - end >= 0) {
          throw e;
        }
        Thread.sleep(50);
      }
    }
  }

  static Lease held(Optional<Lease> lease, String what) {
    assertTrue(lease.isPresent(), what);
    return lease.get();
  }

  private static void safely(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException ignored) {
      // best effort cleanup
    }
  }

  /** Checks that the wait ended neither before {@code asked} nor much after. */
  static void assertWaited(long startNanos, Duration asked, String what) {
    long ms = millisSince(startNanos);
    assertTrue(ms >= asked.toMillis(), what + " returned after " + ms + " ms, before the " + asked.toMillis()
        + " ms asked for");
    assertTrue(ms <= asked.plus(SLACK).toMillis(), what + " returned after " + ms + " ms, more than "
        + SLACK.toMillis() + " ms past the " + asked.toMillis() + " ms asked for");
  }

  /** An argument check: {@code type} thrown, its message naming {@code argument}. */
  static <X extends Throwable> void assertRejects(Class<X> type, String argument, String call, Executable e) {
    X x = assertThrows(type, e, call + " must throw " + type.getSimpleName());
    assertMessageNames(x, argument, call + " threw " + type.getSimpleName());
  }

  private static void assertMessageNames(Throwable t, String argument, String what) {
    String m = t.getMessage();
    assertTrue(m != null && m.toLowerCase(Locale.ROOT).contains(argument.toLowerCase(Locale.ROOT)),
        what + " whose message does not name '" + argument + "': " + m);
  }

  /** Like {@link #assertRejects} for an async call, which may throw or return a failed future. */
  static void assertRejectsAsync(Class<? extends Throwable> type, String argument, String call,
      Callable<CompletableFuture<?>> c) throws Exception {
    Throwable t;
    try {
      CompletableFuture<?> f = c.call();
      try {
        Object v = f.get(SLACK.toMillis(), TimeUnit.MILLISECONDS);
        if (v instanceof Lease l) {
          l.release();
        }
        fail(call + " succeeded; it must fail with " + type.getSimpleName());
        return;
      } catch (ExecutionException e) {
        t = e.getCause();
      }
    } catch (RuntimeException e) {
      t = e;
    }
    assertTrue(type.isInstance(t), call + " failed with " + t + "; expected " + type.getSimpleName());
    assertMessageNames(t, argument, call + " failed with " + type.getSimpleName());
  }

  /** Chooses a fault that makes a holder's leases end: cut-off if the injector can, else paused renewals. */
  final FaultInjector.Fault isolation() {
    Set<FaultInjector.Fault> s = faultsSupported();
    return s.contains(FaultInjector.Fault.CUT_OFF_CLIENT) ? FaultInjector.Fault.CUT_OFF_CLIENT
        : FaultInjector.Fault.PAUSE_RENEWALS;
  }

  // ---------------------------------------------------------------- groups: the table of contents

  @Nested
  @DisplayName("registry and URL")
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ)
  class Registry extends RegistryGroup {
    Registry() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("mutex contract")
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ)
  class Mutex extends MutexGroup {
    Mutex() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("exclusion under contention")
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ_WRITE)
  class Contention extends ContentionGroup {
    Contention() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("fencing")
  @Requires(Capability.FENCING)
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ)
  class Fencing extends FencingGroup {
    Fencing() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("leases")
  @Requires(Capability.LEASE_EXPIRY)
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ)
  class Leases extends LeasesGroup {
    Leases() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("semaphore")
  @Requires(Capability.SEMAPHORE)
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ)
  class Semaphores extends SemaphoresGroup {
    Semaphores() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("read/write")
  @Requires(Capability.READ_WRITE)
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ)
  class ReadWrite extends ReadWriteGroup {
    ReadWrite() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("fairness")
  @Requires(Capability.FAIR)
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ)
  class Fairness extends FairnessGroup {
    Fairness() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("transactions")
  @Requires(Capability.TRANSACTIONS)
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ)
  class Transactions extends TransactionsGroup {
    Transactions() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("elections")
  @Requires(Capability.LEADER_ELECTION)
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ)
  class Elections extends ElectionsGroup {
    Elections() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("names")
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ)
  class Names extends NamesGroup {
    Names() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("listing held locks")
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ)
  class Listing extends ListingGroup {
    Listing() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("bad input")
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ)
  class BadInput extends BadInputGroup {
    BadInput() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("closed service")
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ)
  class Closed extends ClosedGroup {
    Closed() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("faults")
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ_WRITE)
  class Faults extends FaultsGroup {
    Faults() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("fault tolerance")
  @Requires(value = Capability.FAULT_TOLERANT, anyFault = {FaultInjector.Fault.CRASH_MINORITY,
      FaultInjector.Fault.PARTITION_MINORITY})
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ_WRITE)
  class FaultTolerance extends FaultToleranceGroup {
    FaultTolerance() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("outages")
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ_WRITE)
  class Outages extends OutagesGroup {
    Outages() {
      super(LockTck.this);
    }
  }

  @Nested
  @DisplayName("chaos")
  @Execution(ExecutionMode.CONCURRENT)
  @ResourceLock(value = BACKEND, mode = ResourceAccessMode.READ_WRITE)
  class Chaos extends ChaosGroup {
    Chaos() {
      super(LockTck.this);
    }
  }
}
