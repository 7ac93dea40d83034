package dev.tumbler.torture.backend;

import java.util.List;

/**
 * One server process of a backend the harness runs itself: a Redis server or sentinel, a ZooKeeper member, a
 * PostgreSQL server, a native member. The nemesis kills it (SIGKILL, as a crash: nothing is flushed), starts it
 * again on the same address with what it keeps on disk, and stops and resumes it (SIGSTOP, SIGCONT).
 */
public interface Server {

  /** A short name for reports: {@code redis-1}, {@code zk-2}, {@code member-3}. */
  String id();

  /** Kills the process at once (SIGKILL) and waits until it is gone. */
  void kill();

  /** Starts the process again (after {@link #kill}) and waits until it serves. */
  void start();

  /** Whether the process is alive. */
  boolean isRunning();

  /** The processes to stop for a pause: the server and its children (PostgreSQL's backends). */
  List<Long> pids();

  /** Stops the server (SIGSTOP): connections stay open, nothing answers. */
  default void pause() {
    Processes.pause(pids());
  }

  /** Undoes {@link #pause}. */
  default void resume() {
    Processes.resume(pids());
  }
}
