package dev.tumbler.cli;

import static dev.tumbler.cli.CliTestSupport.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.cli.CliTestSupport.Result;
import dev.tumbler.lock.Capability;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ProviderInfo;
import dev.tumbler.lock.spi.LockProvider;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.lock.tck.LoopbackPorts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import redis.embedded.RedisServer;

/**
 * Issue 40: {@code tumbler run} and {@code tumbler locks} printed a stack trace and exited 70, a code no table
 * listed, for a missing JDBC table or a refused Redis {@code AUTH}. Every expected failure is one line and a
 * documented code; a stack trace only with {@code --verbose}.
 */
@Timeout(90)
class FailureExitCodesTest {
  private static final String RIGHT = "the-right-password-0123";
  private static final String WRONG = "a-wrong-password-0123";

  @TempDir
  Path dir;

  private Path file(String name, String content) throws IOException {
    Path f = dir.resolve(name);
    Files.writeString(f, content + "\n");
    return f;
  }

  /** Exit {@code code}, and one line on stderr that holds every one of {@code parts} and no secret. */
  private static void assertOneLine(Result r, int code, String... parts) {
    assertEquals(code, r.code(), r.toString());
    assertEquals(1, r.err().lines().count(), "one line, no stack trace: " + r);
    for (String p : parts) {
      assertTrue(r.err().contains(p), "'" + p + "' in: " + r);
    }
    assertFalse(r.toString().contains(RIGHT) || r.toString().contains(WRONG), r.toString());
  }

  @Test
  void aRefusedRedisPasswordIs77ForRunAndLocks() throws Exception {
    int port = LoopbackPorts.freePort();
    RedisServer redis = RedisServer.builder().port(port).bind("127.0.0.1").setting("save \"\"")
        .setting("appendonly no").setting("requirepass " + RIGHT).build();
    redis.start();
    try {
      String url = "lock:redis://127.0.0.1:" + port;
      String wrong = file("wrong", WRONG).toString();
      assertOneLine(run("run", "--url", url, "--password-file", wrong, "--lock", "a", "--", "true"),
          ExitCodes.NO_PERMISSION, "tumbler run: credentials refused: ", "WRONGPASS");
      assertOneLine(run("locks", "--url", url, "--password-file", wrong), ExitCodes.NO_PERMISSION,
          "tumbler locks: credentials refused: ", "WRONGPASS");
      assertOneLine(run("locks", "--url", url), ExitCodes.NO_PERMISSION, "credentials refused: ", "NOAUTH");
      Result verbose = run("locks", "--verbose", "--url", url, "--password-file", wrong);
      assertEquals(ExitCodes.NO_PERMISSION, verbose.code(), verbose.toString());
      assertTrue(verbose.err().contains("\tat ") && verbose.err().strip().lines().reduce((a, b) -> b).orElseThrow()
          .startsWith("tumbler locks: credentials refused: "), "--verbose adds the stack trace: " + verbose);
      String right = file("right", RIGHT).toString();
      assertEquals(0, run("locks", "--url", url, "--password-file", right).code(), "the right one gets in");
    } finally {
      redis.stop();
    }
  }

  /**
   * The JDBC provider creates no table unless {@code createSchema=true}: without one, it cannot serve. In an H2
   * database that has other tables the provider names the missing one; in an empty one H2's own message (SQL state
   * 42104, which the provider does not recognise as a missing table) says so, on one line.
   */
  @Test
  void aMissingJdbcTableIs78ForRunAndLocks() throws Exception {
    String jdbc = "h2:mem:cli-missing-table;DB_CLOSE_DELAY=-1";
    try (Connection keep = DriverManager.getConnection("jdbc:" + jdbc)) { // the user the provider gets: none
      keep.createStatement().execute("CREATE TABLE orders (id INT)");
      String url = "lock:jdbc:" + jdbc;
      for (String[] args : new String[][] {{"run", "--url", url, "--lock", "a", "--", "true"},
          {"locks", "--url", url}}) {
        assertOneLine(run(args), ExitCodes.CONFIG, "tumbler " + args[0] + ": the backend cannot serve this "
            + "configuration: ", "tumbler_locks_meta of the lock table tumbler_locks does not exist", "createSchema=true");
      }
      assertEquals(0, run("locks", "--url", url + "?createSchema=true").code(), "with the table created, it serves");
    }
    String empty = "lock:jdbc:h2:mem:cli-empty;DB_CLOSE_DELAY=-1";
    // an empty database (H2's "this database is empty", 42104) is a missing table like any other
    assertOneLine(run("locks", "--url", empty), ExitCodes.CONFIG, "tumbler locks: the backend cannot serve this "
        + "configuration: ", "tumbler_locks_meta of the lock table tumbler_locks does not exist", "createSchema=true");
  }

