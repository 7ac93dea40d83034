package dev.tumbler.lock.spring;

import dev.tumbler.lock.LockService;
import java.util.Objects;
import java.util.function.Supplier;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.core.Ordered;
import org.springframework.util.ReflectionUtils;

/**
 * Proxies every bean that has a {@link Locked} method (a class proxy, so that {@code @Scheduled} finds the
 * method on it) and checks each such method's annotation when the bean is created. Runs just before
 * Spring's {@code ScheduledAnnotationBeanPostProcessor}, so that the scheduler calls the proxy; a bean that
 * is already a proxy (of {@code @Transactional}, say) gets the lock advice added to it.
 */
public final class LockedBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {
  private final Supplier<LockService> locks;
  private LockedInterceptor interceptor;

  public LockedBeanPostProcessor(Supplier<LockService> locks) {
    this.locks = Objects.requireNonNull(locks, "locks");
    setProxyTargetClass(true);
    setBeforeExistingAdvisors(true);
    setOrder(Ordered.LOWEST_PRECEDENCE - 1);
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    super.setBeanFactory(beanFactory);
    ConfigurableBeanFactory cbf = beanFactory instanceof ConfigurableBeanFactory c ? c : null;
    interceptor = new LockedInterceptor(locks, s -> cbf == null ? s : cbf.resolveEmbeddedValue(s));
    advisor = new DefaultPointcutAdvisor(new AnnotationMatchingPointcut(null, Locked.class, true), interceptor);
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) {
    if (interceptor != null) {
      Class<?> type = AopUtils.getTargetClass(bean);
      ReflectionUtils.doWithMethods(type, interceptor::check, m -> m.isAnnotationPresent(Locked.class));
    }
    return super.postProcessAfterInitialization(bean, beanName);
  }
}
