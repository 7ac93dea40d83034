package dev.tumbler.shedlock;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.torture.backend.Processes;
import dev.tumbler.torture.backend.RedisProcess;
import java.util.List;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * ShedLock's promise for an instance that dies while running, kept by a lease: an instance killed with SIGKILL
 * in the middle of a run (its own JVM, on a real Redis) leaves the lock held at first, and free within
 * {@code lockAtMostFor}, which is here the lease term.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class KilledInstanceTest {
  private static final Duration AT_MOST = Duration.ofSeconds(2);

  @Test
  void aKilledInstancesLockIsFreeWithinLockAtMostFor(@TempDir Path dir) throws Exception {
    try (RedisProcess redis = RedisProcess.start(dir, Processes.freePort(), List.of(), false)) {
      String url = "lock:redis://" + redis.address() + "?leaseTime=" + AT_MOST.toMillis() + "ms";
      LockService service = LockProviders.connect(url);
      TumblerLockProvider provider = new TumblerLockProvider(service);
      String name = "nightly-" + UUID.randomUUID();
      Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
          KilledInstanceMain.class.getName(), url, name,
          Long.toString(AT_MOST.toMillis()))
          .redirectErrorStream(true).start();
      try {
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        // a JVM start on a busy machine
        String running = CompletableFuture.supplyAsync(() -> {
          try {
            for (String line; (line = out.readLine()) != null; ) {
              if (line.startsWith("RUNNING")) {
                return line;
              }
            }
            return "ended without running";
          } catch (java.io.IOException e) {
            return e.toString();
          }
        }).get(120, TimeUnit.SECONDS);
        assertTrue(running.startsWith("RUNNING"), running);
        LockConfiguration config = new LockConfiguration(Instant.now(), name, AT_MOST, Duration.ZERO);
        assertTrue(provider.lock(config).isEmpty(), "the running instance's lock was granted to another");

        child.toHandle().destroyForcibly(); // SIGKILL: no release, no goodbye
        long killed = System.nanoTime();
        child.waitFor(30, TimeUnit.SECONDS);
        Optional<SimpleLock> next;
        while ((next = provider.lock(config)).isEmpty()) {
          Thread.sleep(20);
          assertTrue(System.nanoTime() - killed < AT_MOST.toNanos() + TimeUnit.SECONDS.toNanos(3),
              "still held 3 s past lockAtMostFor after the kill");
        }
        long token = TumblerLockProvider.currentLease().orElseThrow().fencingToken();
        assertTrue(token > Long.parseLong(running.substring("RUNNING ".length())), "the token went back");
        next.get().unlock();
      } finally {
        child.destroyForcibly();
        service.close();
      }
    }
  }
}
