package dev.tumbler.lock.boot;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.time.Duration;
import java.util.stream.Collectors;

/**
 * Connects to the URL in {@code args[0]}, takes and releases one lock, and prints one line: the provider, the
 * module its service class is in, the lease's fencing token, and the packages that module exports. Any
 * failure ends the JVM with a stack trace and a non-zero status.
 */
public final class Boot {
  private Boot() {
  }

  public static void main(String[] args) throws InterruptedException {
    try (LockService service = LockProviders.connect(args[0])) {
      Lease lease = service.lock("module-path").tryAcquire(Duration.ofSeconds(30))
          .orElseThrow(() -> new IllegalStateException("not granted in 30 s"));
      long token = lease.fencingToken();
      lease.release();
      Module module = service.getClass().getModule();
      String exports = module.getDescriptor().exports().stream().map(e -> e.source()).sorted()
          .collect(Collectors.joining(","));
      System.out.println("booted " + service.info().provider() + " " + module.getName() + " token " + token
          + " exports [" + exports + "]");
    }
  }
}
