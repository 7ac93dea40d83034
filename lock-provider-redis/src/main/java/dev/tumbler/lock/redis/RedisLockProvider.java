package dev.tumbler.lock.redis;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ProviderInfo;
import dev.tumbler.lock.ServiceInfo;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.LockProvider;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.lock.spi.TumblerVersion;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;
import java.util.function.Supplier;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.JedisSentineled;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;

/**
 * The Redis provider: {@code lock:redis://[user:password@]host[:port][/db][?parameters]} for one server,
 * {@code lock:redis://h1,h2,h3[?...]&mode=redlock} for independent masters,
 * {@code lock:redis://h1,h2,h3?mode=cluster} for a Redis Cluster (seed nodes) and
 * {@code lock:redis://s1,s2,s3[/db]?mode=sentinel&master=<name>} for a primary watched by sentinels. Built
 * on Jedis.
 *
 * <p>Parameters: {@code leaseTime} (default 30s), {@code renew} ({@code auto}|{@code manual}),
 * {@code namespace}, {@code tls} (default false), {@code mode}
 * ({@code single}|{@code redlock}|{@code cluster}|{@code sentinel}), {@code master}, {@code sentinelUser}
 * and {@code sentinelPassword} (sentinel mode only),
 * {@code timeout} (connect and per-call socket timeout, default 2s), {@code recheck} (the longest a
 * waiter sleeps without a release notification, default 1s). Anything else is an error. See the module
 * README for what the provider guarantees, and what Redis cannot.
 *
 * <p>An application that has a Jedis client passes it in the connect properties under {@link #JEDIS}, with a URL
 * that names no hosts: a {@link JedisPooled} (one server), a {@link JedisCluster} or a {@link JedisSentineled}. The
 * service then runs on that client's pool and opens no connection of its own: it holds one of the pool's connections
 * for its release notifications while it lives, and closing the service leaves the client open. The client's
 * settings (servers, database, credentials, TLS, timeouts) are the connection's; the URL's {@code timeout} tells the
 * service how long one call on it may take: at least the client's socket timeout (default 2s).
 *
 * <pre>{@code
 * Properties p = new Properties();
 * p.put(RedisLockProvider.JEDIS, jedisPooled);
 * LockService locks = LockProviders.connect("lock:redis:///?namespace=billing&leaseTime=10s", p);
 * }</pre>
 *
 * <p>Stateless and thread safe; found by {@link java.util.ServiceLoader}.
 */
public final class RedisLockProvider implements LockProvider {
  /**
   * The connect property under which an application passes its Jedis client: a {@link JedisPooled},
   * {@link JedisCluster} or {@link JedisSentineled}.
   */
  public static final String JEDIS = "jedis";

  static final String VERSION = TumblerVersion.current();

  @Override
  public String scheme() {
    return "redis";
  }

  @Override
  public ProviderInfo info() {
    Set<dev.tumbler.lock.Capability> all = EnumSet.noneOf(dev.tumbler.lock.Capability.class);
    all.addAll(RedisLockService.SINGLE_CAPABILITIES);
    all.addAll(RedisLockService.REDLOCK_CAPABILITIES);
    return new ProviderInfo("redis", "Tumbler Redis provider (Jedis)", VERSION,
        "locks, read/write locks, semaphores and elections on one Redis server, Redis Cluster or a "
            + "sentinel-watched primary, or Redlock over independent masters",
        all);
  }

  @Override
  public LockService connect(LockUrl url, Properties info) {
    Object given = info == null ? null : info.get(JEDIS);
    if (given != null) {
      return connect(url, given, Ticker.system());
    }
    return connect(url, Ticker.system());
  }

  private static String jedisVersion() {
    String v = UnifiedJedis.class.getPackage().getImplementationVersion();
    return v == null ? "version unknown" : v;
  }

