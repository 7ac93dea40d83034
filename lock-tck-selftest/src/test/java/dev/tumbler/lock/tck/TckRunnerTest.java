package dev.tumbler.lock.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TckRunnerTest {

  private static String url(String extra) {
    return "lock:tck-memory:runner-" + UUID.randomUUID() + "?leaseTime=1s" + extra;
  }

  private record Run(int status, String out) {}

  private static Run run(String... args) {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int status = TckRunner.run(args, new PrintStream(b, true, StandardCharsets.UTF_8));
    return new Run(status, b.toString(StandardCharsets.UTF_8));
  }

  @Test
  void printsTableAndWritesXml(@TempDir Path dir) throws Exception {
    Run r = run("--url", url(""), "--group", "names", "--group", "Transactions", "--group", "Mutex.acquireRelease",
        "--xml-dir", dir.toString());
    assertEquals(0, r.status(), r.out());
    assertTrue(r.out().contains("names ") && r.out().contains("mutex contract"), r.out());
    assertTrue(r.out().contains("transactions"), r.out());
    assertFalse(r.out().contains("registry and URL"), "an unselected group ran:\n" + r.out());
    try (var files = Files.list(dir)) {
      Path xml = files.filter(p -> p.getFileName().toString().endsWith(".xml")).findFirst().orElseThrow();
      String s = Files.readString(xml);
      assertTrue(s.contains("<testsuite") && s.contains("distinctNames"), s);
    }
  }

  @Test
  void failingProviderExitsOne(@TempDir Path dir) {
    Run r = run("--url", url("&defect=unfair"), "--group", "fairness", "--xml-dir", dir.toString());
    assertEquals(1, r.status(), r.out());
    assertTrue(r.out().contains("Failures:") && r.out().contains("firstComeFirstServed"), r.out());
  }

  @Test
  void groupsListsEveryNestedGroup() {
    // the runner's --group names and the table's rows come from GROUPS: a group left out would be unreachable
    for (Class<?> c : LockTck.class.getDeclaredClasses()) {
      if (c.isAnnotationPresent(org.junit.jupiter.api.Nested.class)) {
        assertTrue(LockTck.GROUPS.contains(c), c.getSimpleName() + " is missing from LockTck.GROUPS");
      }
    }
  }

  @Test
  void badArgumentsExitTwo() {
    assertEquals(2, run().status());
    assertEquals(2, run("--url").status());
    assertEquals(2, run("--url", url(""), "--bogus").status());
    assertEquals(2, run("--url", url(""), "--lease-time", "soon").status());
    Run g = run("--url", url(""), "--group", "nosuchgroup");
    assertEquals(2, g.status());
    assertTrue(g.out().contains("Mutex"), "the error does not list the groups: " + g.out());
    Run s = run("--url", "lock:tcknosuchscheme://h?password=hunter2");
    assertEquals(2, s.status());
    assertTrue(s.out().contains("tck-memory"), "the error does not list installed providers: " + s.out());
    assertFalse(s.out().contains("hunter2"), "the password was printed: " + s.out());
    assertEquals(0, run("--help").status());
  }
}
