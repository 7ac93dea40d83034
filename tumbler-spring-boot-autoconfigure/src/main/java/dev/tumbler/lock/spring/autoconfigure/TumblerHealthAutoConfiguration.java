package dev.tumbler.lock.spring.autoconfigure;

import dev.tumbler.lock.LockService;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;

/**
 * The health contributor {@code tumbler} ({@link TumblerHealthIndicator}) when Spring Boot 4's health support
 * is on the class path (the actuator brings it); {@code management.health.tumbler.enabled=false} turns it off.
 * {@link TumblerBoot3HealthAutoConfiguration} is Boot 3.5's.
 */
@AutoConfiguration(after = TumblerAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(LockService.class)
@ConditionalOnEnabledHealthIndicator("tumbler")
@EnableConfigurationProperties(TumblerProperties.class)
public class TumblerHealthAutoConfiguration {
  private static final boolean METERED = ClassUtils.isPresent("dev.tumbler.lock.micrometer.MeteredLockService",
      TumblerHealthAutoConfiguration.class.getClassLoader());

  @Bean
  @ConditionalOnMissingBean(name = "tumblerHealthIndicator")
  public TumblerHealthIndicator tumblerHealthIndicator(LockService locks, TumblerProperties properties) {
    return new TumblerHealthIndicator(unmetered(locks), properties.getHealth().getLockName());
  }

  /** The service without its meters, so that health checks do not count as the application's acquires. */
  static LockService unmetered(LockService locks) {
    return METERED ? Unmetered.of(locks) : locks;
  }

  /** Loaded only when tumbler-micrometer is there. */
  private static final class Unmetered {
    static LockService of(LockService locks) {
      return locks instanceof dev.tumbler.lock.micrometer.MeteredLockService m ? m.delegate() : locks;
    }
  }
}
