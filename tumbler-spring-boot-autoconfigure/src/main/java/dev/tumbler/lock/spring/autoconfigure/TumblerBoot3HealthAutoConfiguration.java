package dev.tumbler.lock.spring.autoconfigure;

import dev.tumbler.lock.LockService;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The health contributor {@code tumbler} on Spring Boot 3.5, whose health API is
 * {@code org.springframework.boot.actuate.health} ({@link TumblerHealthAutoConfiguration} is Boot 4's); the same
 * bean name, the same switch, {@code management.health.tumbler.enabled=false}.
 */
@AutoConfiguration(after = TumblerAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
@ConditionalOnBean(LockService.class)
@ConditionalOnEnabledHealthIndicator("tumbler")
@EnableConfigurationProperties(TumblerProperties.class)
public class TumblerBoot3HealthAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean(name = "tumblerHealthIndicator")
  public TumblerBoot3HealthIndicator tumblerHealthIndicator(LockService locks, TumblerProperties properties) {
    return new TumblerBoot3HealthIndicator(TumblerHealthAutoConfiguration.unmetered(locks),
        properties.getHealth().getLockName());
  }
}
