package dev.tumbler.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.tck.LoopbackPorts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The repository's {@code scripts/flock-counter.sh}, as a newcomer runs it: three {@code tumbler node} processes, three
 * loops of {@code tumbler run} thin clients adding one to a counter file under one lock, the member serving the most
 * clients killed with SIGKILL midway. The script checks that the count is exact and that the survivors stop cleanly on
 * SIGTERM; here it runs on free ports with this build's classes.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
@EnabledOnOs({OS.LINUX, OS.MAC})
class FlockCounterScriptTest {

  @Test
  void threeNodesThreeClientLoopsOneNodeKilledTheCountIsExact(@TempDir Path dir) throws Exception {
    Path script = Path.of("..", "scripts", "flock-counter.sh").toAbsolutePath().normalize();
    assertTrue(Files.isRegularFile(script), "no " + script);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb = new ProcessBuilder("bash", script.toString())
        .redirectErrorStream(true).redirectOutput(dir.resolve("script.out").toFile());
    // some forty short JVMs: C1 only and the serial collector start them at half the CPU (as torture's workers)
    pb.environment().put("TUMBLER", java + " -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -cp "
        + System.getProperty("java.class.path") + " "
        + Tumbler.class.getName());
    pb.environment().put("FLOCK_DIR", dir.resolve("work").toString());
    pb.environment().put("FLOCK_PORTS", String.join(" ", freePorts(9)));
    pb.environment().remove("TUMBLER_SECRET");
    pb.environment().remove("TUMBLER_CLIENT_SECRET");
    Process p = pb.start();
    boolean ended = p.waitFor(7, TimeUnit.MINUTES);
    if (!ended) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
    String out = Files.readString(dir.resolve("script.out"));
    assertTrue(ended, "the script did not end within 7 minutes:\n" + out);
    assertEquals(0, p.exitValue(), out);
    assertTrue(out.contains("OK: exact count 36 with one member killed midway"), out);
    assertTrue(out.matches("(?s).*killing member \\S+, which serves [1-9]\\d*, with SIGKILL.*"),
        "the member killed served a client: " + out);
  }

  /** {@code n} distinct loopback ports below the ephemeral range ({@link LoopbackPorts}). */
  private static List<String> freePorts(int n) {
    List<String> ports = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ports.add(Integer.toString(LoopbackPorts.freePort()));
    }
    return ports;
  }
}
