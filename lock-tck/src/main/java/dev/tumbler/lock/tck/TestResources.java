package dev.tumbler.lock.tck;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What one test opened and started: its services, closed after it, and its background tasks, interrupted and
 * joined after it. Each test has its own, so that tests running at the same time never close each other's
 * services. Thread safe.
 */
final class TestResources {
  final List<LockService> opened = new CopyOnWriteArrayList<>();
  private final List<Thread> threads = new CopyOnWriteArrayList<>();

  /** A fresh service of {@code target}, closed after the test. */
  LockService open(TckTarget target) {
    LockService s = target.open();
    assertNotNull(s, "TckTarget.open() returned null");
    opened.add(s);
    return s;
  }

  /** A service on {@code target}'s URL with {@code overrides} as its connect properties, closed after the test. */
  LockService connect(TckTarget target, Properties overrides) {
    LockService s = LockProviders.connect(target.url().orElseThrow(), overrides);
    assertNotNull(s, "LockProviders.connect returned null");
    opened.add(s);
    return s;
  }

  /** A background task on a platform thread of its own; interrupted and joined after the test. */
  <T> LockTck.Job<T> start(String what, Callable<T> body) {
    CompletableFuture<T> result = new CompletableFuture<>();
    Thread t = Thread.ofPlatform().daemon().name("tck-" + what).unstarted(() -> {
      try {
        result.complete(body.call());
      } catch (Throwable e) {
        result.completeExceptionally(e);
      }
    });
    threads.add(t);
    t.start();
    return new LockTck.Job<>(t, result);
  }

  /** Interrupts the tasks, closes the services, then joins the tasks (each for up to the slack). */
  void closeAll() throws InterruptedException {
    for (Thread t : threads) {
      t.interrupt();
    }
    for (LockService s : opened) {
      try {
        s.close();
      } catch (RuntimeException ignored) {
        // the test may have broken it on purpose
      }
    }
    opened.clear();
    for (Thread t : threads) {
      t.join(LockTck.SLACK.toMillis());
    }
    threads.clear();
  }
}
