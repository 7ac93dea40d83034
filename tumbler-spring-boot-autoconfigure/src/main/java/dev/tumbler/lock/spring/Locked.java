package dev.tumbler.lock.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a method only while this application holds the named lock of the application's
 * {@link dev.tumbler.lock.LockService} bean; made for {@code @Scheduled} jobs that several instances run and
 * only one should run at a time.
 *
 * <pre>{@code
 * @Scheduled(fixedDelay = 60_000)
 * @Locked(name = "nightly-report")                       // another instance holds it: skip this run
 * void report() { ... }
 *
 * @Locked(name = "ledger", mode = Locked.Mode.WAIT, maxWait = "10s")
 * void settle() { ... }
 * }</pre>
 *
 * <p>The lease is released when the method returns or throws ({@link #holdAtLeast()} later). A run that does not
 * get the lock is skipped: the method is not called, the caller gets no exception, and it is logged at DEBUG
 * (category {@code dev.tumbler.lock.spring.LockedInterceptor}). An interrupt during the wait also skips the run
 * and keeps the thread's interrupt flag.
 *
 * <p><b>Results.</b> The method may return a value. A skipped run returns {@code Optional.empty()} from a method
 * declared to return {@link java.util.Optional}, and {@code null} from any other; a primitive result type is
 * refused at start (a skipped run has no value for it: return its wrapper or an {@code Optional}).
 *
 * <p><b>The run's lease.</b> {@link LockedRun#lease()}, on the thread that runs the method, is the lease: its
 * {@link dev.tumbler.lock.Lease#fencingToken() fencing token} for what the job writes, and whether it is still
 * valid. <b>A lease lost during the run</b> (the backend unreachable past the term) turns
 * {@link dev.tumbler.lock.Lease#isValid()} false and runs its {@code onLost} listeners before another instance can
 * be granted the lock: a job polls {@code LockedRun.lease().isValid()} between steps, or, with
 * {@link #interruptOnLost()}, has its thread interrupted at the loss, so that a blocking step ends with
 * {@link InterruptedException}.
 *
 * <p><b>Clock skew.</b> The lock is held for the method's run only: a job shorter than the gap between two
 * instances' clocks can still run once on each for the same schedule. {@link #holdAtLeast()} keeps the lock that
 * long after the grant, however short the run; otherwise make the job idempotent, or use the fencing token.
 *
 * <p><b>Warning:</b> the annotation works through a Spring proxy, like {@code @Transactional}: a call from
 * another method of the same object does not go through it and takes no lock. Methods must not be
 * {@code final} or {@code private}.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Locked {

  /** The lock's name; {@code ${...}} placeholders are resolved from the environment. */
  String name();

  /** What to do when another holder has the lock; {@link Mode#SKIP} by default. */
  Mode mode() default Mode.SKIP;

  /**
   * With {@link Mode#WAIT}: the longest to wait for the lock ({@code 500ms}, {@code 10s}, {@code 2m}, or ISO-8601
   * {@code PT10S}); empty waits without a bound. Must stay empty with {@link Mode#SKIP}. Placeholders are resolved.
   */
  String maxWait() default "";

  /**
   * The shortest time the lock stays held after the grant ({@code 30s}, ISO-8601 {@code PT30S}; empty: released at
   * once when the method returns): a run that ends earlier keeps the lease, renewed, until then, so that instances
   * whose clocks differ by less than this run a schedule's job once between them (ShedLock's
   * {@code lockAtLeastFor}). Measured on the monotonic clock. Closing the service gives the lock back sooner.
   * Placeholders are resolved.
   */
  String holdAtLeast() default "";

  /**
   * Whether a lease lost during the run interrupts the thread that runs the method (false: the job polls
   * {@link LockedRun#lease()}). The interrupt is delivered only while the method runs; one the loss delivered is
   * cleared when the method returns, so it does not reach the scheduler's next task.
   */
  boolean interruptOnLost() default false;

  /** What a run does when the lock is held by someone else. */
  enum Mode {
    /** Try once ({@code tryAcquire(Duration.ZERO)}) and skip the run if the lock is held. */
    SKIP,
    /** Wait up to {@link #maxWait()} ({@code tryAcquire(maxWait)}, or {@code acquire()} without one); skip the run if it passes. */
    WAIT
  }
}
