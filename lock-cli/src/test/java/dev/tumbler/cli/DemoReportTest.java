package dev.tumbler.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class DemoReportTest {
  private static long[] millis(long from, long to) {
    return LongStream.rangeClosed(from, to).map(m -> m * 1_000_000).toArray();
  }

  @Test
  void latencyMeanAndP99() {
    // 1..100 ms, shuffled order must not matter
    long[] lat = millis(1, 100);
    long t = lat[0];
    lat[0] = lat[99];
    lat[99] = t;
    DemoReport r = new DemoReport("lamport", List.of(40L, 30L, 30L), 600, lat, true, true, 0);
    assertEquals(50.5, r.meanMillis(), 1e-9);
    assertEquals(99.0, r.p99Millis(), 1e-9);
    assertEquals(100.0, r.percentileMillis(100), 1e-9);
    assertEquals(1.0, r.percentileMillis(1), 1e-9);
    // with fewer than 100 samples, p99 is the largest
    assertEquals(10.0, new DemoReport("x", List.of(10L), 0, millis(1, 10), true, true, 0).p99Millis(), 1e-9);
    assertTrue(Double.isNaN(new DemoReport("x", List.of(0L), 0, new long[0], true, true, 0).meanMillis()));
  }

  @Test
  void messagesPerEntryAndTheExpectedCost() {
    DemoReport lamport = new DemoReport("lamport", List.of(40L, 30L, 30L), 600, millis(1, 100), true, true, 0);
    assertEquals(100, lamport.totalGrants());
    assertEquals(6.0, lamport.messagesPerEntry(), 1e-9);
    assertEquals(6, lamport.expectedMessagesPerEntry().getAsInt(), "3(N-1) for N=3");
    DemoReport ra = new DemoReport("ricart-agrawala", List.of(50L, 50L, 100L, 0L, 0L), 1600, millis(1, 200), true,
        true, 0);
    assertEquals(8, ra.expectedMessagesPerEntry().getAsInt(), "2(N-1) for N=5");
    assertEquals(8.0, ra.messagesPerEntry(), 1e-9);
    assertTrue(Double.isNaN(new DemoReport("lamport", List.of(1L), -1, millis(1, 1), true, true, 0).messagesPerEntry()),
        "unknown when a node has no statistics");
    assertTrue(Double.isNaN(new DemoReport("lamport", List.of(0L), 10, new long[0], true, true, 0).messagesPerEntry()));
  }

  @Test
  void strictlyIncreasingTokens() {
    assertTrue(DemoReport.strictlyIncreasing(List.of()));
    assertTrue(DemoReport.strictlyIncreasing(List.of(5L)));
    assertTrue(DemoReport.strictlyIncreasing(List.of(1L, 2L, 10L)));
    assertFalse(DemoReport.strictlyIncreasing(List.of(1L, 2L, 2L)), "a repeated token");
    assertFalse(DemoReport.strictlyIncreasing(List.of(3L, 2L)), "a smaller token");
  }

  @Test
  void tableShowsAlgorithmsSideBySide() {
    DemoReport l = new DemoReport("lamport", List.of(40L, 30L, 30L), 600, millis(1, 100), true, true, 0);
    DemoReport ra = new DemoReport("ricart-agrawala", List.of(70L, 70L, 60L), 800, millis(1, 200), false, true, 2);
    String table = DemoReport.table(List.of(l, ra));
    assertTrue(table.lines().findFirst().orElseThrow().matches("\\s+lamport\\s+ricart-agrawala"), table);
    assertTrue(table.contains("grants, node 3"), table);
    assertTrue(table.matches("(?s).*grants, total\\s+100\\s+200.*"), table);
    assertTrue(table.matches("(?s).*messages per entry\\s+6\\.00 \\(3\\(N-1\\) = 6\\)\\s+4\\.00 \\(2\\(N-1\\) = 4\\).*"), table);
    assertTrue(table.matches("(?s).*acquire latency, p99\\s+99\\.00 ms\\s+198\\.00 ms.*"), table);
    assertTrue(table.matches("(?s).*fencing tokens strictly increasing\\s+yes\\s+NO.*"), table);
    assertTrue(table.matches("(?s).*acquire attempts timed out\\s+0\\s+2.*"), table);
    assertTrue(l.passed());
    assertFalse(ra.passed());
  }

  @Test
  void aKilledMemberIsShownAndTheOthersMustHaveKeptGranting() {
    DemoReport kept = new DemoReport("lamport", List.of(40L, 30L, 30L), -1, millis(1, 100), true, true, 0,
        new DemoReport.Outage(3, 1700, 1600, 812, 640));
    DemoReport stalled = new DemoReport("ricart-agrawala", List.of(40L, 30L, 30L), -1, millis(1, 100), true, true,
        0, new DemoReport.Outage(3, 1700, 1600, 0, 1600));
    DemoReport none = new DemoReport("lamport", List.of(40L, 30L, 30L), 600, millis(1, 100), true, true, 0);
    String table = DemoReport.table(List.of(kept, stalled, none));
    assertTrue(table.matches("(?s).*node killed midway\\s+node 3 at 1\\.7 s, for 1\\.6 s\\s+node 3 at 1\\.7 s.*"),
        table);
    assertTrue(table.matches("(?s).*grants by the others meanwhile\\s+812\\s+0 \\(NONE\\).*"), table);
    assertTrue(table.matches("(?s).*longest pause of the others\\s+0\\.64 s\\s+1\\.60 s.*"), table);
    assertTrue(kept.passed());
    assertFalse(stalled.passed(), "no grant while a member was down: not fault tolerant");
    assertTrue(none.passed());
    assertFalse(DemoReport.table(List.of(none)).contains("killed"), "no outage row when nothing was killed");
  }
}
