package dev.tumbler.cli;

import static dev.tumbler.cli.CliTestSupport.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.cli.CliTestSupport.Result;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(InMemoryTestProvider.Registered.class)
@Timeout(60)
class RunCommandTest {
  private static final String URL = "lock:clitest:mem";

  @TempDir
  Path dir;

  @Test
  void passesTheExitCodeThroughAndReleasesTheLock() {
    Result r = run("run", "--url", URL, "--lock", "exit3", "--", "sh", "-c", "exit 3");
    assertEquals(3, r.code(), r.toString());
    assertFalse(InMemoryTestProvider.isHeld("exit3"), "released after the command ended");
    r = run("run", "--url", URL, "--lock", "exit0", "--", "true");
    assertEquals(0, r.code(), r.toString());
  }

  @Test
  void theJdbcProviderShipsWithItsDrivers() throws Exception {
    assertTrue(run("providers").out().contains("jdbc"), "the CLI does not list the JDBC provider");
    String url = "lock:jdbc:h2:mem:cli-run;DB_CLOSE_DELAY=-1?createSchema=true&leaseTime=5s";
    try (LockService other = LockProviders.connect(url)) {
      CompletableFuture<Result> job = CompletableFuture.supplyAsync(
          () -> run("run", "--url", url, "--lock", "nightly", "--", "sh", "-c", "sleep 1; exit 4"));
      // while the command runs, the lock is taken in the database
      boolean seenTaken = false;
      while (!job.isDone() && !seenTaken) {
        seenTaken = other.lock("nightly").tryAcquire(Duration.ZERO).map(l -> {
          l.release();
          return false;
        }).orElse(true);
        Thread.sleep(20);
      }
      Result r = job.get();
      assertEquals(4, r.code(), r.toString());
      assertTrue(seenTaken, "the lock was never seen taken while the command ran");
      other.lock("nightly").tryAcquire(Duration.ZERO).orElseThrow(
          () -> new AssertionError("the lock stayed taken after the command")).release();
    }
  }

  @Test
  void theCommandRunsWhileTheLockIsHeld() throws Exception {
    Path marker = dir.resolve("held");
    // the command's options are its own, with or without "--"
    Result r = run("run", "--url", URL, "--lock", "visible", "sh", "-c", "touch " + marker + "; exit 5");
    assertEquals(5, r.code(), r.toString());
    assertTrue(Files.exists(marker));
    assertFalse(InMemoryTestProvider.isHeld("visible"));
  }

  @Test
  void aCommandKilledBySignalGives128PlusTheSignal() {
    Result r = run("run", "--url", URL, "--lock", "killed", "--", "sh", "-c", "kill -9 $$");
    assertEquals(128 + 9, r.code(), r.toString());
    assertFalse(InMemoryTestProvider.isHeld("killed"));
  }

  @Test
  void timesOutWith75WhenTheLockIsBusyAndNeverStartsTheCommand() throws Exception {
    Path marker = dir.resolve("ran");
    try (LockService s = LockProviders.connect(URL); Lease held = s.lock("busy").acquire()) {
      long t0 = System.nanoTime();
      Result r = run("run", "--url", URL, "--lock", "busy", "--wait", "300ms", "--", "touch", marker.toString());
      assertEquals(ExitCodes.LOCK_TIMEOUT, r.code(), r.toString());
      assertTrue(r.err().contains("lock 'busy' not acquired within 300 ms"), r.err());
      assertFalse(Files.exists(marker), "the command did not run");
      assertTrue(System.nanoTime() - t0 >= Duration.ofMillis(300).toNanos(), "waited --wait");
      assertTrue(held.isValid());
    }
  }

  @Test
  void lostLeaseKillsTheCommandAndExits76() throws Exception {
    CompletableFuture<Result> f = CompletableFuture.supplyAsync(
        () -> run("run", "--url", URL, "--lock", "lost", "--", "sleep", "30"));
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (!InMemoryTestProvider.isHeld("lost") && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    Thread.sleep(200); // the command has started
    long t0 = System.nanoTime();
    InMemoryTestProvider.loseAll("lost");
    Result r = f.get();
    assertEquals(ExitCodes.LEASE_LOST, r.code(), r.toString());
    assertTrue(r.err().contains("lease on 'lost' lost (REVOKED"), r.err());
    assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(15).toNanos(), "the command was killed, not awaited");
  }

  @Test
  void aCommandThatCannotStartGives127AndReleases() {
    Result r = run("run", "--url", URL, "--lock", "nocmd", "--", "/nonexistent/command-xyz");
    assertEquals(ExitCodes.CANNOT_EXECUTE, r.code(), r.toString());
    assertTrue(r.err().contains("cannot start /nonexistent/command-xyz"), r.err());
    assertFalse(InMemoryTestProvider.isHeld("nocmd"));
  }

  @Test
  void badUrlsGive78() {
    Result r = run("run", "--url", "lock:nosuch://x", "--lock", "a", "--", "true");
    assertEquals(ExitCodes.CONFIG, r.code(), r.toString());
    assertTrue(r.err().contains("installed providers"), r.err());
    r = run("run", "--url", "redis://no-prefix", "--lock", "a", "--", "true");
    assertEquals(ExitCodes.CONFIG, r.code(), r.toString());
  }

  @Test
  void secretComesFromAFileAndAUrlSecretIsWarnedAbout() throws Exception {
    Path file = dir.resolve("secret");
    Files.writeString(file, "from-the-file\n");
    Result r = run("run", "--url", URL, "--lock", "s", "--secret-file", file.toString(), "--", "true");
    assertEquals(0, r.code(), r.toString());
    assertEquals("from-the-file", InMemoryTestProvider.lastSecret);

    r = run("run", "--url", URL + "?secret=in-the-url", "--lock", "s", "--", "true");
    assertEquals(0, r.code(), r.toString());
    assertTrue(r.err().contains("warning: the URL carries a secret"), r.err());
    assertFalse(r.err().contains("in-the-url"), r.err());

    r = run("run", "--url", URL, "--lock", "s", "--secret-file", dir.resolve("missing").toString(), "--", "true");
    assertEquals(ExitCodes.CONFIG, r.code(), r.toString());
    assertTrue(r.err().contains("cannot read secret file"), r.err());
  }
}
