package dev.tumbler.cli;

import dev.tumbler.lock.spi.TumblerVersion;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.ScopeType;

/**
 * The {@code tumbler} command: a demo of the native cluster, a distributed {@code flock}, a standalone
 * peer, the list of installed providers, and the TCK against a live provider. Start it with the
 * {@code ./tumbler} launcher at the root of the repository.
 */
@Command(name = "tumbler", mixinStandardHelpOptions = true, versionProvider = Tumbler.Version.class,
    description = "Distributed locks from the command line.",
    subcommands = {DemoCommand.class, RunCommand.class, NodeCommand.class, ProvidersCommand.class, LocksCommand.class, TckCommand.class,
        TortureCommand.class, TortureWorkerCommand.class, HelpCommand.class},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:success (for run: the command's own exit code is passed through)",
        "1:a demo check failed (fencing tokens not increasing, or two holders at once)",
        "2:invalid command-line usage",
        "3:locks: the provider cannot list the locks it holds",
        "69:the lock service is unavailable, or failed a request",
        "70:internal error (a bug; --verbose shows the stack trace)",
        "75:run: the lock was not acquired within --wait",
        "76:run: the lease was lost while the command ran; the command was killed",
        "77:the backend refused the credentials (password, client secret)",
        "78:invalid lock URL, configuration or secret, or a backend not set up for it (a missing lock table)",
        "127:run: the command could not be started"})
public final class Tumbler implements java.util.concurrent.Callable<Integer> {
  @picocli.CommandLine.Spec
  picocli.CommandLine.Model.CommandSpec spec;

  /** The option that adds a failure's stack trace to its one line; every subcommand takes it. */
  static final String VERBOSE = "--verbose";

  @Option(names = VERBOSE, scope = ScopeType.INHERIT,
      description = "On a failure, print the stack trace after its one-line message.")
  boolean verbose;

  private Tumbler() {}

  /** Without a subcommand: the usage, on stderr, and the usage exit code. */
  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return ExitCodes.USAGE;
  }

  public static void main(String[] args) {
    System.exit(execute(args));
  }

  /** Runs the command line and returns its exit code, without exiting. */
  public static int execute(String... args) {
    return commandLine().execute(args);
  }

  /** The configured command line, for tests that capture its output. */
  static CommandLine commandLine() {
    quietLogging();
    CommandLine cl = new CommandLine(new Tumbler());
    // everything after the command name of `run` belongs to the command, options included
    cl.getSubcommands().get("run").setStopAtPositional(true);
    cl.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
      PrintWriter err = commandLine.getErr();
      String name = commandLine.getCommandSpec().qualifiedName();
      Failures.Verdict verdict = Failures.of(e);
      if (verbose(parseResult)) {
        e.printStackTrace(err);
      }
      err.println(name + ": " + verdict.line());
      err.flush();
      return verdict.code();
    });
    return cl;
  }

  /** Whether {@value #VERBOSE} was given, before the subcommand or after it. */
  private static boolean verbose(ParseResult parsed) {
    for (ParseResult p = parsed; p != null; p = p.subcommand()) {
      if (p.hasMatchedOption(VERBOSE)) {
        return true;
      }
    }
    return false;
  }

  /** Providers log through SLF4J; the command line shows warnings and errors only, unless told otherwise. */
  private static void quietLogging() {
    if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
      System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    }
    if (System.getProperty("org.slf4j.simpleLogger.log.org.apache.zookeeper") == null) {
      System.setProperty("org.slf4j.simpleLogger.log.org.apache.zookeeper", "error");
    }
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"tumbler " + TumblerVersion.current(),
          "Java " + System.getProperty("java.version") + " (" + System.getProperty("java.home") + ")"};
    }
  }
}
