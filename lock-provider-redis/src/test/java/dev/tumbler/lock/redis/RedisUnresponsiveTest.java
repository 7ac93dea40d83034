package dev.tumbler.lock.redis;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.LockTimeoutException;
import dev.tumbler.lock.spi.AbstractLockService;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import redis.clients.jedis.Jedis;

/**
 * A server that stops answering ({@code DEBUG SLEEP}): short waits on a free lock end by their wait plus the
 * answer grace, not after the client's time-outs and retries, and the uncertain grants of the abandoned
 * attempts are not leaked.
 */
@Timeout(120)
class RedisUnresponsiveTest {
  private static final long SLEEP_SECONDS = 8;

  @Test
  void shortWaitsOnAnUnresponsiveServerEndByTheirWaitPlusTheGrace() throws Exception {
    try (EmbeddedRedis redis = EmbeddedRedis.start();
        // the defaults a user would have: timeout 2s, a 5s lease
        LockService s = LockProviders.connect("lock:redis://" + redis.address() + "?leaseTime=5s")) {
      s.lock("warm").acquire().release(); // pooled connections exist, scripts are loaded
      Thread sleeper;
      try (Jedis admin = redis.client()) {
        admin.ping();
        sleeper = Thread.ofPlatform().start(() -> {
          // DEBUG SLEEP as an inline command on a plain socket: the server answers nothing until it wakes
          try (java.net.Socket raw = new java.net.Socket("127.0.0.1", redis.port())) {
            raw.getOutputStream().write(("DEBUG SLEEP " + SLEEP_SECONDS + "\r\n").getBytes(StandardCharsets.US_ASCII));
            raw.getOutputStream().flush();
            String reply = new java.io.BufferedReader(new java.io.InputStreamReader(raw.getInputStream(),
                StandardCharsets.US_ASCII)).readLine();
            if (!"+OK".equals(reply)) {
              throw new IllegalStateException("DEBUG SLEEP answered " + reply);
            }
          } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        });
      }
      Thread.sleep(300); // the server is now asleep for the rest of SLEEP_SECONDS
      long bound = AbstractLockService.ANSWER_GRACE_MILLIS + 1000;
      for (Duration w : List.of(Duration.ZERO, Duration.ofMillis(500))) {
        long t0 = System.nanoTime();
        Optional<Lease> l = s.lock("frozen").tryAcquire(w);
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        l.ifPresent(Lease::release);
        assertTrue(l.isEmpty(), "granted by a server that is asleep");
        assertTrue(ms <= w.toMillis() + bound, "tryAcquire(" + w.toMillis() + "ms) took " + ms + " ms; the bound is "
            + (w.toMillis() + bound) + " ms");
      }
      long t0 = System.nanoTime();
      CompletableFuture<Lease> async = s.lock("frozen").acquireAsync(Duration.ofMillis(500));
      ExecutionException e = assertThrows(ExecutionException.class, () -> async.get(500 + bound, TimeUnit.MILLISECONDS),
          "acquireAsync(500ms) did not end by its bound");
      assertTrue(e.getCause() instanceof LockTimeoutException, "acquireAsync(500ms) ended with " + e.getCause()
          + "; the server did not answer in time, which is a time-out");
      assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) <= 500 + bound);
      sleeper.join();
      // awake again: whatever the abandoned attempts were granted is released (or expires with its TTL)
      try (LockService other = LockProviders.connect("lock:redis://" + redis.address() + "?leaseTime=5s")) {
        Optional<Lease> l = other.lock("frozen").tryAcquire(Duration.ofSeconds(5 + 2));
        assertTrue(l.isPresent(), "an uncertain grant of an abandoned attempt was leaked");
        l.get().release();
      }
    }
  }
}
