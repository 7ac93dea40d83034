package dev.tumbler.lock.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ReadWriteLock;
import dev.tumbler.lock.Semaphore;
import dev.tumbler.lock.ServiceUnavailableException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/** The provider against one real in-process ZooKeeper server, through the public API. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ZooKeeperLockServiceTest {
  private TestingServer server;
  private final List<LockService> opened = new ArrayList<>();

  @BeforeAll
  void start() throws Exception {
    server = ZooKeeperServers.server();
  }

  @AfterAll
  void stop() throws Exception {
    server.close();
  }

  @AfterEach
  void closeAll() {
    opened.forEach(LockService::close);
    opened.clear();
  }

  private LockService open(String params) {
    LockService s = LockProviders.connect("lock:zookeeper://" + server.getConnectString() + "/svc-test?sessionTimeout=4s"
        + params);
    opened.add(s);
    return s;
  }

  @Test
  void mutexExcludesAndHandsOver() throws Exception {
    LockService a = open("");
    LockService b = open("");
    Lease la = a.lock("m").acquire();
    assertTrue(b.lock("m").tryAcquire(Duration.ZERO).isEmpty());
    assertTrue(a.lock("m").tryAcquire(Duration.ZERO).isEmpty(), "a lock is not reentrant, even in one service");
    CompletableFuture<Lease> waiting = b.lock("m").acquireAsync(Duration.ofSeconds(20));
    Thread.sleep(200);
    assertFalse(waiting.isDone());
    la.release();
    Lease lb = waiting.get(20, TimeUnit.SECONDS);
    assertTrue(lb.fencingToken() > la.fencingToken());
    lb.release();
  }

  @Test
  void fencingTokensGrowAfterIdleCleanupAndClientRestart() throws Exception {
    LockService a = open("");
    CuratorFramework curator = a.unwrap(CuratorFramework.class);
    long t1;
    try (Lease l = a.lock("f").acquire()) {
      t1 = l.fencingToken();
    }
    // the lock's directory is removed while idle (as the container reaper would): sequence numbers restart
    String dir = "/svc-test/locks/f";
    assertTrue(curator.getChildren().forPath(dir).isEmpty());
    curator.delete().forPath(dir);
    assertNull(curator.checkExists().forPath(dir));
    long t2;
    try (Lease l = a.lock("f").acquire()) {
      t2 = l.fencingToken();
    }
    assertTrue(t2 > t1, t2 + " after cleanup is not above " + t1);
    a.close();
    LockService b = open("");
    long t3;
    try (Lease l = b.lock("f").acquire()) {
      t3 = l.fencingToken();
    }
    assertTrue(t3 > t2, t3 + " after a client restart is not above " + t2);
  }

  @Test
  void readWriteTokensFollowGrantOrder() throws Exception {
    LockService a = open("");
    LockService b = open("");
    ReadWriteLock ra = a.readWriteLock("rw");
    ReadWriteLock rb = b.readWriteLock("rw");
    Lease r1 = ra.readLock().acquire();
    Lease r2 = rb.readLock().tryAcquire(Duration.ofSeconds(5)).orElseThrow();
    assertTrue(r2.fencingToken() > r1.fencingToken());
    assertTrue(rb.writeLock().tryAcquire(Duration.ZERO).isEmpty(), "a writer was granted while readers hold");
    CompletableFuture<Lease> w = rb.writeLock().acquireAsync(Duration.ofSeconds(20));
    Thread.sleep(200);
    // a reader arriving after a queued writer waits behind it (first come, first served)
    assertTrue(ra.readLock().tryAcquire(Duration.ofMillis(200)).isEmpty(), "a late reader overtook a queued writer");
    r1.release();
    r2.release();
    Lease wl = w.get(20, TimeUnit.SECONDS);
    assertTrue(wl.fencingToken() > r2.fencingToken());
    wl.release();
    Lease r3 = ra.readLock().tryAcquire(Duration.ofSeconds(5)).orElseThrow();
    assertTrue(r3.fencingToken() > wl.fencingToken());
    r3.release();
  }

  @Test
  void semaphoreTakesBlocksFairly() throws Exception {
    LockService a = open("");
    LockService b = open("");
    Semaphore sa = a.semaphore("s", 3);
    Semaphore sb = b.semaphore("s", 3);
    Lease two = sa.acquire(2);
    assertEquals(2, two.permits());
    assertEquals(1, sb.availablePermits());
    assertTrue(sb.tryAcquire(2, Duration.ZERO).isEmpty());
    // a queued request for 2 blocks a later request for 1, though 1 permit is free
    CompletableFuture<Optional<Lease>> big = CompletableFuture.supplyAsync(() -> {
      try {
        return sb.tryAcquire(2, Duration.ofSeconds(20));
      } catch (InterruptedException e) {
        throw new RuntimeException(e);
      }
    });
    Thread.sleep(300);
    assertTrue(sa.tryAcquire(1, Duration.ofMillis(200)).isEmpty(), "a later small request overtook a queued large one");
    long before = two.fencingToken();
    two.release();
    Lease b2 = big.get(20, TimeUnit.SECONDS).orElseThrow();
    assertTrue(b2.fencingToken() > before);
    Lease one = sa.tryAcquire(1, Duration.ofSeconds(5)).orElseThrow();
    assertEquals(0, sa.availablePermits());
    one.release();
    b2.release();
    assertEquals(3, sa.availablePermits());
  }

  @Test
  void electionNamesItsLeader() throws Exception {
    LockService a = open("");
    LockService b = open("");
    try (LeaderElection ea = a.election("e").join(); LeaderElection eb = b.election("e")) {
      assertTrue(ea.awaitLeadership(Duration.ofSeconds(10)));
      eb.join();
      assertFalse(eb.awaitLeadership(Duration.ofMillis(300)));
      assertEquals(Optional.of(ea.candidateId()), eb.leader(), "the follower does not see who leads");
      long term1 = ea.leadership().orElseThrow().fencingToken();
      ea.resign();
      assertTrue(eb.awaitLeadership(Duration.ofSeconds(10)));
      assertTrue(eb.leadership().orElseThrow().fencingToken() > term1);
      assertEquals(Optional.of(eb.candidateId()), ea.leader());
    }
  }

  @Test
  void unwrapGivesCurator() {
    LockService a = open("");
    CuratorFramework c = a.unwrap(CuratorFramework.class);
    assertSame(c, a.unwrap(CuratorFramework.class));
    assertTrue(c.getZookeeperClient().isConnected());
  }

  @Test
  void nodesAreEphemeralOfTheService() throws Exception {
    LockService a = open("");
    LockService b = open("");
    a.lock("e").acquire();
    a.close();
    // closing the service ends its session: the lock is free at once, not after a session timeout
    assertTrue(b.lock("e").tryAcquire(Duration.ofSeconds(2)).isPresent());
  }

  /**
   * A create whose reply was lost is sent again by Curator, which leaves two nodes of one attempt in the queue;
   * the queue driver deletes the earlier one at its next listing. An attempt that fails or is interrupted before
   * that listing must delete both, or the earlier one holds the lock for as long as the session lives (a chaos
   * storm with a backend restart left such a lock held).
   */
  @Test
  void anAttemptGivenUpDeletesEveryNodeOfItsMarkerNotOnlyTheLastCreated() throws Exception {
    LockService a = open("");
    LockService b = open("");
    ZooKeeperLockService svc = (ZooKeeperLockService) a;
    CuratorFramework c = a.unwrap(CuratorFramework.class);
    String dir = svc.dir("locks", "orphan");
    String marker = svc.newMarker();
    // the attempt's two creates, as Curator's retry after a lost reply leaves them
    String first = c.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
        .forPath(dir + "/" + marker + "-w-lock-", new byte[0]);
    String second = c.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
        .forPath(dir + "/" + marker + "-w-lock-", new byte[0]);
    svc.abandon(dir, marker, second);
    // the lock is free once both are gone: b's grant proves it, within a wait that a lost node would exhaust
    Optional<Lease> got = b.lock("orphan").tryAcquire(Duration.ofSeconds(5));
    assertTrue(got.isPresent(), "the lock stayed held: " + c.getChildren().forPath(dir) + " (first " + first + ")");
    assertNull(c.checkExists().forPath(first), "the earlier node of the attempt is still there");
    got.get().release();
  }

  private CuratorFramework appClient() {
    CuratorFramework c = org.apache.curator.framework.CuratorFrameworkFactory.newClient(server.getConnectString(),
        4_000, 5_000, new org.apache.curator.retry.RetryOneTime(100));
    c.start();
    return c;
  }

  private static java.util.Properties curator(Object client) {
    java.util.Properties p = new java.util.Properties();
    p.put(ZooKeeperLockProvider.CURATOR, client);
    return p;
  }

  @Test
  void anApplicationsCuratorClientIsUsedAndLeftOpenWithNothingOfTheServiceInItsSession() throws Exception {
    CuratorFramework app = appClient();
    try {
      LockService b = open("");
      LockService a = LockProviders.connect("lock:zookeeper:///svc-test", curator(app));
      assertSame(app, a.unwrap(CuratorFramework.class));
      // the lease term is the client's session timeout: a fresh lease is valid for the safe part of it
      long term = app.getZookeeperClient().getZooKeeper().getSessionTimeout();
      long valid = a.lock("held").acquire().remaining().toMillis();
      assertTrue(valid <= term && valid >= term / 2, "a lease valid for " + valid + " ms on a session of " + term);
      Lease other = b.lock("waited").acquire();
      CompletableFuture<Optional<Lease>> waiting = a.lock("waited").acquireAsync(Duration.ofSeconds(30))
          .thenApply(Optional::of);
      Thread.sleep(300);
      a.close();
      assertTrue(app.getZookeeperClient().isConnected(), "closing the service closed the application's client");
      // the held lock and the waiting attempt are gone from the session that lives on
      assertTrue(b.lock("held").tryAcquire(Duration.ofSeconds(5)).isPresent(), "the held lock stayed held");
      other.release();
      assertTrue(b.lock("waited").tryAcquire(Duration.ofSeconds(5)).isPresent(), "the waiting attempt stayed queued");
      Throwable ended = waiting.handle((l, e) -> e).get(10, TimeUnit.SECONDS);
      assertTrue(ended != null, "the wait of the closed service ended without an error");
    } finally {
      app.close();
    }
  }

  /**
   * A service closed on the application's client while the ensemble is out of reach cannot delete its nodes then; they
   * live on in the application's session, and would hold back every later holder of their names for as long as the
   * application runs. The service deletes them at the client's next reconnect instead.
   */
  @Test
  void aServiceClosedOnAnApplicationsClientDuringAnOutageDeletesItsNodesAtTheReconnect() throws Exception {
    TestingServer own = ZooKeeperServers.server();
    CuratorFramework app = org.apache.curator.framework.CuratorFrameworkFactory.newClient(own.getConnectString(),
        20_000, 3_000, new org.apache.curator.retry.RetryOneTime(100));
    app.start();
    try {
      LockService a = LockProviders.connect("lock:zookeeper:///outage-close", curator(app));
      a.lock("held").acquire();
      long session = app.getZookeeperClient().getZooKeeper().getSessionId();
      own.stop();
      awaitConnected(app, false);
      long t0 = System.nanoTime();
      a.close();
      long closeMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertTrue(closeMs < 10_000, "closing during the outage took " + closeMs + " ms");
      own.restart();
      awaitConnected(app, true);
      assertEquals(session, app.getZookeeperClient().getZooKeeper().getSessionId(),
          "the outage expired the application's session: the test needs it to live on");
      try (LockService b = LockProviders.connect("lock:zookeeper://" + own.getConnectString()
          + "/outage-close?sessionTimeout=10s")) {
        assertTrue(b.lock("held").tryAcquire(Duration.ofSeconds(10)).isPresent(),
            "the lock of the service closed during the outage is still held in the application's session");
      }
    } finally {
      app.close();
      own.close();
    }
  }

  private static void awaitConnected(CuratorFramework client, boolean connected) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (client.getZookeeperClient().isConnected() != connected) {
      assertTrue(System.nanoTime() < deadline, "the client did not become " + (connected ? "connected" : "disconnected"));
      Thread.sleep(20);
    }
  }

  @Test
  void anApplicationClientIsCheckedWithErrorsThatSayWhatIsWrong() {
    CuratorFramework app = appClient();
    try {
      assertTrue(assertThrows(dev.tumbler.lock.InvalidLockUrlException.class, () -> LockProviders.connect(
          "lock:zookeeper:///x", curator("not a client"))).getMessage().contains("not an org.apache.curator"));
      assertTrue(assertThrows(dev.tumbler.lock.InvalidLockUrlException.class, () -> LockProviders.connect(
          "lock:zookeeper://" + server.getConnectString() + "/x", curator(app))).getMessage().contains("names no hosts"));
      assertTrue(assertThrows(dev.tumbler.lock.InvalidLockUrlException.class, () -> LockProviders.connect(
          "lock:zookeeper:///x?sessionTimeout=5s", curator(app))).getMessage().contains("'sessionTimeout'"));
      CuratorFramework unstarted = org.apache.curator.framework.CuratorFrameworkFactory.newClient(
          server.getConnectString(), new org.apache.curator.retry.RetryOneTime(100));
      assertTrue(assertThrows(dev.tumbler.lock.InvalidLockUrlException.class, () -> LockProviders.connect(
          "lock:zookeeper:///x", curator(unstarted))).getMessage().contains("not STARTED"));
    } finally {
      app.close();
    }
  }

  @Test
  void unreachableEnsembleFailsWithinConnectionTimeout() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    long t0 = System.nanoTime();
    String url = "lock:zookeeper://127.0.0.1:" + port + "?connectionTimeout=1s";
    ServiceUnavailableException e = assertThrows(ServiceUnavailableException.class, () -> LockProviders.connect(url));
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    assertTrue(e.getMessage().contains("127.0.0.1:" + port), e.getMessage());
    assertTrue(ms < 10_000, "took " + ms + "ms");
  }

  @Test
  void aSilentServerFailsConnectWithinConnectionTimeout() throws Exception {
    // accepts connections and never answers: the handshake waits, and so did closing the half-open client
    try (ServerSocket silent = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      List<java.net.Socket> accepted = new java.util.concurrent.CopyOnWriteArrayList<>();
      Thread acceptor = Thread.ofPlatform().daemon().start(() -> {
        try {
          while (true) {
            accepted.add(silent.accept());
          }
        } catch (java.io.IOException e) {
          // closed
        }
      });
      String url = "lock:zookeeper://127.0.0.1:" + silent.getLocalPort() + "?connectionTimeout=3s&sessionTimeout=30s";
      long t0 = System.nanoTime();
      ServiceUnavailableException e = assertThrows(ServiceUnavailableException.class, () -> LockProviders.connect(url));
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertTrue(e.getMessage().contains("3000ms"), e.getMessage());
      // the bound is the connection timeout under test, plus a second for a busy machine
      assertTrue(ms < 3000 + 1000, "connect took " + ms + " ms with connectionTimeout=3s: " + e.getMessage());
      assertFalse(accepted.isEmpty(), "the client never reached the silent server");
      for (java.net.Socket a : accepted) {
        a.close();
      }
      silent.close();
      acceptor.join(5000);
    }
  }

  @Test
  void aStoppedServerCostsEachWaitItsMaxWaitPlusTheGraceWithATypedErrorAndABoundedLog() throws Exception {
    TestingServer own = ZooKeeperServers.server();
    java.io.PrintStream err = System.err;
    java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
    List<String> seen = new ArrayList<>();
    try (LockService s = LockProviders.connect("lock:zookeeper://" + own.getConnectString()
        + "/outage?sessionTimeout=10s&connectionTimeout=5s")) {
      s.lock("warm").acquire().release();
      System.setErr(new java.io.PrintStream(captured, true));
      own.stop();
      long bound = dev.tumbler.lock.spi.AbstractLockService.ANSWER_GRACE_MILLIS + 1000;
      for (Duration w : List.of(Duration.ZERO, Duration.ofSeconds(2))) {
        long t0 = System.nanoTime();
        try {
          Optional<Lease> l = s.lock("down").tryAcquire(w);
          assertTrue(l.isEmpty(), "granted while the server is down");
          seen.add("tryAcquire(" + w.toMillis() + "ms): empty");
        } catch (ServiceUnavailableException e) {
          seen.add("tryAcquire(" + w.toMillis() + "ms): unavailable");
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms <= w.toMillis() + bound, "tryAcquire(" + w.toMillis() + "ms) took " + ms + " ms with the server down");
      }
      long t0 = System.nanoTime();
      CompletableFuture<Lease> async = s.lock("down").acquireAsync(Duration.ofSeconds(1));
      java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
          () -> async.get(1000 + bound, TimeUnit.MILLISECONDS));
      assertTrue(e.getCause() instanceof ServiceUnavailableException
          || e.getCause() instanceof dev.tumbler.lock.LockTimeoutException, String.valueOf(e.getCause()));
      assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) <= 1000 + bound, "acquireAsync(1s) took too long");
      // the abandoned attempts' clean-ups fail while the server is down: they must not recurse or flood
      Thread.sleep(3000);
    } finally {
      System.setErr(err);
      own.close();
    }
    String log = captured.toString(java.nio.charset.StandardCharsets.UTF_8);
    assertFalse(log.contains("StackOverflowError"), "a clean-up recursed:\n" + log.substring(0, Math.min(log.length(), 4000)));
    assertTrue(captured.size() < 64 * 1024, "the outage wrote " + captured.size() + " bytes of log (" + seen + "):\n"
        + log.substring(0, Math.min(log.length(), 4000)));
  }
}
