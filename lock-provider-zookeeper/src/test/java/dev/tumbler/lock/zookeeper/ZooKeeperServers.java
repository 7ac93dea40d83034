package dev.tumbler.lock.zookeeper;

import dev.tumbler.lock.tck.LoopbackPorts;
import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.apache.curator.test.TestingServer;

/** In-process ZooKeeper servers for tests: loopback, free ports, a short tick so short sessions are allowed. */
final class ZooKeeperServers {
  /** 100 ms: sessions from 200 ms (2 ticks); expiry is checked every tick. */
  static final int TICK_MS = 100;

  private ZooKeeperServers() {}

  /**
   * The servers' limits. The short tick would also shrink the ensemble's own failure detection, which counts in ticks:
   * with Curator's {@code syncLimit} of 5, a follower that heard nothing from its leader for 500 ms left the quorum and
   * dropped its clients, which a busy two-core machine's stall of one server thread can cause (a suite run's holder on a
   * spared follower was told its lease lost through the crash of the other follower; the leader logged both
   * followers' connections ending). {@code syncLimit} and {@code initLimit} are set to what ZooKeeper's defaults give
   * with its default tick of 2 s: 10 s to stay in sync, 20 s to join. A killed server is still noticed at once: its
   * connections close.
   */
  private static Map<String, Object> props() {
    return Map.of("minSessionTimeout", String.valueOf(2 * TICK_MS), "maxSessionTimeout", "60000",
        "syncLimit", String.valueOf(10_000 / TICK_MS), "initLimit", String.valueOf(20_000 / TICK_MS));
  }

  /** A started standalone server. */
  static TestingServer server() throws Exception {
    InstanceSpec spec = new InstanceSpec(null, LoopbackPorts.freePort(), LoopbackPorts.freePort(),
        LoopbackPorts.freePort(), true, -1, TICK_MS, -1, props(), "127.0.0.1");
    return new TestingServer(spec, true);
  }

  /**
   * A started ensemble of {@code n}. Its ports come from {@link LoopbackPorts}, like every test server's: Curator's own
   * (port -1) probe the ephemeral range one at a time, and twice gave two servers of one ensemble the same client port
   * ("Multiple entries with same key: InstanceSpec{...}" from {@code TestingCluster}, a loaded soak run).
   */
  static TestingCluster cluster(int n) throws Exception {
    List<InstanceSpec> specs = new ArrayList<>();
    for (int i = 1; i <= n; i++) {
      specs.add(new InstanceSpec((File) null, LoopbackPorts.freePort(), LoopbackPorts.freePort(),
          LoopbackPorts.freePort(), true, i, TICK_MS, -1, props(), "127.0.0.1"));
    }
    TestingCluster c = new TestingCluster(specs);
    c.start();
    return c;
  }

  /**
   * Waits until every server of {@code cluster} serves a client (it has joined a quorum: a server that has not refuses
   * connections), {@code max} at most. After {@link TestingCluster#restartServer} of its servers an ensemble elects a
   * leader again, which on a loaded machine took longer than the 5 s a test's own connect waits (a soak run under load:
   * {@code ZooKeeperClusterFaultTest.sessionExpiresWhileHolding} could not connect through its proxy to the first server
   * right after the previous test had restarted them all).
   */
  static void awaitServing(TestingCluster cluster, Duration max) throws Exception {
    long end = System.nanoTime() + max.toNanos();
    for (InstanceSpec spec : cluster.getInstances()) {
      try (CuratorFramework c = CuratorFrameworkFactory.newClient(spec.getConnectString(), 10_000, 1_000,
          new RetryOneTime(100))) {
        c.start();
        while (true) {
          long left = end - System.nanoTime();
          if (left <= 0) {
            throw new IllegalStateException("ZooKeeper server " + spec.getConnectString() + " did not serve within "
                + max.toSeconds() + " s");
          }
          if (c.blockUntilConnected((int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)), TimeUnit.MILLISECONDS)) {
            try {
              c.checkExists().forPath("/");
              break;
            } catch (Exception notYet) {
              Thread.sleep(100);
            }
          }
        }
      }
    }
  }
}
