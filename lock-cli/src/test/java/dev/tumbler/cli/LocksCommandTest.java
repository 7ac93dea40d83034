package dev.tumbler.cli;

import static dev.tumbler.cli.CliTestSupport.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.cli.CliTestSupport.Result;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import redis.embedded.RedisServer;

/** {@code tumbler locks} against a real Redis and a real ZooKeeper started here, and against native. */
@Timeout(60)
class LocksCommandTest {

  @Test
  void listsTheLocksHeldOnRedis() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    RedisServer redis = RedisServer.builder().port(port).bind("127.0.0.1").setting("save \"\"")
        .setting("appendonly no").build();
    redis.start();
    try {
      String url = "lock:redis://127.0.0.1:" + port + "?namespace=billing&leaseTime=30s";
      try (LockService app = LockProviders.connect(url);
          Lease invoice = app.lock("invoices/2026-11").acquire();
          Lease report = app.readWriteLock("report").readLock().acquire();
          Lease permits = app.semaphore("exports", 4).acquire(2)) {
        Result r = run("locks", "--url", url);
        System.out.println("$ tumbler locks --url " + url + "\n" + r.out() + r.err());
        assertEquals(0, r.code(), r.toString());
        String[] lines = r.out().split("\n");
        assertEquals("3 locks held under lock:redis://127.0.0.1:" + port + "?namespace=billing&leaseTime=30s", lines[0]);
        assertTrue(lines[1].startsWith("NAME") && lines[1].contains("HOLDER") && lines[1].contains("REMAINING"), lines[1]);
        String row = r.out().lines().filter(l -> l.startsWith("invoices/2026-11")).findFirst().orElseThrow();
        assertTrue(row.contains("mutex") && row.matches(".*\\s[A-Za-z0-9_-]+:\\d+\\s.*") // holder <client id>:<n>
            && row.contains(invoice.fencingToken() + "*") && row.matches(".*\\s(2\\d|30)s$"), row);
        assertTrue(r.out().contains("* the last token issued for the name"), r.out());
        assertTrue(permits.isValid() && report.isValid());
      }
      Result empty = run("locks", "--url", "lock:redis://127.0.0.1:" + port + "?namespace=billing");
      assertEquals(0, empty.code(), empty.toString());
      assertTrue(empty.out().startsWith("0 locks held under "), empty.out());
    } finally {
      redis.stop();
    }
  }

  @Test
  void listsTheLocksHeldOnZooKeeper() throws Exception {
    try (TestingServer zk = new TestingServer(true)) {
      String url = "lock:zookeeper://" + zk.getConnectString() + "/tumbler?namespace=billing";
      try (LockService app = LockProviders.connect(url);
          Lease invoice = app.lock("invoices/2026-11").acquire();
          Lease write = app.readWriteLock("report").writeLock().acquire()) {
        Result r = run("locks", "--url", url);
        System.out.println("$ tumbler locks --url " + url + "\n" + r.out() + r.err());
        assertEquals(0, r.code(), r.toString());
        String row = r.out().lines().filter(l -> l.startsWith("invoices/2026-11")).findFirst().orElseThrow();
        assertTrue(row.contains("mutex") && row.contains("(session 0x") && row.contains(" " + invoice.fencingToken() + " ")
            && row.endsWith("(session)"), row);
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("report") && l.contains("write")
            && l.contains(Long.toString(write.fencingToken()))), r.out());
        assertTrue(!r.out().contains("*"), "ZooKeeper's tokens are the holders' own");
      }
    }
  }

  @Test
  void listsTheLocksHeldOnANativeLeaseCluster() throws Exception {
    String cluster = "cli-locks-" + java.util.UUID.randomUUID();
    String a = "lock:native:mem/" + cluster + "?node=a&peers=b,c&algorithm=lease&namespace=billing";
    try (LockService onA = LockProviders.connect(a);
        LockService onB = LockProviders.connect("lock:native:mem/" + cluster + "?node=b&peers=a,c&algorithm=lease");
        LockService onC = LockProviders.connect("lock:native:mem/" + cluster + "?node=c&peers=a,b&algorithm=lease");
        Lease invoice = onA.lock("invoices/2026-11").acquire();
        Lease permits = onA.semaphore("exports", 4).acquire(2)) {
      Result r = run("locks", "--url", a);
      System.out.println("$ tumbler locks --url " + a + "\n" + r.out() + r.err());
      assertEquals(0, r.code(), r.toString());
      assertTrue(r.out().startsWith("2 locks held under " + a), r.out());
      String row = r.out().lines().filter(l -> l.startsWith("invoices/2026-11")).findFirst().orElseThrow();
      assertTrue(row.contains("mutex") && row.contains(Long.toString(invoice.fencingToken())), row);
      String sem = r.out().lines().filter(l -> l.startsWith("exports")).findFirst().orElseThrow();
      assertTrue(sem.contains("semaphore") && sem.contains(Long.toString(permits.fencingToken())), sem);
    }
  }

  @Test
  void aProviderThatCannotListSaysSo() {
    Result r = run("locks", "--url", "lock:native:local");
    System.out.println("$ tumbler locks --url lock:native:local\n" + r.out() + r.err() + "(exit " + r.code() + ")");
    assertEquals(ExitCodes.UNSUPPORTED, r.code(), r.toString());
    assertEquals("", r.out());
    assertEquals("tumbler locks: the native provider cannot list the locks it holds (lock:native:local)\n", r.err());
  }

  @Test
  void anUnreachableBackendIsUnavailable() throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    Result r = run("locks", "--url", "lock:redis://127.0.0.1:" + port + "?timeout=300ms");
    assertEquals(ExitCodes.UNAVAILABLE, r.code(), r.toString());
  }
}
