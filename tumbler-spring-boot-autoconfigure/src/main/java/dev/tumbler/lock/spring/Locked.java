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
 * <p>The lease is released when the method returns or throws. A run that does not get the lock is skipped:
 * the method is not called, the caller gets no exception, and it is logged at DEBUG (category
 * {@code dev.tumbler.lock.spring.LockedInterceptor}). An interrupt during the wait also skips the run and keeps the
 * thread's interrupt flag. The method must return {@code void}: a skipped run has no result to give. The
 * lock is held for the method's run only: a job shorter than the gap between two instances' clocks can
 * still run once on each; make the job idempotent, or use the lock's fencing token where the job writes.
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

  /** What a run does when the lock is held by someone else. */
  enum Mode {
    /** Try once ({@code tryAcquire(Duration.ZERO)}) and skip the run if the lock is held. */
    SKIP,
    /** Wait up to {@link #maxWait()} ({@code tryAcquire(maxWait)}, or {@code acquire()} without one); skip the run if it passes. */
    WAIT
  }
}