  @Test
  void aRefusedJdbcPasswordIs77() throws Exception {
    String jdbc = "h2:mem:cli-refused-credential;DB_CLOSE_DELAY=-1"; // no "password" in a JDBC URL
    try (Connection keep = DriverManager.getConnection("jdbc:" + jdbc, "sa", RIGHT)) {
      String wrong = file("wrong", WRONG).toString();
      assertOneLine(run("locks", "--url", "lock:jdbc:" + jdbc + "?user=sa&createSchema=true", "--password-file",
          wrong), ExitCodes.NO_PERMISSION, "tumbler locks: credentials refused: ");
      assertTrue(keep.isValid(1));
    }
  }

  /** A thin client's wrong {@code clientSecret}: refused at once, not after {@code peerTimeout} as an outage. */
  @Test
  void aRefusedClientSecretIs77AtOnce() throws Exception {
    int clientPort = LoopbackPorts.freePort();
    Properties member = new Properties();
    member.setProperty("secret", "the members' secret, 0123456");
    member.setProperty("clientSecret", RIGHT);
    Duration peerTimeout = Duration.ofSeconds(20);
    try (LockService m = LockProviders.connect("lock:native://127.0.0.1:" + LoopbackPorts.freePort() + "?algorithm=lease"
        + "&leaseTime=2s&clientListen=127.0.0.1:" + clientPort, member)) {
      long start = System.nanoTime();
      Result r = run("run", "--url", "lock:native://127.0.0.1:" + clientPort + "?algorithm=lease&leaseTime=2s"
          + "&peerTimeout=" + peerTimeout.toSeconds() + "s", "--client-secret-file", file("wrong", WRONG).toString(),
          "--lock", "a", "--", "true");
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      assertOneLine(r, ExitCodes.NO_PERMISSION, "tumbler run: credentials refused: ", "parameter 'clientSecret'");
      assertTrue(took.compareTo(peerTimeout.dividedBy(2)) < 0, "at once, not after peerTimeout: " + took);
    }
  }

  /** A provider that fails with what no provider should throw: the CLI's own "internal error". */
  static final class Broken implements LockProvider {
    @Override
    public String scheme() {
      return "clibroken";
    }

    @Override
    public ProviderInfo info() {
      return new ProviderInfo("clibroken", "broken", "0", "throws a NullPointerException", Set.of(Capability.MUTEX));
    }

    @Override
    public LockService connect(LockUrl url, Properties info) {
      throw new NullPointerException("a bug in the provider");
    }
  }

  @Test
  void anUnexpectedErrorIs70InOneLineAndItsStackTraceOnlyWithVerbose() {
    Broken broken = new Broken();
    LockProviders.register(broken);
    try {
      assertOneLine(run("run", "--url", "lock:clibroken:x", "--lock", "a", "--", "true"), ExitCodes.SOFTWARE,
          "tumbler run: internal error: java.lang.NullPointerException: a bug in the provider (--verbose shows the "
              + "stack trace)");
      Result verbose = run("--verbose", "run", "--url", "lock:clibroken:x", "--lock", "a", "--", "true");
      assertEquals(ExitCodes.SOFTWARE, verbose.code(), verbose.toString());
      assertTrue(verbose.err().contains("\tat "), verbose.toString());
    } finally {
      LockProviders.deregister(broken);
    }
  }
}
