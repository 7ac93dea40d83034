package dev.tumbler.lock.tck;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
}
