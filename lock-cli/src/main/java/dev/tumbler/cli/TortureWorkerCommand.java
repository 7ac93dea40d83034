package dev.tumbler.cli;

import dev.tumbler.torture.Worker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Unmatched;

/**
 * {@code tumbler torture-worker}: one client process of {@code tumbler torture}, started by it (hidden: not for
 * people). Its arguments and exit codes are {@link Worker}'s.
 */
@Command(name = "torture-worker", hidden = true, description = "A client process of tumbler torture (started by it).")
final class TortureWorkerCommand implements Callable<Integer> {
  @Unmatched
  List<String> args = new ArrayList<>();

  @Override
  public Integer call() {
    return Worker.run(args.toArray(String[]::new));
  }
}
