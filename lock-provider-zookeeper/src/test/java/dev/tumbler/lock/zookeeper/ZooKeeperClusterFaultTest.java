package dev.tumbler.lock.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.FencedResource;
import dev.tumbler.lock.tck.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * Real faults on a 3-server ensemble: the holder's server is killed, a majority is killed, the holder's
 * session expires on the ensemble. In every case the holder's lost listener runs before anyone else is
 * granted the lock, and the fenced resource accepts no stale write.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ZooKeeperClusterFaultTest {
  private static final Duration SESSION = Duration.ofSeconds(3);
  /** How long the ensemble may take to serve again after its servers were restarted (under the class's 90 s). */
  private static final Duration SERVING = Duration.ofSeconds(60);

  private TestingCluster cluster;
  private final List<AutoCloseable> opened = new ArrayList<>();
  /** Orders events across threads: lost listeners and grants take a ticket. */
  private final AtomicLong clock = new AtomicLong();

  @BeforeAll
  void start() throws Exception {
    cluster = ZooKeeperServers.cluster(3);
    ZooKeeperServers.awaitServing(cluster, SERVING);
  }

  @AfterAll
  void stop() throws Exception {
    cluster.close();
  }

  @AfterEach
  void closeAll() throws Exception {
    for (AutoCloseable c : opened) {
      c.close();
    }
    opened.clear();
    // every server back up for the next test
    for (InstanceSpec spec : cluster.getInstances()) {
      cluster.restartServer(spec);
    }
    ZooKeeperServers.awaitServing(cluster, SERVING);
  }

  private LockService open(String connect) {
    LockService s = LockProviders.connect("lock:zookeeper://" + connect + "/faults?sessionTimeout="
        + SESSION.toMillis() + "ms&connectionTimeout=5s");
    opened.add(s);
    return s;
  }

  private static ZooKeeper zk(LockService s) throws Exception {
    return s.unwrap(CuratorFramework.class).getZookeeperClient().getZooKeeper();
  }

  /** A holder with its lost listener taking a ticket from the shared clock. */
  private record Held(Lease lease, AtomicLong lostTicket, AtomicReference<LeaseLostEvent> event) {}

  private Held hold(LockService s, String name) throws InterruptedException {
    Lease l = s.lock(name).tryAcquire(Duration.ofSeconds(10)).orElseThrow();
    AtomicLong ticket = new AtomicLong();
    AtomicReference<LeaseLostEvent> event = new AtomicReference<>();
    l.onLost(e -> {
      ticket.set(clock.incrementAndGet());
      event.set(e);
    });
    return new Held(l, ticket, event);
  }

  /** Waits in the background for the lock; the grant takes a ticket as soon as acquire returns. */
  private CompletableFuture<long[]> waitFor(LockService s, String name, Duration max) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        Optional<Lease> l = s.lock(name).tryAcquire(max);
        long ticket = clock.incrementAndGet();
        Lease lease = l.orElseThrow(() -> new AssertionError("not granted within " + max));
        return new long[] {ticket, lease.fencingToken()};
      } catch (InterruptedException e) {
        throw new RuntimeException(e);
      }
    });
  }

  private static void eventually(Duration max, String what, java.util.function.BooleanSupplier c)
      throws InterruptedException {
    long end = System.nanoTime() + max.toNanos();
    while (!c.getAsBoolean()) {
      assertTrue(System.nanoTime() - end < 0, what);
      Thread.sleep(20);
    }
  }

  @Test
  void killTheHoldersServer() throws Exception {
    LockService a = open(cluster.getConnectString());
    LockService b = open(cluster.getConnectString());
    FencedResource<String> resource = new FencedResource<>();
    Held h = hold(a, "kill-one");
    assertTrue(resource.write(h.lease().fencingToken(), "a"));
    CompletableFuture<long[]> other = waitFor(b, "kill-one", Duration.ofSeconds(30));
    InstanceSpec holdersServer = cluster.findConnectionInstance(zk(a));
    assertNotNull(holdersServer);
    cluster.killServer(holdersServer);
    long[] grant = other.get(40, TimeUnit.SECONDS);
    assertTrue(h.lostTicket().get() > 0, "the holder was never told");
    assertTrue(h.lostTicket().get() < grant[0], "the holder was told after another client was granted the lock");
    assertEquals(LeaseLostEvent.Reason.CONNECTION_LOST, h.event().get().reason());
    assertTrue(grant[1] > h.lease().fencingToken());
    assertTrue(resource.write(grant[1], "b"));
    assertFalse(resource.write(h.lease().fencingToken(), "a-late"), "a stale write was accepted");
    // the ensemble survived the loss of one server, and the holder's client moved to another one
    try (Lease again = a.lock("kill-one-after").tryAcquire(Duration.ofSeconds(20)).orElseThrow()) {
      assertTrue(again.isValid());
    }
  }

  @Test
  void killAMajority() throws Exception {
    LockService a = open(cluster.getConnectString());
    Held h = hold(a, "kill-two");
    long before = h.lease().fencingToken();
    List<InstanceSpec> specs = new ArrayList<>(cluster.getInstances());
    cluster.killServer(specs.get(0));
    cluster.killServer(specs.get(1));
    // without a quorum no server serves; the holder cannot be sure of its lock any more
    eventually(SESSION.multipliedBy(3), "the holder was not told while the ensemble had no quorum",
        () -> h.lostTicket().get() > 0);
    assertFalse(h.lease().isValid());
    LockService b = null;
    try {
      b = open(specs.get(2).getConnectString());
      assertTrue(b.lock("kill-two").tryAcquire(Duration.ofMillis(500)).isEmpty(), "granted without a quorum");
    } catch (LockException e) {
      // ServiceUnavailableException: connect or acquire found no serving server, the honest answer
    }
    cluster.restartServer(specs.get(0));
    cluster.restartServer(specs.get(1));
    h.lease().release();
    LockService c = open(cluster.getConnectString());
    Lease after = c.lock("kill-two").tryAcquire(Duration.ofSeconds(30)).orElseThrow();
    assertTrue(after.fencingToken() > before, "the token went back after the ensemble recovered");
    after.release();
  }

  /**
   * The client talks only to the servers its URL names. Curator follows the ensemble's advertised client
   * addresses by default; then a client given a proxy learns the real servers and, once the proxy stops,
   * reconnects around it on the same session (which made sessionExpiresWhileHolding fail now and then).
   */
  @Test
  void clientStaysBehindItsProxy() throws Exception {
    InstanceSpec first = cluster.getInstances().iterator().next();
    try (TcpProxy proxy = TcpProxy.start("127.0.0.1", first.getPort())) {
      LockService a = open(proxy.address());
      CuratorFramework ac = a.unwrap(CuratorFramework.class);
      // a round trip that reads the ensemble's configuration, as the tracker does on every connection
      ac.getConfig().forEnsemble();
      a.lock("behind-proxy").tryAcquire(Duration.ofSeconds(10)).orElseThrow().release();
      assertEquals(proxy.address(), ac.getZookeeperClient().getCurrentConnectionString(),
          "the client replaced the URL's servers with the ensemble's own addresses");
      long session = zk(a).getSessionId();
      proxy.cut();
      // with only the proxy to talk to, the client cannot reach the ensemble: its session must not go on
      Thread.sleep(SESSION.multipliedBy(2).toMillis());
      assertEquals(proxy.address(), ac.getZookeeperClient().getCurrentConnectionString());
      assertFalse(ac.getZookeeperClient().isConnected() && zk(a).getSessionId() == session,
          "the client is still connected on its session after its only server went away");
    }
  }

  @Test
  void sessionExpiresWhileHolding() throws Exception {
    // the holder reaches the ensemble through a proxy to one server; a blackhole leaves it silent until
    // the ensemble expires its session
    InstanceSpec first = cluster.getInstances().iterator().next();
    try (TcpProxy proxy = TcpProxy.start("127.0.0.1", first.getPort())) {
      LockService a = open(proxy.address());
      LockService b = open(cluster.getConnectString());
      FencedResource<String> resource = new FencedResource<>();
      Held h = hold(a, "expire");
      long session = zk(a).getSessionId();
      assertTrue(resource.write(h.lease().fencingToken(), "a"));
      CompletableFuture<long[]> other = waitFor(b, "expire", Duration.ofSeconds(30));
      Thread.sleep(200);
      assertFalse(other.isDone());
      proxy.blackhole();
      long[] grant = other.get(40, TimeUnit.SECONDS);
      assertTrue(h.lostTicket().get() > 0, "the holder was never told");
      assertTrue(h.lostTicket().get() < grant[0], "onLost ran after the next holder's grant");
      assertFalse(h.lease().isValid());
      assertTrue(resource.write(grant[1], "b"));
      assertFalse(resource.write(h.lease().fencingToken(), "a-late"), "a stale write was accepted");
      // the grant came from the ensemble expiring the session (nothing else deletes the holder's node)
      CuratorFramework bc = b.unwrap(CuratorFramework.class);
      for (String child : bc.getChildren().forPath("/faults/locks/expire")) {
        assertFalse(bc.checkExists().forPath("/faults/locks/expire/" + child).getEphemeralOwner() == session,
            "the expired session still owns a node");
      }
      proxy.heal();
      // Curator learns of the expiry, opens a new session, and the client can lock again
      try (Lease again = a.lock("expire-after").tryAcquire(Duration.ofSeconds(20)).orElseThrow()) {
        assertTrue(again.isValid());
        assertTrue(zk(a).getSessionId() != session, "still on the expired session");
      }
    }
  }
}
