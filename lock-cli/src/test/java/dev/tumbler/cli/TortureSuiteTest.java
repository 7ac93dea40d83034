package dev.tumbler.cli;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A bounded {@code tumbler torture} per target family, as a user runs it: real client processes against a backend
 * the harness starts itself, with every fault that applies to it (clients killed, paused and cut off; servers killed,
 * paused and failed over), for a few seconds each. It fails on a safety violation of something the provider
 * declares (exit code 4); what the provider does not promise (Redis frees a lock when its server restarts without
 * persistence) and the bounds on waits and recovery are reported, not failed. Longer runs are the commands in
 * lock-torture's README; the seed of each run is printed.
 */
class TortureSuiteTest {

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"redis", "postgresql", "zookeeper", "native"})
  void noPromiseIsBrokenUnderFaults(String backend) throws Exception {
    Path dir = Path.of("target", "torture", backend).toAbsolutePath();
    long t0 = System.nanoTime();
    CliTestSupport.Result r = CliTestSupport.run("torture", "--backend", backend, "--time", "12s", "--clients", "3",
        "--names", "2", "--lease-time", backend.equals("native") ? "3s" : "1500ms", "--report", dir.toString());
    System.out.printf("[torture %s] %.1f s%n%s%n", backend, (System.nanoTime() - t0) / 1e9, r);
    assertNotEquals(TortureCommand.SAFETY_VIOLATION, r.code(), "a safety violation of a promise:\n" + r);
    assertTrue(r.code() == 0 || r.code() == TortureCommand.BOUND_VIOLATION, "the run did not complete:\n" + r);
    assertTrue(Files.size(dir.resolve("report.html")) > 0 && Files.size(dir.resolve("history.jsonl")) > 0);
    assertTrue(r.out().contains("verdict:"), r.toString());
  }
}
