package dev.tumbler.lock.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.micrometer.MeteredLockService;
import dev.tumbler.lock.spring.Locked;
import dev.tumbler.lock.spring.LockedRun;
import java.util.Optional;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The auto-configuration on the native provider's embedded node (the default URL) and on H2 through JDBC. */
class TumblerAutoConfigurationTest {
  // every service on lock:native:local in this JVM shares its locks: a lock name per test run
  private final String jobLock = "job-" + UUID.randomUUID();
  private final ApplicationContextRunner runner = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(TumblerAutoConfiguration.class, TumblerMetricsAutoConfiguration.class,
          TumblerHealthAutoConfiguration.class))
      .withPropertyValues("job.lock=" + jobLock);

  /**
   * With Boot's own metrics auto-configurations (not a registry the test makes, which exists before any of them): the
   * metrics configuration must come after the one that makes the registry, or it backs off (as it did on Boot 3.5,
   * whose names it did not list; tumbler-spring-boot3-test checks that generation).
   */
  @Test
  void theRegistryBootMakesMetersTheService() {
    new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(
            org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration.class,
            org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration.class,
            org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration.class,
            TumblerAutoConfiguration.class, TumblerMetricsAutoConfiguration.class, TumblerHealthAutoConfiguration.class))
        .run(ctx -> assertThat(ctx.getBean(LockService.class)).isInstanceOf(MeteredLockService.class));
  }

  @Test
  void theEmbeddedNodeByDefaultClosedWithTheContext() {
    AtomicReference<LockService> seen = new AtomicReference<>();
    runner.run(ctx -> {
      LockService locks = ctx.getBean(LockService.class);
      seen.set(locks);
      assertThat(locks.info().provider()).isEqualTo("native");
      assertThat(locks).isNotInstanceOf(MeteredLockService.class);
      Health health = ctx.getBean(TumblerHealthIndicator.class).health(true);
      assertThat(health.getStatus()).isEqualTo(Status.UP);
      assertThat(health.getDetails()).containsEntry("provider", "native").containsEntry("probe", "acquired");
    });
    assertThat(seen.get().isClosed()).isTrue();
  }

  @Test
  void meteredWhenTheApplicationHasAMeterRegistry() {
    runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run(ctx -> {
      LockService locks = ctx.getBean(LockService.class);
      assertThat(locks).isInstanceOf(MeteredLockService.class);
      MeterRegistry registry = ctx.getBean(MeterRegistry.class);
      // the health check goes around the meters
      assertThat(ctx.getBean(TumblerHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
      assertThat(registry.find(MeteredLockService.ACQUIRE).counter()).isNull();

      locks.lock(jobLock).acquire().release();
      assertThat(registry.get(MeteredLockService.ACQUIRE).tags("provider", "native", "kind", "lock",
          "outcome", "acquired").counter().count()).isEqualTo(1);
      assertThat(registry.get(MeteredLockService.HELD).tags("end", "released").timer().count()).isEqualTo(1);
      assertThat(registry.find(MeteredLockService.ACQUIRE).tagKeys("name").counter()).isNull();
    });
    runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).withPropertyValues("tumbler.metrics.enabled=false")
        .run(ctx -> assertThat(ctx.getBean(LockService.class)).isNotInstanceOf(MeteredLockService.class));
    runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).withPropertyValues("tumbler.metrics.lock-name-tag=true")
        .run(ctx -> {
          ctx.getBean(LockService.class).lock(jobLock).acquire().release();
          assertThat(ctx.getBean(MeterRegistry.class).get(MeteredLockService.ACQUIRE).tags("name", jobLock).counter()
              .count()).isEqualTo(1);
        });
  }

  @Test
  void healthIsDownOnceTheServiceIsClosedAndCanBeTurnedOff() {
    runner.run(ctx -> {
      ctx.getBean(LockService.class).close();
      Health health = ctx.getBean(TumblerHealthIndicator.class).health(true);
      assertThat(health.getStatus()).isEqualTo(Status.DOWN);
      assertThat(health.getDetails()).containsEntry("state", "closed");
    });
    runner.withPropertyValues("management.health.tumbler.enabled=false")
        .run(ctx -> assertThat(ctx).doesNotHaveBean(TumblerHealthIndicator.class));
  }

  @Test
  void providerParametersArePassedAndCheckedByTheProvider() {
    runner.withPropertyValues("tumbler.properties.bogus=1").run(ctx -> {
      assertThat(ctx).hasFailed();
      assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("bogus");
    });
  }

  @Test
  void anApplicationLockServiceReplacesTheAutoConfiguredOne() {
    LockService own = LockProviders.connect("lock:native:local");
    runner.withBean(LockService.class, () -> own).run(ctx -> assertThat(ctx.getBean(LockService.class)).isSameAs(own));
    assertThat(own.isClosed()).isTrue(); // the context closed the bean it was given
  }

  @Test
  void lockedMethodsSkipOrWaitWhileTheLockIsHeldElsewhere() {
    runner.withBean(LockedJob.class).run(ctx -> {
      LockedJob job = ctx.getBean(LockedJob.class);
      try (LockService elsewhere = LockProviders.connect("lock:native:local")) {
        Lease held = elsewhere.lock(jobLock).acquire();
        job.skipping();
        job.waiting(); // waits 200ms, then skips
        assertThat(job.skipRuns()).isEqualTo(0);
        assertThat(job.waitRuns()).isEqualTo(0);
        held.release();
        job.skipping();
        job.waiting();
        assertThat(job.skipRuns()).isEqualTo(1);
        assertThat(job.waitRuns()).isEqualTo(1);
        // released after each run
        assertThat(elsewhere.lock(jobLock).tryAcquire(java.time.Duration.ZERO)).isPresent();
      }
    });
  }

  @Test
  void aLockedMethodReturnsItsValueOrNothingWhenSkippedAndReachesItsLease() {
    runner.withBean(LeaseAwareJob.class).run(ctx -> {
      LeaseAwareJob job = ctx.getBean(LeaseAwareJob.class);
      assertThat(LockedRun.lease()).isEmpty();
      assertThat(job.name()).isEqualTo(jobLock);
      long first = job.token().orElseThrow();
      assertThat(job.token().orElseThrow()).isGreaterThan(first);
      assertThat(LockedRun.lease()).as("no lease on the caller's thread after the run").isEmpty();
      try (LockService elsewhere = LockProviders.connect("lock:native:local")) {
        Lease held = elsewhere.lock(jobLock).acquire();
        assertThat(job.token()).as("a skipped run of an Optional method").isEmpty();
        assertThat(job.name()).as("a skipped run of any other").isNull();
        held.release();
      }
    });
  }

  @Test
  void holdAtLeastKeepsTheLockAfterAShortRun() {
    runner.withBean(LeaseAwareJob.class).run(ctx -> {
      LeaseAwareJob job = ctx.getBean(LeaseAwareJob.class);
      try (LockService elsewhere = LockProviders.connect("lock:native:local")) {
        long called = System.nanoTime();
        job.brief();
        Optional<Lease> next;
        while ((next = elsewhere.lock(jobLock).tryAcquire(java.time.Duration.ZERO)).isEmpty()) {
          Thread.sleep(10);
          assertThat(System.nanoTime() - called).as("still held 10 s after holdAtLeast")
              .isLessThan(java.time.Duration.ofMillis(10_800).toNanos());
        }
        assertThat(System.nanoTime() - called).as("free before holdAtLeast")
            .isGreaterThanOrEqualTo(java.time.Duration.ofMillis(800).toNanos());
        next.get().release();
      }
    });
  }

  static class ReturnsAValue {
    @Locked(name = "x")
    public int compute() {
      return 1;
    }
  }

  static class HoldsANegativeTime {
    @Locked(name = "x", holdAtLeast = "-1s")
    public void run() {}
  }

  static class SkipsWithAWait {
    @Locked(name = "x", maxWait = "1s")
    public void run() {}
  }

  @Test
  void aBadAnnotationFailsTheStartNamingTheMethod() {
    runner.withBean(ReturnsAValue.class).run(ctx -> assertThat(ctx.getStartupFailure()).rootCause()
        .hasMessageContaining("ReturnsAValue.compute()").hasMessageContaining("returns int"));
    runner.withBean(HoldsANegativeTime.class).run(ctx -> assertThat(ctx.getStartupFailure()).rootCause()
        .hasMessageContaining("HoldsANegativeTime.run()").hasMessageContaining("holdAtLeast"));
    runner.withBean(SkipsWithAWait.class).run(ctx -> assertThat(ctx.getStartupFailure()).rootCause()
        .hasMessageContaining("SkipsWithAWait.run()").hasMessageContaining("mode = WAIT"));
  }

  @Test
  void aZooKeeperUrlWithoutHostsUsesTheApplicationsCuratorClientAndLeavesItOpen() throws Exception {
    try (org.apache.curator.test.TestingServer zk = new org.apache.curator.test.TestingServer()) {
      org.apache.curator.framework.CuratorFramework app = org.apache.curator.framework.CuratorFrameworkFactory
          .newClient(zk.getConnectString(), new org.apache.curator.retry.RetryOneTime(100));
      app.start();
      try {
        // no destroy method: the application closes its client itself (Spring would infer close() for it)
        runner.withBean(org.apache.curator.framework.CuratorFramework.class, () -> app, bd -> bd.setDestroyMethodName(""))
            .withPropertyValues("tumbler.url=lock:zookeeper:///tumbler-spring").run(ctx -> {
              LockService locks = ctx.getBean(LockService.class);
              assertThat(locks.info().provider()).isEqualTo("zookeeper");
              assertThat(locks.unwrap(org.apache.curator.framework.CuratorFramework.class)).isSameAs(app);
              locks.lock(jobLock).acquire().release();
            });
        assertThat(app.getZookeeperClient().isConnected()).as("the context closed the application's client").isTrue();
      } finally {
        app.close();
      }
    }
  }

  @Test
  void aRedisUrlWithoutHostsUsesTheApplicationsJedisClientAndLeavesItOpen() throws Exception {
    try (EmbeddedRedisServer server = EmbeddedRedisServer.start();
        redis.clients.jedis.JedisPooled app = new redis.clients.jedis.JedisPooled(
            redis.clients.jedis.HostAndPort.from(server.url().substring("lock:redis://".length())))) {
      // no destroy method: the application closes its client itself (Spring would infer close() for it)
      runner.withBean(redis.clients.jedis.JedisPooled.class, () -> app, bd -> bd.setDestroyMethodName(""))
          .withPropertyValues("tumbler.url=lock:redis:///?namespace=spring-app-client").run(ctx -> {
            LockService locks = ctx.getBean(LockService.class);
            assertThat(locks.info().provider()).isEqualTo("redis");
            assertThat(locks.unwrap(redis.clients.jedis.UnifiedJedis.class)).isSameAs(app);
            locks.lock(jobLock).acquire().release();
          });
      assertThat(app.ping()).as("the context closed the application's client").isEqualTo("PONG");
    }
  }

  @Test
  void aJdbcUrlThatNamesOnlyTheDatabaseUsesTheApplicationDataSource() {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:mem:tumbler-spring-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    ApplicationContextRunner jdbc = runner.withBean(DataSource.class, () -> h2)
        .withPropertyValues("tumbler.url=lock:jdbc:h2?createSchema=true");
    jdbc.run(ctx -> {
      LockService locks = ctx.getBean(LockService.class);
      assertThat(locks.info().provider()).isEqualTo("jdbc");
      try (Lease lease = locks.lock("reused").acquire()) {
        assertThat(lease.isValid()).isTrue();
      }
    });
    // the H2 database is still there after the context closed: the service did not own it
    try (var c = h2.getConnection(); var rs = c.createStatement().executeQuery("select count(*) from tumbler_locks")) {
      assertThat(rs.next()).isTrue();
    } catch (java.sql.SQLException e) {
      throw new AssertionError(e);
    }
    jdbc.withPropertyValues("tumbler.jdbc.use-application-data-source=false")
        .run(ctx -> assertThat(ctx).hasFailed());
  }

  @Test
  void urlsThatNameOnlyADatabase() {
    assertThat(TumblerAutoConfiguration.namesOnlyADatabase("lock:jdbc:postgresql")).isTrue();
    assertThat(TumblerAutoConfiguration.namesOnlyADatabase("lock:jdbc:h2?createSchema=true")).isTrue();
    assertThat(TumblerAutoConfiguration.namesOnlyADatabase("lock:jdbc:postgresql://db/app")).isFalse();
    assertThat(TumblerAutoConfiguration.namesOnlyADatabase("lock:jdbc:h2:mem:x")).isFalse();
    assertThat(TumblerAutoConfiguration.namesOnlyADatabase("lock:redis://h:6379")).isFalse();
  }
}
