package dev.tumbler.cli;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.ProviderInfo;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code tumbler providers}: what {@code LockProviders} found, and what failed to load. */
@Command(name = "providers", mixinStandardHelpOptions = true,
    description = "Lists the installed lock providers, their capabilities, and providers that failed to load.")
final class ProvidersCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    List<ProviderInfo> providers = LockProviders.providers();
    if (providers.isEmpty()) {
      out.println("no providers installed");
    }
    for (ProviderInfo p : providers) {
      out.printf("%-10s %s %s%n", p.scheme(), p.name(), p.version());
      out.printf("%-10s %s%n", "", p.description());
      TreeSet<String> caps = new TreeSet<>();
      for (Capability c : p.capabilities()) {
        caps.add(c.name().toLowerCase(Locale.ROOT));
      }
      out.printf("%-10s capabilities: %s%n", "", String.join(", ", caps));
    }
    List<String> failures = LockProviders.loadFailures();
    if (!failures.isEmpty()) {
      out.println();
      out.println("failed to load:");
      for (String f : failures) {
        out.println("  " + f);
      }
    }
    out.flush();
    return failures.isEmpty() ? ExitCodes.OK : ExitCodes.CHECK_FAILED;
  }
}