  /**
   * A service on the application's client {@code given} (see the class comment).
   *
   * @throws InvalidLockUrlException if {@code given} is not a client the provider takes, or the URL does not fit it
   */
  LockService connect(LockUrl url, Object given, Ticker ticker) {
    RedisConfig.Mode mode = switch (given) {
      case JedisCluster c -> RedisConfig.Mode.CLUSTER;
      case JedisSentineled s when !WakeupHub.canLendSafely() -> throw new InvalidLockUrlException("connect property '"
          + JEDIS + "' is a JedisSentineled, and this Jedis (" + jedisVersion() + ") keeps the connection of a "
          + "subscription where the provider cannot mark it to stay out of the client's pool after the release "
          + "subscription ends: use the Jedis version the Tumbler BOM names, or a lock:redis URL with mode=sentinel");
      case JedisSentineled s -> RedisConfig.Mode.SENTINEL;
      case JedisPooled p -> RedisConfig.Mode.SINGLE;
      default -> throw new InvalidLockUrlException("connect property '" + JEDIS + "' is a " + given.getClass().getName()
          + ", not one of the Jedis clients the provider takes: redis.clients.jedis.JedisPooled, JedisCluster or "
          + "JedisSentineled");
    };
    String description = "the application's " + given.getClass().getSimpleName() + " client";
    RedisConfig config = RedisConfig.forClient(url, mode, description);
    String clientId = RedisLockService.randomId();
    RedisKeys keys = new RedisKeys(config.lease().namespace());
    RedisNode node = RedisNode.application((UnifiedJedis) given, description, keys.controlChannel(clientId),
        config.recheck());
    try {
      checkReachable(config, List.of(node));
    } catch (RuntimeException e) {
      node.close();
      throw e;
    }
    Backend backend = mode == RedisConfig.Mode.SINGLE ? new Backend.Single(node) : new Backend.Replicated(node);
    return service(url, config, backend, keys, clientId, ticker);
  }

  /** {@link #connect(LockUrl, Properties)} with an injected clock. */
  LockService connect(LockUrl url, Ticker ticker) {
    RedisConfig config = RedisConfig.from(url);
    int timeoutMs = (int) config.timeout().toMillis();
    DefaultJedisClientConfig.Builder b = DefaultJedisClientConfig.builder()
        .connectionTimeoutMillis(timeoutMs)
        .socketTimeoutMillis(timeoutMs)
        .database(config.database())
        .ssl(config.tls())
        .clientName("tumbler")
        // saves a round trip per new connection, which matters when reconnecting under faults
        .clientSetInfoConfig(ClientSetInfoConfig.DISABLED);
    config.user().ifPresent(b::user);
    config.password().ifPresent(b::password);
    JedisClientConfig clientConfig = b.build();

    String clientId = RedisLockService.randomId();
    RedisKeys keys = new RedisKeys(config.lease().namespace());
    Backend backend = switch (config.mode()) {
      case SINGLE, REDLOCK -> independentServers(config, clientConfig, keys.controlChannel(clientId), ticker);
      case CLUSTER -> new Backend.Replicated(replicated(config, () -> RedisNode.cluster(addresses(config), clientConfig,
          config.timeout(), keys.controlChannel(clientId), config.recheck())));
      case SENTINEL -> new Backend.Replicated(replicated(config, () -> RedisNode.sentinel(config.master().orElseThrow(),
          addresses(config), clientConfig, sentinelConfig(config, timeoutMs), config.timeout(),
          keys.controlChannel(clientId), config.recheck())));
    };
    return service(url, config, backend, keys, clientId, ticker);
  }

  private static LockService service(LockUrl url, RedisConfig config, Backend backend, RedisKeys keys, String clientId,
      Ticker ticker) {
    Set<dev.tumbler.lock.Capability> caps = switch (config.mode()) {
      case SINGLE -> RedisLockService.SINGLE_CAPABILITIES;
      case REDLOCK -> RedisLockService.REDLOCK_CAPABILITIES;
      case CLUSTER, SENTINEL -> RedisLockService.REPLICATED_CAPABILITIES;
    };
    ServiceInfo serviceInfo = new ServiceInfo("redis", VERSION, url.toString(), caps);
    return new RedisLockService(config, serviceInfo, backend, keys, clientId, ticker);
  }

  private static Backend independentServers(RedisConfig config, JedisClientConfig clientConfig, String controlChannel,
      Ticker ticker) {
    List<RedisNode> nodes = new ArrayList<>();
    try {
      for (HostAndPort h : addresses(config)) {
        nodes.add(new RedisNode(h, clientConfig, config.timeout(), controlChannel, config.recheck()));
      }
      checkReachable(config, nodes);
    } catch (RuntimeException e) {
      nodes.forEach(RedisNode::close);
      throw e;
    }
    return config.mode() == RedisConfig.Mode.SINGLE
        ? new Backend.Single(nodes.getFirst())
        : new Backend.Redlock(nodes, config.lease(), ticker, config.timeout());
  }

