package dev.tumbler.lock.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.micrometer.MeteredLockService;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The auto-configuration against a real Redis server: two application contexts, one lock. */
class TumblerRedisTest {
  private static EmbeddedRedisServer redis;

  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(TumblerAutoConfiguration.class, TumblerMetricsAutoConfiguration.class,
          TumblerHealthAutoConfiguration.class))
      .withPropertyValues("tumbler.url=" + redis.url(), "job.lock=job-" + UUID.randomUUID());

  @BeforeAll
  static void startRedis() {
    redis = EmbeddedRedisServer.start();
  }

  @AfterAll
  static void stopRedis() {
    redis.close();
  }

  @Test
  void twoInstancesRunALockedJobOneAtATime() {
    runner.withBean(LockedJob.class).run(first -> runner.withBean(LockedJob.class).run(second -> {
      assertThat(first.getBean(LockService.class).info().provider()).isEqualTo("redis");
      assertThat(second.getBean(TumblerHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
      LockedJob a = first.getBean(LockedJob.class);
      LockedJob b = second.getBean(LockedJob.class);
      CountDownLatch hold = new CountDownLatch(1);
      CountDownLatch entered = a.park(hold);
      CompletableFuture<Void> running = CompletableFuture.runAsync(() -> {
        try {
          a.skipping();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
      b.skipping(); // the other instance holds the lock: skipped
      b.waiting(); // waits 200 ms, then skipped
      assertThat(b.skipRuns()).isZero();
      assertThat(b.waitRuns()).isZero();
      hold.countDown();
      running.get(10, TimeUnit.SECONDS);
      b.skipping();
      assertThat(a.skipRuns()).isEqualTo(1);
      assertThat(b.skipRuns()).isEqualTo(1);
    }));
  }

  /**
   * A lease lost while a locked method runs, because its Redis stops answering past the lease term: with
   * interruptOnLost the method's blocking wait ends with an interrupt, which does not outlive the run; without, the
   * method sees its lease turn invalid.
   */
  @Test
  void aLeaseLostDuringTheRunInterruptsItOrTurnsInvalid() throws Exception {
    for (boolean interrupt : new boolean[] {true, false}) {
      EmbeddedRedisServer own = EmbeddedRedisServer.start();
      try {
        runner.withPropertyValues("tumbler.url=" + own.url(), "tumbler.properties.leaseTime=1s",
            "tumbler.properties.timeout=200ms").withBean(LeaseAwareJob.class).run(ctx -> {
          LeaseAwareJob job = ctx.getBean(LeaseAwareJob.class);
          CompletableFuture<Boolean> run = CompletableFuture.supplyAsync(() -> {
            try {
              if (interrupt) {
                job.untilInterrupted();
              } else {
                job.untilInvalid();
              }
            } catch (InterruptedException e) {
              return true;
            }
            return Thread.currentThread().isInterrupted();
          });
          assertThat(job.awaitStarted(30)).isTrue();
          own.close(); // the backend stops answering: the lease cannot be renewed
          boolean interruptLeft = run.get(60, TimeUnit.SECONDS);
          assertThat(job.seen()).isEqualTo(interrupt ? "interrupted, lease valid: false" : "invalid");
          assertThat(interruptLeft).as("the loss's interrupt outlived the run").isFalse();
        });
      } finally {
        own.close();
      }
    }
  }

  @Test
  void healthIsDownWhileTheServerIsUnreachable() {
    EmbeddedRedisServer own = EmbeddedRedisServer.start();
    try {
      runner.withPropertyValues("tumbler.url=" + own.url(), "tumbler.properties.timeout=500ms").run(ctx -> {
        TumblerHealthIndicator health = ctx.getBean(TumblerHealthIndicator.class);
        assertThat(health.health().getStatus()).isEqualTo(Status.UP);
        own.close();
        assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
      });
    } finally {
      own.close();
    }
  }

  @Test
  void aLeaseNotRenewedIsCountedLostAsExpired() {
    runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withPropertyValues("tumbler.properties.renew=manual", "tumbler.properties.leaseTime=200ms")
        .run(ctx -> {
          LockService locks = ctx.getBean(LockService.class);
          CompletableFuture<LeaseLostEvent> lost = new CompletableFuture<>();
          Lease lease = locks.lock("expiring-" + UUID.randomUUID()).acquire();
          lease.onLost(lost::complete);
          assertThat(lost.get(10, TimeUnit.SECONDS).reason()).isEqualTo(LeaseLostEvent.Reason.EXPIRED);
          MeterRegistry registry = ctx.getBean(MeterRegistry.class);
          assertThat(registry.get(MeteredLockService.LOST).tags("provider", "redis", "kind", "lock",
              "reason", "expired").counter().count()).isEqualTo(1);
          assertThat(registry.get(MeteredLockService.HELD).tags("end", "lost").timer().count()).isEqualTo(1);
          assertThat(registry.get(MeteredLockService.ACTIVE).tags("kind", "lock").gauge().value()).isZero();
          lease.release();
        });
  }
}
