package dev.tumbler.lock.spring.boot3;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tumbler.lock.LockService;
import dev.tumbler.lock.micrometer.MeteredLockService;
import dev.tumbler.lock.spring.Locked;
import dev.tumbler.lock.spring.autoconfigure.TumblerBoot3HealthIndicator;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

/**
 * The starter on Spring Boot 3.5, in an application that enables auto-configuration as every Boot application does:
 * Boot's own metrics and health auto-configurations with the starter's (not a registry the test makes itself, which
 * would exist before any auto-configuration runs): the lock service is metered by the registry
 * Boot makes, the {@code tumbler} health contributor is there and UP, it can be turned off, {@code @Locked} runs, and a
 * starter whose parts back off on this Boot says so at startup.
 */
@ExtendWith(OutputCaptureExtension.class)
class Boot3AutoConfigurationTest {
  /** An application: every auto-configuration on the class path, Boot 3.5's and the starter's, as Boot finds them. */
  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class App {}

  /** The same with the starter's metrics and Boot 3.5 health configurations left out: a starter that missed them. */
  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration(excludeName = {
      "dev.tumbler.lock.spring.autoconfigure.TumblerMetricsAutoConfiguration",
      "dev.tumbler.lock.spring.autoconfigure.TumblerBoot3HealthAutoConfiguration"})
  static class AppWithoutThem {}

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withUserConfiguration(App.class)
      .withPropertyValues("tumbler.url=lock:native:local?namespace=boot3-" + System.nanoTime());

  /** A job with a locked method. */
  public static class Job {
    final AtomicInteger runs = new AtomicInteger();

    @Locked(name = "boot3-job")
    public void run() {
      runs.incrementAndGet();
    }

    /** Through a method: the bean is a class proxy, whose own fields are unset. */
    public int runs() {
      return runs.get();
    }
  }

  /** One application, three checks: each context starts every Boot 3.5 auto-configuration, seconds of CPU. */
  @Test
  void meteredByBootsRegistryHealthUpLockedMethodsRunAndNothingToWarnAbout(CapturedOutput output) {
    runner.withBean(Job.class).run(ctx -> {
      assertThat(ctx).hasNotFailed();
      LockService locks = ctx.getBean(LockService.class);
      assertThat(locks).as("not metered: the metrics configuration ran before Boot 3.5's registry existed")
          .isInstanceOf(MeteredLockService.class);
      locks.lock("boot3-metered").acquire().release();
      MeterRegistry registry = ctx.getBean(MeterRegistry.class);
      assertThat(registry.getMeters()).as("the acquire was not counted in Boot's registry")
          .anyMatch(m -> m.getId().getName().startsWith("tumbler."));

      assertThat(ctx).hasSingleBean(TumblerBoot3HealthIndicator.class);
      assertThat(ctx).hasBean("tumblerHealthIndicator");
      Health health = ctx.getBean(TumblerBoot3HealthIndicator.class).health();
      assertThat(health.getStatus()).isEqualTo(Status.UP);
      assertThat(health.getDetails()).containsEntry("provider", "native").containsKey("probe");

      Job job = ctx.getBean(Job.class);
      job.run();
      job.run();
      assertThat(job.runs()).isEqualTo(2);
      assertThat(locks.lock("boot3-job").tryAcquire(java.time.Duration.ZERO))
          .as("the lock was not released after the run").isPresent().get().satisfies(l -> l.release());
    });
    assertThat(output).doesNotContain("Tumbler:");
  }

  @Test
  void theHealthContributorCanBeTurnedOff() {
    runner.withPropertyValues("management.health.tumbler.enabled=false")
        .run(ctx -> assertThat(ctx).doesNotHaveBean(TumblerBoot3HealthIndicator.class));
  }

  @Test
  void aStarterWhosePartsBackOffSaysSo(CapturedOutput output) {
    // as a starter that knew Boot 4's names only was on Boot 3.5: no meters, no health contributor
    new ApplicationContextRunner()
        .withUserConfiguration(AppWithoutThem.class)
        .withPropertyValues("tumbler.url=lock:native:local?namespace=boot3-missing-" + System.nanoTime())
        .run(ctx -> assertThat(ctx).hasNotFailed());
    assertThat(output).contains("Tumbler: the application has a MeterRegistry but the lock service is not metered")
        .contains("Tumbler: Spring Boot's health API is there (org.springframework.boot.actuate.health.HealthIndicator)")
        .contains("Spring Boot 3.5.7");
  }
}
