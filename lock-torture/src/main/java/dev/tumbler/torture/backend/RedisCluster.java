package dev.tumbler.torture.backend;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * A real Redis Cluster of masters (and, if asked, one replica each) on loopback ports, formed the way an
 * operator would by hand: each master gets an equal share of the 16384 slots
 * ({@code CLUSTER ADDSLOTSRANGE}), the first node meets the others ({@code CLUSTER MEET}), each replica
 * follows its master ({@code CLUSTER REPLICATE}), and the set-up is ready when every running node reports
 * {@code cluster_state:ok} with every slot served and knows every node. A node's {@code nodes.conf} keeps
 * its membership, so a killed node that is started again rejoins (empty: there is no persistence). Nodes time out
 * after 2 s ({@code cluster-node-timeout}): a replica takes over a dead master's slots a few seconds after.
 */
public final class RedisCluster implements AutoCloseable {
  public static final int SLOTS = 16384;

  private final Path dir;
  /** Whether {@link #close()} deletes {@link #dir} (a temporary one). */
  private boolean ownsDir;
  private final int masters;
  private final List<RedisProcess> nodes;
  private final List<Integer> busPorts;

  private RedisCluster(Path dir, int masters, List<RedisProcess> nodes, List<Integer> busPorts) {
    this.dir = dir;
    this.masters = masters;
    this.nodes = nodes;
    this.busPorts = busPorts;
  }

  /** {@code masters} masters, no replicas. */
  public static RedisCluster start(int masters) {
    return start(masters, false);
  }

  /** {@code masters} masters and, with {@code replicas}, one replica of each (nodes {@code masters..2*masters-1}). */
  public static RedisCluster start(int masters, boolean replicas) {
    RedisCluster started = start(Processes.tempDir("tumbler-cluster"), masters, replicas);
    started.ownsDir = true;
    return started;
  }

  /** As {@link #start(int, boolean)}, with the nodes' files and logs in {@code dir} (kept: its logs). */
  public static RedisCluster start(Path dir, int masters, boolean replicas) {
    List<RedisProcess> nodes = new ArrayList<>();
    List<Integer> busPorts = new ArrayList<>();
    try {
      for (int i = 0; i < (replicas ? 2 : 1) * masters; i++) {
        int port = Processes.freePort();
        // the bus port is set, not port + 10000, which may be taken or above 65535
        int bus = Processes.freePort();
        busPorts.add(bus);
        nodes.add(RedisProcess.start(dir, port, List.of("cluster-enabled yes", "cluster-config-file nodes-" + port + ".conf",
            "cluster-port " + bus, "cluster-node-timeout 2000", "enable-debug-command local"), false,
            (i < masters ? "master-" : "replica-") + (i % masters + 1)));
      }
      RedisCluster c = new RedisCluster(dir, masters, nodes, busPorts);
      c.form();
      return c;
    } catch (RuntimeException e) {
      nodes.forEach(RedisProcess::close);
      throw e;
    }
  }

  private void form() {
    for (int i = 0; i < masters; i++) {
      int from = SLOTS * i / masters;
      int to = SLOTS * (i + 1) / masters - 1;
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
    for (int i = masters; i < nodes.size(); i++) {
      String masterId;
      try (Jedis m = nodes.get(i - masters).client()) {
        masterId = m.clusterMyId();
      }
      RedisProcess replica = nodes.get(i);
      // a replica can follow only a master it has heard of through the bus
      Processes.await(Duration.ofSeconds(30), "node " + replica.port() + " to follow its master", () -> {
        try (Jedis r = replica.client()) {
          r.clusterReplicate(masterId);
          return true;
        } catch (RuntimeException e) {
          return false;
        }
      });
    }
    awaitOk();
    for (RedisProcess replica : nodes.subList(masters, nodes.size())) {
      Processes.await(Duration.ofSeconds(30), "replica " + replica.port() + " to sync", () -> {
        try (Jedis r = replica.client()) {
          return r.info("replication").contains("master_link_status:up");
        } catch (RuntimeException e) {
          return false;
        }
      });
    }
  }

  /** Waits until every running node says {@code cluster_state:ok}, serves every slot and knows every node. */
  public void awaitOk() {
    Processes.await(Duration.ofSeconds(30), "cluster_state:ok on every node", () -> {
      for (RedisProcess n : nodes) {
        if (!n.isRunning()) {
          continue;
        }
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

  /** Whether a running node says every slot is served, each by a master that runs: a dead master was replaced. */
  public boolean servedByRunningNodes() {
    for (RedisProcess n : nodes) {
      if (!n.isRunning()) {
        continue;
      }
      try (Jedis j = n.client()) {
        long served = 0;
        for (Object range : j.clusterSlots()) {
          List<?> r = (List<?>) range;
          int port = Math.toIntExact((Long) ((List<?>) r.get(2)).get(1));
          if (nodes.stream().noneMatch(p -> p.port() == port && p.isRunning())) {
            return false;
          }
          served += (Long) r.get(1) - (Long) r.get(0) + 1;
        }
        return served == SLOTS;
      } catch (RuntimeException e) {
        // ask another node
      }
    }
    return false;
  }

  /** The node that serves {@code key}'s slot as master now, as a running node sees it. */
  public RedisProcess masterOf(String key) {
    int slot = JedisClusterCRC16.getSlot(key);
    for (RedisProcess n : nodes) {
      if (!n.isRunning()) {
        continue;
      }
      try (Jedis j = n.client()) {
        for (Object range : j.clusterSlots()) {
          List<?> r = (List<?>) range;
          if ((Long) r.get(0) <= slot && slot <= (Long) r.get(1)) {
            int port = Math.toIntExact((Long) ((List<?>) r.get(2)).get(1));
            return nodes.stream().filter(p -> p.port() == port).findFirst().orElseThrow();
          }
        }
      }
    }
    throw new IllegalStateException("no running node serves slot " + slot);
  }

  /** Every node's address, masters first. */
  public List<String> addresses() {
    return nodes.stream().map(RedisProcess::address).toList();
  }

  /** Every node: the masters as formed, then their replicas (which is which changes with failovers). */
  public List<RedisProcess> nodes() {
    return nodes;
  }

  @Override
  public void close() {
    nodes.forEach(RedisProcess::close);
    if (ownsDir) {
      Processes.delete(dir);
    }
  }
}
