package dev.tumbler.bench;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import dev.tumbler.peer.provider.LoopbackCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/** Hazelcast's CP subsystem on 3 members in this JVM: the {@code FencedLock} anchor of the benches. */
final class HazelcastCp {
  private HazelcastCp() {}

  /**
   * Starts 3 CP members, each on a loopback port of its own that was free a moment ago, and waits for CP
   * discovery. Each member binds exactly its port and looks for the others at theirs only: a port range
   * ({@code setPortCount}) from one free port would also try the ports next to it, which another server
   * of the same run may hold (a native node did, and Hazelcast's join attempts hung its handshakes and the
   * run failed).
   *
   * @param resources where each member's end is added: {@code terminate}, since a graceful shutdown of CP
   *     members one by one waits minutes for the CP groups to shrink
   */
  static List<HazelcastInstance> start(String clusterPrefix, List<AutoCloseable> resources) throws Exception {
    List<Integer> ports = LoopbackCluster.freePorts(3);
    String cluster = clusterPrefix + UUID.randomUUID();
    List<HazelcastInstance> members = new ArrayList<>();
    for (int port : ports) {
      Config config = new Config();
      config.setClusterName(cluster);
      config.getNetworkConfig().setPort(port).setPortAutoIncrement(false);
      JoinConfig join = config.getNetworkConfig().getJoin();
      join.getMulticastConfig().setEnabled(false);
      join.getAutoDetectionConfig().setEnabled(false);
      for (int p : ports) {
        join.getTcpIpConfig().setEnabled(true).addMember("127.0.0.1:" + p);
      }
      config.getNetworkConfig().getInterfaces().setEnabled(true).addInterface("127.0.0.1");
      config.getCPSubsystemConfig().setCPMemberCount(3);
      HazelcastInstance h = Hazelcast.newHazelcastInstance(config);
      members.add(h);
      resources.add(() -> h.getLifecycleService().terminate());
    }
    if (!members.get(0).getCPSubsystem().getCPSubsystemManagementService()
        .awaitUntilDiscoveryCompleted(2, TimeUnit.MINUTES)) {
      throw new IllegalStateException("Hazelcast CP discovery did not complete");
    }
    return members;
  }
}
