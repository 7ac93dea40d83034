package dev.tumbler.lock.spring.autoconfigure;

import dev.tumbler.lock.micrometer.MeteredLockService;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Meters the auto-configured {@link dev.tumbler.lock.LockService} with {@link MeteredLockService} when the
 * application has a {@link MeterRegistry} (Spring Boot's actuator makes one) and {@code tumbler-micrometer}
 * is on the class path; {@code tumbler.metrics.enabled=false} turns it off. Ordered after Boot's metrics
 * auto-configurations of both generations (3.5 and 4.0), which make the registry.
 */
@AutoConfiguration(before = TumblerAutoConfiguration.class, afterName = {
    // Spring Boot 4
    "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration",
    // Spring Boot 3.5: without these names this ran before the registry existed there, and backed off
    "org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration",
    "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration"})
@ConditionalOnClass({MeterRegistry.class, MeteredLockService.class})
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnProperty(prefix = "tumbler.metrics", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(TumblerProperties.class)
public class TumblerMetricsAutoConfiguration {

  @Bean
  public LockServiceDecorator tumblerMetricsDecorator(ObjectProvider<MeterRegistry> registry,
      TumblerProperties properties) {
    return service -> MeteredLockService.builder(service, registry.getObject())
        .tagLockNames(properties.getMetrics().isLockNameTag())
        .build();
  }
}
