package dev.tumbler.lock.tck;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * Loopback ports for servers that must listen on a port known in advance (and get it back after a restart): the
 * peers of a native cluster, an embedded Redis or PostgreSQL, the processes of a torture run. Every such port of the
 * project's tests and of {@code tumbler torture} comes from here.
 *
 * <p>Why not {@code new ServerSocket(0)}: that hands out a port from the kernel's ephemeral range, and a
 * port of that range that is free for a moment can be taken by <em>any</em> outgoing connection on the
 * machine — another test, another build, or a node of the test itself redialling the stopped peer (which
 * can even connect to itself, TCP's simultaneous open). The server then fails to bind with
 * "Address already in use" (seen: a restarted native peer, an embedded Redis and PostgreSQL started beside another
 * module's tests). Ports below the ephemeral range are only ever taken by an explicit bind, so
 * this picks a random one there that binds now.
 *
 * <p>Several test JVMs run side by side (surefire's {@code forkCount}, and modules built at once): each takes ports
 * only from one slice of the range, chosen by the {@value #FORK_PROPERTY} system property ({@code fork-N}, N being
 * surefire's fork number) and the JVM's working directory (its module), so that a port one JVM freed to restart a
 * server on is not picked by a JVM of the same module; JVMs of two modules that land on one slice still only meet
 * through a bind that fails, and the starts retry. Without the property (a run of its own) the whole range is used.
 *
 * <p>A port is also reserved across JVMs for as long as the JVM that took it lives: a lock on one byte (at the port's
 * offset) of a file shared by every JVM on the machine ({@value #RESERVATIONS} in the temporary directory; the lock
 * goes when the JVM ends, however it ends). Slices alone were not enough: a Redis Cluster node killed for an outage was
 * started again on its port, which a JVM of another module on the same slice had just found free, probed, and bound
 * ("redis-server on port 23295 exited", a suite run of 2026-11-29). Where that file cannot be used, ports are only
 * probed, as before. Thread safe.
 */
public final class LoopbackPorts {
  private static final int LOW = 20_000;
  /** Set by the build to surefire's fork number (1, 2, …); absent when a test runs on its own. */
  static final String FORK_PROPERTY = "tumbler.test.fork";
  /** The range is cut into this many slices; a JVM takes one by its fork number and module. */
  private static final int SLICES = 16;
  /** The property's form, {@code fork-N}: the build cannot pass a bare placeholder (Maven empties it). */
  private static final java.util.regex.Pattern FORK = java.util.regex.Pattern.compile("fork-(\\d{1,6})");
  /**
   * Every port handed out in this JVM: the probe socket is closed before the caller binds, so without this
   * two calls in a row could return the same port (a soak run saw a cluster with two peers on one port).
   */
  private static final java.util.Set<Integer> HANDED_OUT = java.util.concurrent.ConcurrentHashMap.newKeySet();
  /** The file whose byte {@code port} a JVM locks to reserve {@code port} from every other JVM of the machine. */
  static final String RESERVATIONS = "tumbler-loopback-ports.lock";
  /** The open reservation file (its locks live as long as it is open: for the JVM's life), or null if it cannot be used. */
  private static FileChannel reservations;
  private static boolean reservationsTried;
  /** The locks taken, kept reachable (a lock is released only with its channel, but nothing should collect it). */
  private static final List<FileLock> RESERVED = new ArrayList<>();

  private LoopbackPorts() {}

  /** A loopback port below the ephemeral range that was free a moment ago, never one handed out before. */
  public static int freePort() {
    int[] slice = slice(LOW, Math.max(LOW + 4000, ephemeralLow() - 1), System.getProperty(FORK_PROPERTY),
        System.getProperty("user.dir", ""));
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(slice[0], slice[1]);
      if (!HANDED_OUT.add(port) || !reserve(port)) {
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

  /**
   * Locks byte {@code port} of the machine's reservation file for this JVM's life; false if another JVM holds it. When
   * the file cannot be opened (another user's, a read-only directory) every port counts as reserved: it is then only
   * probed.
   */
  static synchronized boolean reserve(int port) {
    if (!reservationsTried) {
      reservationsTried = true;
      try {
        reservations = FileChannel.open(Path.of(System.getProperty("java.io.tmpdir"), RESERVATIONS),
            StandardOpenOption.CREATE, StandardOpenOption.WRITE);
      } catch (IOException | RuntimeException e) {
        reservations = null;
      }
    }
    if (reservations == null) {
      return true;
    }
    try {
      FileLock lock = reservations.tryLock(port, 1, false);
      if (lock == null) {
        return false; // another JVM of this machine took it
      }
      RESERVED.add(lock);
      return true;
    } catch (IOException e) {
      return true;
    }
  }

  /**
   * The part {@code [from, to)} of {@code [low, high)} for a fork number and a module; all of it when there is no fork
   * number. Two forks of one module never share a slice.
   */
  static int[] slice(int low, int high, String fork, String module) {
    java.util.regex.Matcher m = fork == null ? null : FORK.matcher(fork.strip());
    if (m == null || !m.matches()) {
      return new int[] {low, high};
    }
    int k = Math.floorMod(Integer.parseInt(m.group(1)) + module.hashCode(), SLICES);
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
