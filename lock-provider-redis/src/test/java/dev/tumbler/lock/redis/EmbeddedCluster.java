package dev.tumbler.lock.redis;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Protocol;

/**
 * A real Redis Cluster of three masters (no replicas) on loopback ports, formed the way an operator would
 * by hand: each node gets a third of the 16384 slots ({@code CLUSTER ADDSLOTSRANGE}), the first meets the
 * others ({@code CLUSTER MEET}), and the set-up is ready when every node reports {@code cluster_state:ok}
 * and knows all three.
 */
final class EmbeddedCluster implements AutoCloseable {
  static final int SLOTS = 16384;

  private final Path dir;
  private final List<RedisProcess> nodes;
  private final List<Integer> busPorts;

  private EmbeddedCluster(Path dir, List<RedisProcess> nodes, List<Integer> busPorts) {
    this.dir = dir;
    this.nodes = nodes;
    this.busPorts = busPorts;
  }

  static EmbeddedCluster start(int masters) {
    Path dir = RedisProcess.tempDir("tumbler-cluster");
    List<RedisProcess> nodes = new ArrayList<>();
    List<Integer> busPorts = new ArrayList<>();
    try {
      for (int i = 0; i < masters; i++) {
        int port = EmbeddedRedis.freePort();
        // the bus port is set, not port + 10000, which may be taken or above 65535
        int bus = EmbeddedRedis.freePort();
        busPorts.add(bus);
        nodes.add(RedisProcess.start(dir, port, List.of("cluster-enabled yes", "cluster-config-file nodes-" + port + ".conf",
            "cluster-port " + bus, "cluster-node-timeout 2000", "enable-debug-command local"), false));
      }
      EmbeddedCluster c = new EmbeddedCluster(dir, nodes, busPorts);
      c.form();
      return c;
    } catch (RuntimeException e) {
      nodes.forEach(RedisProcess::close);
      RedisProcess.delete(dir);
      throw e;
    }
  }

  private void form() {
    for (int i = 0; i < nodes.size(); i++) {
      int from = SLOTS * i / nodes.size();
      int to = SLOTS * (i + 1) / nodes.size() - 1;
      try (Jedis j = nodes.get(i).client()) {
        j.sendCommand(Protocol.Command.CLUSTER, "ADDSLOTSRANGE", Integer.toString(from), Integer.toString(to));
      }
    }
    try (Jedis first = nodes.getFirst().client()) {
      for (int i = 1; i < nodes.size(); i++) {
        first.sendCommand(Protocol.Command.CLUSTER, "MEET", "127.0.0.1", Integer.toString(nodes.get(i).port()),
            Integer.toString(busPorts.get(i)));
      }
    }
    awaitOk();
  }

  /** Waits until every running node says {@code cluster_state:ok} and knows every node. */
  void awaitOk() {
    RedisProcess.await(Duration.ofSeconds(30), "cluster_state:ok on every node", () -> {
      for (RedisProcess n : nodes) {
        try (Jedis j = n.client()) {
          String info = j.clusterInfo();
          if (!info.contains("cluster_state:ok") || !info.contains("cluster_known_nodes:" + nodes.size())
              || !info.contains("cluster_slots_ok:" + SLOTS)) {
            return false;
          }
        } catch (RuntimeException e) {
          return false;
        }
      }
      return true;
    });
  }

  List<String> addresses() {
    return nodes.stream().map(RedisProcess::address).toList();
  }

  List<RedisProcess> nodes() {
    return nodes;
  }

  @Override
  public void close() {
    nodes.forEach(RedisProcess::close);
    RedisProcess.delete(dir);
  }
}
