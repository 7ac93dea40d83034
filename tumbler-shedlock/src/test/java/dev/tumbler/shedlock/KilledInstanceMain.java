package dev.tumbler.shedlock;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.time.Duration;
import java.time.Instant;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;

/**
 * An instance that takes a ShedLock lock and runs until it is killed: {@code <url> <name> <lockAtMostFor ms>}.
 * Prints {@code RUNNING <token>} once inside the run.
 */
public final class KilledInstanceMain {
  private KilledInstanceMain() {}

  public static void main(String[] args) throws Throwable {
    LockService service = LockProviders.connect(args[0]);
    DefaultLockingTaskExecutor executor = new DefaultLockingTaskExecutor(new TumblerLockProvider(service));
    executor.executeWithLock((Runnable) () -> {
      System.out.println("RUNNING " + TumblerLockProvider.currentLease().orElseThrow().fencingToken());
      System.out.flush();
      try {
        Thread.sleep(Long.MAX_VALUE);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, new LockConfiguration(Instant.now(), args[1], Duration.ofMillis(Long.parseLong(args[2])), Duration.ZERO));
  }
}
