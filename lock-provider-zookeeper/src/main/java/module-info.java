/**
 * The ZooKeeper provider ({@code lock:zookeeper://…}), on Apache Curator. It exports nothing: applications
 * reach it through {@code dev.tumbler.lock} and the URL, and {@code unwrap} hands out Curator's own types.
 *
 * <p>Curator and ZooKeeper have no module descriptors; they are automatic modules named after their jars.
 * <b>Warning:</b> the {@code zookeeper} and {@code zookeeper-jute} jars share two packages, which the module
 * system refuses; on the module path, add jute to the {@code zookeeper} module
 * ({@code --patch-module zookeeper=zookeeper-jute-<version>.jar}) instead of listing it (see the README).
 */
module dev.tumbler.lock.zookeeper {
  requires dev.tumbler.lock;
  requires curator.client;
  requires curator.framework;
  requires curator.recipes;
  requires zookeeper;
  requires org.slf4j;

  provides dev.tumbler.lock.spi.LockProvider with dev.tumbler.lock.zookeeper.ZooKeeperLockProvider;
}
