package dev.tumbler.integration;

import dev.tumbler.torture.backend.Processes;
import dev.tumbler.torture.backend.RedisProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

/**
 * What this module's tests share: one real Redis server (the binary of {@code org.signal:embedded-redis} in a
 * process of its own, as the torture harness runs it), started by the first test that asks and stopped when the
 * test JVM ends; and the start of an application context whose configuration reads its arguments from a
 * thread-local while it is built.
 */
final class TestBackends {
  private static RedisProcess redis;

  private TestBackends() {}

  /** The shared Redis server's {@code host:port}. */
  static synchronized String redisAddress() {
    if (redis == null) {
      try {
        Path dir = Files.createTempDirectory(Path.of("target"), "redis-");
        redis = RedisProcess.start(dir, Processes.freePort(), List.of(), false);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      Runtime.getRuntime().addShutdownHook(new Thread(redis::close, "redis-stop"));
    }
    return redis.address();
  }

  /** A started context of {@code configuration}, which reads {@code args} from {@code holder} as it is built. */
  static <T> AnnotationConfigApplicationContext context(Class<?> configuration, ThreadLocal<T> holder, T args) {
    holder.set(args);
    try {
      return new AnnotationConfigApplicationContext(configuration);
    } finally {
      holder.remove();
    }
  }
}
