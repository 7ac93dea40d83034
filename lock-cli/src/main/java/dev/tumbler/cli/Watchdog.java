package dev.tumbler.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A {@code /bin/sh} process that stops {@code tumbler run}'s command if the tumbler JVM dies without
 * stopping it itself (SIGKILL, a crash, the OOM killer): a JVM cannot handle its own SIGKILL, and after it
 * nothing renews the lease.
 *
 * <p>The watchdog's standard input is a pipe whose only writer is this JVM. When the JVM ends, however it
 * ends, the kernel closes that pipe and the watchdog reads end-of-file: it then sends SIGTERM to the
 * command and every descendant it has, and SIGKILL to whatever is left after the grace. When the command
 * ends normally, {@link #disarm()} writes a line that makes the watchdog exit without a signal.
 *
 * <p>Why not the alternatives: Linux's parent-death signal ({@code prctl(PR_SET_PDEATHSIG)}) fires when the
 * <em>thread</em> that started the child ends, not the process, cannot be set from Java 21 without native
 * code, and does not exist elsewhere; a new process group or session for the command would take it off the
 * terminal (Ctrl-C, interactive commands). The pipe needs only {@code sh} and {@code ps}.
 *
 * <p>What it cannot do: a descendant that has left the command's tree (a daemon that double-forked) is not
 * found, as with {@link RunCommand#stop}; and if the watchdog itself is killed, the command is unprotected
 * (tumbler warns when that happens).
 */
final class Watchdog {
  // The first line is the command's pid (or "disarm" if it did not start); then a line "disarm" or end-of-file.
  // $1: the grace in tenths of a second; $2: tumbler's pid, for the message.
  // INT and HUP are ignored: Ctrl-C and a closed terminal are tumbler's to handle, and must not disarm this.
  private static final String SCRIPT = """
      trap '' INT HUP
      read -r pid || exit 0
      case "$pid" in ''|*[!0-9]*) exit 0 ;; esac
      if read -r word && [ "$word" = disarm ]; then exit 0; fi
      set -- "$pid" "$1" "$2"
      tree() {
        ps -A -o pid= -o ppid= | awk -v root="$1" '
          { parent[$1] = $2; pids[NR] = $1 }
          END {
            keep[root] = 1
            for (changed = 1; changed; ) {
              changed = 0
              for (i in pids) { p = pids[i]; if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; changed = 1 } }
            }
            for (p in keep) print p
          }'
      }
      echo "tumbler run: tumbler (pid $3) ended without stopping its command; stopping the command (pid $1)" >&2
      victims=$(tree "$1")
      kill -TERM $victims 2>/dev/null
      n=0
      while [ "$n" -lt "$2" ]; do
        alive=
        for p in $victims; do kill -0 "$p" 2>/dev/null && alive=yes; done
        [ -z "$alive" ] && exit 0
        sleep 0.1
        n=$((n + 1))
      done
      kill -KILL $victims $(tree "$1") 2>/dev/null
      exit 0
      """;

  private final Process process;
  private final OutputStream pipe;
  private volatile boolean disarmed;

  private Watchdog(Process process) {
    this.process = process;
    this.pipe = process.getOutputStream();
  }

  /**
   * Starts the watchdog, before the command, so that the command never runs unwatched: {@link #watch} then
   * names the command. If this JVM dies, the command gets SIGTERM, then SIGKILL after {@code grace}.
   */
  static Watchdog start(Duration grace) throws IOException {
    long tenths = Math.max(1, grace.toMillis() / 100);
    Process p = new ProcessBuilder("/bin/sh", "-c", SCRIPT, "tumbler-watchdog", Long.toString(tenths),
        Long.toString(ProcessHandle.current().pid()))
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(ProcessBuilder.Redirect.INHERIT)
        .start();
    return new Watchdog(p);
  }

  /**
   * Names the command to stop if this JVM dies. Returns false if the watchdog cannot be told (it has ended):
   * the command is then unprotected, and the caller stops it.
   */
  boolean watch(Process command) {
    try {
      pipe.write((command.pid() + "\n").getBytes(StandardCharsets.US_ASCII));
      pipe.flush();
    } catch (IOException e) {
      return false;
    }
    process.onExit().thenRun(() -> {
      if (!disarmed && command.isAlive()) {
        System.err.println("tumbler run: warning: the watchdog (pid " + process.pid() + ") ended; if tumbler is "
            + "now killed with SIGKILL, the command (pid " + command.pid() + ") keeps running");
      }
    });
    return process.isAlive();
  }

  /** The command has ended (or was stopped): the watchdog exits without a signal. Idempotent. */
  void disarm() {
    if (disarmed) {
      return;
    }
    disarmed = true;
    try {
      pipe.write("disarm\n".getBytes(StandardCharsets.US_ASCII));
      pipe.close();
    } catch (IOException e) {
      // the watchdog is gone already
    }
    try {
      if (!process.waitFor(2, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  /** The watchdog's process, for tests. */
  ProcessHandle handle() {
    return process.toHandle();
  }
}
