package dev.tumbler.cli;

import static dev.tumbler.cli.CliTestSupport.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.cli.CliTestSupport.Result;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.util.Optional;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The CLI against the real native provider: the demo over TCP, and run on lock:native:local. */
@Timeout(180)
class NativeEndToEndTest {

  @Test
  void demoPrintsItsTableWithTheExpectedMessageCounts() {
    Result r = run("demo", "--algorithm", "lamport,ricart-agrawala", "--duration", "1500ms", "--workers", "2");
    assertEquals(0, r.code(), r.toString());
    String out = r.out();
    assertTrue(out.matches("(?s).*\\n\\s+lamport\\s+ricart-agrawala\\n.*"), out);
    assertTrue(out.matches("(?s).*grants, node 3\\s+[1-9]\\d*\\s+[1-9]\\d*.*"), "every node got grants\n" + out);
    assertTrue(out.matches("(?s).*messages per entry\\s+6\\.00 \\(3\\(N-1\\) = 6\\)\\s+4\\.00 \\(2\\(N-1\\) = 4\\).*"),
        "3(N-1) and 2(N-1)\n" + out);
    assertTrue(out.matches("(?s).*fencing tokens strictly increasing\\s+yes\\s+yes.*"), out);
    assertTrue(out.matches("(?s).*one holder at a time\\s+yes\\s+yes.*"), out);
    assertTrue(r.err().contains("lamport") && r.err().contains("grants"), "progress lines: " + r.err());
  }

  @Test
  void theCacheScenarioShowsEntriesFromTheCacheCostNoMessage() {
    Result r = run("demo", "--scenario", "cache");
    assertEquals(0, r.code(), r.toString());
    String out = r.out();
    assertTrue(out.matches("(?s).*first acquire, from the server\\s+node \\d\\s+1\\s+2\\s+2\\.00.*"), out);
    assertTrue(out.matches("(?s).*again on the same node: from its cache\\s+node \\d\\s+20\\s+0\\s+0\\.00.*"), out);
    assertTrue(out.matches("(?s).*recalled each time\\s+node \\d, node \\d\\s+20\\s+80\\s+4\\.00.*"), out);
    assertTrue(out.contains("Recall 20, RecallReply 20"), out);
    Result wrong = run("demo", "--scenario", "cache", "--algorithm", "bakery");
    assertEquals(ExitCodes.USAGE, wrong.code(), wrong.toString());
    assertTrue(wrong.err().contains("runs on lease"), wrong.err());
  }

  @Test
  void runOnTheLocalNativeNodePassesExitCodesAndReleases() throws Exception {
    Result r = run("run", "--url", "lock:native:local", "--lock", "cli-e2e", "--", "sh", "-c", "exit 3");
    assertEquals(3, r.code(), r.toString());
    try (LockService s = LockProviders.connect("lock:native:local")) {
      Optional<Lease> l = s.lock("cli-e2e").tryAcquire(Duration.ZERO);
      assertTrue(l.isPresent(), "released after the command ended");
      // now held: a run that waits a little times out with 75
      r = run("run", "--url", "lock:native:local", "--lock", "cli-e2e", "--wait", "200ms", "--", "true");
      assertEquals(ExitCodes.LOCK_TIMEOUT, r.code(), r.toString());
      l.get().release();
    }
  }
}
