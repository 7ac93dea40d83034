package dev.tumbler.lock.zookeeper;

import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ProviderInfo;
import dev.tumbler.lock.ServiceInfo;
import dev.tumbler.lock.spi.LockProvider;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.lock.spi.TumblerVersion;
import java.util.Properties;

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
 * CuratorFramework.class)} gives the service's Curator client. Thread safe.
 */
public final class ZooKeeperLockProvider implements LockProvider {
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
    ZooKeeperSettings settings = ZooKeeperSettings.fromUrl(url);
    ServiceInfo serviceInfo = new ServiceInfo("zookeeper", VERSION, url.toString(), ZooKeeperLockService.CAPABILITIES);
    return ZooKeeperLockService.connect(serviceInfo, settings, Ticker.system());
  }

  @Override
  public String toString() {
    return "ZooKeeperLockProvider[" + VERSION + "]";
  }
}
