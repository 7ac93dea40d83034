package dev.tumbler.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import redis.embedded.RedisServer;

/**
 * {@code tumbler run} in its own JVM on a real Redis server with {@code leaseTime=3s}, killed with SIGKILL while
 * its command runs: the command (and what it started) must be gone before the lease expires and another client
 * is granted the lock, or two commands could run at once.
 */
@Timeout(180)
@EnabledOnOs({OS.LINUX, OS.MAC})
class RunCommandKillTest {
  /** The lease term of the run under test: the command must be gone within it. */
  private static final Duration LEASE_TIME = Duration.ofSeconds(3);

  private static RedisServer redis;
  private static int port;

  @BeforeAll
  static void startRedis() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    redis = RedisServer.builder().port(port).bind("127.0.0.1").setting("save \"\"").setting("appendonly no").build();
    redis.start();
  }

  @AfterAll
  static void stopRedis() throws IOException {
    if (redis != null) {
      redis.stop();
    }
  }

  @Test
  void aKilledTumblerTakesItsCommandWithIt(@TempDir Path dir) throws Exception {
    String url = "lock:redis://127.0.0.1:" + port + "?leaseTime=" + LEASE_TIME.toSeconds() + "s";
    Path beats = dir.resolve("beats");
    Path log = dir.resolve("tumbler.log");
    // a command with a descendant that ignores nothing: a background sleep, and a loop writing heartbeats
    String script = "sleep 600 & while :; do echo beat >> '" + beats + "'; sleep 0.05; done";
    Process tumbler = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), Tumbler.class.getName(), "run",
        "--url", url, "--lock", "job", "--",
        "sh", "-c", script)
        .redirectErrorStream(true).redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.PIPE)
        .start();
    List<ProcessHandle> tree;
    List<ProcessHandle> watchdog;
    try {
      // a JVM start on a busy machine: wait for the command's heartbeats and its background sleep
      long startDeadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
      // the watchdog starts before the command and is told its pid as soon as it starts
      while (!(Files.exists(beats) && Files.size(beats) > 0 && has(tumbler, "sleep 600")
          && has(tumbler, "tumbler-watchdog"))) {
        assertTrue(tumbler.isAlive(), "tumbler ended before its command started: " + read(log));
        assertTrue(System.nanoTime() - startDeadline < 0, "the command never started: " + read(log));
        Thread.sleep(20);
      }
      tree = tumbler.descendants().toList();
      assertTrue(tree.size() >= 3, "the command, its sleep and the watchdog: " + describe(tree));
      watchdog = tree.stream().filter(h -> h.info().commandLine().orElse("").contains("tumbler-watchdog")).toList();
      assertEquals(1, watchdog.size(), "one watchdog: " + describe(tree));
    } finally {
      tumbler.destroyForcibly(); // SIGKILL
    }
    tumbler.waitFor();
    // the lease ends on the server within its term: then another client is granted the lock, and by then the
    // killed tumbler's command must be gone
    // the command and what it started, that is: the watchdog is tumbler's, and it exits only once it has stopped them
    // (a loaded run once caught it in its own exit, its command line already gone, just as the other client was granted)
    List<ProcessHandle> alive;
    try (LockService other = LockProviders.connect(url)) {
      Optional<Lease> next = other.lock("job").tryAcquire(LEASE_TIME.plusSeconds(2));
      alive = tree.stream().filter(h -> !watchdog.contains(h)).filter(RunCommandKillTest::running).toList();
      assertTrue(next.isPresent(), "the killed tumbler's lease never ended");
      next.get().release();
    }
    alive.forEach(ProcessHandle::destroyForcibly); // do not leave them behind when the assertion fails
    assertTrue(alive.isEmpty(), "still running when another client was granted the lock after tumbler was killed: "
        + describe(alive) + "\n" + read(log));
    long watchdogDeadline = System.nanoTime() + LEASE_TIME.toNanos();
    while (running(watchdog.get(0))) {
      assertTrue(System.nanoTime() - watchdogDeadline < 0, "the watchdog still runs a lease term after its command was "
          + "stopped: " + describe(watchdog) + "\n" + read(log));
      Thread.sleep(20);
    }
    long size = Files.size(beats);
    Thread.sleep(300);
    assertEquals(size, Files.size(beats), "heartbeats still written after the command was stopped");
    assertTrue(read(log).contains("ended without stopping its command"), "the watchdog says what it did: " + read(log));
  }

  /**
   * Whether {@code h} still runs: alive and not a zombie. A process of the killed tumbler's tree that has exited stays
   * a zombie until its new parent (init, or whatever reaps orphans here) reaps it, and {@link ProcessHandle#isAlive}
   * counts it: the watchdog, which exits as soon as the command is gone, was once seen so (its command line already
   * unreadable).
   */
  private static boolean running(ProcessHandle h) {
    if (!h.isAlive()) {
      return false;
    }
    Path stat = Path.of("/proc", Long.toString(h.pid()), "stat");
    if (!Files.exists(Path.of("/proc/self/stat"))) {
      return true; // no procfs (macOS): alive is the best answer there is
    }
    try {
      String s = Files.readString(stat);
      char state = s.charAt(s.lastIndexOf(')') + 2); // "pid (comm) S ...": comm may hold spaces and parentheses
      return state != 'Z' && state != 'X';
    } catch (IOException | RuntimeException e) {
      return false; // gone between the two looks
    }
  }

  private static boolean has(Process tumbler, String commandLine) {
    return tumbler.descendants().anyMatch(h -> h.info().commandLine().orElse("").contains(commandLine));
  }

  private static String describe(List<ProcessHandle> handles) {
    return handles.stream().map(h -> h.pid() + " " + h.info().commandLine().orElse("?"))
        .collect(Collectors.joining("; ", "[", "]"));
  }

  private static String read(Path log) throws IOException {
    return Files.exists(log) ? Files.readString(log) : "";
  }
}