  private static List<HostAndPort> addresses(RedisConfig config) {
    return config.hosts().stream().map(h -> new HostAndPort(h.host(), h.port())).toList();
  }

  /** The sentinels' own credentials ({@code sentinelUser}, {@code sentinelPassword}), never the data nodes'. */
  private static JedisClientConfig sentinelConfig(RedisConfig config, int timeoutMs) {
    DefaultJedisClientConfig.Builder b = DefaultJedisClientConfig.builder()
        .connectionTimeoutMillis(timeoutMs)
        .socketTimeoutMillis(timeoutMs)
        .ssl(config.tls())
        .clientName("tumbler")
        .clientSetInfoConfig(ClientSetInfoConfig.DISABLED);
    config.sentinelUser().ifPresent(b::user);
    config.sentinelPassword().ifPresent(b::password);
    return b.build();
  }

  /**
   * Connects a cluster or sentinel client (which finds the topology, and fails when nobody answers) and
   * checks the node that holds the keys answers; the client's errors become Tumbler's, naming the redacted URL.
   */
  private static RedisNode replicated(RedisConfig config, Supplier<RedisNode> connect) {
    RedisNode node;
    try {
      node = connect.get();
    } catch (JedisDataException e) {
      throw refused(config, e);
    } catch (JedisException e) {
      throw new ServiceUnavailableException("cannot reach Redis " + config.hosts() + " (mode="
          + config.mode().name().toLowerCase(Locale.ROOT) + ") for " + config.url() + ": " + e.getMessage(), e);
    }
    try {
      checkReachable(config, List.of(node));
    } catch (RuntimeException e) {
      node.close();
      throw e;
    }
    return node;
  }

  /**
   * A server's refusal of the connection: {@link dev.tumbler.lock.CredentialsRefusedException} when it refused the
   * credentials ({@code WRONGPASS}, {@code NOAUTH}, {@code NOPERM}, or a password given to a server that has none),
   * a {@link LockException} otherwise. Neither shows a password: the URL is the redacted one.
   */
  static LockException refused(RedisConfig config, JedisDataException e) {
    String m = String.valueOf(e.getMessage());
    boolean credentials = m.startsWith("WRONGPASS") || m.startsWith("NOAUTH") || m.startsWith("NOPERM")
        || m.contains("called without any password configured");
    if (config.client().isPresent()) {
      String what = "Redis refused " + (credentials ? "the credentials of " : "") + config.client().get() + " for "
          + config.url() + ": " + m;
      return credentials ? new dev.tumbler.lock.CredentialsRefusedException(what, e) : new LockException(what, e);
    }
    if (credentials) {
      return new dev.tumbler.lock.CredentialsRefusedException("Redis refused the credentials given for " + config.url()
          + " (parameters 'user' and 'password'" + (config.mode() == RedisConfig.Mode.SENTINEL
          ? ", or 'sentinelUser' and 'sentinelPassword'" : "") + "): " + m, e);
    }
    return new LockException("Redis refused the connection for " + config.url() + ": " + m, e);
  }

  /** One server must answer; in Redlock mode, a majority. */
  private static void checkReachable(RedisConfig config, List<RedisNode> nodes) {
    int up = 0;
    RuntimeException last = null;
    List<String> down = new ArrayList<>();
    for (RedisNode n : nodes) {
      try {
        n.ping();
        up++;
      } catch (RuntimeException e) {
        last = e;
        down.add(n.toString());
      }
    }
    int needed = nodes.size() / 2 + 1;
    if (up < needed) {
      String why = last == null ? "" : ": " + last.getMessage();
      if (last instanceof JedisDataException d) {
        throw refused(config, d);
      }
      throw new ServiceUnavailableException("cannot reach Redis " + down + " for " + config.url()
          + (nodes.size() > 1 ? " (" + up + " of " + nodes.size() + " masters up, " + needed + " needed)" : "") + why,
          last);
    }
  }
}
