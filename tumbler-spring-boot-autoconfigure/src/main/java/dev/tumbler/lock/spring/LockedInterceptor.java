package dev.tumbler.lock.spring;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.spi.LockUrl;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Function;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Takes the lock of a {@link Locked} method around its run. The settings of each method are read and checked
 * once ({@link #check}, called for every annotated method when its bean is created, so that a bad
 * annotation fails the application's start, naming the method). Thread safe.
 */
public final class LockedInterceptor implements MethodInterceptor {
  private static final Log LOG = LogFactory.getLog(LockedInterceptor.class);

  /**
   * The checked settings of one method; {@code maxWait} null = no bound; {@code holdAtLeast} zero = release at
   * once; {@code optional}: a skipped run returns {@code Optional.empty()}.
   */
  record Settings(String name, Locked.Mode mode, Duration maxWait, Duration holdAtLeast, boolean interruptOnLost,
      boolean optional) {}

  private final Supplier<LockService> locks;
  private final Function<String, String> placeholders;
  private final ConcurrentMap<Method, Settings> settings = new ConcurrentHashMap<>();

  /**
   * @param locks gives the service when the first locked method runs (not before: the interceptor is made
   *     while the context starts, before the service may exist)
   * @param placeholders resolves {@code ${...}} in names and waits
   */
  public LockedInterceptor(Supplier<LockService> locks, Function<String, String> placeholders) {
    this.locks = Objects.requireNonNull(locks, "locks");
    this.placeholders = Objects.requireNonNull(placeholders, "placeholders");
  }

  /**
   * Reads and checks the annotation of {@code method}.
   *
   * @throws IllegalStateException naming the method and what is wrong with its annotation
   */
  Settings check(Method method) {
    return settings.computeIfAbsent(method, this::read);
  }

  private Settings read(Method method) {
    Locked ann = AnnotatedElementUtils.findMergedAnnotation(method, Locked.class);
    String where = "@Locked on " + method.getDeclaringClass().getName() + "." + method.getName() + "()";
    if (ann == null) {
      throw new IllegalStateException(where + ": no annotation found");
    }
    int mod = method.getModifiers();
    if (java.lang.reflect.Modifier.isPrivate(mod) || java.lang.reflect.Modifier.isFinal(mod)
        || java.lang.reflect.Modifier.isStatic(mod)) {
      throw new IllegalStateException(where + ": the method is private, final or static, so no proxy can take the "
          + "lock around it");
    }
    if (method.getReturnType().isPrimitive() && method.getReturnType() != void.class) {
      throw new IllegalStateException(where + ": the method returns " + method.getReturnType().getName()
          + ", and a skipped run has no value of it: return " + (method.getReturnType() == boolean.class ? "Boolean"
          : "its wrapper") + " (null when skipped) or an Optional (empty when skipped)");
    }
    String name = placeholders.apply(ann.name());
    if (name == null || name.isBlank()) {
      throw new IllegalStateException(where + ": name is blank");
    }
    Duration maxWait = duration(where, "maxWait", ann.maxWait());
    if (maxWait != null && ann.mode() == Locked.Mode.SKIP) {
      throw new IllegalStateException(where + ": maxWait '" + ann.maxWait() + "' is for mode = WAIT; SKIP never waits");
    }
    Duration hold = duration(where, "holdAtLeast", ann.holdAtLeast());
    return new Settings(name, ann.mode(), ann.mode() == Locked.Mode.SKIP ? Duration.ZERO : maxWait,
        hold == null ? Duration.ZERO : hold, ann.interruptOnLost(), method.getReturnType() == Optional.class);
  }

  /** A duration attribute with its placeholders resolved: null when empty. */
  private Duration duration(String where, String attribute, String text) {
    String value = placeholders.apply(text);
    if (value == null || value.isBlank()) {
      return null;
    }
    Duration d;
    try {
      d = LockUrl.parseDuration(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(where + ": " + attribute + ": " + e.getMessage()); // the message says it all
    }
    if (d.isNegative()) {
      throw new IllegalStateException(where + ": " + attribute + " is negative: " + value);
    }
    return d;
  }

  @Override
  public Object invoke(MethodInvocation invocation) throws Throwable {
    Method method = invocation.getMethod();
    if (invocation.getThis() != null) {
      method = AopUtils.getMostSpecificMethod(method, AopUtils.getTargetClass(invocation.getThis()));
    }
    Settings s = check(method);
    Lock lock = locks.get().lock(s.name());
    Optional<Lease> lease;
    try {
      lease = s.maxWait() == null ? Optional.of(lock.acquire()) : lock.tryAcquire(s.maxWait());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      LOG.debug("skipped " + method.getName() + "(): interrupted while waiting for lock '" + s.name() + "'");
      return skipped(s);
    }
    if (lease.isEmpty()) {
      if (LOG.isDebugEnabled()) {
        LOG.debug("skipped " + method.getName() + "(): lock '" + s.name() + "' is held elsewhere"
            + (s.mode() == Locked.Mode.WAIT ? " (waited " + s.maxWait() + ")" : ""));
      }
      return skipped(s);
    }
    Lease held = lease.get();
    long grantedAt = System.nanoTime();
    Interrupter interrupter = s.interruptOnLost() ? new Interrupter(Thread.currentThread()) : null;
    if (interrupter != null) {
      held.onLost(e -> interrupter.lost());
    }
    LockedRun.enter(held);
    try {
      return invocation.proceed();
    } finally {
      LockedRun.leave(held);
      if (interrupter != null) {
        interrupter.ended();
      }
      release(held, s.holdAtLeast().toNanos() - (System.nanoTime() - grantedAt));
    }
  }

  private static Object skipped(Settings s) {
    return s.optional() ? Optional.empty() : null;
  }

  /** Releases now, or after {@code keepNanos} (holdAtLeast) while the lease renews itself. */
  private static void release(Lease lease, long keepNanos) {
    if (keepNanos <= 0 || !lease.isValid()) {
      lease.release();
      return;
    }
    Thread.ofVirtual().name("tumbler-locked-hold-" + lease.name()).start(() -> {
      try {
        java.util.concurrent.TimeUnit.NANOSECONDS.sleep(keepNanos);
      } catch (InterruptedException e) {
        // released below
      } finally {
        lease.release();
      }
    });
  }

  /**
   * Interrupts the method's thread when its lease is lost, only while the method runs; an interrupt it delivered is
   * cleared once the method has returned, so that it does not reach the scheduler's next task.
   */
  private static final class Interrupter {
    private Thread running;
    private boolean delivered;

    Interrupter(Thread running) {
      this.running = running;
    }

    synchronized void lost() {
      if (running != null) {
        delivered = true;
        running.interrupt();
      }
    }

    void ended() {
      boolean clear;
      synchronized (this) {
        running = null;
        clear = delivered;
      }
      if (clear) {
        Thread.interrupted();
      }
    }
  }
}
