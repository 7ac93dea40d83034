package dev.tumbler.peer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TestPortsTest {

  @Test
  void forksTakePortsFromSlicesThatDoNotOverlap() {
    int[] one = TestPorts.slice(20_000, 32_767, "fork-1");
    int[] two = TestPorts.slice(20_000, 32_767, "fork-2");
    assertTrue(one[0] >= 20_000 && one[1] <= 32_767 && one[1] - one[0] >= 1000, "fork 1: " + one[0] + ".." + one[1]);
    assertTrue(two[0] >= 20_000 && two[1] <= 32_767 && two[1] - two[0] >= 1000, "fork 2: " + two[0] + ".." + two[1]);
    assertTrue(one[1] <= two[0] || two[1] <= one[0], "slices overlap");
  }

  @Test
  void withoutAForkNumberTheWholeRangeIsUsed() {
    assertArrayEquals(new int[] {20_000, 32_767}, TestPorts.slice(20_000, 32_767, null));
    assertArrayEquals(new int[] {20_000, 32_767}, TestPorts.slice(20_000, 32_767, ""));
    assertArrayEquals(new int[] {20_000, 32_767}, TestPorts.slice(20_000, 32_767, "fork-${surefire.forkNumber}"));
  }
}
