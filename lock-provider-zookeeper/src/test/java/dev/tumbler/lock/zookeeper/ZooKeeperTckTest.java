package dev.tumbler.lock.zookeeper;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;
import dev.tumbler.lock.tck.ProxiedTarget;
import dev.tumbler.lock.tck.TcpProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.apache.curator.test.TestingServer;

/**
 * The TCK against one real in-process ZooKeeper server. Every service reaches the server through its
 * own {@link TcpProxy}, so one client can be cut off (blackholed: its session then expires on the server)
 * without touching the others; the server itself can be stopped and restarted on its port and data.
 */
class ZooKeeperTckTest extends LockTck {

  /** 3 s: the ZooKeeper client declares a connection dead after 2/3 of it, so 2 s on a loaded machine is too tight. */
  static final Duration LEASE = Duration.ofSeconds(3);

  @Override
  protected TckTarget createTarget() throws Exception {
    return new Target(ZooKeeperServers.server());
  }

  static class Target extends ProxiedTarget {
    private final TestingServer server;

    Target(TestingServer server) {
      this.server = server;
    }

    @Override
    protected List<String> backend() {
      return List.of("127.0.0.1:" + server.getPort());
    }

    @Override
    protected LockService connect(List<String> addresses) {
      return LockProviders.connect("lock:zookeeper://" + addresses.get(0) + "/tck?sessionTimeout=" + LEASE.toMillis()
          + "ms&connectionTimeout=5s");
    }

    @Override
    public Duration leaseTime() {
      return LEASE;
    }

    @Override
    public Optional<String> url() {
      return Optional.of("lock:zookeeper://127.0.0.1:" + server.getPort() + "/tck?sessionTimeout=" + LEASE.toMillis() + "ms");
    }

    @Override
    public Set<Fault> supported() {
      return Set.of(Fault.CUT_OFF_CLIENT, Fault.PAUSE_RENEWALS, Fault.CRASH_BACKEND);
    }

    @Override
    public void crashBackend() {
      try {
        server.stop();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public void restartBackend() {
      try {
        server.restart();
      } catch (Exception e) {
        throw new IllegalStateException("cannot restart the ZooKeeper server", e);
      }
    }

    @Override
    protected void closeBackend() {
      try {
        server.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
