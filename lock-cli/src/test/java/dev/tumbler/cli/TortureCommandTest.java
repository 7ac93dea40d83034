package dev.tumbler.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.torture.Event;
import dev.tumbler.torture.Event.Type;
import dev.tumbler.torture.History;
import dev.tumbler.torture.RunParameters;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code tumbler torture}'s arguments, its errors, and its exit codes (through {@code --check}, which runs nothing). */
class TortureCommandTest {

  @Test
  void badInputIsAUsageErrorThatNamesIt() {
    expectUsage("unknown backend 'mysql'; known: native, zookeeper, redis", "--backend", "mysql");
    expectUsage("unknown nemesis 'flood'; known: kill, pause, partition, restart, pause-server, failover",
        "--backend", "redis", "--nemesis", "kill,flood");
    expectUsage("'10 minutes' is not a duration", "--backend", "redis", "--time", "10 minutes");
    expectUsage("partition does not apply to redis-cluster", "--backend", "redis-cluster", "--nemesis", "partition");
    expectUsage("failover does not apply to postgresql", "--backend", "postgresql", "--nemesis", "failover");
    expectUsage("--algorithm applies to the native backend only", "--backend", "redis", "--algorithm", "lease");
    expectUsage("--algorithm lamport cannot back a torture run", "--backend", "native", "--algorithm", "lamport");
    expectUsage("--mode applies to the postgresql backend only", "--backend", "zookeeper", "--mode", "advisory");
    expectUsage("restart needs a backend the harness started itself", "--url", "lock:redis://127.0.0.1:1",
        "--nemesis", "restart");
    expectUsage("live inside one process", "--url", "lock:native:local");
    expectUsage("--lease-time 100ms is too short", "--backend", "redis", "--lease-time", "100ms");
    expectUsage("--clients must be 1 to 64: 0", "--backend", "redis", "--clients", "0");
    expectUsage("--names must be 1 to 100: 101", "--backend", "redis", "--names", "101");
    expectUsage("--time must be positive", "--backend", "redis", "--time", "0s");
  }

  private static void expectUsage(String message, String... args) {
    List<String> all = new ArrayList<>(List.of("torture"));
    all.addAll(List.of(args));
    CliTestSupport.Result r = CliTestSupport.run(all.toArray(String[]::new));
    assertEquals(ExitCodes.USAGE, r.code(), r.toString());
    assertTrue(r.err().contains(message), "expected '" + message + "' in:\n" + r);
  }

  @Test
  void theExitCodeSaysWhetherAPromiseWasBroken(@TempDir Path dir) throws Exception {
    assertEquals(ExitCodes.OK, check(dir.resolve("clean"), false, false).code());
    CliTestSupport.Result late = check(dir.resolve("late"), false, true);
    assertEquals(TortureCommand.BOUND_VIOLATION, late.code(), late.toString());
    CliTestSupport.Result unsafe = check(dir.resolve("unsafe"), true, true);
    assertEquals(TortureCommand.SAFETY_VIOLATION, unsafe.code(), unsafe.toString());
    assertTrue(unsafe.out().contains("verdict: FAILED"), unsafe.toString());
    assertTrue(Files.readString(dir.resolve("unsafe").resolve("report.html")).contains("<svg"));
  }

  /** Writes a small history (two grants with one token and interleaved writes; a late wait) and checks it again. */
  private static CliTestSupport.Result check(Path dir, boolean interleave, boolean lateWait) throws Exception {
    Files.createDirectories(dir);
    RunParameters run = new RunParameters("test", "hand-written", "lock:test://x", 2, 1, 10_000, List.of(), 1, 1000,
        2000, 2000, 2500, 6000, 2000);
    List<Event> events = new ArrayList<>();
    events.add(Event.of(Type.RUN).withDetail(run.toDetail()));
    for (String c : List.of("c1", "c2")) {
      events.add(Event.of(Type.HELLO).withClient(c).withDetail("provider=test;capabilities=MUTEX,FENCING,"
          + "LEASE_EXPIRY,LOST_NOTIFICATION"));
    }
    events.add(Event.of(Type.INVOKE).withClient("c1").withName("n0").withMillis(2000));
    events.add(Event.of(Type.GRANT).withClient("c1").withName("n0").withToken(5).withGrant(1)
        .withMillis(lateWait ? 4500 : 10));
    events.add(Event.of(Type.WRITE).withClient("c1").withName("n0").withToken(5).withGrant(1));
    if (interleave) {
      events.add(Event.of(Type.GRANT).withClient("c2").withName("n0").withToken(5).withGrant(1).withMillis(10));
      events.add(Event.of(Type.WRITE).withClient("c2").withName("n0").withToken(5).withGrant(1));
      events.add(Event.of(Type.WRITE).withClient("c1").withName("n0").withToken(5).withGrant(1));
    }
    List<String> lines = new ArrayList<>();
    for (int i = 0; i < events.size(); i++) {
      lines.add(events.get(i).stamped(i + 1, i * 10L).toJson());
    }
    Files.write(dir.resolve(History.FILE), lines);
    return CliTestSupport.run("torture", "--check", dir.toString());
  }
}
