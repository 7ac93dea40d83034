package dev.tumbler.cli;

import dev.tumbler.lock.HeldLock;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ServiceInfo;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tumbler locks}: the grants the backend holds under the URL's namespace, as
 * {@link LockService#heldLocks()} lists them, in a table. A provider that cannot list them (the native
 * provider) gets a message that says so and exit code {@link ExitCodes#UNSUPPORTED}, never an empty table.
 */
@Command(name = "locks", mixinStandardHelpOptions = true,
    description = {"Lists the locks held under the URL's namespace: name, kind, holder, fencing token, time left.",
        "Secrets: --secret-file or $" + Secrets.SECRET_ENV + ", --password-file or $" + Secrets.PASSWORD_ENV
            + " (never on the command line)."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:listed (possibly nothing)",
        "2:invalid command-line usage",
        "3:the provider cannot list the locks it holds",
        "69:the lock service is unavailable, or failed a request",
        "70:internal error (a bug; --verbose shows the stack trace)",
        "77:the backend refused the credentials (password, client secret)",
        "78:invalid lock URL or unreadable secret, or a backend not set up for it (a missing lock table)"})
final class LocksCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = "--url", required = true, paramLabel = "URL",
      description = "The lock service, e.g. lock:redis://localhost:6379?namespace=billing.")
  String url;

  @Option(names = "--secret-file", paramLabel = "FILE",
      description = "A file holding the provider's 'secret' (else $" + Secrets.SECRET_ENV + ").")
  Path secretFile;

  @Option(names = "--password-file", paramLabel = "FILE",
      description = "A file holding the provider's 'password' (else $" + Secrets.PASSWORD_ENV + ").")
  Path passwordFile;

  /** The environment secrets are read from; tests replace it. */
  Map<String, String> env = System.getenv();

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    Properties props = Secrets.properties(secretFile, passwordFile, env);
    try (LockService service = Failures.connect(url, props)) {
      ServiceInfo info = service.info();
      Optional<List<HeldLock>> listed = service.heldLocks();
      if (listed.isEmpty()) {
        err.println("tumbler locks: the " + info.provider() + " provider cannot list the locks it holds ("
            + info.url() + ")");
        err.flush();
        return ExitCodes.UNSUPPORTED;
      }
      out.print(render(info, listed.get()));
      out.flush();
      return ExitCodes.OK;
    }
  }

  /** The table, with a note on what the token column means when it is not the holders' own. */
  static String render(ServiceInfo info, List<HeldLock> held) {
    StringBuilder sb = new StringBuilder();
    sb.append(held.size()).append(held.size() == 1 ? " lock" : " locks").append(" held under ").append(info.url())
        .append('\n');
    if (held.isEmpty()) {
      return sb.toString();
    }
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"NAME", "KIND", "HOLDER", "TOKEN", "REMAINING"});
    boolean lastIssued = false;
    for (HeldLock h : held) {
      String token = "-";
      if (h.token().isPresent()) {
        token = Long.toString(h.token().getAsLong());
        if (!h.tokenIsHolders()) {
          token += "*";
          lastIssued = true;
        }
      }
      rows.add(new String[] {h.name(), h.kind(), h.holder(), token, h.remaining().map(LocksCommand::duration)
          .orElse("(session)")});
    }
    sb.append(TextTable.render(rows, "  ", true));
    if (lastIssued) {
      sb.append("* the last token issued for the name; the holder's own is at most this\n");
    }
    return sb.toString();
  }

  private static String duration(Duration d) {
    long ms = d.toMillis();
    return ms < 10_000 ? String.format(Locale.ROOT, "%.1fs", ms / 1000.0) : (ms / 1000) + "s";
  }
}
