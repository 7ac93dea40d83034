package dev.tumbler.cli;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A bounded {@code tumbler torture} per target family, as a user runs it: real client processes against a backend
 * the harness starts itself, with every fault that applies to it (clients killed, paused and cut off; servers killed,
 * paused and failed over), for a few seconds each. It fails on a safety violation of something the provider
 * declares (exit code 4); what the provider does not promise (Redis frees a lock when its server restarts without
 * persistence) and the bounds on waits and recovery are reported, not failed. Longer runs are the commands in
 * lock-torture's README; the seed of each run is printed.
 *
 * <p>The four runs start together, each on backends, ports and a report directory of its own, and each test waits for
 * its own: one after the other they were the last 100 s of a suite run, with the rest of the machine idle.
 */
class TortureSuiteTest {
  private static final List<String> BACKENDS = List.of("redis", "postgresql", "zookeeper", "native");
  private static ExecutorService runner;
  private static Map<String, CompletableFuture<CliTestSupport.Result>> runs;

  @BeforeAll
  static void startAll() {
    runner = Executors.newFixedThreadPool(BACKENDS.size());
    runs = BACKENDS.stream().collect(Collectors.toMap(Function.identity(),
        b -> CompletableFuture.supplyAsync(() -> torture(b), runner)));
  }

  @AfterAll
  static void stop() {
    runner.shutdownNow();
  }

  private static CliTestSupport.Result torture(String backend) {
    long t0 = System.nanoTime();
    CliTestSupport.Result r = CliTestSupport.run("torture", "--backend", backend, "--time", "12s", "--clients", "3",
        "--names", "2", "--lease-time", backend.equals("native") ? "3s" : "1500ms", "--report", dir(backend).toString());
    System.out.printf("[torture %s] %.1f s%n%s%n", backend, (System.nanoTime() - t0) / 1e9, r);
    return r;
  }

  private static Path dir(String backend) {
    return Path.of("target", "torture", backend).toAbsolutePath();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"redis", "postgresql", "zookeeper", "native"})
  void noPromiseIsBrokenUnderFaults(String backend) throws Exception {
    CliTestSupport.Result r = runs.get(backend).get();
    assertNotEquals(TortureCommand.SAFETY_VIOLATION, r.code(), "a safety violation of a promise:\n" + r);
    assertTrue(r.code() == 0 || r.code() == TortureCommand.BOUND_VIOLATION, "the run did not complete:\n" + r);
    Path dir = dir(backend);
    assertTrue(Files.size(dir.resolve("report.html")) > 0 && Files.size(dir.resolve("history.jsonl")) > 0);
    assertTrue(r.out().contains("verdict:"), r.toString());
  }
}
