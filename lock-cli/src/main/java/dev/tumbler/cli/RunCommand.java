package dev.tumbler.cli;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.spi.LockUrl;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code tumbler run}: a distributed {@code flock}. Acquires the lock, runs the command with this
 * process's standard streams, passes its exit code through, and releases the lock when the command ends.
 * If this process is told to stop (SIGINT, SIGTERM), it kills the command and releases the lock first; if
 * the lease is lost while the command runs, it kills the command and exits with 76.
 *
 * <p>A SIGKILL (or a crash) cannot be handled in this JVM, and then nothing renews the lease: a
 * {@linkplain Watchdog watchdog} process, whose standard input is a pipe from this JVM, sees that pipe close
 * when this process dies, however it dies, and stops the command's process tree well before the lease can
 * expire.
 */
@Command(name = "run", mixinStandardHelpOptions = true,
    description = {"Runs a command while holding a lock: a distributed flock.",
        "Example: tumbler run --url lock:redis://localhost:6379 --lock nightly-report -- ./report.sh --full",
        "The command's exit code is passed through. Secrets: --secret-file or $" + Secrets.SECRET_ENV
            + ", --password-file or $" + Secrets.PASSWORD_ENV + ", --client-secret-file or $"
            + Secrets.CLIENT_SECRET_ENV + " (never on the command line)."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0-255:the command's own exit code (128+N when it was killed by signal N)",
        "2:invalid command-line usage",
        "69:the lock service is unavailable, or failed a request",
        "70:internal error (a bug; --verbose shows the stack trace)",
        "75:the lock was not acquired within --wait",
        "76:the lease was lost while the command ran; the command was killed",
        "77:the backend refused the credentials (password, client secret)",
        "78:invalid lock URL or unreadable secret, or a backend not set up for it (a missing lock table)",
        "127:the command could not be started",
        "130, 143:tumbler itself was interrupted (SIGINT, SIGTERM); the command was killed, the lock released"})
final class RunCommand implements Callable<Integer> {
  /** How long a command may take to end after SIGTERM before it is killed outright. */
  static final Duration KILL_GRACE = Duration.ofSeconds(5);

  @Spec
  CommandSpec spec;

  @Option(names = "--url", required = true, paramLabel = "URL",
      description = "The lock service, e.g. lock:zookeeper://localhost:2181 or lock:native:local.")
  String url;

  @Option(names = "--lock", required = true, paramLabel = "NAME", description = "The lock's name.")
  String lock;

  @Option(names = "--wait", defaultValue = "30s", converter = DurationConverter.class, paramLabel = "DURATION",
      description = "How long to wait for the lock (0s: one attempt). Default: ${DEFAULT-VALUE}.")
  Duration wait;

  @Option(names = "--secret-file", paramLabel = "FILE",
      description = "A file holding the provider's 'secret' (else $" + Secrets.SECRET_ENV + ").")
  Path secretFile;

  @Option(names = "--password-file", paramLabel = "FILE",
      description = "A file holding the provider's 'password' (else $" + Secrets.PASSWORD_ENV + ").")
  Path passwordFile;

  @Option(names = "--client-secret-file", paramLabel = "FILE",
      description = "A file holding a native cluster's client credential, 'clientSecret' (else $"
          + Secrets.CLIENT_SECRET_ENV + "), for a thin client's URL.")
  Path clientSecretFile;

  @Parameters(arity = "1..*", paramLabel = "COMMAND", description = "The command and its arguments (after --).")
  List<String> command;

  /** The environment secrets are read from; tests replace it. */
  Map<String, String> env = System.getenv();

