package dev.tumbler.cli;

import dev.tumbler.lock.tck.TckRunner;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code tumbler tck}: the compatibility kit against a live provider, through {@link TckRunner}. */
@Command(name = "tck", mixinStandardHelpOptions = true,
    description = {"Runs the Tumbler TCK against a lock URL and prints a table per group; writes JUnit XML.",
        "Groups that need fault injection are skipped (run the TCK from the provider's own tests for those).",
        "Use a backend that carries no production traffic."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:no test failed", "1:a test failed", "2:invalid arguments, or the URL cannot be opened"})
final class TckCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = "--url", required = true, paramLabel = "URL", description = "The provider to test.")
  String url;

  @Option(names = "--lease-time", paramLabel = "DURATION",
      description = "The lease term the TCK opens services with (default: the URL's leaseTime, else 2s).")
  String leaseTime;

  @Option(names = "--xml-dir", paramLabel = "DIR", defaultValue = "tck-reports",
      description = "Where the JUnit XML reports go. Default: ${DEFAULT-VALUE}.")
  Path xmlDir;

  @Option(names = "--group", paramLabel = "NAME",
      description = "Run only this group, or one test as Group.method (repeatable).")
  List<String> groups = new ArrayList<>();

  @Override
  public Integer call() {
    List<String> args = new ArrayList<>(List.of("--url", url, "--xml-dir", xmlDir.toString()));
    if (leaseTime != null) {
      args.addAll(List.of("--lease-time", leaseTime));
    }
    for (String g : groups) {
      args.addAll(List.of("--group", g));
    }
    PrintWriter out = spec.commandLine().getOut();
    try (PrintStream stream = new PrintStream(new LineForwarder(out), true, StandardCharsets.UTF_8)) {
      return TckRunner.run(args.toArray(String[]::new), stream);
    }
  }
}
