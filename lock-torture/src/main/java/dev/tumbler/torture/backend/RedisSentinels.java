package dev.tumbler.torture.backend;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import redis.clients.jedis.Jedis;

/**
 * A real sentinel set-up on loopback ports: a primary, one replica of it, and three sentinels that watch
 * the primary as {@value #MASTER} with a quorum of two, declare it down after one second without an
 * answer and may retry a failover after five. Ready when the replica is in sync and every sentinel knows
 * the replica and the two other sentinels (so that a failover can start at once).
 */
public final class RedisSentinels implements AutoCloseable {
  /** The name the sentinels watch the primary by (the URL's {@code master}). */
  public static final String MASTER = "tumbler-primary";

  private final Path dir;
  /** Whether {@link #close()} deletes {@link #dir} (a temporary one). */
  private boolean ownsDir;
  private final List<RedisProcess> servers;
  private final List<RedisProcess> sentinels;

  private RedisSentinels(Path dir, List<RedisProcess> servers, List<RedisProcess> sentinels) {
    this.dir = dir;
    this.servers = servers;
    this.sentinels = sentinels;
  }

  /** Starts the set-up in a temporary directory, deleted by {@link #close()}. */
  public static RedisSentinels start() {
    RedisSentinels started = start(Processes.tempDir("tumbler-sentinel"));
    started.ownsDir = true;
    return started;
  }

  /** As {@link #start()}, with the servers' files and logs in {@code dir} (kept: its logs). */
  public static RedisSentinels start(Path dir) {
    List<RedisProcess> servers = new ArrayList<>();
    List<RedisProcess> sentinels = new ArrayList<>();
    try {
      List<String> base = List.of("enable-debug-command local");
      RedisProcess primary = RedisProcess.start(dir, Processes.freePort(), base, false, "redis-1");
      servers.add(primary);
      List<String> replicaSettings = new ArrayList<>(base);
      replicaSettings.add("replicaof 127.0.0.1 " + primary.port());
      servers.add(RedisProcess.start(dir, Processes.freePort(), replicaSettings, false, "redis-2"));
      Processes.await(Duration.ofSeconds(20), "the replica to sync", () -> {
        try (Jedis j = servers.get(1).client()) {
          return j.info("replication").contains("master_link_status:up");
        }
      });
      for (int i = 0; i < 3; i++) {
        sentinels.add(RedisProcess.start(dir, Processes.freePort(), List.of(
            "sentinel monitor " + MASTER + " 127.0.0.1 " + primary.port() + " 2",
            "sentinel down-after-milliseconds " + MASTER + " 1000",
            "sentinel failover-timeout " + MASTER + " 5000",
            "sentinel parallel-syncs " + MASTER + " 1"), true, "sentinel-" + (i + 1)));
      }
      RedisSentinels s = new RedisSentinels(dir, servers, sentinels);
      s.awaitWatching();
      return s;
    } catch (RuntimeException e) {
      sentinels.forEach(RedisProcess::close);
      servers.forEach(RedisProcess::close);
      throw e;
    }
  }

  /** Waits until every sentinel knows a replica of the primary and the two other sentinels. */
  private void awaitWatching() {
    Processes.await(Duration.ofSeconds(30), "every sentinel to know the replica and the other sentinels", () -> {
      for (RedisProcess s : sentinels) {
        try (Jedis j = s.client()) {
          if (j.sentinelReplicas(MASTER).isEmpty() || j.sentinelSentinels(MASTER).size() < sentinels.size() - 1) {
            return false;
          }
        } catch (RuntimeException e) {
          return false;
        }
      }
      return true;
    });
  }

  /** The URL of this set-up: its sentinels, {@code mode=sentinel}, {@code master}, and {@code params}. */
  public String url(String params) {
    return "lock:redis://" + String.join(",", sentinels.stream().map(RedisProcess::address).toList())
        + "?mode=sentinel&master=" + MASTER + "&" + params;
  }

  /** The primary and its replica (which is which changes with a failover: see {@link #primary()}). */
  public List<RedisProcess> servers() {
    return servers;
  }

  /** The server the sentinels name as primary now. */
  public RedisProcess primary() {
    for (RedisProcess s : sentinels) {
      try (Jedis j = s.client()) {
        List<String> a = j.sentinelGetMasterAddrByName(MASTER);
        int port = Integer.parseInt(a.get(1));
        return servers.stream().filter(p -> p.port() == port).findFirst().orElseThrow();
      } catch (RuntimeException e) {
        // ask the next sentinel
      }
    }
    throw new IllegalStateException("no sentinel names a primary");
  }

  /**
   * Waits until a majority of the sentinels names a primary other than {@code old} and that server says
   * it is a master.
   */
  public RedisProcess awaitPromotedOtherThan(RedisProcess old, Duration max) {
    RedisProcess[] promoted = new RedisProcess[1];
    Processes.await(max, "the sentinels to promote a replica", () -> {
      int agree = 0;
      for (RedisProcess s : sentinels) {
        try (Jedis j = s.client()) {
          if (Integer.parseInt(j.sentinelGetMasterAddrByName(MASTER).get(1)) != old.port()) {
            agree++;
          }
        } catch (RuntimeException e) {
          // not counted
        }
      }
      if (agree < 2) {
        return false;
      }
      RedisProcess p = primary();
      try (Jedis j = p.client()) {
        if (p != old && j.info("replication").contains("role:master")) {
          promoted[0] = p;
          return true;
        }
      } catch (RuntimeException e) {
        // not up yet
      }
      return false;
    });
    return promoted[0];
  }

  /** The three sentinels. */
  public List<RedisProcess> sentinels() {
    return sentinels;
  }

  @Override
  public void close() {
    sentinels.forEach(RedisProcess::close);
    servers.forEach(RedisProcess::close);
    if (ownsDir) {
      Processes.delete(dir);
    }
  }
}
