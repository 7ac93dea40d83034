package dev.tumbler.torture.backend;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * How to start another JVM on this one's class path: the same {@code java}, the same class path, and options that
 * suit a small process on a shared machine (a small heap, the serial collector, C1 only: less CPU and a faster
 * start, which a worker or a server of a torture run needs more than peak speed).
 *
 * @param java the {@code java} executable
 * @param classPath the class path
 * @param tumblerMain the class whose {@code main} takes {@code tumbler}'s subcommands ({@code node},
 *     {@code torture-worker}), or null where there is none (then only plain main classes can be started)
 * @param options JVM options for every child
 */
public record JavaCommand(Path java, String classPath, String tumblerMain, List<String> options) {

  /**
   * The options every child gets unless told otherwise: a small heap, C1 only (a child's work is waiting, not
   * computing), and the default collector: a child holds leases, and on a busy machine a serial collection stops
   * every thread of it for as long as its one thread waits for a core (up to 1.6 s seen in the suite's JVMs), long
   * enough to cost a short lease its renewal; G1's two threads kept those pauses to a few hundred milliseconds.
   */
  public static final List<String> DEFAULT_OPTIONS = List.of("-Xmx256m", "-XX:TieredStopAtLevel=1",
      "-XX:-UsePerfData", "-Xshare:auto");

  public JavaCommand {
    Objects.requireNonNull(java, "java");
    Objects.requireNonNull(classPath, "classPath");
    options = List.copyOf(options);
  }

  /** This JVM's {@code java} and class path, with {@code tumblerMain} for the tumbler subcommands. */
  public static JavaCommand current(String tumblerMain) {
    return new JavaCommand(Path.of(System.getProperty("java.home"), "bin", "java"),
        System.getProperty("java.class.path"), tumblerMain, DEFAULT_OPTIONS);
  }

  /** {@code java <options> <extra> -cp <class path> <main> <args>}. */
  public List<String> main(String mainClass, List<String> extraOptions, List<String> args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(java.toString());
    cmd.addAll(options);
    cmd.addAll(extraOptions);
    cmd.add("-cp");
    cmd.add(classPath);
    cmd.add(mainClass);
    cmd.addAll(args);
    return cmd;
  }

  /**
   * {@code tumbler <subcommand> <args>} in a child JVM.
   *
   * @throws IllegalStateException if there is no {@code tumblerMain}
   */
  public List<String> tumbler(List<String> extraOptions, List<String> args) {
    if (tumblerMain == null) {
      throw new IllegalStateException("this needs the tumbler command line on the class path (run it as "
          + "`tumbler torture`): " + String.join(" ", args));
    }
    return main(tumblerMain, extraOptions, args);
  }
}
