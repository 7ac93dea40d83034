package dev.tumbler.cli;

import dev.tumbler.cli.Secrets.SecretException;
import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.LockTimeoutException;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.TumblerVersion;
import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;

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
        "69:the lock service is unavailable",
        "70:internal error",
        "75:run: the lock was not acquired within --wait",
        "76:run: the lease was lost while the command ran; the command was killed",
        "78:invalid lock URL, configuration or secret",
        "127:run: the command could not be started"})
public final class Tumbler implements java.util.concurrent.Callable<Integer> {
  @picocli.CommandLine.Spec
  picocli.CommandLine.Model.CommandSpec spec;

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
      int code;
      if (e instanceof InvalidLockUrlException || e instanceof SecretException
          || e instanceof NodeConfig.ConfigException) {
        code = ExitCodes.CONFIG;
      } else if (e instanceof ServiceUnavailableException) {
        code = ExitCodes.UNAVAILABLE;
      } else if (e instanceof LockTimeoutException) {
        code = ExitCodes.LOCK_TIMEOUT;
      } else if (e instanceof IllegalArgumentException) {
        code = ExitCodes.USAGE;
      } else {
        e.printStackTrace(err);
        code = ExitCodes.SOFTWARE;
      }
      err.println(name + ": " + e.getMessage());
      err.flush();
      return code;
    });
    return cl;
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
