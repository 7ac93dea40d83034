package dev.tumbler.cli;

import static dev.tumbler.cli.CliTestSupport.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.cli.CliTestSupport.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(InMemoryTestProvider.Registered.class)
class CliArgumentsTest {
  @TempDir
  Path dir;

  @Test
  void noSubcommandPrintsUsage() {
    Result r = run();
    assertEquals(ExitCodes.USAGE, r.code());
    assertTrue(r.err().contains("Usage: tumbler"), r.err());
  }

  @Test
  void helpListsCommandsAndExitCodes() {
    Result r = run("--help");
    assertEquals(0, r.code());
    for (String s : new String[] {"demo", "run", "node", "providers", "Exit codes", "75", "76"}) {
      assertTrue(r.out().contains(s), s + " in\n" + r.out());
    }
    r = run("run", "--help");
    assertEquals(0, r.code());
    assertTrue(r.out().contains("128+N"), r.out());
  }

  @Test
  void unknownSubcommandOrOption() {
    Result r = run("frobnicate");
    assertEquals(ExitCodes.USAGE, r.code(), r.toString());
    r = run("demo", "--no-such-option");
    assertEquals(ExitCodes.USAGE, r.code(), r.toString());
    assertTrue(r.err().contains("--no-such-option"), r.err());
  }

  @Test
  void runNeedsUrlLockAndCommand() {
    Result r = run("run", "--lock", "a", "--", "true");
    assertEquals(ExitCodes.USAGE, r.code(), r.toString());
    assertTrue(r.err().contains("--url"), r.err());
    r = run("run", "--url", "lock:clitest:mem", "--", "true");
    assertTrue(r.err().contains("--lock"), r.err());
    r = run("run", "--url", "lock:clitest:mem", "--lock", "a");
    assertEquals(ExitCodes.USAGE, r.code(), r.toString());
    assertTrue(r.err().contains("COMMAND"), r.err());
  }

  @Test
  void badDurations() {
    Result r = run("run", "--url", "lock:clitest:mem", "--lock", "a", "--wait", "30", "--", "true");
    assertEquals(ExitCodes.USAGE, r.code(), r.toString());
    assertTrue(r.err().contains("has no unit"), r.err());
    r = run("demo", "--duration", "-1s");
    assertEquals(ExitCodes.USAGE, r.code(), r.toString());
    r = run("demo", "--algorithm", "bakery", "--duration", "4s");
    assertEquals(ExitCodes.USAGE, r.code(), r.toString());
    assertTrue(r.err().contains("--duration: bakery needs at least 5s"), r.err());
  }

  @Test
  void badDemoArguments() {
    Result r = run("demo", "--algorithm", "paxos");
    assertEquals(ExitCodes.USAGE, r.code(), r.toString());
    assertTrue(r.err().contains("'paxos' is not one of " + dev.tumbler.peer.algorithm.Algorithms.names() + " or all"),
        r.err());
    r = run("demo", "--algorithm", "lamport,paxos");
    assertEquals(ExitCodes.USAGE, r.code(), r.toString());
    assertTrue(r.err().contains("'paxos' is not one of"), r.err());
    r = run("demo", "--nodes", "1");
    assertEquals(ExitCodes.USAGE, r.code(), r.toString());
    assertTrue(r.err().contains("--nodes"), r.err());
    r = run("demo", "--workers", "0");
    assertEquals(ExitCodes.USAGE, r.code(), r.toString());
  }

  @Test
  void nodeNeedsASecretFromAFileOrTheEnvironment() throws Exception {
    // no environment at all: the machine's own TUMBLER_SECRET, if any, must not start a node here
    Result r = CliTestSupport.runNode(Map.of(), "--listen", "127.0.0.1:7701", "--peers", "127.0.0.1:7702");
    assertEquals(ExitCodes.CONFIG, r.code(), r.toString());
    assertTrue(r.err().contains("no shared secret"), r.err());
    Path empty = dir.resolve("empty");
    Files.writeString(empty, "\n");
    r = CliTestSupport.runNode(Map.of(), "--listen", "127.0.0.1:7701", "--peers", "127.0.0.1:7702", "--secret-file",
        empty.toString());
    assertEquals(ExitCodes.CONFIG, r.code(), r.toString());
    assertTrue(r.err().contains("is empty"), r.err());
    r = CliTestSupport.runNode(Map.of(), "--listen", "127.0.0.1:7701");
    assertEquals(ExitCodes.CONFIG, r.code(), r.toString());
    assertTrue(r.err().contains("no 'peers' given"), r.err());
  }

  @Test
  void secretsFromTheEnvironment() throws Exception {
    Properties p = Secrets.properties(null, null, Map.of(Secrets.SECRET_ENV, "s3", Secrets.PASSWORD_ENV, "pw"));
    assertEquals("s3", p.getProperty("secret"));
    assertEquals("pw", p.getProperty("password"));
    Path f = dir.resolve("f");
    Files.writeString(f, "  file-wins \n");
    p = Secrets.properties(f, null, Map.of(Secrets.SECRET_ENV, "env"));
    assertEquals("file-wins", p.getProperty("secret"), "a file takes precedence over the environment");
    assertTrue(Secrets.properties(null, null, Map.of()).isEmpty());
    assertThrows(Secrets.SecretException.class, () -> Secrets.properties(null, null, Map.of(Secrets.SECRET_ENV, "")));
  }

  @Test
  void providersListsWhatIsInstalled() {
    Result r = run("providers");
    assertTrue(r.out().contains("clitest"), r.out());
    assertTrue(r.out().contains("capabilities: mutex"), r.out());
    assertFalse(r.out().isBlank());
  }
}
