package dev.tumbler.lock.zookeeper;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryUntilElapsed;
import org.apache.curator.test.TestingServer;

/**
 * The TCK through an application's own Curator client: every service is opened on a {@link CuratorFramework} the
 * target built and started (as an application does, through its own proxy like {@link ZooKeeperTckTest}'s), passed
 * under {@link ZooKeeperLockProvider#CURATOR} with a URL that names no hosts, on the chroot of the target's
 * {@code url()} (which the TCK's checks of URL parameters connect to beside them); the target closes the clients at
 * the end, after the TCK closed the services on them.
 */
class ZooKeeperAppClientTckTest extends LockTck {

  @Override
  protected TckTarget createTarget() throws Exception {
    return new AppClients(ZooKeeperServers.server());
  }

  static final class AppClients extends ZooKeeperTckTest.Target {
    private final List<CuratorFramework> clients = new CopyOnWriteArrayList<>();

    AppClients(TestingServer server) {
      super(server);
    }

    @Override
    protected LockService connect(List<String> addresses) {
      int session = (int) ZooKeeperTckTest.LEASE.toMillis();
      CuratorFramework client = CuratorFrameworkFactory.builder().connectString(addresses.get(0))
          .sessionTimeoutMs(session).connectionTimeoutMs(5_000).retryPolicy(new RetryUntilElapsed(5_000, 100))
          .ensembleTracker(false).build();
      client.start();
      clients.add(client);
      Properties p = new Properties();
      p.put(ZooKeeperLockProvider.CURATOR, client);
      return LockProviders.connect("lock:zookeeper:///tck?connectionTimeout=5s", p);
    }

    @Override
    protected void closeBackend() {
      clients.forEach(CuratorFramework::close);
      super.closeBackend();
    }
  }
}
