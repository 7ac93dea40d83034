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

  /** The checked settings of one method; {@code maxWait} null = no bound. */
  record Settings(String name, Locked.Mode mode, Duration maxWait) {}

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
    if (method.getReturnType() != void.class) {
      throw new IllegalStateException(where + ": the method returns " + method.getReturnType().getName()
          + "; a @Locked method returns void, since a skipped run has no result");
    }
    String name = placeholders.apply(ann.name());
    if (name == null || name.isBlank()) {
      throw new IllegalStateException(where + ": name is blank");
    }
    String wait = placeholders.apply(ann.maxWait());
    Duration maxWait = null;
    if (wait != null && !wait.isBlank()) {
      if (ann.mode() == Locked.Mode.SKIP) {
        throw new IllegalStateException(where + ": maxWait '" + wait + "' is for mode = WAIT; SKIP never waits");
      }
      try {
        maxWait = LockUrl.parseDuration(wait);
      } catch (IllegalArgumentException e) {
        throw new IllegalStateException(where + ": maxWait: " + e.getMessage(), e);
      }
      if (maxWait.isNegative()) {
        throw new IllegalStateException(where + ": maxWait is negative: " + wait);
      }
    }
    return new Settings(name, ann.mode(), ann.mode() == Locked.Mode.SKIP ? Duration.ZERO : maxWait);
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
      return null;
    }
    if (lease.isEmpty()) {
      if (LOG.isDebugEnabled()) {
        LOG.debug("skipped " + method.getName() + "(): lock '" + s.name() + "' is held elsewhere"
            + (s.mode() == Locked.Mode.WAIT ? " (waited " + s.maxWait() + ")" : ""));
      }
      return null;
    }
    try (Lease held = lease.get()) {
      return invocation.proceed();
    }
  }
}
