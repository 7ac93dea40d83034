package dev.tumbler.lock.tck;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

class LoopbackPortsTest {

  @Test
  void forksOfAModuleTakePortsFromSlicesThatDoNotOverlap() {
    for (String module : java.util.List.of("/repo/lock-provider-native", "/repo/lock-provider-redis", "")) {
      java.util.List<int[]> slices = new java.util.ArrayList<>();
      for (int fork = 1; fork <= 8; fork++) {
        int[] s = LoopbackPorts.slice(20_000, 32_767, "fork-" + fork, module);
        assertTrue(s[0] >= 20_000 && s[1] <= 32_767 && s[1] - s[0] >= 700, "fork " + fork + ": " + s[0] + ".." + s[1]);
        for (int[] other : slices) {
          assertTrue(s[1] <= other[0] || other[1] <= s[0], module + ": slices overlap");
        }
        slices.add(s);
      }
    }
  }

  @Test
  void theSameForkNumberOfAnotherModuleMayTakeAnotherSlice() {
    assertTrue(java.util.stream.IntStream.rangeClosed(1, 4).anyMatch(fork -> LoopbackPorts.slice(20_000, 32_767,
        "fork-" + fork, "/repo/lock-provider-native")[0] != LoopbackPorts.slice(20_000, 32_767, "fork-" + fork,
        "/repo/lock-provider-jdbc")[0]), "every fork of two modules on the same slices");
  }

  @Test
  void withoutAForkNumberTheWholeRangeIsUsed() {
    assertArrayEquals(new int[] {20_000, 32_767}, LoopbackPorts.slice(20_000, 32_767, null, "m"));
    assertArrayEquals(new int[] {20_000, 32_767}, LoopbackPorts.slice(20_000, 32_767, "", "m"));
    assertArrayEquals(new int[] {20_000, 32_767}, LoopbackPorts.slice(20_000, 32_767, "fork-${surefire.forkNumber}", "m"));
  }

  @Test
  void aPortReservedByAnotherJvmIsNotTakenUntilThatJvmEnds() throws Exception {
    // an offset no other test takes (ports handed out are 20,000 and above)
    int port = ThreadLocalRandom.current().nextInt(1_000, 19_000);
    Process other = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"), "-cp", System.getProperty("java.class.path"),
        Holder.class.getName(), Integer.toString(port)).redirectErrorStream(true).start();
    try {
      BufferedReader out = new BufferedReader(new InputStreamReader(other.getInputStream(), UTF_8));
      assertEquals("reserved " + port, out.readLine(), "the other JVM could not reserve the port");
      assertFalse(LoopbackPorts.reserve(port), "a port another JVM reserved was reserved here too");
    } finally {
      other.destroyForcibly();
      assertTrue(other.waitFor(30, TimeUnit.SECONDS), "the other JVM did not end");
    }
    assertTrue(LoopbackPorts.reserve(port), "the port stayed reserved after the JVM that reserved it ended");
  }

  /** Reserves the port given, says so, and holds it until its standard input closes or it is killed. */
  public static final class Holder {
    public static void main(String[] args) throws Exception {
      int port = Integer.parseInt(args[0]);
      System.out.println(LoopbackPorts.reserve(port) ? "reserved " + port : "refused " + port);
      System.out.flush();
      while (System.in.read() >= 0) {
        // hold until told to go
      }
    }
  }
}
