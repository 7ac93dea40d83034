package dev.tumbler.lock.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.DeadlockException;
import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LeaseLostException;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockMode;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.LockTimeoutException;
import dev.tumbler.lock.LockTransaction;
import dev.tumbler.lock.ProviderInfo;
import dev.tumbler.lock.ReadWriteLock;
import dev.tumbler.lock.Semaphore;
import dev.tumbler.lock.ServiceClosedException;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.TransactionOptions;
import dev.tumbler.lock.UnsupportedCapabilityException;
import dev.tumbler.lock.spi.Checks;
import dev.tumbler.lock.spi.LockProvider;
import dev.tumbler.lock.spi.LockUrl;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
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
 * <p>The groups are the {@link Nested} classes below; each runs when the provider declares the
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
@ExtendWith(TckConditions.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
// TckConditions is package-private on purpose: JUnit instantiates it (the package is open to JUnit), not a subclass
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

  /** The groups, in the order the TCK reports them. */
  static final List<Class<?>> GROUPS = List.of(Registry.class, Mutex.class, Contention.class, Fencing.class,
      Leases.class, Semaphores.class, ReadWrite.class, Fairness.class, Transactions.class, Elections.class,
      Names.class, BadInput.class, Closed.class, Faults.class, Outages.class, FaultTolerance.class, Chaos.class);

  private static final String RUN = UUID.randomUUID().toString().substring(0, 8);
  private static final AtomicLong NAMES = new AtomicLong();

  private TckTarget target;
  private Set<Capability> capabilities = Set.of();
  private final List<LockService> opened = new CopyOnWriteArrayList<>();
  private final List<Thread> threads = new CopyOnWriteArrayList<>();

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
    if (target != null) {
      target.close();
    }
  }

  @AfterEach
  final void closeEverything() throws InterruptedException {
    for (Thread t : threads) {
      t.interrupt();
    }
    for (LockService s : opened) {
      try {
        s.close();
      } catch (RuntimeException ignored) {
        // the test may have broken it on purpose
      }
    }
    opened.clear();
    for (Thread t : threads) {
      t.join(SLACK.toMillis());
    }
    threads.clear();
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
  private volatile Runnable minorityRepair;

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
    LockService s = target.open();
    assertNotNull(s, "TckTarget.open() returned null");
    opened.add(s);
    return s;
  }

  /**
   * Opens a service on the target's URL with {@code overrides} as the connect properties (which override
   * URL parameters of the same name); closed after the test. Only for tests that require a URL.
   */
  final LockService connect(Properties overrides) {
    LockService s = LockProviders.connect(target.url().orElseThrow(), overrides);
    assertNotNull(s, "LockProviders.connect returned null");
    opened.add(s);
    return s;
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
    CompletableFuture<T> result = new CompletableFuture<>();
    Thread t = Thread.ofPlatform().daemon().name("tck-" + what).unstarted(() -> {
      try {
        result.complete(body.call());
      } catch (Throwable e) {
        result.completeExceptionally(e);
      }
    });
    threads.add(t);
    t.start();
    return new Job<>(t, result);
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
        throw new AssertionError("task " + thread.getName() + " did not finish within " + max, e);
      }
    }

    Throwable failure(Duration max) throws Exception {
      try {
        result.get(max.toMillis(), TimeUnit.MILLISECONDS);
        return null;
      } catch (ExecutionException e) {
        return e.getCause();
      } catch (TimeoutException e) {
        throw new AssertionError("task " + thread.getName() + " did not finish within " + max, e);
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

  /** Cuts {@code s} off (or pauses its renewals), so that its leases end on the backend. */
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

  /** Chooses a fault that makes a holder's leases end: cut-off if the injector can, else paused renewals. */
  final FaultInjector.Fault isolation() {
    Set<FaultInjector.Fault> s = faultsSupported();
    return s.contains(FaultInjector.Fault.CUT_OFF_CLIENT) ? FaultInjector.Fault.CUT_OFF_CLIENT
        : FaultInjector.Fault.PAUSE_RENEWALS;
  }

  // ---------------------------------------------------------------- groups

  @Nested
  @DisplayName("registry and URL")
  class Registry {

    @Test
    @DisplayName("the service describes itself and its capabilities")
    void serviceInfo() {
      LockService s = open();
      assertFalse(s.info().provider().isBlank(), "info().provider() is blank");
      assertFalse(s.info().providerVersion().isBlank(), "info().providerVersion() is blank");
      target.url().ifPresent(u -> assertTrue(s.info().url().startsWith("lock:" + s.info().provider() + ":"),
          "info().url() is not a lock URL of the provider's scheme: " + s.info().url()));
      assertTrue(s.info().capabilities().contains(Capability.MUTEX), "every provider declares MUTEX");
      for (Capability c : Capability.values()) {
        assertEquals(s.info().capabilities().contains(c), s.supports(c), "supports(" + c + ") disagrees with info()");
      }
      assertFalse(s.isClosed(), "a new service is closed");
    }

    @Test
    @DisplayName("undeclared capabilities throw UnsupportedCapabilityException")
    void undeclaredCapabilitiesRejected() {
      LockService s = open();
      String n = name("unsupported");
      check(s, Capability.READ_WRITE, () -> s.readWriteLock(n));
      check(s, Capability.SEMAPHORE, () -> s.semaphore(n, 2));
      check(s, Capability.LEADER_ELECTION, () -> s.election(n));
      check(s, Capability.TRANSACTIONS, () -> s.beginTransaction(TransactionOptions.defaults()));
    }

    private void check(LockService s, Capability c, Executable call) {
      if (s.supports(c)) {
        return;
      }
      UnsupportedCapabilityException e = assertThrows(UnsupportedCapabilityException.class, call,
          "a service without " + c + " must refuse it");
      assertEquals(c, e.capability());
    }

    @Test
    @DisplayName("unwrap of an unrelated type throws LockException")
    void unwrapUnrelated() {
      LockService s = open();
      assertThrows(LockException.class, () -> s.unwrap(java.util.regex.Pattern.class));
    }

    @Test
    @Requires(url = true)
    @DisplayName("the provider is found by ServiceLoader and listed by LockProviders")
    void foundByServiceLoader() {
      String scheme = LockUrl.parse(target.url().orElseThrow()).scheme();
      boolean found = false;
      ClassLoader cl = Thread.currentThread().getContextClassLoader();
      for (LockProvider p : ServiceLoader.load(LockProvider.class, cl == null ? LockTck.class.getClassLoader() : cl)) {
        if (scheme.equals(p.scheme())) {
          found = true;
        }
      }
      assertTrue(found, "no provider of scheme '" + scheme + "' in META-INF/services/" + LockProvider.class.getName());
      ProviderInfo info = LockProviders.providers().stream().filter(p -> p.scheme().equals(scheme)).findFirst()
          .orElseThrow(() -> new AssertionError("LockProviders.providers() does not list '" + scheme + "'"));
      LockService s = open();
      assertTrue(info.capabilities().containsAll(s.info().capabilities()),
          "the service declares capabilities its provider does not: " + s.info().capabilities() + " vs " + info.capabilities());
    }

    @Test
    @Requires(url = true)
    @DisplayName("the URL parses and connects through LockProviders")
    void urlConnects() throws InterruptedException {
      String url = target.url().orElseThrow();
      LockUrl parsed = LockUrl.parse(url);
      LockService s = LockProviders.connect(url);
      opened.add(s);
      assertEquals(parsed.scheme(), s.info().provider(), "info().provider() is not the URL's scheme");
      parsed.password().ifPresent(p -> {
        assertFalse(s.info().url().contains(p), "info().url() shows the password");
        assertFalse(String.valueOf(s).contains(p), "the service's toString() shows the password");
      });
      try (Lease l = held(s.lock(name("url")).tryAcquire(GRANT_WAIT), "a free lock was not granted")) {
        assertTrue(l.isValid());
      }
    }

    @Test
    @Requires(url = true)
    @DisplayName("an unknown URL parameter is an error that names it")
    void unknownParameterRejected() {
      String url = target.url().orElseThrow();
      String bad = url + (url.contains("?") ? "&" : "?") + "tckNoSuchParameter=1";
      InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, () -> opened.add(LockProviders.connect(bad)),
          "an unknown parameter must not silently fall back to a default");
      assertTrue(e.getMessage().contains("tckNoSuchParameter"), "the error does not name the parameter: " + e.getMessage());
    }

    @Test
    @Requires(url = true)
    @DisplayName("a secret given to connect never appears in an error")
    void secretNotShown() {
      String url = target.url().orElseThrow();
      String secret = "tckS3cretValue" + RUN;
      Properties p = new Properties();
      p.setProperty("password", secret);
      p.setProperty("tckNoSuchParameter", "1");
      InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
          () -> opened.add(LockProviders.connect(url, p)));
      assertFalse(e.getMessage().contains(secret), "the error shows the password: " + e.getMessage());
    }

    @Test
    @Requires(url = true)
    @DisplayName("a password given in the connect properties never shows in info().url() or toString()")
    void propertiesSecretNotShown() throws InterruptedException {
      String url = target.url().orElseThrow();
      LockUrl parsed = LockUrl.parse(url);
      // the target's own password where it has one (it must then connect), else one it may ignore or refuse
      String secret = parsed.password().orElse("tckPr0pS3cret" + RUN);
      Properties p = new Properties();
      p.setProperty("password", secret);
      LockService s;
      try {
        s = LockProviders.connect(url, p);
      } catch (LockException e) {
        assertTrue(parsed.password().isEmpty(), "the target's own password, given in the properties, was refused: " + e);
        assertFalse(String.valueOf(e.getMessage()).contains(secret), "the refusal shows the password: " + e.getMessage());
        return;
      }
      opened.add(s);
      assertFalse(s.info().url().contains(secret), "info().url() shows the password given in the properties: "
          + s.info().url());
      assertFalse(String.valueOf(s.info()).contains(secret), "info().toString() shows the password given in the properties");
      assertFalse(String.valueOf(s).contains(secret), "the service's toString() shows the password given in the properties");
    }

    @Test
    @Requires(value = Capability.LEASE_EXPIRY, url = true)
    @DisplayName("a bad leaseTime is an error that names it")
    void badLeaseTimeRejected() {
      String url = target.url().orElseThrow();
      for (String v : List.of("banana", "-5s", "10")) {
        Properties p = new Properties();
        p.setProperty("leaseTime", v);
        InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
            () -> opened.add(LockProviders.connect(url, p)), "leaseTime=" + v + " was accepted");
        assertTrue(e.getMessage().contains("leaseTime"), "the error does not name leaseTime: " + e.getMessage());
      }
    }

    @Test
    @Requires(url = true)
    @DisplayName("malformed URLs and unknown schemes fail clearly")
    void malformedUrlsRejected() {
      String scheme = LockUrl.parse(target.url().orElseThrow()).scheme();
      for (String bad : List.of("lock:" + scheme + ":", "lock:" + scheme + "://host:99999", "jdbc:" + scheme + "://x",
          "lock:" + scheme + "://h1,,h2", "lock:" + scheme + "://host?a=1&a=2")) {
        InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
            () -> opened.add(LockProviders.connect(bad)), "'" + bad + "' was accepted");
        assertFalse(e.getMessage() == null || e.getMessage().isBlank(), "no message for '" + bad + "'");
      }
      InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
          () -> opened.add(LockProviders.connect("lock:tcknosuchscheme://x")));
      assertTrue(e.getMessage().contains(scheme), "an unknown scheme's error does not list installed '" + scheme
          + "': " + e.getMessage());
    }
  }

  @Nested
  @DisplayName("mutex contract")
  class Mutex {

    @Test
    @DisplayName("acquire gives a valid lease; release frees the lock for others")
    void acquireRelease() throws InterruptedException {
      LockService a = open();
      LockService b = open();
      String n = name("mutex");
      Lock lock = a.lock(n);
      assertEquals(n, lock.name());
      Lease l = lock.acquire();
      assertEquals(n, l.name(), "lease.name()");
      assertEquals(1, l.permits(), "a lock lease holds 1 permit");
      assertTrue(l.isValid(), "a new lease is not valid");
      assertTrue(l.remaining().compareTo(Duration.ZERO) > 0, "a new lease has no time left");
      if (!declares(Capability.LEASE_EXPIRY)) {
        assertEquals(UNBOUNDED, l.remaining(), "a valid lease of a provider without LEASE_EXPIRY has bounded remaining()");
      }
      assertTrue(b.lock(n).tryAcquire(Duration.ZERO).isEmpty(), "a held lock was granted to another service");
      l.release();
      assertFalse(l.isValid(), "a released lease is still valid");
      assertEquals(Duration.ZERO, l.remaining(), "a released lease has time left");
      held(b.lock(n).tryAcquire(releaseBound()), "a released lock was not granted to another service").release();
    }

    @Test
    @DisplayName("tryAcquire(ZERO) while held elsewhere returns empty at once")
    void tryZeroWhileHeld() throws InterruptedException {
      LockService a = open();
      LockService b = open();
      String n = name("zero");
      try (Lease l = a.lock(n).acquire()) {
        long t0 = System.nanoTime();
        assertTrue(b.lock(n).tryAcquire(Duration.ZERO).isEmpty(), "tryAcquire(ZERO) got a held lock");
        assertTrue(millisSince(t0) < SLACK.toMillis(), "tryAcquire(ZERO) waited " + millisSince(t0) + " ms");
        assertTrue(a.lock(n).tryAcquire(Duration.ZERO).isEmpty(),
            "a second lease of a held lock was granted through the same service (locks are not reentrant)");
        assertTrue(l.isValid());
      }
    }

    @Test
    @DisplayName("tryAcquire(wait) never returns early and returns within the slack")
    void waitHonoured() throws InterruptedException {
      LockService a = open();
      LockService b = open();
      String n = name("wait");
      try (Lease l = a.lock(n).acquire()) {
        for (Duration w : List.of(SHORT_WAIT, Duration.ofMillis(700))) {
          long t0 = System.nanoTime();
          assertTrue(b.lock(n).tryAcquire(w).isEmpty(), "tryAcquire got a held lock");
          assertWaited(t0, w, "tryAcquire(" + w.toMillis() + "ms)");
        }
        assertTrue(l.isValid());
      }
    }

    @Test
    @DisplayName("a waiter is granted the lock when the holder releases it")
    void waiterGrantedOnRelease() throws Exception {
      LockService a = open();
      LockService b = open();
      String n = name("handoff");
      Lease la = a.lock(n).acquire();
      Job<Optional<Lease>> waiter = start("waiter", () -> b.lock(n).tryAcquire(GRANT_WAIT));
      Thread.sleep(200);
      assertFalse(waiter.result().isDone(), "the waiter returned while the lock was held: " + waiter.result());
      la.release();
      Lease lb = held(waiter.get(GRANT_WAIT), "the waiter was not granted the released lock");
      assertTrue(lb.isValid());
      if (declares(Capability.FENCING)) {
        assertTrue(lb.fencingToken() > la.fencingToken(), "fencing token did not increase: " + la.fencingToken()
            + " then " + lb.fencingToken());
      }
      lb.release();
    }

    @Test
    @DisplayName("release is idempotent, fires no listener, and a stale release frees nothing")
    void releaseIdempotent() throws InterruptedException {
      LockService a = open();
      LockService b = open();
      LockService c = open();
      String n = name("release");
      Lease l1 = a.lock(n).acquire();
      AtomicBoolean fired = new AtomicBoolean();
      l1.onLost(e -> fired.set(true));
      l1.release();
      l1.release();
      l1.close();
      assertFalse(fired.get(), "release fired a lost listener");
      Lease l2 = held(b.lock(n).tryAcquire(releaseBound()), "the released lock was not granted");
      l1.release();
      l1.close();
      assertTrue(c.lock(n).tryAcquire(Duration.ZERO).isEmpty(),
          "releasing an old lease again freed the lock of its next holder");
      assertTrue(l2.isValid(), "the next holder's lease was ended by a stale release");
      l2.release();
    }

    @Test
    @DisplayName("releasing an old lease again, after the same service was granted the lock anew, leaves the new lease alone")
    void releaseAgainAfterRegrant() throws InterruptedException {
      LockService a = open();
      LockService c = open();
      String n = name("release-again");
      Lock lock = a.lock(n);
      Lease first = lock.acquire();
      first.release();
      Lease second = held(lock.tryAcquire(releaseBound()), "the released lock was not granted again to the same service");
      first.release();
      first.close();
      assertTrue(c.lock(n).tryAcquire(Duration.ZERO).isEmpty(),
          "a second release of an old lease freed the newer lease the same service holds on that lock");
      assertTrue(second.isValid(), "the newer lease was ended by a second release of the old one");
      second.release();
    }

    @Test
    @DisplayName("acquireAsync completes with a lease, or LockTimeoutException no earlier than its wait")
    void acquireAsync() throws Exception {
      LockService a = open();
      LockService b = open();
      String n = name("async");
      Lease la = a.lock(n).acquireAsync(Duration.ZERO).get(GRANT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      assertTrue(la.isValid());
      long t0 = System.nanoTime();
      CompletableFuture<Lease> f = b.lock(n).acquireAsync(SHORT_WAIT);
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> f.get(SHORT_WAIT.plus(SLACK).toMillis(), TimeUnit.MILLISECONDS), "acquireAsync of a held lock completed");
      assertWaited(t0, SHORT_WAIT, "acquireAsync(" + SHORT_WAIT.toMillis() + "ms)");
      assertTrue(e.getCause() instanceof LockTimeoutException, "expected LockTimeoutException, got " + e.getCause());
      CompletableFuture<Lease> g = b.lock(n).acquireAsync(GRANT_WAIT);
      Thread.sleep(100);
      la.release();
      Lease lb = g.get(GRANT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      assertTrue(lb.isValid());
      lb.release();
    }

    @Test
    @DisplayName("cancelling acquireAsync leaks nothing")
    void asyncCancel() throws Exception {
      LockService a = open();
      LockService b = open();
      LockService c = open();
      String n = name("cancel");
      Lease la = a.lock(n).acquire();
      CompletableFuture<Lease> f = b.lock(n).acquireAsync(GRANT_WAIT);
      Thread.sleep(200);
      assertTrue(f.cancel(true), "a pending acquireAsync could not be cancelled");
      assertThrows(CancellationException.class, f::join);
      la.release();
      Lease lc = held(c.lock(n).tryAcquire(SLACK.plus(releaseBound())),
          "the lock stayed taken after the only waiter cancelled: the cancelled acquire leaked a lease");
      lc.release();
    }

    @Test
    @DisplayName("an interrupted acquire throws InterruptedException and holds nothing")
    void interrupt() throws Exception {
      LockService a = open();
      LockService b = open();
      LockService c = open();
      String n = name("interrupt");
      Lease la = a.lock(n).acquire();
      Job<Lease> waiter = start("interrupted", () -> b.lock(n).acquire());
      Thread.sleep(200);
      waiter.thread().interrupt();
      Throwable t = waiter.failure(SLACK);
      assertTrue(t instanceof InterruptedException, "an interrupted acquire() ended with " + t);
      la.release();
      Lease lc = held(c.lock(n).tryAcquire(releaseBound()), "the interrupted acquire left the lock taken");
      lc.release();
      held(b.lock(name("after-interrupt")).tryAcquire(GRANT_WAIT), "the service is unusable after an interrupt").release();
    }

    @Test
    @DisplayName("a lease belongs to its object, not a thread: other threads renew and release it")
    void leaseNotThreadOwned() throws Exception {
      LockService a = open();
      LockService b = open();
      String n = name("owner");
      Lock handle = a.lock(n);
      Lease first = handle.acquire();
      start("releaser", () -> {
        first.release();
        return null;
      }).get(SLACK.plus(releaseBound()));
      assertFalse(first.isValid(), "a lease released by another thread is still valid");
      // the handle holds nothing: the next acquire is a new lease, and the released one stays released
      Lease second = held(handle.tryAcquire(releaseBound()), "a lease released by another thread was not given back");
      assertNotSame(first, second, "a second acquire returned the first lease object");
      assertFalse(first.isValid(), "a released lease became valid again when its lock was granted anew");
      CompletableFuture<Void> v = new CompletableFuture<>();
      Thread.ofVirtual().start(() -> {
        try {
          second.renew();
          second.release();
          v.complete(null);
        } catch (Throwable e) {
          v.completeExceptionally(e);
        }
      });
      v.get(GRANT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      held(b.lock(n).tryAcquire(releaseBound()), "a lease renewed and released by a virtual thread was not given back")
          .release();
    }

    @Test
    @DisplayName("asJavaLock().lock() waits uninterruptibly and keeps the interrupt")
    void javaLockUninterruptible() throws Exception {
      LockService a = open();
      LockService b = open();
      String n = name("java-uninterruptible");
      java.util.concurrent.locks.Lock jl = b.lock(n).asJavaLock();
      Lease la = a.lock(n).acquire();
      Job<Boolean> waiter = start("uninterruptible", () -> {
        jl.lock();
        try {
          return Thread.currentThread().isInterrupted();
        } finally {
          jl.unlock();
        }
      });
      Thread.sleep(200);
      waiter.thread().interrupt();
      Thread.sleep(SHORT_WAIT.toMillis());
      assertFalse(waiter.result().isDone(), "lock() returned or failed when interrupted: " + waiter.result());
      la.release();
      assertTrue(waiter.get(GRANT_WAIT.plus(releaseBound())), "lock() was granted but cleared the thread's interrupt status");
    }

    @Test
    @DisplayName("asJavaLock is thread-owned and reentrant")
    void asJavaLock() throws Exception {
      LockService a = open();
      LockService b = open();
      String n = name("java");
      Lock handle = a.lock(n);
      java.util.concurrent.locks.Lock jl = handle.asJavaLock();
      assertSame(jl, handle.asJavaLock(), "asJavaLock() returned a different adapter for the same handle");
      assertThrows(IllegalMonitorStateException.class, jl::unlock, "unlock without lock");
      jl.lock();
      jl.lock();
      assertTrue(b.lock(n).tryAcquire(Duration.ZERO).isEmpty(), "asJavaLock().lock() did not take the lock");
      Throwable other = start("foreign-unlock", () -> {
        jl.unlock();
        return null;
      }).failure(SLACK);
      assertTrue(other instanceof IllegalMonitorStateException, "unlock from another thread gave " + other);
      jl.unlock();
      assertTrue(b.lock(n).tryAcquire(Duration.ZERO).isEmpty(), "one unlock of two nested locks freed the lock");
      jl.unlock();
      Lease lb = held(b.lock(n).tryAcquire(releaseBound()), "the last unlock did not free the lock");
      assertFalse(jl.tryLock(), "tryLock() got a lock held elsewhere");
      long t0 = System.nanoTime();
      assertFalse(jl.tryLock(SHORT_WAIT.toMillis(), TimeUnit.MILLISECONDS), "tryLock(wait) got a lock held elsewhere");
      assertWaited(t0, SHORT_WAIT, "tryLock(" + SHORT_WAIT.toMillis() + "ms)");
      lb.release();
      assertTrue(jl.tryLock(GRANT_WAIT.toMillis(), TimeUnit.MILLISECONDS), "tryLock(wait) missed a free lock");
      jl.unlock();
      assertThrows(UnsupportedOperationException.class, jl::newCondition);
    }
  }

  @Nested
  @DisplayName("exclusion under contention")
  class Contention {
    static final int SERVICES = 3;
    static final int THREADS = 4;
    static final int ROUNDS = 8;
    /**
     * How long {@link #waitsEndingAsGrantsArrive} races waits against grants once it has seen {@link #RACE_MIN} of
     * each (it goes on until then, up to {@link #GRANT_WAIT}).
     */
    static final Duration RACE_TIME = Duration.ofSeconds(2);
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
     * longest wait doubles after every 200 ms without a grant. An occupancy witness counts overlaps, and
     * afterwards the lock must be free (no grant leaked).
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
                  longestNow.compareAndSet(hi, Math.min(2 * hi, RACE_TIME.toNanos() / 4));
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
        j.get(GRANT_WAIT.plus(RACE_TIME));
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
      List<Job<Void>> jobs = new ArrayList<>();
      for (int s = 0; s < SERVICES; s++) {
        LockService svc = open();
        for (int t = 0; t < THREADS; t++) {
          jobs.add(start("contender-" + s + "-" + t, () -> {
            Lock lock = svc.lock(n);
            for (int r = 0; r < ROUNDS; r++) {
              Lease l = null;
              long end = System.nanoTime() + GRANT_WAIT.multipliedBy(2).toNanos();
              while (l == null) {
                Optional<Lease> o = spin ? lock.tryAcquire(Duration.ZERO) : lock.tryAcquire(GRANT_WAIT.multipliedBy(2));
                if (o.isPresent()) {
                  l = o.get();
                } else if (!spin || System.nanoTime() - end > 0) {
                  throw new AssertionError("no grant within " + GRANT_WAIT.multipliedBy(2));
                } else {
                  Thread.sleep(ThreadLocalRandom.current().nextInt(1, 4));
                }
              }
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

  @Nested
  @DisplayName("fencing")
  @Requires(Capability.FENCING)
  class Fencing {

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

  @Nested
  @DisplayName("leases")
  @Requires(Capability.LEASE_EXPIRY)
  class Leases {

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
        assertTrue(b.lock(n).tryAcquire(Duration.ZERO).isEmpty(), "the renewed lock was granted to another service");
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
        assertTrue(b.lock(kept).tryAcquire(Duration.ZERO).isEmpty(), "a lease renewed by hand was granted to another");
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
      assertTrue(b.lock(n).tryAcquire(Duration.ZERO).isEmpty(), "the displaced owner's unlock() freed the new owner's lock");
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
      assertTrue(c.lock(n).tryAcquire(Duration.ZERO).isEmpty(), "releasing the lost lease freed the new holder's lock");
      assertTrue(lb.isValid(), "the new holder lost its lease when the old one was released");
      lb.release();
      held(a.lock(name("recovered")).tryAcquire(GRANT_WAIT), "the client cannot lock again after the fault was undone")
          .release();
    }
  }

  @Nested
  @DisplayName("semaphore")
  @Requires(Capability.SEMAPHORE)
  class Semaphores {

    @Test
    @DisplayName("availablePermits() counts the permits not out, through every handle of the name")
    void availablePermitsCounted() throws InterruptedException {
      String n = name("sem-available");
      Semaphore a = open().semaphore(n, 3);
      Semaphore b = open().semaphore(n, 3);
      assertEquals(3, b.availablePermits(), "availablePermits() of a new semaphore");
      Lease two = held(a.tryAcquire(2, GRANT_WAIT), "free permits were refused");
      eventually(SLACK, "availablePermits() did not fall to 1 with 2 of 3 out", () -> b.availablePermits() == 1);
      assertEquals(1, a.availablePermits());
      two.release();
      eventually(SLACK, "availablePermits() did not come back to 3", () -> b.availablePermits() == 3);
    }

    @Test
    @Requires(value = Capability.LEASE_EXPIRY, anyFault = {FaultInjector.Fault.CUT_OFF_CLIENT,
        FaultInjector.Fault.PAUSE_RENEWALS})
    @DisplayName("the permits of a holder that is cut off come back when its lease expires")
    void permitsComeBackOnExpiry() throws Exception {
      String n = name("sem-expiry");
      LockService sa = open();
      Semaphore a = sa.semaphore(n, 2);
      Semaphore b = open().semaphore(n, 2);
      Lease l = held(a.tryAcquire(2, GRANT_WAIT), "free permits were refused");
      FaultInjector.Fault how = isolation();
      isolate(how, sa);
      try {
        held(b.tryAcquire(2, expiryBound()), "the permits of a cut-off holder never came back (" + how + ")").release();
        assertFalse(l.isValid(), "the cut-off holder still trusts its permits after they were granted again");
      } finally {
        restore(how, sa);
      }
    }

    @Test
    @DisplayName("an interrupted acquire throws InterruptedException and holds nothing")
    void interruptHoldsNothing() throws Exception {
      String n = name("sem-interrupt");
      Semaphore a = open().semaphore(n, 2);
      Semaphore b = open().semaphore(n, 2);
      Lease one = held(a.tryAcquire(1, GRANT_WAIT), "a free permit was refused");
      Job<Lease> waiter = start("sem-interrupted", () -> b.acquire(2));
      Job<Optional<Lease>> timed = start("sem-interrupted-try", () -> b.tryAcquire(2, GRANT_WAIT));
      Thread.sleep(200);
      waiter.thread().interrupt();
      timed.thread().interrupt();
      Throwable t = waiter.failure(SLACK);
      assertTrue(t instanceof InterruptedException, "an interrupted semaphore acquire ended with " + t);
      Throwable tt = timed.failure(SLACK);
      assertTrue(tt instanceof InterruptedException, "an interrupted semaphore tryAcquire(2, wait) ended with " + tt);
      one.release();
      held(a.tryAcquire(2, releaseBound()), "the interrupted acquire left permits out").release();
    }

    @Test
    @DisplayName("never more permits out than the maximum")
    void permitsNeverExceeded() throws Exception {
      String n = name("sem");
      int max = 3;
      AtomicInteger inUse = new AtomicInteger();
      AtomicInteger peak = new AtomicInteger();
      List<Job<Void>> jobs = new ArrayList<>();
      for (int s = 0; s < 3; s++) {
        Semaphore sem = open().semaphore(n, max);
        assertEquals(max, sem.maxPermits());
        assertEquals(n, sem.name());
        for (int t = 0; t < 3; t++) {
          jobs.add(start("permits-" + s + "-" + t, () -> {
            for (int r = 0; r < 6; r++) {
              int k = 1 + (r % 2);
              Lease l = held(sem.tryAcquire(k, GRANT_WAIT.multipliedBy(2)), "no permits within the wait");
              assertEquals(k, l.permits(), "lease.permits()");
              peak.accumulateAndGet(inUse.addAndGet(k), Math::max);
              Thread.sleep(1);
              inUse.addAndGet(-k);
              l.release();
            }
            return null;
          }));
        }
      }
      for (Job<Void> j : jobs) {
        j.get(Duration.ofSeconds(90));
      }
      assertTrue(peak.get() <= max, "up to " + peak.get() + " permits were out at once; the maximum is " + max);
      assertEquals(0, inUse.get());
    }

    @Test
    @DisplayName("permits are counted, and come back on release")
    void permitsComeBackOnRelease() throws InterruptedException {
      String n = name("sem-release");
      Semaphore a = open().semaphore(n, 3);
      Semaphore b = open().semaphore(n, 3);
      Lease two = held(a.tryAcquire(2, GRANT_WAIT), "2 of 3 free permits were refused");
      Lease one = held(b.tryAcquire(1, Duration.ZERO), "the third permit was refused");
      long z = System.nanoTime();
      assertTrue(b.tryAcquire(1, Duration.ZERO).isEmpty(), "a fourth permit of 3 was granted");
      assertTrue(millisSince(z) < SLACK.toMillis(), "tryAcquire(1, ZERO) waited " + millisSince(z) + " ms: ZERO tries once");
      long t0 = System.nanoTime();
      assertTrue(b.tryAcquire(1, SHORT_WAIT).isEmpty(), "a permit was granted with all out");
      assertWaited(t0, SHORT_WAIT, "semaphore tryAcquire(" + SHORT_WAIT.toMillis() + "ms)");
      two.release();
      two.release();
      Lease again = held(b.tryAcquire(2, releaseBound()), "released permits did not come back");
      assertTrue(a.tryAcquire(1, Duration.ZERO).isEmpty(), "a permit beyond the maximum was granted after a release");
      again.release();
      one.release();
      Lease all = held(a.tryAcquire(3, releaseBound()), "all permits did not come back");
      all.release();
      eventually(SLACK, "availablePermits() did not come back to the maximum", () -> a.availablePermits() == 3);
    }

    @Test
    @DisplayName("closing a service gives its permits back")
    void permitsComeBackOnClose() throws InterruptedException {
      String n = name("sem-close");
      LockService sa = open();
      Semaphore a = sa.semaphore(n, 3);
      Semaphore b = open().semaphore(n, 3);
      Lease l = held(a.tryAcquire(2, GRANT_WAIT), "free permits were refused");
      assertTrue(b.tryAcquire(2, Duration.ZERO).isEmpty(), "2 permits granted with only 1 free");
      sa.close();
      assertFalse(l.isValid(), "a lease is still valid after its service was closed");
      held(b.tryAcquire(3, releaseBound()), "the closed service's permits did not come back (leaked on close)").release();
    }

    @Test
    @DisplayName("a waiter for several permits is granted when enough come back")
    void waiterGranted() throws Exception {
      String n = name("sem-wait");
      Semaphore a = open().semaphore(n, 2);
      Semaphore b = open().semaphore(n, 2);
      Lease l1 = a.acquire(1);
      Lease l2 = a.acquire(1);
      Job<Lease> waiter = start("sem-waiter", () -> b.acquire(2));
      Thread.sleep(150);
      l1.release();
      Thread.sleep(150);
      assertFalse(waiter.result().isDone(), "2 permits were granted with 1 free");
      l2.release();
      Lease both = waiter.get(GRANT_WAIT);
      assertEquals(2, both.permits());
      both.release();
    }
  }

  @Nested
  @DisplayName("read/write")
  @Requires(Capability.READ_WRITE)
  class ReadWrite {

    @Test
    @DisplayName("readers share the lock")
    void readersShare() throws InterruptedException {
      String n = name("rw-share");
      LockService sa = open();
      ReadWriteLock a = sa.readWriteLock(n);
      ReadWriteLock b = open().readWriteLock(n);
      assertEquals(n, a.name());
      assertEquals(n, a.readLock().name(), "readLock().name()");
      assertEquals(n, a.writeLock().name(), "writeLock().name()");
      Lease r1 = held(a.readLock().tryAcquire(GRANT_WAIT), "a free read lock was refused");
      Lease r2 = held(b.readLock().tryAcquire(SLACK), "a second reader was refused");
      Lease r3 = held(a.readLock().tryAcquire(SLACK), "a second reader through the same handle was refused");
      Lease r4 = held(sa.readWriteLock(n).readLock().tryAcquire(SLACK),
          "a reader through another handle of the same service was refused");
      for (Lease r : List.of(r1, r2, r3, r4)) {
        assertTrue(r.isValid(), "a reader's lease ended when another reader came");
      }
      for (Lease r : List.of(r1, r2, r3, r4)) {
        r.release();
      }
      held(b.writeLock().tryAcquire(releaseBound()), "the writer was refused after every reader left").release();
    }

    @Test
    @DisplayName("a writer excludes readers and writers")
    void writerExcludes() throws InterruptedException {
      String n = name("rw-writer");
      ReadWriteLock a = open().readWriteLock(n);
      ReadWriteLock b = open().readWriteLock(n);
      Lease w = a.writeLock().acquire();
      assertTrue(b.readLock().tryAcquire(Duration.ZERO).isEmpty(), "a reader was admitted beside a writer");
      long t0 = System.nanoTime();
      assertTrue(b.readLock().tryAcquire(SHORT_WAIT).isEmpty(), "a reader was admitted beside a writer");
      assertWaited(t0, SHORT_WAIT, "readLock().tryAcquire");
      assertTrue(b.writeLock().tryAcquire(Duration.ZERO).isEmpty(), "two writers at once");
      assertTrue(a.readLock().tryAcquire(Duration.ZERO).isEmpty(), "a reader through the writer's own service was admitted");
      assertTrue(a.writeLock().tryAcquire(Duration.ZERO).isEmpty(),
          "a second writer through the writer's own service was admitted (the write lock is not reentrant)");
      ReadWriteLock other = open().readWriteLock(name("rw-other"));
      held(other.writeLock().tryAcquire(SLACK), "a writer of another name was refused: the write lease excludes only its"
          + " own name").release();
      w.release();
      held(b.readLock().tryAcquire(releaseBound()), "a reader was refused after the writer left").release();
    }

    @Test
    @DisplayName("readers exclude a writer until the last leaves")
    void readersExcludeWriter() throws Exception {
      String n = name("rw-readers");
      ReadWriteLock a = open().readWriteLock(n);
      ReadWriteLock b = open().readWriteLock(n);
      ReadWriteLock c = open().readWriteLock(n);
      Lease r1 = a.readLock().acquire();
      Lease r2 = b.readLock().acquire();
      assertTrue(c.writeLock().tryAcquire(Duration.ZERO).isEmpty(), "a writer was admitted beside readers");
      Job<Optional<Lease>> writer = start("rw-writer", () -> c.writeLock().tryAcquire(GRANT_WAIT));
      r1.release();
      Thread.sleep(200);
      assertFalse(writer.result().isDone(), "a writer was admitted beside a reader");
      r2.release();
      Lease w = held(writer.get(GRANT_WAIT), "the writer was not admitted after the readers left");
      w.release();
    }

    @Test
    @DisplayName("look-alike names are distinct read/write locks")
    void namesAreDistinct() throws InterruptedException {
      String p = name("rw-names") + "-";
      LockService a = open();
      LockService b = open();
      List<String> names = List.of(p + "a/b", p + "a.b", p + "a:b", p + "a_b", p + "A/B", p + "a%2Fb");
      List<Lease> writes = new ArrayList<>();
      for (String n : names) {
        writes.add(held(a.readWriteLock(n).writeLock().tryAcquire(SLACK),
            "the write lock of '" + n + "' was refused while other names were write-locked: it collides with one of them"));
      }
      for (String n : names) {
        assertTrue(b.readWriteLock(n).readLock().tryAcquire(Duration.ZERO).isEmpty(),
            "a reader of '" + n + "' was admitted beside its writer");
      }
      writes.get(0).release();
      held(b.readWriteLock(names.get(0)).readLock().tryAcquire(releaseBound()),
          "'" + names.get(0) + "' was released but a reader was refused").release();
      for (String n : names.subList(1, names.size())) {
        assertTrue(b.readWriteLock(n).writeLock().tryAcquire(Duration.ZERO).isEmpty(),
            "'" + n + "' is write-locked but a writer was admitted: releasing a look-alike freed it");
      }
      writes.forEach(Lease::release);
    }

    @Test
    @DisplayName("mixed readers and writers under contention: the witness never sees a writer with anyone")
    void contention() throws Exception {
      String n = name("rw-contention");
      AtomicInteger readers = new AtomicInteger();
      AtomicInteger writers = new AtomicInteger();
      AtomicInteger violations = new AtomicInteger();
      AtomicInteger maxReaders = new AtomicInteger();
      List<Long> writeTokens = Collections.synchronizedList(new ArrayList<>());
      List<Job<Void>> jobs = new ArrayList<>();
      for (int s = 0; s < 2; s++) {
        ReadWriteLock rw = open().readWriteLock(n);
        for (int t = 0; t < 4; t++) {
          boolean writer = t % 2 == 0;
          jobs.add(start("rw-" + s + "-" + t, () -> {
            for (int r = 0; r < 6; r++) {
              Lock lock = writer ? rw.writeLock() : rw.readLock();
              Lease l = held(lock.tryAcquire(GRANT_WAIT.multipliedBy(2)), "no grant within the wait");
              if (writer) {
                if (writers.incrementAndGet() != 1 || readers.get() != 0) {
                  violations.incrementAndGet();
                }
                writeTokens.add(l.fencingToken());
                Thread.sleep(2);
                writers.decrementAndGet();
              } else {
                maxReaders.accumulateAndGet(readers.incrementAndGet(), Math::max);
                if (writers.get() != 0) {
                  violations.incrementAndGet();
                }
                Thread.sleep(3);
                readers.decrementAndGet();
              }
              l.release();
            }
            return null;
          }));
        }
      }
      for (Job<Void> j : jobs) {
        j.get(Duration.ofSeconds(90));
      }
      assertEquals(0, violations.get(), "a writer overlapped with another writer or a reader");
      if (declares(Capability.FENCING)) {
        for (int i = 1; i < writeTokens.size(); i++) {
          assertTrue(writeTokens.get(i) > writeTokens.get(i - 1), "write-lock tokens not increasing in grant order");
        }
      }
    }
  }

  @Nested
  @DisplayName("fairness")
  @Requires(Capability.FAIR)
  class Fairness {

    @Test
    @DisplayName("waiters are granted in the order they asked")
    void firstComeFirstServed() throws Exception {
      String n = name("fair");
      Lease held = open().lock(n).acquire();
      List<Integer> order = Collections.synchronizedList(new ArrayList<>());
      List<Job<Void>> jobs = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        int id = i;
        LockService s = open();
        // a service that has answered once is connected; how long that took says how long a request of it may take
        // to reach the backend, on this machine and under its load now
        long t0 = System.nanoTime();
        held(s.lock(n + "-ready").tryAcquire(GRANT_WAIT), "a waiter's service did not answer").release();
        long answer = System.nanoTime() - t0;
        jobs.add(start("fair-" + i, () -> {
          Lease l = held(s.lock(n).tryAcquire(GRANT_WAIT.multipliedBy(2)), "a waiter was never granted");
          order.add(id);
          l.release();
          return null;
        }));
        // it asked once its thread waits in tryAcquire (a thread started after another may call first on a busy
        // machine); the next one asks after its request had several times what an answer took to arrive: a fixed
        // 200 ms was too little beside three other test JVMs on two cores (native targets granted [0, 1, 3, 2])
        awaitBlocked(jobs.get(i));
        Thread.sleep(Math.min(2_000, Math.max(200, 4 * answer / 1_000_000)));
      }
      held.release();
      for (Job<Void> j : jobs) {
        j.get(Duration.ofSeconds(60));
      }
      assertEquals(List.of(0, 1, 2, 3), order, "waiters were not granted in the order they asked");
    }
  }

  @Nested
  @DisplayName("transactions")
  @Requires(Capability.TRANSACTIONS)
  class Transactions {

    /** How long a deadlock may take to be detected and broken. */
    private Duration deadlockBound() {
      return Duration.ofSeconds(8).plus(leaseTime().multipliedBy(2));
    }

    private LockTransaction tx(LockService s) {
      return s.beginTransaction(TransactionOptions.defaults());
    }

    private LockTransaction holding(LockMode mode, String... path) throws InterruptedException {
      LockTransaction t = tx(open()).lock(mode, path);
      assertTrue(t.await(GRANT_WAIT), "a free path was not granted");
      return t;
    }

    @Test
    @DisplayName("await is false until every lock asked for is held; fencingTokens() lists only the paths held")
    void partialGrant() throws InterruptedException {
      String n = name("tx-partial");
      LockTransaction holder = holding(LockMode.WRITE, n, "y");
      LockTransaction t = tx(open()).lock(LockMode.WRITE, n, "x").lock(LockMode.WRITE, n, "y");
      long t0 = System.nanoTime();
      assertFalse(t.await(SHORT_WAIT), "await returned true while a lock asked for is held by another transaction");
      assertWaited(t0, SHORT_WAIT, "await(" + SHORT_WAIT.toMillis() + "ms)");
      Set<List<String>> held = t.fencingTokens().keySet();
      assertTrue(Set.of(List.of(n, "x")).containsAll(held), "fencingTokens() lists a path the transaction does not hold: " + held);
      holder.close();
      assertTrue(t.await(releaseBound()), "the transaction did not get every lock after the other holder closed");
      assertEquals(Set.of(List.of(n, "x"), List.of(n, "y")), t.fencingTokens().keySet(),
          "fencingTokens() does not list exactly the held paths");
      t.close();
    }

    @Test
    @DisplayName("lock() returns at once, even for a path another transaction holds; an interrupted await throws")
    void lockReturnsAtOnce() throws Exception {
      String n = name("tx-at-once");
      LockTransaction holder = holding(LockMode.WRITE, n);
      LockService s = open();
      Job<LockTransaction> asking = start("tx-lock", () -> tx(s).lock(LockMode.WRITE, n));
      LockTransaction t;
      try {
        t = asking.result().get(SLACK.toMillis(), TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        throw new AssertionError("lock() of a path another transaction holds did not return within " + SLACK, e);
      }
      Job<Boolean> waiter = start("tx-interrupted", () -> t.await(GRANT_WAIT));
      Thread.sleep(200);
      waiter.thread().interrupt();
      Throwable f = waiter.failure(SLACK);
      assertTrue(f instanceof InterruptedException, "an interrupted await ended with " + f);
      assertFalse(t.await(Duration.ZERO), "a held path was granted to another transaction");
      holder.close();
      assertTrue(t.await(releaseBound()), "the path was not granted after its holder closed");
      t.close();
    }

    @Test
    @DisplayName("WRITE on a path this transaction reads upgrades it, once it is the only reader")
    void upgrade() throws Exception {
      String n = name("tx-upgrade");
      LockTransaction t1 = tx(open());
      LockTransaction t2 = tx(open());
      assertTrue(t1.lock(LockMode.READ, n).await(GRANT_WAIT), "a free path was not granted to a reader");
      assertTrue(t2.lock(LockMode.READ, n).await(GRANT_WAIT), "readers did not share the path");
      t1.lock(LockMode.WRITE, n);
      assertFalse(t1.await(SHORT_WAIT), "an upgrade was granted while another transaction reads the path");
      t2.close();
      assertTrue(t1.await(GRANT_WAIT), "the upgrade was not granted once this transaction was the only reader");
      LockTransaction t3 = tx(open());
      assertFalse(t3.lock(LockMode.READ, n).await(SHORT_WAIT), "a reader was granted beside an upgraded writer");
      t1.close();
      t1.close(); // idempotent
      assertTrue(t3.await(GRANT_WAIT), "closing the upgraded transaction did not release the path");
      assertThrows(IllegalStateException.class, () -> t1.lock(LockMode.READ, n), "lock() after close");
    }

    @Test
    @DisplayName("a transaction takes several locks; close releases them all")
    void lockSeveral() throws InterruptedException {
      String n = name("tx");
      LockService a = open();
      LockService b = open();
      LockTransaction t1 = tx(a).lock(LockMode.WRITE, n, "x").lock(LockMode.WRITE, List.of(n, "y"));
      assertTrue(t1.await(GRANT_WAIT), "free locks were not granted to a transaction");
      Map<List<String>, Long> tokens = t1.fencingTokens();
      assertTrue(tokens.containsKey(List.of(n, "x")) && tokens.containsKey(List.of(n, "y")),
          "fencingTokens() does not list the held paths: " + tokens);
      LockTransaction t2 = tx(b).lock(LockMode.WRITE, n, "y");
      long t0 = System.nanoTime();
      assertFalse(t2.await(SHORT_WAIT), "a held path was granted to another transaction");
      assertWaited(t0, SHORT_WAIT, "await(" + SHORT_WAIT.toMillis() + "ms)");
      t1.close();
      t1.close();
      assertTrue(t2.await(GRANT_WAIT), "the paths were not granted after the holder closed");
      t2.close();
    }

    @Test
    @DisplayName("readers share a path; a writer waits for them")
    void readersShare() throws InterruptedException {
      String n = name("tx-read");
      LockTransaction r1 = tx(open()).lock(LockMode.READ, n);
      LockTransaction r2 = tx(open()).lock(LockMode.READ, n);
      assertTrue(r1.await(GRANT_WAIT) && r2.await(GRANT_WAIT), "readers did not share a path");
      LockTransaction w = tx(open()).lock(LockMode.WRITE, n);
      assertFalse(w.await(SHORT_WAIT), "a writer was granted beside readers");
      r1.close();
      r2.close();
      assertTrue(w.await(GRANT_WAIT), "the writer was not granted after the readers left");
      w.close();
    }

    @Test
    @Requires(Capability.HIERARCHICAL_NAMES)
    @DisplayName("a path conflicts with its ancestors and descendants, not its siblings")
    void hierarchy() throws InterruptedException {
      String n = name("tx-tree");
      LockTransaction parent = tx(open()).lock(LockMode.WRITE, n);
      assertTrue(parent.await(GRANT_WAIT));
      LockTransaction child = tx(open()).lock(LockMode.WRITE, n, "a", "b");
      assertFalse(child.await(SHORT_WAIT), "[" + n + ",a,b] was granted while [" + n + "] is held");
      parent.close();
      assertTrue(child.await(GRANT_WAIT), "the child was not granted after the parent left");
      LockTransaction ancestor = tx(open()).lock(LockMode.WRITE, n);
      assertFalse(ancestor.await(SHORT_WAIT), "[" + n + "] was granted while [" + n + ",a,b] is held");
      LockTransaction sibling = tx(open()).lock(LockMode.WRITE, n, "a", "c");
      assertTrue(sibling.await(GRANT_WAIT), "a sibling path was refused");
      child.close();
      sibling.close();
      assertTrue(ancestor.await(GRANT_WAIT));
      ancestor.close();
    }

    @Test
    @DisplayName("a two-transaction deadlock is resolved: each in turn gets both locks")
    void deadlockSurrender() throws Exception {
      deadlock(false);
    }

    @Test
    @DisplayName("with abortOnDeadlock, one transaction aborts with DeadlockException and the other gets both")
    void deadlockAbort() throws Exception {
      deadlock(true);
    }

    private void deadlock(boolean abort) throws Exception {
      String n = name("tx-deadlock");
      TransactionOptions o = TransactionOptions.defaults().withAbortOnDeadlock(abort);
      LockTransaction t1 = open().beginTransaction(o).lock(LockMode.WRITE, n, "x");
      LockTransaction t2 = open().beginTransaction(o).lock(LockMode.WRITE, n, "y");
      assertTrue(t1.await(GRANT_WAIT) && t2.await(GRANT_WAIT), "free locks were not granted");
      List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
      t1.onLost(lost::add);
      t2.onLost(lost::add);
      t1.lock(LockMode.WRITE, n, "y");
      t2.lock(LockMode.WRITE, n, "x");
      AtomicInteger inside = new AtomicInteger();
      AtomicInteger peak = new AtomicInteger();
      Callable<Boolean> body1 = () -> finish(t1, inside, peak);
      Callable<Boolean> body2 = () -> finish(t2, inside, peak);
      Job<Boolean> j1 = start("tx1", body1);
      Job<Boolean> j2 = start("tx2", body2);
      Duration bound = deadlockBound();
      Throwable f1 = j1.failure(bound.plus(SLACK));
      Throwable f2 = j2.failure(bound.plus(SLACK));
      assertTrue(peak.get() <= 1, "both transactions held both locks at once");
      // breaking the cycle took a held lock from a transaction: its onLost heard it, once per lock, as DEADLOCK
      assertFalse(lost.isEmpty(), "no onLost listener heard of the lock given up to break the deadlock");
      assertTrue(lost.stream().allMatch(e -> e.reason() == LeaseLostEvent.Reason.DEADLOCK), "lost events: " + lost);
      assertEquals(lost.size(), lost.stream().map(e -> e.name() + "#" + e.fencingToken()).distinct().count(),
          "a lost lock was reported twice: " + lost);
      if (abort) {
        int aborted = (f1 instanceof DeadlockException ? 1 : 0) + (f2 instanceof DeadlockException ? 1 : 0);
        assertEquals(1, aborted, "exactly one transaction must abort; got " + f1 + " and " + f2);
        Job<Boolean> winner = f1 == null ? j1 : j2;
        assertTrue(winner.result().getNow(false), "the surviving transaction did not get both locks");
      } else {
        assertEquals(null, f1, "transaction 1 failed");
        assertEquals(null, f2, "transaction 2 failed");
        assertTrue(j1.result().getNow(false) && j2.result().getNow(false), "the deadlock was not resolved within " + bound);
      }
    }

    private boolean finish(LockTransaction t, AtomicInteger inside, AtomicInteger peak) throws InterruptedException {
      try {
        boolean all = t.await(deadlockBound());
        if (all) {
          peak.accumulateAndGet(inside.incrementAndGet(), Math::max);
          Thread.sleep(20);
          inside.decrementAndGet();
        }
        return all;
      } finally {
        t.close();
      }
    }

    @Test
    @DisplayName("bad paths and use after close are rejected")
    void badInput() throws InterruptedException {
      LockService s = open();
      LockTransaction t = tx(s);
      assertThrows(NullPointerException.class, () -> s.beginTransaction(null));
      assertThrows(IllegalArgumentException.class, () -> t.lock(LockMode.WRITE));
      assertThrows(IllegalArgumentException.class, () -> t.lock(LockMode.WRITE, List.of()));
      assertThrows(IllegalArgumentException.class, () -> t.lock(LockMode.WRITE, "a", ""));
      assertThrows(NullPointerException.class, () -> t.lock(null, "a"));
      assertThrows(IllegalArgumentException.class, () -> t.await(Duration.ofMillis(-1)));
      t.close();
      assertThrows(IllegalStateException.class, () -> t.lock(LockMode.WRITE, name("closed-tx")));
    }
  }

  @Nested
  @DisplayName("elections")
  @Requires(Capability.LEADER_ELECTION)
  class Elections {

    private List<LeaderElection> candidates(String n, int count) {
      List<LeaderElection> c = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        c.add(open().election(n).join());
      }
      return c;
    }

    private static long leaders(List<LeaderElection> c) {
      return c.stream().filter(LeaderElection::isLeader).count();
    }

    private LeaderElection awaitOneLeader(List<LeaderElection> c) throws InterruptedException {
      eventually(GRANT_WAIT.plus(leaseTime().multipliedBy(2)), "no single leader was elected", () -> leaders(c) == 1);
      // then it stays exactly one for a while
      long end = System.nanoTime() + Duration.ofMillis(500).toNanos();
      while (System.nanoTime() - end < 0) {
        long k = leaders(c);
        assertTrue(k <= 1, k + " leaders at once");
        Thread.sleep(10);
      }
      assertEquals(1, leaders(c), "leadership did not stay");
      return c.stream().filter(LeaderElection::isLeader).findFirst().orElseThrow();
    }

    @Test
    @DisplayName("exactly one leader, known to all")
    void exactlyOneLeader() throws InterruptedException {
      String n = name("election");
      List<LeaderElection> c = candidates(n, 3);
      Set<String> ids = new HashSet<>();
      for (LeaderElection e : c) {
        assertEquals(n, e.name());
        assertTrue(ids.add(e.candidateId()), "two candidates share the id " + e.candidateId());
      }
      LeaderElection leader = awaitOneLeader(c);
      Lease term = leader.leadership().orElseThrow(() -> new AssertionError("the leader has no leadership lease"));
      assertTrue(term.isValid());
      for (LeaderElection e : c) {
        if (e != leader) {
          assertTrue(e.leadership().isEmpty(), "a follower has a leadership lease");
        }
      }
      eventually(GRANT_WAIT, "not every candidate knows the leader",
          () -> c.stream().allMatch(e -> e.leader().equals(Optional.of(leader.candidateId()))));
    }

    @Test
    @DisplayName("a new leader after the leader resigns, then after the next one closes its candidacy")
    void newLeaderAfterLeaderLeaves() throws InterruptedException {
      String n = name("election-change");
      List<LeaderElection> c = new ArrayList<>(candidates(n, 3));
      List<Boolean> changes = new CopyOnWriteArrayList<>();
      LeaderElection first = awaitOneLeader(c);
      long token1 = first.leadership().orElseThrow().fencingToken();
      first.onLeadershipChange(changes::add);
      first.resign();
      assertFalse(first.isLeader(), "a resigned candidate is still leader");
      c.remove(first);
      LeaderElection second = awaitOneLeader(c);
      assertNotEquals(first.candidateId(), second.candidateId());
      if (declares(Capability.FENCING)) {
        assertTrue(second.leadership().orElseThrow().fencingToken() > token1, "the new term's token is not above the old one's");
      }
      eventually(SLACK, "the resigned leader's listener was not told it stopped leading", () -> changes.contains(false));
      // the second leader leaves by close(): the third candidate takes over
      second.close();
      c.remove(second);
      LeaderElection third = awaitOneLeader(c);
      assertNotEquals(second.candidateId(), third.candidateId());
    }

    @Test
    @Requires(value = {Capability.LEASE_EXPIRY, Capability.LOST_NOTIFICATION}, faults = FaultInjector.Fault.CUT_OFF_CLIENT)
    @DisplayName("a leader cut off hears it lost leadership, and loses its term, before another candidate leads")
    void leaderCutOffHearsFirst() throws Exception {
      leaderIsolatedHearsFirst(FaultInjector.Fault.CUT_OFF_CLIENT);
    }

    @Test
    @Requires(value = {Capability.LEASE_EXPIRY, Capability.LOST_NOTIFICATION}, faults = FaultInjector.Fault.PAUSE_RENEWALS)
    @DisplayName("a leader whose renewals pause hears it lost leadership before another candidate leads")
    void leaderPausedHearsFirst() throws Exception {
      leaderIsolatedHearsFirst(FaultInjector.Fault.PAUSE_RENEWALS);
    }

    @Test
    @DisplayName("closing the leader's service: it hears false, its term is lost, before another candidate leads")
    void leaderClosedHearsFirst() throws Exception {
      leaderHearsFirst("closed", "its service was closed", LockService::close, s -> { });
    }

    @Test
    @DisplayName("nobody names a leader that resigned or closed its candidacy once another leads")
    void nobodyBelievesDepartedLeader() throws Exception {
      String n = name("election-departed");
      List<LeaderElection> c = new ArrayList<>(candidates(n, 3));
      LeaderElection first = awaitOneLeader(c);
      AtomicReference<Thread> heardOn = new AtomicReference<>();
      first.onLeadershipChange(leads -> {
        if (!leads) {
          heardOn.set(Thread.currentThread());
        }
      });
      first.resign();
      eventually(SLACK, "the resigned leader's listener was not told", () -> heardOn.get() != null);
      assertNotSame(Thread.currentThread(), heardOn.get(), "onLeadershipChange(false) ran on the thread that resigned,"
          + " not on a background thread");
      assertFalse(first.isLeader(), "a resigned candidate is leader");
      assertTrue(first.leadership().isEmpty(), "a resigned candidate has a leadership lease");
      c.remove(first);
      LeaderElection second = awaitOneLeader(c);
      assertNoStaleLeader(c, first, second);
      assertNotEquals(Optional.of(first.candidateId()), first.leader(), "a resigned candidate names itself leader");
      second.close();
      c.remove(second);
      LeaderElection third = awaitOneLeader(c);
      assertNoStaleLeader(c, second, third);
    }

    /**
     * Once {@code now} leads, no candidate in {@code c} names {@code gone}, the leader that left; and every
     * candidate names {@code now} within the slack.
     */
    private void assertNoStaleLeader(List<LeaderElection> c, LeaderElection gone, LeaderElection now)
        throws InterruptedException {
      assertTrue(now.isLeader());
      for (LeaderElection e : c) {
        assertNotEquals(Optional.of(gone.candidateId()), e.leader(), "candidate " + e.candidateId()
            + " still names " + gone.candidateId() + " leader after it left and " + now.candidateId() + " leads");
      }
      eventually(SLACK, () -> "not every candidate names the new leader " + now.candidateId() + ": " + named(c),
          () -> c.stream().allMatch(e -> e.leader().equals(Optional.of(now.candidateId()))));
    }

    /** What each candidate names leader, for a failure message. */
    private static String named(List<LeaderElection> c) {
      return c.stream().map(e -> e.candidateId() + " names " + e.leader().orElse("nobody"))
          .collect(java.util.stream.Collectors.joining(", "));
    }

    private void leaderIsolatedHearsFirst(FaultInjector.Fault how) throws Exception {
      leaderHearsFirst(how.name().toLowerCase(Locale.ROOT), "it was isolated (" + how + ")", s -> isolate(how, s),
          s -> restore(how, s));
    }

    /** Three candidates; {@code depart} cuts the leader off, and the next leader must find it told first. */
    private void leaderHearsFirst(String label, String how, java.util.function.Consumer<LockService> depart,
        java.util.function.Consumer<LockService> undo) throws Exception {
      String n = name("election-" + label);
      List<LockService> services = List.of(open(), open(), open());
      List<LeaderElection> c = new ArrayList<>();
      for (LockService s : services) {
        c.add(s.election(n));
      }
      Timeline t = new Timeline(c);
      c.forEach(LeaderElection::join);
      LeaderElection old = awaitOneLeader(c);
      int i = c.indexOf(old);
      Lease term = old.leadership().orElseThrow();
      t.watchTerm(i, term);
      depart.accept(services.get(i));
      assertNotSame(Thread.currentThread(), t.falseHeardOn.get(), "onLeadershipChange(false) ran on the thread that "
          + "closed or cut off the leader's service, not on a background thread");
      try {
        List<LeaderElection> rest = new ArrayList<>(c);
        rest.remove(old);
        eventually(expiryBound().plus(GRANT_WAIT), "no new leader after " + how,
            () -> rest.stream().anyMatch(LeaderElection::isLeader));
        LeaderElection next = rest.stream().filter(LeaderElection::isLeader).findFirst().orElseThrow();
        t.assertHeardFirst(i, c.indexOf(next), how);
        if (declares(Capability.FENCING)) {
          assertTrue(next.leadership().orElseThrow().fencingToken() > term.fencingToken(),
              "the new term's token is not above the old leader's");
        }
        assertNoStaleLeader(rest, old, next);
      } finally {
        undo.accept(services.get(i));
      }
      if (!services.get(i).isClosed()) {
        // it stayed in the election: once the others leave, it leads again
        List<Boolean> heard = new CopyOnWriteArrayList<>();
        old.onLeadershipChange(heard::add);
        for (LeaderElection e : c) {
          if (e != old) {
            e.resign();
          }
        }
        assertTrue(old.awaitLeadership(expiryBound().plus(GRANT_WAIT)), "a leader that lost its term (" + how
            + ") was not elected again once the fault was undone and the others left");
        eventually(SLACK, "the re-elected leader's listener was not told it leads", () -> heard.contains(true));
      }
    }

    /**
     * When each candidate heard true and false after {@link #watchTerm}, when the watched leader's term was
     * lost, and what the watched leader believed when the first other candidate heard true.
     */
    private final class Timeline {
      final List<LeaderElection> c;
      final java.util.concurrent.atomic.AtomicLongArray heardTrue;
      final java.util.concurrent.atomic.AtomicLongArray becameLeader;
      final java.util.concurrent.atomic.AtomicLongArray stoppedLeading;
      final AtomicLong termLost = new AtomicLong();
      final AtomicReference<String> oldBeliefAtNextTrue = new AtomicReference<>();
      final AtomicReference<Thread> falseHeardOn = new AtomicReference<>();
      volatile LeaderElection watched;

      Timeline(List<LeaderElection> c) {
        this.c = c;
        heardTrue = new java.util.concurrent.atomic.AtomicLongArray(c.size());
        becameLeader = new java.util.concurrent.atomic.AtomicLongArray(c.size());
        stoppedLeading = new java.util.concurrent.atomic.AtomicLongArray(c.size());
        for (int k = 0; k < c.size(); k++) {
          int j = k;
          c.get(k).onLeadershipChange(leads -> {
            long now = System.nanoTime();
            if (leads) {
              heardTrue.compareAndSet(j, 0, now);
            }
            LeaderElection w = watched;
            if (w == null) {
              return;
            }
            if (leads && c.get(j) != w) {
              oldBeliefAtNextTrue.compareAndSet(null, "isLeader=" + w.isLeader() + ", leadership="
                  + w.leadership().isPresent());
              becameLeader.compareAndSet(j, 0, now);
            } else if (!leads) {
              if (stoppedLeading.compareAndSet(j, 0, now) && c.get(j) == w) {
                falseHeardOn.set(Thread.currentThread());
              }
            }
          });
        }
      }

      /** Starts watching leader {@code i}, whose term is {@code term}, once it has heard that it leads. */
      void watchTerm(int i, Lease term) throws InterruptedException {
        eventually(SLACK, "the leader's listener was not told it leads", () -> heardTrue.get(i) != 0);
        term.onLost(e -> termLost.compareAndSet(0, System.nanoTime()));
        watched = c.get(i);
      }

      void assertHeardFirst(int old, int next, String how) throws InterruptedException {
        eventually(SLACK, "the new leader's listener was not told it leads", () -> becameLeader.get(next) != 0);
        long nextTrue = becameLeader.get(next);
        long oldFalse = stoppedLeading.get(old);
        assertTrue(oldFalse != 0, "the old leader had not heard onLeadershipChange(false) when the new leader heard"
            + " true (" + how + ")");
        assertTrue(oldFalse - nextTrue < 0, "the old leader heard false after the new one heard true (" + how + ")");
        assertTrue(termLost.get() != 0 && termLost.get() - nextTrue < 0,
            "the old leader's term was not lost before the new leader heard true (" + how + ")");
        assertEquals("isLeader=false, leadership=false", oldBeliefAtNextTrue.get(),
            "what the old leader believed when the new leader heard true (" + how + ")");
      }
    }

    @Test
    @DisplayName("awaitLeadership, listeners, and closing the leader's service")
    void awaitAndListen() throws InterruptedException {
      String n = name("election-await");
      LockService s1 = open();
      LeaderElection e1 = s1.election(n);
      assertThrows(IllegalStateException.class, () -> e1.awaitLeadership(Duration.ZERO), "awaitLeadership before join");
      List<Boolean> changes = new CopyOnWriteArrayList<>();
      e1.onLeadershipChange(changes::add).join().join();
      assertTrue(e1.awaitLeadership(GRANT_WAIT), "a sole candidate did not become leader");
      eventually(SLACK, "the leader's listener was not told", () -> changes.contains(true));
      LeaderElection e2 = open().election(n).join();
      assertFalse(e2.awaitLeadership(SHORT_WAIT), "a second leader while the first leads");
      s1.close();
      assertTrue(e2.awaitLeadership(GRANT_WAIT), "no new leader after the leader's service closed");
      assertFalse(e1.isLeader());
    }
  }

  @Nested
  @DisplayName("names")
  class Names {

    private List<String> lookAlikes() {
      String p = name("n") + "-";
      List<String> l = new ArrayList<>();
      for (String s : List.of("a/b", "a.b", "a:b", "a_b", "a-b", "a%2Fb", "a\\b", "a b", "a|b", "a#b", "x", "x*", "x?",
          "{x}", "x}", "{x", "[x]", "a/../b", "b", "../b", "/", "//", "a/", "a//b", ".", "..", "A", "a", "a ",
          "\u00e4", "a\u0308", "\u65e5\u672c", "\uD83D\uDD12", "'x'", "\"x\"", "x;y", "x=y", "x&y")) {
        l.add(p + s);
      }
      l.add("/" + p);
      l.add(" " + p);
      String longest = p + "x".repeat(Checks.MAX_NAME_LENGTH - p.length());
      l.add(longest);
      l.add(longest.substring(0, longest.length() - 1) + "y");
      l.add(p + "\u9320".repeat(Checks.MAX_NAME_LENGTH - p.length()));
      return l;
    }

    @Test
    @DisplayName("distinct names are distinct locks, however alike they look to a backend")
    void distinctNames() throws InterruptedException {
      LockService a = open();
      LockService b = open();
      List<String> names = lookAlikes();
      List<Lease> leases = new ArrayList<>();
      for (String n : names) {
        Lease l = held(a.lock(n).tryAcquire(Duration.ofSeconds(1)),
            "'" + n + "' was refused while other names were held: it collides with one of them");
        assertEquals(n, l.name(), "the lease's name differs from the lock's");
        assertEquals(n, a.lock(n).name());
        leases.add(l);
      }
      for (String n : names) {
        assertTrue(b.lock(n).tryAcquire(Duration.ZERO).isEmpty(), "'" + n + "' held by one service was granted to another");
      }
      List<Lease> bs = new ArrayList<>();
      for (int i = 0; i < names.size(); i += 2) {
        leases.get(i).release();
      }
      for (int i = 0; i < names.size(); i++) {
        Optional<Lease> o = b.lock(names.get(i)).tryAcquire(i % 2 == 0 ? releaseBound() : Duration.ZERO);
        if (i % 2 == 0) {
          bs.add(held(o, "'" + names.get(i) + "' was released but not granted: it collides with a held name"));
        } else {
          assertTrue(o.isEmpty(), "'" + names.get(i) + "' is held but was granted: releasing a look-alike freed it");
        }
      }
      bs.forEach(Lease::release);
      for (int i = 1; i < names.size(); i += 2) {
        leases.get(i).release();
      }
    }

    @Test
    @Requires(url = true)
    @DisplayName("(namespace, name) is injective: a namespace holding '/' or ':' never meets another's names")
    void namespacesInjective() throws InterruptedException {
      String ns = name("ns");
      // pairs a plain join on '/' or ':', or a percent-decoding of the namespace, would map to one lock
      List<List<String>> pairs = List.of(List.of("", ns + "/b/c"), List.of(ns, "b/c"), List.of(ns + "/b", "c"),
          List.of(ns + "/", "b/c"), List.of(ns, "/b/c"), List.of(ns + ":b", "c"), List.of(ns, "b:c"),
          List.of(ns + "%2Fb", "c"), List.of(ns + "-other", "b/c"), List.of("", ns + "-other/b/c"));
      List<Lease> leases = new ArrayList<>();
      for (List<String> p : pairs) {
        LockService s = connect(namespace(p.get(0)));
        leases.add(held(s.lock(p.get(1)).tryAcquire(SLACK), "namespace '" + p.get(0) + "' with name '" + p.get(1)
            + "' was refused while the other pairs were held: it is the same lock as one of them"));
      }
      // and a namespace is applied the same way every time: the same pair is the same lock
      for (List<String> p : pairs) {
        LockService s = connect(namespace(p.get(0)));
        assertTrue(s.lock(p.get(1)).tryAcquire(Duration.ZERO).isEmpty(), "namespace '" + p.get(0) + "' with name '"
            + p.get(1) + "' was granted to a second service while held");
      }
      leases.forEach(Lease::release);
    }

    private Properties namespace(String ns) {
      Properties p = new Properties();
      p.setProperty("namespace", ns);
      return p;
    }

    @Test
    @DisplayName("bad names fail with an error that names the argument")
    void badNames() {
      LockService s = open();
      List<String> bad = new ArrayList<>(List.of("", " ", "\t", "a\nb", "a\u0000b", "\u007f", "x\uD800",
          "\uDC00x", "y".repeat(Checks.MAX_NAME_LENGTH + 1)));
      assertRejects(NullPointerException.class, "name", "lock(null)", () -> s.lock(null));
      for (String n : bad) {
        String shown = "'" + n.replaceAll("\\p{Cntrl}", "?") + "'";
        assertRejects(IllegalArgumentException.class, "name", "lock(" + shown + ")", () -> s.lock(n));
        if (declares(Capability.SEMAPHORE)) {
          assertRejects(IllegalArgumentException.class, "name", "semaphore(" + shown + ")", () -> s.semaphore(n, 1));
        }
        if (declares(Capability.READ_WRITE)) {
          assertRejects(IllegalArgumentException.class, "name", "readWriteLock(" + shown + ")", () -> s.readWriteLock(n));
        }
        if (declares(Capability.LEADER_ELECTION)) {
          assertRejects(IllegalArgumentException.class, "name", "election(" + shown + ")", () -> s.election(n));
        }
      }
    }
  }

  @Nested
  @DisplayName("bad input")
  class BadInput {

    @Test
    @DisplayName("lock arguments are checked")
    void lockArguments() throws Exception {
      LockService s = open();
      Lock l = s.lock(name("args"));
      assertRejects(NullPointerException.class, "wait", "tryAcquire(null)", () -> l.tryAcquire(null));
      assertRejects(IllegalArgumentException.class, "wait", "tryAcquire(-1ms)", () -> l.tryAcquire(Duration.ofMillis(-1)));
      assertRejectsAsync(NullPointerException.class, "wait", "acquireAsync(null)", () -> l.acquireAsync(null));
      assertRejectsAsync(IllegalArgumentException.class, "wait", "acquireAsync(-1ms)",
          () -> l.acquireAsync(Duration.ofMillis(-1)));
      try (Lease lease = l.acquire()) {
        assertRejects(NullPointerException.class, "listener", "onLost(null)", () -> lease.onLost(null));
      }
      assertThrows(NullPointerException.class, () -> s.unwrap(null), "unwrap(null)");
      // a huge wait is no wait limit, not an overflow
      try (Lease lease = held(l.tryAcquire(Duration.ofSeconds(Long.MAX_VALUE)), "tryAcquire(huge) failed on a free lock")) {
        assertTrue(lease.isValid());
      }
    }

    @Test
    @Requires(Capability.SEMAPHORE)
    @DisplayName("semaphore arguments are checked")
    void semaphoreArguments() {
      LockService s = open();
      String n = name("sem-args");
      assertRejects(IllegalArgumentException.class, "maxPermits", "semaphore(n, 0)", () -> s.semaphore(n, 0));
      assertRejects(IllegalArgumentException.class, "maxPermits", "semaphore(n, -1)", () -> s.semaphore(n, -1));
      Semaphore sem = s.semaphore(n, 2);
      assertRejects(IllegalArgumentException.class, "permits", "acquire(0)", () -> sem.acquire(0));
      assertRejects(IllegalArgumentException.class, "permits", "acquire(3) of 2", () -> sem.acquire(3));
      assertRejects(IllegalArgumentException.class, "permits", "tryAcquire(-1, ZERO)", () -> sem.tryAcquire(-1, Duration.ZERO));
      assertRejects(IllegalArgumentException.class, "permits", "tryAcquire(3, ZERO) of 2", () -> sem.tryAcquire(3, Duration.ZERO));
      assertRejects(NullPointerException.class, "wait", "tryAcquire(1, null)", () -> sem.tryAcquire(1, null));
      assertRejects(IllegalArgumentException.class, "wait", "tryAcquire(1, -1ms)", () -> sem.tryAcquire(1, Duration.ofMillis(-1)));
    }

    @Test
    @Requires(Capability.READ_WRITE)
    @DisplayName("read/write lock arguments are checked")
    void readWriteArguments() {
      ReadWriteLock rw = open().readWriteLock(name("rw-args"));
      assertRejects(IllegalArgumentException.class, "wait", "readLock().tryAcquire(-1ms)",
          () -> rw.readLock().tryAcquire(Duration.ofMillis(-1)));
      assertRejects(NullPointerException.class, "wait", "writeLock().tryAcquire(null)", () -> rw.writeLock().tryAcquire(null));
    }
  }

  @Nested
  @DisplayName("closed service")
  class Closed {

    @Test
    @DisplayName("close is idempotent; every factory then throws ServiceClosedException")
    void factoriesThrow() {
      LockService s = open();
      s.close();
      s.close();
      assertTrue(s.isClosed());
      String n = name("closed");
      assertThrows(ServiceClosedException.class, () -> s.lock(n), "lock() after close");
      if (declares(Capability.READ_WRITE)) {
        assertThrows(ServiceClosedException.class, () -> s.readWriteLock(n), "readWriteLock() after close");
      }
      if (declares(Capability.SEMAPHORE)) {
        assertThrows(ServiceClosedException.class, () -> s.semaphore(n, 1), "semaphore() after close");
      }
      if (declares(Capability.LEADER_ELECTION)) {
        assertThrows(ServiceClosedException.class, () -> s.election(n), "election() after close");
      }
      if (declares(Capability.TRANSACTIONS)) {
        assertThrows(ServiceClosedException.class, () -> s.beginTransaction(TransactionOptions.defaults()),
            "beginTransaction() after close");
      }
    }

    @Test
    @DisplayName("handles taken before close throw ServiceClosedException")
    void handlesThrow() throws Exception {
      LockService s = open();
      String n = name("closed-handle");
      Lock lock = s.lock(n);
      Semaphore sem = declares(Capability.SEMAPHORE) ? s.semaphore(n + "-sem", 2) : null;
      LeaderElection election = declares(Capability.LEADER_ELECTION) ? s.election(n + "-election") : null;
      s.close();
      if (election != null) {
        assertThrows(ServiceClosedException.class, election::join, "join() of an election whose service closed");
      }
      assertThrows(ServiceClosedException.class, lock::acquire, "acquire() after close");
      assertThrows(ServiceClosedException.class, () -> lock.tryAcquire(Duration.ZERO), "tryAcquire() after close");
      assertRejectsAsync(ServiceClosedException.class, "", "acquireAsync() after close", () -> lock.acquireAsync(Duration.ZERO));
      if (sem != null) {
        assertThrows(ServiceClosedException.class, () -> sem.acquire(1), "semaphore acquire() after close");
      }
    }

    @Test
    @DisplayName("close releases held leases and fires onLost with SERVICE_CLOSED")
    void closeReleases() throws InterruptedException {
      LockService a = open();
      LockService b = open();
      String n = name("close-release");
      Lease l = a.lock(n).acquire();
      AtomicReference<LeaseLostEvent> event = new AtomicReference<>();
      l.onLost(event::set);
      a.close();
      assertFalse(l.isValid(), "a lease is valid after its service closed");
      assertNotNull(event.get(), "close did not fire the lost listener");
      assertEquals(LeaseLostEvent.Reason.SERVICE_CLOSED, event.get().reason());
      l.release();
      held(b.lock(n).tryAcquire(releaseBound()), "close did not release the lock").release();
    }

    @Test
    @DisplayName("close loses every lease: listeners once each, in order, past one that throws; a late one at once")
    void closeRunsListeners() throws Exception {
      LockService a = open();
      LockService b = open();
      String n1 = name("close-listeners");
      String n2 = name("close-listeners");
      Lease l1 = a.lock(n1).acquire();
      Lease l2 = a.lock(n2).acquire();
      List<String> calls = new CopyOnWriteArrayList<>();
      List<String> calls2 = new CopyOnWriteArrayList<>();
      AtomicReference<Thread> closer = new AtomicReference<>();
      assertSame(l1, l1.onLost(e -> {
        closer.set(Thread.currentThread());
        calls.add("first");
      }), "onLost did not return its lease");
      l1.onLost(e -> {
        calls.add("throws");
        throw new IllegalStateException("tck: a listener that throws");
      });
      l1.onLost(e -> calls.add("third"));
      l2.onLost(e -> calls2.add(e.name() + " " + e.reason()));
      a.close();
      assertEquals(List.of("first", "throws", "third"), calls,
          "listeners must run once each, in the order added, and one that throws must not stop the others");
      assertEquals(List.of(n2 + " " + LeaseLostEvent.Reason.SERVICE_CLOSED), calls2, "the second lease's listener");
      assertSame(Thread.currentThread(), closer.get(), "the listeners did not run on the thread that closed the service");
      assertFalse(l1.isValid());
      assertFalse(l2.isValid(), "closing the service did not end every lease taken through it");
      assertEquals(Duration.ZERO, l2.remaining());
      assertThrows(LeaseLostException.class, l2::renew, "renew() of a lease whose service closed");
      // a listener added after the loss runs at once, on the calling thread, with the loss
      AtomicReference<Thread> ranOn = new AtomicReference<>();
      AtomicReference<LeaseLostEvent> late = new AtomicReference<>();
      l1.onLost(e -> {
        ranOn.set(Thread.currentThread());
        late.set(e);
      });
      assertSame(Thread.currentThread(), ranOn.get(), "a listener added after the loss did not run at once");
      assertEquals(LeaseLostEvent.Reason.SERVICE_CLOSED, late.get().reason());
      assertEquals(l1.fencingToken(), late.get().fencingToken(), "the event's fencing token");
      l1.release();
      l2.release();
      Thread.sleep(100);
      assertEquals(3, calls.size(), "a lost listener ran again");
      held(b.lock(n1).tryAcquire(releaseBound()), "close did not release the first lock").release();
      held(b.lock(n2).tryAcquire(releaseBound()), "close did not release every lease: the second lock stayed held")
          .release();
    }

    @Test
    @DisplayName("close ends waits in progress with ServiceClosedException, leaving nothing held")
    void closeEndsWaits() throws Exception {
      LockService a = open();
      LockService b = open();
      LockService c = open();
      String n = name("close-wait");
      Lease la = a.lock(n).acquire();
      Job<Lease> waiter = start("closed-waiter", () -> b.lock(n).acquire());
      Job<Optional<Lease>> timed = start("closed-timed-waiter", () -> b.lock(n).tryAcquire(GRANT_WAIT));
      CompletableFuture<Lease> async = b.lock(n).acquireAsync(GRANT_WAIT);
      Thread.sleep(200);
      b.close();
      Throwable t = waiter.failure(SLACK);
      assertTrue(t instanceof ServiceClosedException, "a wait ended by close() threw " + t);
      Throwable tt = timed.failure(SLACK);
      assertTrue(tt instanceof ServiceClosedException, "a tryAcquire wait ended by close() gave " + tt);
      ExecutionException ta = assertThrows(ExecutionException.class, () -> async.get(SLACK.toMillis(), TimeUnit.MILLISECONDS),
          "an acquireAsync wait was not ended by close()");
      assertTrue(ta.getCause() instanceof ServiceClosedException, "an acquireAsync wait ended by close() gave " + ta.getCause());
      la.release();
      held(c.lock(n).tryAcquire(releaseBound()), "the closed waiter left the lock taken").release();
    }
  }

  @Nested
  @DisplayName("faults")
  class Faults {

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
      crashed = true;
      f.crashBackend();
      try {
        if (declares(Capability.LOST_NOTIFICATION) && declares(Capability.LEASE_EXPIRY)) {
          eventually(expiryBound(), "a holder was not told it lost its lease while the backend was down",
              () -> !before.isValid());
        }
      } finally {
        crashed = false;
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

  @Nested
  @DisplayName("fault tolerance")
  @Requires(value = Capability.FAULT_TOLERANT, anyFault = {FaultInjector.Fault.CRASH_MINORITY,
      FaultInjector.Fault.PARTITION_MINORITY})
  class FaultTolerance {

    @Test
    @Requires(value = {Capability.MUTEX, Capability.FENCING}, faults = FaultInjector.Fault.CRASH_MINORITY)
    @DisplayName("through a minority crash and its restart, locks go on being granted with exclusion and fencing, "
        + "and a holder on the majority side keeps its lock untold")
    void minorityCrashAndRestart() throws Exception {
      FaultInjector f = target.faults().orElseThrow();
      goesOnThrough("a minority crash", f::crashMinority, f::restartMinority);
    }

    @Test
    @Requires(value = {Capability.MUTEX, Capability.FENCING}, faults = FaultInjector.Fault.PARTITION_MINORITY)
    @DisplayName("through a minority partition and its heal, locks go on being granted with exclusion and fencing, "
        + "and a holder on the majority side keeps its lock untold")
    void minorityPartitionAndHeal() throws Exception {
      FaultInjector f = target.faults().orElseThrow();
      goesOnThrough("a minority partition", f::partitionMinority, f::healMinority);
    }

    /**
     * A holder takes a lock and keeps it (renewed as usual) while four workers on two other clients contend
     * for another lock under an occupancy witness and a {@link FencedResource}: before the fault, during it,
     * and after the repair. Every phase must see grants; no two workers may hold the lock at once; no write
     * may come with a stale token; and the holder, spared by the fault, must neither lose its lock nor be
     * told it did, nor may a new client get it. (A new client: one of the workers' clients may have been on the
     * part the fault stopped, and a client on a node that stopped stays stopped.)
     */
    private void goesOnThrough(String fault, java.util.function.Consumer<java.util.Collection<LockService>> inflict,
        Runnable repair) throws Exception {
      LockService holderService = open();
      LockService a = open();
      LockService b = open();
      String heldName = name("ft-held");
      Lease held = holderService.lock(heldName).acquire();
      AtomicReference<LeaseLostEvent> told = new AtomicReference<>();
      held.onLost(told::set);
      String hot = name("ft-hot");
      FencedResource<Long> resource = new FencedResource<>();
      AtomicInteger occupancy = new AtomicInteger();
      AtomicInteger overlaps = new AtomicInteger();
      AtomicInteger phase = new AtomicInteger();
      java.util.concurrent.atomic.AtomicLongArray grants = new java.util.concurrent.atomic.AtomicLongArray(3);
      java.util.concurrent.atomic.AtomicLongArray refusals = new java.util.concurrent.atomic.AtomicLongArray(3);
      AtomicBoolean stop = new AtomicBoolean();
      List<Job<Void>> workers = new ArrayList<>();
      for (LockService s : List.of(a, b)) {
        for (int w = 0; w < 2; w++) {
          workers.add(start("ft-worker", () -> {
            Lock lock = s.lock(hot);
            while (!stop.get()) {
              int p = phase.get();
              Optional<Lease> l;
              try {
                l = lock.tryAcquire(leaseTime());
              } catch (ServiceUnavailableException e) {
                refusals.incrementAndGet(p);
                Thread.sleep(20);
                continue;
              }
              if (l.isEmpty()) {
                continue;
              }
              try (Lease lease = l.get()) {
                if (occupancy.incrementAndGet() != 1) {
                  overlaps.incrementAndGet();
                }
                if (lease.isValid()) { // what a careful client checks; the resource judges the rest
                  resource.write(lease.fencingToken(), lease.fencingToken());
                }
                grants.incrementAndGet(p);
                Thread.sleep(2);
                occupancy.decrementAndGet();
              }
            }
            return null;
          }));
        }
      }
      Duration phaseWait = GRANT_WAIT.plus(expiryBound());
      awaitGrants(grants, 0, phaseWait, "before " + fault);
      minorityRepair = repair;
      inflict.accept(List.of(holderService));
      try {
        phase.set(1);
        awaitGrants(grants, 1, phaseWait, "during " + fault);
        Thread.sleep(leaseTime().multipliedBy(2).toMillis()); // long enough for every lease to need renewals
      } finally {
        minorityRepair = null;
        repair.run();
      }
      phase.set(2);
      awaitGrants(grants, 2, phaseWait, "after " + fault + " was repaired");
      Thread.sleep(leaseTime().toMillis());
      stop.set(true);
      for (Job<Void> w : workers) {
        w.get(leaseTime().plus(GRANT_WAIT));
      }
      String figures = "grants before/during/after: " + grants + ", refusals: " + refusals;
      assertEquals(0, overlaps.get(), "two workers held the lock at once around " + fault + " (" + figures + ")");
      assertEquals(0, resource.staleWrites(), "a write came with a stale fencing token around " + fault + " ("
          + figures + ")");
      assertNull(told.get(), "the holder on the majority side was told it lost its lock through " + fault + ": "
          + told.get());
      assertTrue(held.isValid(), "the holder on the majority side lost its lock through " + fault);
      assertTrue(open().lock(heldName).tryAcquire(Duration.ZERO).isEmpty(),
          "another client was granted the lock the holder still holds, after " + fault);
      held.release();
    }

    private void awaitGrants(java.util.concurrent.atomic.AtomicLongArray grants, int phase, Duration max, String when)
        throws InterruptedException {
      eventually(max, "no lock was granted " + when + " (grants so far: " + grants + ")",
          () -> grants.get(phase) > 0);
    }
  }

  @Nested
  @DisplayName("outages")
  class Outages {

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
      crashed = true;
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
        crashed = false;
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

  @Nested
  @DisplayName("chaos")
  class Chaos extends ChaosGroup {
    Chaos() {
      super(LockTck.this);
    }
  }
}
