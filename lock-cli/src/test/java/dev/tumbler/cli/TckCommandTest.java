package dev.tumbler.cli;

import static dev.tumbler.cli.CliTestSupport.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.cli.CliTestSupport.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(InMemoryTestProvider.Registered.class)
@Timeout(120)
class TckCommandTest {
  @TempDir
  Path dir;

  @Test
  void runsOneGroupAndWritesXml() throws Exception {
    Path xml = dir.resolve("reports");
    Result r = run("tck", "--url", "lock:clitest:mem", "--group", "mutex contract", "--xml-dir", xml.toString());
    assertEquals(0, r.code(), r.toString());
    assertTrue(r.out().contains("Tumbler TCK against lock:clitest:mem"), r.out());
    assertTrue(r.out().toLowerCase().contains("mutex"), r.out());
    try (var files = Files.list(xml)) {
      assertTrue(files.anyMatch(f -> f.toString().endsWith(".xml")), "JUnit XML written");
    }
  }

  @Test
  void badArgumentsGive2() {
    Result r = run("tck");
    assertEquals(ExitCodes.USAGE, r.code(), r.toString());
    assertTrue(r.err().contains("--url"), r.err());
    r = run("tck", "--url", "lock:nosuch:x", "--xml-dir", dir.toString());
    assertEquals(2, r.code(), r.toString());
    r = run("tck", "--url", "lock:clitest:mem", "--group", "no-such-group", "--xml-dir", dir.toString());
    assertEquals(2, r.code(), r.toString());
    assertTrue(r.out().contains("no TCK group"), r.out());
  }
}
