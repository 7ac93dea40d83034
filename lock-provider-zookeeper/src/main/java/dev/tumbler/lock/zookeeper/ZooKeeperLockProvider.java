package dev.tumbler.lock.zookeeper;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ProviderInfo;
import dev.tumbler.lock.ServiceInfo;
import dev.tumbler.lock.spi.LockProvider;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.lock.spi.TumblerVersion;
import java.util.Properties;
import org.apache.curator.framework.CuratorFramework;

/**
 * The ZooKeeper provider: {@code lock:zookeeper://h1:2181,h2:2181/chroot?sessionTimeout=15s}, built on
 * Apache Curator. Found by {@link java.util.ServiceLoader}. Parameters:
 *
 * <ul>
 *   <li>hosts — the ensemble; port 2181 when none is given;
 *   <li>path — the chroot under which locks live (default {@code /tumbler});
 *   <li>{@code sessionTimeout} or {@code leaseTime} — the session timeout asked of the ensemble, which is
 *       the lease term (default 30s; the ensemble may negotiate it into its own
 *       {@code [minSessionTimeout, maxSessionTimeout]}, and leases then use the negotiated value);
 *   <li>{@code connectionTimeout} — how long to wait for a server (default 15s);
 *   <li>{@code renew} — {@code auto} (default) or {@code manual}; {@code namespace} — a prefix below the
 *       chroot.
 * </ul>
 *
 * Unknown parameters are an {@link dev.tumbler.lock.InvalidLockUrlException}. {@code unwrap(
 * CuratorFramework.class)} gives the service's Curator client.
 *
 * <p>An application that has a started {@link CuratorFramework} passes it in the connect properties under
 * {@link #CURATOR}, with a URL that names no hosts: the service then uses that client and its session (whose
 * timeout is the lease term), opens no connection of its own, and closing the service leaves the client open
 * (the service deletes its own nodes instead).
 *
 * <pre>{@code
 * Properties p = new Properties();
 * p.put(ZooKeeperLockProvider.CURATOR, curatorFramework);
 * LockService locks = LockProviders.connect("lock:zookeeper:///tumbler?namespace=billing", p);
 * }</pre>
 *
 * Thread safe.
 */
public final class ZooKeeperLockProvider implements LockProvider {
  /** The connect property under which an application passes its started {@link CuratorFramework}. */
  public static final String CURATOR = "curator";

  /** The provider's version. */
  public static final String VERSION = TumblerVersion.current();

  @Override
  public String scheme() {
    return "zookeeper";
  }

  @Override
  public ProviderInfo info() {
    return new ProviderInfo("zookeeper", "Tumbler ZooKeeper provider", VERSION,
        "ZooKeeper ensemble through Apache Curator: fair locks, read/write locks, semaphores, zxid fencing",
        ZooKeeperLockService.CAPABILITIES);
  }

  @Override
  public LockService connect(LockUrl url, Properties info) {
    Object given = info == null ? null : info.get(CURATOR);
    if (given != null && !(given instanceof CuratorFramework)) {
      throw new InvalidLockUrlException("connect property '" + CURATOR + "' is a " + given.getClass().getName()
          + ", not an org.apache.curator.framework.CuratorFramework");
    }
    ServiceInfo serviceInfo = new ServiceInfo("zookeeper", VERSION, url.toString(), ZooKeeperLockService.CAPABILITIES);
    if (given instanceof CuratorFramework client) {
      ZooKeeperSettings settings = ZooKeeperSettings.fromUrl(url, "the application's Curator client ("
          + client.getZookeeperClient().getCurrentConnectionString() + ")");
      return ZooKeeperLockService.connect(serviceInfo, settings, client, Ticker.system());
    }
    return ZooKeeperLockService.connect(serviceInfo, ZooKeeperSettings.fromUrl(url), Ticker.system());
  }

  @Override
  public String toString() {
    return "ZooKeeperLockProvider[" + VERSION + "]";
  }
}
