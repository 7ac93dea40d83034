package dev.tumbler.torture.backend;

import dev.tumbler.lock.tck.LoopbackPorts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/** What every server set-up needs: free ports, temporary directories, waiting for a condition, signals. */
public final class Processes {
  /** Every process started through {@link #start}, killed when this JVM exits if it still runs. */
  private static final java.util.Set<Process> OWNED = java.util.concurrent.ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> OWNED.forEach(p -> {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }), "torture-processes-cleanup"));
  }

  private Processes() {}

  /**
   * Starts {@code builder}'s process and keeps it on the list of processes killed when this JVM exits (a server
   * does not read its standard input, so it would outlive a harness that dies otherwise).
   */
  public static Process start(ProcessBuilder builder) throws IOException {
    Process p = builder.start();
    OWNED.add(p);
    p.onExit().thenRun(() -> OWNED.remove(p));
    return p;
  }

  /**
   * The failure of a server process that ended while it was awaited: names {@code log} and quotes its last lines
   * (why a server stops at start-up, such as a port in use, is there; the log itself may be deleted with its directory).
   */
  public static IllegalStateException exited(String what, Path log) {
    String tail;
    try (Stream<String> lines = Files.lines(log)) {
      List<String> all = lines.filter(l -> !l.isBlank()).toList();
      tail = String.join(" | ", all.subList(Math.max(0, all.size() - 3), all.size()).stream()
          .map(l -> l.length() > 200 ? l.substring(0, 200) + "…" : l.strip()).toList());
    } catch (IOException | UncheckedIOException e) {
      tail = "(unreadable: " + e.getMessage() + ")";
    }
    return new IllegalStateException(what + " exited; see " + log + "; it ends: " + tail);
  }

  /** A loopback port below the ephemeral range that was free a moment ago ({@link LoopbackPorts}). */
  public static int freePort() {
    return LoopbackPorts.freePort();
  }

  /** A new temporary directory. */
  public static Path tempDir(String prefix) {
    try {
      return Files.createTempDirectory(prefix);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Deletes {@code dir} and everything below it; what cannot be deleted is left behind (it is temporary). */
  public static void delete(Path dir) {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException | UncheckedIOException e) {
      // a temporary directory left behind is harmless
    }
  }

  /**
   * Polls {@code condition} every 50 ms until it holds, for at most {@code max}.
   *
   * @throws IllegalStateException naming {@code what} when {@code max} passes
   */
  public static void await(Duration max, String what, BooleanSupplier condition) {
    long until = System.nanoTime() + max.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - until > 0) {
        throw new IllegalStateException("gave up waiting " + max.toSeconds() + " s for " + what);
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted waiting for " + what, e);
      }
    }
  }

  /** {@code process} and all its descendants, parents first. */
  public static List<Long> tree(ProcessHandle process) {
    List<Long> pids = new ArrayList<>();
    pids.add(process.pid());
    process.descendants().forEach(p -> pids.add(p.pid()));
    return pids;
  }

  /** Stops the processes (SIGSTOP): they run no instruction until {@link #resume}. */
  public static void pause(Collection<Long> pids) {
    signal("STOP", pids);
  }

  /** Lets stopped processes run again (SIGCONT). */
  public static void resume(Collection<Long> pids) {
    signal("CONT", pids);
  }

  /** Sends {@code SIG<name>} with {@code kill(1)}; a process that is already gone is skipped. */
  static void signal(String name, Collection<Long> pids) {
    if (pids.isEmpty()) {
      return;
    }
    List<String> cmd = new ArrayList<>(List.of("kill", "-" + name));
    for (long p : pids) {
      cmd.add(Long.toString(p));
    }
    try {
      Process k = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .start();
      if (!k.waitFor(10, TimeUnit.SECONDS)) {
        k.destroyForcibly();
        throw new IllegalStateException("kill -" + name + " did not return");
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run kill -" + name, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted sending SIG" + name, e);
    }
  }

  /** SIGKILLs {@code process} and its descendants and waits until it is gone (at most 10 s). */
  public static void kill(Process process) {
    if (process == null) {
      return;
    }
    List<ProcessHandle> children = process.descendants().toList();
    process.destroyForcibly();
    children.forEach(ProcessHandle::destroyForcibly);
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
