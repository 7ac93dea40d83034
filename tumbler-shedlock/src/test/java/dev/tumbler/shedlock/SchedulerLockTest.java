package dev.tumbler.shedlock;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.torture.backend.Processes;
import dev.tumbler.torture.backend.RedisProcess;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;

/**
 * Two instances of one Spring application, each with its own {@link LockService} and ShedLock's
 * {@code @SchedulerLock} on a job both schedule every 20 ms: on the embedded native node and on a real Redis,
 * the runs never overlap, every run holds a lease whose token is larger than the run before, and a run shorter
 * than {@code lockAtLeastFor} keeps the lock for {@code lockAtLeastFor}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SchedulerLockTest {
  private static RedisProcess redis;

  @BeforeAll
  static void startRedis(@TempDir Path dir) {
    redis = RedisProcess.start(dir, Processes.freePort(), List.of(), false);
  }

  @AfterAll
  static void stopRedis() {
    redis.close();
  }

  /** The application's configuration, as one writes it with ShedLock; the URL and the instance name come in. */
  @Configuration
  @EnableScheduling
  @EnableSchedulerLock(defaultLockAtMostFor = "PT30S")
  static class Application {
    static final ThreadLocal<String[]> ARGS = new ThreadLocal<>();
    /** Each try of ShedLock's: [nanoTime before, nanoTime after, 1 if granted, the grant's token]. */
    static final Queue<long[]> TRIES = new ConcurrentLinkedQueue<>();

    @Bean(destroyMethod = "close")
    LockService lockService() {
      return LockProviders.connect(ARGS.get()[0]);
    }

    @Bean
    LockProvider lockProvider(LockService lockService) {
      LockProvider tumbler = new TumblerLockProvider(lockService, ARGS.get()[2]);
      // measures each try around the provider, for the lockAtLeastFor check; the lock is the provider's
      return configuration -> {
        long before = System.nanoTime();
        Optional<SimpleLock> lock = tumbler.lock(configuration);
        long after = System.nanoTime();
        long token = lock.isPresent() ? TumblerLockProvider.currentLease().orElseThrow().fencingToken() : 0;
        TRIES.add(new long[] {before, after, lock.isPresent() ? 1 : 0, token});
        return lock;
      };
    }

    @Bean
    ScheduledJob job() {
      return new ScheduledJob(ARGS.get()[1]);
    }
  }

  private static AnnotationConfigApplicationContext instance(String url, String name, String prefix) {
    Application.ARGS.set(new String[] {url, name, prefix});
    try {
      return new AnnotationConfigApplicationContext(Application.class);
    } finally {
      Application.ARGS.remove();
    }
  }

  @Test
  void onTheEmbeddedNativeNode() throws Exception {
    twoInstancesNeverOverlap("lock:native:local");
  }

  @Test
  void onRedis() throws Exception {
    twoInstancesNeverOverlap("lock:redis://" + redis.address());
  }

  private void twoInstancesNeverOverlap(String url) throws Exception {
    ScheduledJob.RUNS.clear();
    Application.TRIES.clear();
    String prefix = "shedlock-" + UUID.randomUUID() + "-";
    long closing;
    try (AnnotationConfigApplicationContext a = instance(url, "a", prefix);
        AnnotationConfigApplicationContext b = instance(url, "b", prefix)) {
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
      while (System.nanoTime() < end) {
        Thread.sleep(100);
      }
      closing = System.nanoTime();
    }
    List<ScheduledJob.Run> runs = new ArrayList<>(ScheduledJob.RUNS);
    runs.sort(Comparator.comparingLong(ScheduledJob.Run::start));
    String timeline = runs.stream().map(r -> r.instance() + "#" + r.token() + "@" + (r.start() - runs.get(0).start())
        / 1_000_000 + "ms").collect(Collectors.joining(", "));
    // 3 s at one run per 300 ms at least: a few; a busy machine may give fewer than ten
    assertTrue(runs.size() >= 3, "too few runs: " + timeline);
    for (int i = 1; i < runs.size(); i++) {
      ScheduledJob.Run before = runs.get(i - 1);
      ScheduledJob.Run next = runs.get(i);
      if (next.start() > closing) {
        break; // a closed service ended the lease of a run still going: what follows may overlap it
      }
      assertTrue(next.start() >= before.end(), "runs overlap: " + before + " and " + next + " in " + timeline);
      assertTrue(next.token() > before.token(), "token did not grow: " + before + " then " + next);
      // closing an instance's service ends the leases of the run it is in the middle of (SERVICE_CLOSED)
      assertTrue(before.validAtEnd() || before.end() > closing, "a run's lease ended before the run: " + before);
    }
    // lockAtLeastFor: a grant comes at least 300 ms after the start of the try that won the one before (the grants
    // in the order of their tokens, which is the order they were made in); not once an instance shuts down, since
    // closing its service gives its locks back at once, a lock kept for lockAtLeastFor too
    List<long[]> granted = Application.TRIES.stream().filter(t -> t[2] == 1 && t[1] < closing)
        .sorted(Comparator.comparingLong(t -> t[3])).toList();
    for (int i = 1; i < granted.size(); i++) {
      long gap = granted.get(i)[1] - granted.get(i - 1)[0];
      assertTrue(gap >= TimeUnit.MILLISECONDS.toNanos(ScheduledJob.AT_LEAST_MS),
          "a grant " + gap / 1_000_000 + " ms after the try that won the one before, under lockAtLeastFor");
    }
    assertTrue(Application.TRIES.size() > granted.size(), "no try was ever refused: the lock excluded nothing");
  }
}
