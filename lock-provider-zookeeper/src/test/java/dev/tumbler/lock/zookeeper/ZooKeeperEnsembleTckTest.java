package dev.tumbler.lock.zookeeper;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.FaultInjector;
import dev.tumbler.lock.tck.LockTck;
import dev.tumbler.lock.tck.TckTarget;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;

/**
 * The TCK's fault-tolerance group against a real three-server ZooKeeper ensemble (Curator's
 * {@code TestingCluster}, in process): one server crashes and restarts while locks go on being granted.
 * Every other group runs against a single server in {@link ZooKeeperTckTest}; they are excluded here with
 * that reason, so that the ensemble costs only what it adds.
 */
class ZooKeeperEnsembleTckTest extends LockTck {

  @Override
  protected TckTarget createTarget() throws Exception {
    return new Ensemble(ZooKeeperServers.cluster(3));
  }

  @Override
  protected Map<String, String> excludedTests() {
    return everyGroupBut(Set.of("FaultTolerance"), "run against a single server by ZooKeeperTckTest");
  }

  static final class Ensemble implements TckTarget, FaultInjector {
    private final TestingCluster cluster;
    private InstanceSpec crashed;

    Ensemble(TestingCluster cluster) {
      this.cluster = cluster;
    }

    @Override
    public LockService open() {
      return LockProviders.connect("lock:zookeeper://" + cluster.getConnectString() + "/tck-ensemble?sessionTimeout="
          + ZooKeeperTckTest.LEASE.toMillis() + "ms&connectionTimeout=5s");
    }

    @Override
    public Duration leaseTime() {
      return ZooKeeperTckTest.LEASE;
    }

    @Override
    public Optional<FaultInjector> faults() {
      return Optional.of(this);
    }

    @Override
    public Set<Fault> supported() {
      return Set.of(Fault.CRASH_MINORITY);
    }

    /**
     * Kills a follower that no spared client's session is connected to. Not the leader: when the leader
     * goes, every follower drops its clients while a new one is elected, so every session is suspended for
     * a moment (the provider then tells holders their leases are lost, as it must not trust them) — a
     * pause of the whole service, not the loss of a minority its clients need not notice.
     */
    @Override
    public void crashMinority(Collection<LockService> spare) {
      Set<InstanceSpec> used = new HashSet<>();
      for (LockService s : spare) {
        used.add(serverOf(s));
      }
      for (InstanceSpec spec : cluster.getInstances()) {
        if (!used.contains(spec) && !leads(spec)) {
          try {
            if (cluster.killServer(spec)) {
              crashed = spec;
              return;
            }
          } catch (Exception e) {
            throw new IllegalStateException("cannot kill ZooKeeper server " + spec.getConnectString(), e);
          }
        }
      }
      throw new IllegalStateException("every follower of the ensemble serves a spared client: " + used);
    }

    /**
     * The server {@code s}'s session is connected to now. A client between two connections has none: it is waited
     * for (a few seconds), never taken as "none", which would let the crash hit the server the client comes back to.
     */
    private InstanceSpec serverOf(LockService s) {
      long end = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
      try {
        while (true) {
          InstanceSpec at = cluster.findConnectionInstance(
              s.unwrap(CuratorFramework.class).getZookeeperClient().getZooKeeper());
          if (at != null) {
            return at;
          }
          if (System.nanoTime() - end > 0) {
            throw new IllegalStateException("the spared client " + s + " was connected to no server for 10 s");
          }
          Thread.sleep(50);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while finding the server of " + s, e);
      } catch (IllegalStateException e) {
        throw e;
      } catch (Exception e) {
        throw new IllegalStateException("cannot tell which server " + s + " is connected to", e);
      }
    }

    /**
     * Whether {@code spec} is the ensemble's leader, by the {@code srvr} command on its client port. A server that is
     * "not currently serving requests" is still joining the ensemble (after an earlier test's restart, slow on a busy
     * machine: a suite run failed on it): it is asked again for up to {@link #SETTLE} before the fault is refused.
     */
    private static boolean leads(InstanceSpec spec) {
      long end = System.nanoTime() + SETTLE.toNanos();
      while (true) {
        String answer = srvr(spec);
        if (answer.contains("Mode: ")) {
          return answer.contains("Mode: leader");
        }
        if (!answer.contains("not currently serving") || System.nanoTime() - end > 0) {
          throw new IllegalStateException("ZooKeeper server " + spec.getConnectString() + " answered srvr with: "
              + answer + (answer.contains("not currently serving") ? " (still after " + SETTLE.toSeconds() + " s)" : ""));
        }
        try {
          Thread.sleep(200);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while waiting for ZooKeeper server " + spec.getConnectString()
              + " to serve", e);
        }
      }
    }

    /** How long a server that is joining the ensemble is waited for before a fault is chosen. */
    private static final java.time.Duration SETTLE = java.time.Duration.ofSeconds(30);

    private static String srvr(InstanceSpec spec) {
      try (java.net.Socket socket = new java.net.Socket("127.0.0.1", spec.getPort())) {
        socket.setSoTimeout(5_000);
        socket.getOutputStream().write("srvr".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
        return new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot ask ZooKeeper server " + spec.getConnectString() + " its mode", e);
      }
    }

    @Override
    public void restartMinority() {
      if (crashed == null) {
        return;
      }
      try {
        cluster.restartServer(crashed);
        crashed = null;
      } catch (Exception e) {
        throw new IllegalStateException("cannot restart ZooKeeper server " + crashed.getConnectString(), e);
      }
    }

    @Override
    public void close() {
      try {
        cluster.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
