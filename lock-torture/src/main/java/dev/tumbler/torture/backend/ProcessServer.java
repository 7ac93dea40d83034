package dev.tumbler.torture.backend;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * A server that is one process the harness started (a Redis server, a ZooKeeper member, a native member): killed
 * with SIGKILL, its pid paused and resumed. Thread safe.
 */
public abstract class ProcessServer implements Server {
  private Process process;

  /** Starts {@code builder}'s process as this server's (killed with the JVM if still running then). */
  protected final synchronized Process launch(ProcessBuilder builder) {
    try {
      process = Processes.start(builder);
      return process;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + id(), e);
    }
  }

  @Override
  public final synchronized void kill() {
    Processes.kill(process);
    process = null;
  }

  @Override
  public final synchronized boolean isRunning() {
    return process != null && process.isAlive();
  }

  @Override
  public final synchronized List<Long> pids() {
    return process == null ? List.of() : List.of(process.pid());
  }
}
