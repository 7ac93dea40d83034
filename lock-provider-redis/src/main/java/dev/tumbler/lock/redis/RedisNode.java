package dev.tumbler.lock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import redis.clients.jedis.CommandObjects;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.JedisSentineled;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.exceptions.JedisRedirectionException;
import redis.clients.jedis.providers.SentineledConnectionProvider;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * One Redis server, as the lock layer sees it: a pool of command connections and the {@link WakeupHub} of
 * its release channels. The server is a standalone one ({@link JedisPooled}), a Redis Cluster
 * ({@link JedisCluster}: each script goes to the master of its keys' slot) or a primary found through
 * sentinels ({@link JedisSentineled}: the pool moves to the new primary after a failover). Scripts run with
 * EVALSHA and fall back to EVAL once when the server does not know the script (after a restart, a failover
 * or SCRIPT FLUSH), which also caches it again. Thread safe.
 */
final class RedisNode implements AutoCloseable {
  private static final CommandObjects COMMANDS = new CommandObjects();
  /** Calls of the cluster client: the first, and one more after a connection failure or a redirection. */
  private static final int CLUSTER_ATTEMPTS = 3;

  private final String description;
  private final UnifiedJedis jedis;
  private final WakeupHub hub;
  /** Whether {@link #jedis} is this node's own (closed with it), not the application's. */
  private final boolean owned;

  RedisNode(HostAndPort address, JedisClientConfig config, Duration timeout, String controlChannel, Duration heartbeat) {
    this(address.toString(), new JedisPooled(pool(timeout), address, config),
        new WakeupHub(address, config, controlChannel, heartbeat));
  }

  private RedisNode(String description, UnifiedJedis jedis, WakeupHub hub) {
    this(description, jedis, hub, true);
  }

  private RedisNode(String description, UnifiedJedis jedis, WakeupHub hub, boolean owned) {
    this.description = description;
    this.jedis = jedis;
    this.hub = hub;
    this.owned = owned;
  }

  /**
   * The application's own client ({@link JedisPooled}, {@link JedisCluster} or {@link JedisSentineled}): its pool
   * runs every script, its hub subscribes through it (one pooled connection, held while the node lives), and
   * {@link #close()} leaves it open.
   *
   * @param description names the client in messages and thread names
   */
  static RedisNode application(UnifiedJedis client, String description, String controlChannel, Duration heartbeat) {
    return new RedisNode(description, client, new WakeupHub(client, description, controlChannel, heartbeat), false);
  }

  /**
   * A Redis Cluster found from {@code seeds}. Its hub listens on any node (a PUBLISH reaches every node's
   * subscribers over the cluster bus) and moves to the next known node when its connection breaks.
   *
   * @throws redis.clients.jedis.exceptions.JedisException if no seed answers
   */
  static RedisNode cluster(List<HostAndPort> seeds, JedisClientConfig config, Duration timeout, String controlChannel,
      Duration heartbeat) {
    JedisCluster cluster = new JedisCluster(new LinkedHashSet<>(seeds), config, CLUSTER_ATTEMPTS, timeout, pool(timeout));
    AtomicInteger next = new AtomicInteger();
    Supplier<HostAndPort> anyNode = () -> {
      List<String> known = new ArrayList<>(cluster.getClusterNodes().keySet());
      known.sort(null);
      int i = Math.floorMod(next.getAndIncrement(), known.size() + seeds.size());
      return i < known.size() ? HostAndPort.from(known.get(i)) : seeds.get(i - known.size());
    };
    String label = "cluster" + seeds;
    return new RedisNode(label, cluster, new WakeupHub(anyNode, label, config, controlChannel, heartbeat));
  }

  /**
   * The primary the {@code sentinels} monitor as {@code master}. Its hub asks the sentinels for the
   * current primary at every reconnect, so it follows a failover (and, while no sentinel answers, takes
   * the primary the client last heard of).
   *
   * @param config for the primary and its replicas (user, password, database)
   * @param sentinelConfig for the sentinels (their own user and password, if any)
   * @throws redis.clients.jedis.exceptions.JedisException if no sentinel knows the primary
   */
  static RedisNode sentinel(String master, List<HostAndPort> sentinels, JedisClientConfig config,
      JedisClientConfig sentinelConfig, Duration timeout, String controlChannel, Duration heartbeat) {
    SentineledConnectionProvider provider = new SentineledConnectionProvider(master, config, pool(timeout),
        new LinkedHashSet<>(sentinels), sentinelConfig);
    JedisSentineled client = new JedisSentineled(provider);
    Supplier<HostAndPort> primary = () -> {
      for (HostAndPort s : sentinels) {
        try (Jedis j = new Jedis(s, sentinelConfig)) {
          List<String> a = j.sentinelGetMasterAddrByName(master);
          if (a != null && a.size() == 2) {
            return new HostAndPort(a.get(0), Integer.parseInt(a.get(1)));
          }
        } catch (RuntimeException e) {
          // this sentinel is down or does not know the primary: ask the next
        }
      }
      return provider.getCurrentMaster();
    };
    String label = "sentinel:" + master + sentinels;
    return new RedisNode(label, client, new WakeupHub(primary, label, config, controlChannel, heartbeat));
  }

  private static ConnectionPoolConfig pool(Duration timeout) {
    ConnectionPoolConfig pool = new ConnectionPoolConfig();
    // waiters hold no connection while they wait, so a modest pool serves many threads
    pool.setMaxTotal(64);
    pool.setMaxIdle(64);
    pool.setMinIdle(0);
    pool.setMaxWait(timeout);
    pool.setTestOnBorrow(false);
    pool.setJmxEnabled(false);
    return pool;
  }

  UnifiedJedis jedis() {
    return jedis;
  }

  WakeupHub hub() {
    return hub;
  }

  /**
   * Runs {@code script}: one round trip (two the first time a server sees it). A script that is safe to
   * run twice ({@code idempotent}: renewals, releases, reads) is retried once on a connection failure,
   * since a pooled connection may have died quietly (server restart, idle timeout); an acquire is not,
   * as it may have been granted before the reply was lost (see {@link RedisLockService}).
   */
  Object eval(Scripts.Script script, List<String> keys, List<String> args, boolean idempotent) {
    if (!idempotent && jedis instanceof JedisCluster cluster) {
      return evalOnceOnSlot(cluster, script, keys, args);
    }
    try {
      return evalOnce(script, keys, args);
    } catch (JedisConnectionException e) {
      if (!idempotent) {
        throw e;
      }
      return evalOnce(script, keys, args);
    }
  }

  private Object evalOnce(Scripts.Script script, List<String> keys, List<String> args) {
    try {
      return jedis.evalsha(script.sha(), keys, args);
    } catch (JedisNoScriptException e) {
      return jedis.eval(script.source(), keys, args);
    }
  }

  /**
   * A script that must not run twice, on a cluster: on the connection of its slot's master, once. The
   * cluster client's own retries would run an acquire again after a lost reply, with the same owner; the
   * second run would be refused by the grant the first one made, and that grant would be nobody's until
   * its term ends. A redirection (MOVED, ASK) means the script did not run: the slot map is refreshed
   * (any keyed call through the cluster client follows the redirection and renews it) and it is tried again. A
   * connection that fails (the slot's master died) may have run it: the failure is the caller's to undo, and the slot
   * map is refreshed the same way first, so that the next attempt goes to the master that took the slot over (this
   * connection's failure alone does not renew it: the attempts of a wait failed against a dead master until its end).
   */
  private static Object evalOnceOnSlot(JedisCluster cluster, Scripts.Script script, List<String> keys, List<String> args) {
    int slot = JedisClusterCRC16.getSlot(keys.getFirst());
    for (int redirects = 0; ; redirects++) {
      try (Connection c = cluster.getConnectionFromSlot(slot)) {
        try {
          return c.executeCommand(COMMANDS.evalsha(script.sha(), keys, args));
        } catch (JedisNoScriptException e) {
          return c.executeCommand(COMMANDS.eval(script.source(), keys, args));
        }
      } catch (JedisRedirectionException e) {
        if (redirects + 1 >= CLUSTER_ATTEMPTS) {
          throw e;
        }
        cluster.pttl(keys.getFirst());
      } catch (JedisConnectionException e) {
        try {
          cluster.pttl(keys.getFirst());
        } catch (RuntimeException refresh) {
          e.addSuppressed(refresh);
        }
        throw e;
      }
    }
  }

  /**
   * {@code SET holder owner NX PX ttlMs}, {@code EXISTS line}, {@code INCR fence} and
   * {@code PEXPIRE fence fenceTtlMs}, pipelined on one connection of a standalone server: one round trip of
   * four plain commands, no script.
   *
   * @return their four replies (the SET's is null when the key was taken)
   * @throws UnsupportedOperationException on a cluster or sentinel node (whose scripts floor every token)
   */
  List<Object> setIfFreePipelined(String holder, String owner, String ttlMs, String line, String fence,
      String fenceTtlMs) {
    if (!(jedis instanceof JedisPooled pooled)) {
      throw new UnsupportedOperationException("pipelined grants are for a standalone server");
    }
    try (Connection c = pooled.getPool().getResource()) {
      c.sendCommand(Protocol.Command.SET, holder, owner, "NX", "PX", ttlMs);
      c.sendCommand(Protocol.Command.EXISTS, line);
      c.sendCommand(Protocol.Command.INCR, fence);
      c.sendCommand(Protocol.Command.PEXPIRE, fence, fenceTtlMs);
      List<Object> replies = c.getMany(4);
      for (Object r : replies) {
        if (r instanceof RuntimeException e) {
          throw e;
        }
      }
      return replies;
    }
  }

  /**
   * Checks the server answers; throws the client's exception otherwise. A cluster client has read the
   * slot map from a node that answered when it was made (a PING would go to every node, and fail while
   * one master is down before its replica took over).
   */
  void ping() {
    if (jedis instanceof JedisCluster) {
      return;
    }
    jedis.ping();
  }

  @Override
  public void close() {
    hub.close();
    if (owned) {
      jedis.close();
    }
  }

  @Override
  public String toString() {
    return description;
  }
}