  @Override
  public Integer call() throws InterruptedException {
    PrintWriter err = spec.commandLine().getErr();
    warnOnSecretInUrl(err);
    Properties props = Secrets.properties(secretFile, passwordFile, clientSecretFile, env);
    try (LockService service = Failures.connect(url, props)) {
      Optional<Lease> acquired = service.lock(lock).tryAcquire(wait);
      if (acquired.isEmpty()) {
        err.println("tumbler run: lock '" + lock + "' not acquired within " + wait.toMillis() + " ms ("
            + service.info().url() + ")");
        err.flush();
        return ExitCodes.LOCK_TIMEOUT;
      }
      Lease lease = acquired.get();
      try {
        return runHolding(lease, err);
      } finally {
        lease.release();
      }
    }
  }

  private int runHolding(Lease lease, PrintWriter err) throws InterruptedException {
    // the watchdog first, so that the command never runs unwatched (it learns the command's pid at once)
    Watchdog watchdog;
    try {
      watchdog = Watchdog.start(watchdogGrace(lease));
    } catch (IOException e) {
      // without the watchdog a SIGKILL to this JVM would leave the command running unprotected: do not run it
      err.println("tumbler run: cannot start the watchdog that stops the command if tumbler dies ("
          + e.getMessage() + "); the command was not started");
      err.flush();
      return ExitCodes.CANNOT_EXECUTE;
    }
    try {
      Process child;
      try {
        child = new ProcessBuilder(command).inheritIO().start();
      } catch (IOException e) {
        err.println("tumbler run: cannot start " + command.get(0) + ": " + e.getMessage());
        err.flush();
        return ExitCodes.CANNOT_EXECUTE;
      }
      if (!watchdog.watch(child)) {
        stop(child);
        err.println("tumbler run: the watchdog that stops the command if tumbler dies has ended; the command was "
            + "stopped");
        err.flush();
        return ExitCodes.CANNOT_EXECUTE;
      }
      return runWatched(lease, child, err);
    } finally {
      watchdog.disarm();
    }
  }

  /**
   * How long the watchdog lets the command end after SIGTERM before SIGKILL: {@link #KILL_GRACE}, but at most
   * a quarter of the lease's term, so that the command is gone before the lease could expire.
   */
  static Duration watchdogGrace(Lease lease) {
    Duration quarter = lease.remaining().dividedBy(4);
    return quarter.compareTo(KILL_GRACE) < 0 ? quarter : KILL_GRACE;
  }

  private int runWatched(Lease lease, Process child, PrintWriter err) throws InterruptedException {
    AtomicReference<LeaseLostEvent> lost = new AtomicReference<>();
    lease.onLost(event -> {
      lost.set(event);
      err.println("tumbler run: lease on '" + lock + "' lost (" + event.reason() + ": " + event.detail()
          + "); stopping the command");
      err.flush();
      stop(child);
    });
    // on SIGINT/SIGTERM: kill the command first, then give the lock back (close releases it as well)
    Thread hook = new Thread(() -> {
      stop(child);
      lease.release();
    }, "tumbler-run-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      int code = child.waitFor();
      return lost.get() != null ? ExitCodes.LEASE_LOST : code;
    } catch (InterruptedException e) {
      stop(child);
      throw e;
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException e) {
        // already shutting down: the hook runs
      }
    }
  }

  /** SIGTERM to the command and its descendants, then SIGKILL after {@link #KILL_GRACE}. */
  static void stop(Process child) {
    List<ProcessHandle> descendants = child.descendants().toList();
    child.destroy();
    descendants.forEach(ProcessHandle::destroy);
    try {
      if (!child.waitFor(KILL_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
        child.destroyForcibly();
      }
    } catch (InterruptedException e) {
      child.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    descendants.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
  }

  private void warnOnSecretInUrl(PrintWriter err) {
    LockUrl parsed = LockUrl.parse(url);
    boolean secretInUrl = parsed.password().isPresent()
        || parsed.parameters().keySet().stream().anyMatch(LockUrl::isSecretParameter);
    if (secretInUrl) {
      err.println("tumbler run: warning: the URL carries a secret, which other users can see with ps; use "
          + "--secret-file, --password-file or the environment instead");
      err.flush();
    }
  }
}
