package dev.tumbler.peer;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * Loopback ports for tests whose peers must listen on a port known in advance (and get it back after a
 * restart).
 *
 * <p>Why not {@code new ServerSocket(0)}: that hands out a port from the kernel's ephemeral range, and a
 * port of that range that is free for a moment can be taken by <em>any</em> outgoing connection on the
 * machine — another test, another build, or a node of the test itself redialling the stopped peer (which
 * can even connect to itself, TCP's simultaneous open). The restarted peer then fails to bind with
 * "Address already in use". Ports below the ephemeral range are only ever taken by an explicit bind, so
 * this picks a random one there that binds now.
 *
 * <p>Several test JVMs run side by side (surefire's {@code forkCount}): each takes ports only from its own
 * slice of the range, chosen by the {@value #FORK_PROPERTY} system property ({@code fork-N}, N being surefire's fork number), so
 * that a port one JVM freed to restart a peer on is never picked by the other. Thread safe.
 */
public final class TestPorts {
  private static final int LOW = 20_000;
  /** Set by the build to surefire's fork number (1, 2, …); absent when a test runs on its own. */
  static final String FORK_PROPERTY = "tumbler.test.fork";
  /** The range is cut into this many slices, one per fork number (modulo). */
  private static final int SLICES = 8;
  /** The property's form, {@code fork-N}: the build cannot pass a bare placeholder (Maven empties it). */
  private static final java.util.regex.Pattern FORK = java.util.regex.Pattern.compile("fork-(\\d{1,6})");
  /**
   * Every port handed out in this JVM: the probe socket is closed before the caller binds, so without this
   * two calls in a row could return the same port (a soak run saw a cluster with two peers on one port).
   */
  private static final java.util.Set<Integer> HANDED_OUT = java.util.concurrent.ConcurrentHashMap.newKeySet();

  private TestPorts() {}

  /** A loopback port below the ephemeral range that was free a moment ago, never one handed out before. */
  public static int freePort() {
    int[] slice = slice(LOW, Math.max(LOW + 4000, ephemeralLow() - 1), System.getProperty(FORK_PROPERTY));
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(slice[0], slice[1]);
      if (!HANDED_OUT.add(port)) {
        continue;
      }
      try (ServerSocket s = new ServerSocket()) {
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
        return port;
      } catch (IOException e) {
        // in use: try another
      }
    }
    throw new IllegalStateException("no free loopback port in [" + slice[0] + ", " + slice[1] + ")");
  }

  /** The part {@code [from, to)} of {@code [low, high)} for a fork number; all of it when there is none. */
  static int[] slice(int low, int high, String fork) {
    java.util.regex.Matcher m = fork == null ? null : FORK.matcher(fork.strip());
    if (m == null || !m.matches()) {
      return new int[] {low, high};
    }
    int k = Integer.parseInt(m.group(1)) % SLICES;
    int width = (high - low) / SLICES;
    return new int[] {low + k * width, low + (k + 1) * width};
  }

  /**
   * Runs {@code start} (which binds a port chosen earlier) until it does not fail for want of the port,
   * for at most {@code max}: a port just closed may still be held for a moment (a connection of the old
   * listener still closing). Any other failure is thrown at once.
   */
  public static <T> T retryBind(Duration max, Supplier<T> start) {
    long deadline = System.nanoTime() + max.toNanos();
    while (true) {
      try {
        return start.get();
      } catch (RuntimeException e) {
        if (!causedByBind(e) || System.nanoTime() > deadline) {
          throw e;
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
  }

  private static boolean causedByBind(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof BindException) {
        return true;
      }
    }
    return false;
  }

  private static int ephemeralLow() {
    try {
      String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
      return Integer.parseInt(range.split("\\s+")[0]);
    } catch (IOException | RuntimeException e) {
      return 32_768; // Linux's default; other systems: the IANA range starts at 49152, higher still
    }
  }
}
