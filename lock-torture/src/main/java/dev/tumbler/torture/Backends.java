package dev.tumbler.torture;

import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.torture.backend.JavaCommand;
import dev.tumbler.torture.backend.NativeCluster;
import dev.tumbler.torture.backend.PostgresServer;
import dev.tumbler.torture.backend.Processes;
import dev.tumbler.torture.backend.RedisCluster;
import dev.tumbler.torture.backend.RedisProcess;
import dev.tumbler.torture.backend.RedisSentinels;
import dev.tumbler.torture.backend.Server;
import dev.tumbler.torture.backend.ZooKeeperEnsemble;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import redis.clients.jedis.Jedis;

/**
 * The targets of a torture run: the backends the harness starts itself ({@link #start}) and a user's lock URL
 * ({@link #url}).
 *
 * <table>
 *   <caption>Backends</caption>
 *   <tr><th>name</th><th>servers</th><th>server faults</th></tr>
 *   <tr><td>{@code native}</td><td>3 {@code tumbler node} members taking thin clients ({@code lease}, or
 *       {@code --algorithm} bakery, agent, buckets)</td><td>restart, pause-server, failover (the lock server)</td></tr>
 *   <tr><td>{@code zookeeper}</td><td>3 {@code QuorumPeerMain} members</td><td>restart, pause-server, failover
 *       (the leader)</td></tr>
 *   <tr><td>{@code redis}</td><td>1 server</td><td>restart, pause-server</td></tr>
 *   <tr><td>{@code redis-sentinel}</td><td>a primary, a replica, 3 sentinels</td><td>restart, pause-server,
 *       failover (the primary)</td></tr>
 *   <tr><td>{@code redis-cluster}</td><td>3 masters with a replica each</td><td>restart, pause-server, failover (a
 *       master)</td></tr>
 *   <tr><td>{@code redlock}</td><td>3 independent masters</td><td>restart, pause-server</td></tr>
 *   <tr><td>{@code postgresql}</td><td>1 server ({@code --mode lease|advisory})</td><td>restart, pause-server</td></tr>
 * </table>
 *
 * <p>Client faults (kill, pause) apply everywhere; partition wherever every connection of a client goes through its
 * proxies: not on Redis Cluster and sentinel set-ups, which hand out their nodes' own addresses (the Redis provider
 * has no hook to map them), nor on a user's URL of those modes.
 */
public final class Backends {
  /** Every backend name, in the order the help lists them. */
  public static final List<String> NAMES = List.of("native", "zookeeper", "redis", "redis-sentinel", "redis-cluster",
      "redlock", "postgresql");

  private static final Set<Fault> CLIENT = EnumSet.of(Fault.KILL, Fault.PAUSE, Fault.PARTITION);

  private Backends() {}

  /**
   * What a backend is started with.
   *
   * @param leaseTime the lease term, or null for the backend's default (5 s native, 2 s the others)
   * @param algorithm the native algorithm, or null for {@code lease}; an error for other backends
   * @param mode the PostgreSQL mode ({@code lease}, {@code advisory}), or null for {@code lease}; an error for others
   * @param dir where the servers keep their data and logs
   * @param java how to start the JVMs of ZooKeeper members and native members
   */
  public record Options(Duration leaseTime, String algorithm, String mode, Path dir, JavaCommand java) {}

  /**
   * The faults that apply to the backend {@code name}: the client faults, partition only where every connection of a
   * client goes through its proxies, and the server faults its set-up has.
   *
   * @throws IllegalArgumentException for an unknown name
   */
  public static Set<Fault> faults(String name) {
    checkName(name);
    Set<Fault> f = EnumSet.allOf(Fault.class);
    switch (name) {
      case "redis-sentinel", "redis-cluster" -> f.remove(Fault.PARTITION);
      case "redis", "redlock", "postgresql" -> f.remove(Fault.FAILOVER);
      default -> { }
    }
    return f;
  }

  /** Why {@code fault} does not apply to the backend {@code name}, or null if it does. */
  public static String whyNot(String name, Fault fault) {
    if (faults(name).contains(fault)) {
      return null;
    }
    if (fault == Fault.PARTITION) {
      return "partition does not apply to " + name + ": its servers hand the clients their nodes' own addresses, and"
          + " the Redis provider has no hook to map them to a proxy, so a client cannot be cut off alone";
    }
    return "failover does not apply to " + name + ": " + (name.equals("postgresql") ? "one server, no standby"
        : name.equals("redis") ? "one server, no replica" : "independent masters, no replicas")
        + " (restart kills a server and starts it again)";
  }

  private static void checkName(String name) {
    if (!NAMES.contains(name)) {
      throw new IllegalArgumentException("unknown backend '" + name + "'; known: " + String.join(", ", NAMES));
    }
  }

  /** The algorithms a native backend takes: leased and fault tolerant, so that thin clients can use them. */
  public static final List<String> NATIVE_ALGORITHMS = List.of("lease", "bakery", "agent", "buckets");

  /**
   * Starts the backend {@code name} and waits until it serves.
   *
   * @throws IllegalArgumentException for an unknown name, or an option that does not apply to it
   */
  /**
   * Checks the options for the backend {@code name} without starting anything, and returns its lease term.
   *
   * @throws IllegalArgumentException for an unknown name, or an option that does not apply to it
   */
  public static Duration check(String name, Options o) {
    checkName(name);
    if (o.algorithm() != null && !name.equals("native")) {
      throw new IllegalArgumentException("--algorithm applies to the native backend only, not to " + name);
    }
    if (o.mode() != null && !name.equals("postgresql")) {
      throw new IllegalArgumentException("--mode applies to the postgresql backend only, not to " + name);
    }
    if (o.algorithm() != null && !NATIVE_ALGORITHMS.contains(o.algorithm())) {
      throw new IllegalArgumentException("--algorithm " + o.algorithm() + " cannot back a torture run: it needs a "
          + "leased, fault-tolerant algorithm that takes thin clients: " + String.join(", ", NATIVE_ALGORITHMS));
    }
    if (o.mode() != null && !List.of("lease", "advisory").contains(o.mode())) {
      throw new IllegalArgumentException("--mode " + o.mode() + ": expected lease or advisory");
    }
    Duration lease = o.leaseTime() != null ? o.leaseTime()
        : name.equals("native") ? Duration.ofSeconds(5) : Duration.ofSeconds(2);
    if (lease.compareTo(Duration.ofMillis(500)) < 0) {
      throw new IllegalArgumentException("--lease-time " + lease.toMillis() + "ms is too short for real processes on"
          + " a shared machine: 500ms at least");
    }
    if (name.equals("zookeeper") && (lease.compareTo(Duration.ofSeconds(1)) < 0
        || lease.compareTo(Duration.ofSeconds(10)) > 0)) {
      throw new IllegalArgumentException("--lease-time " + lease.toMillis() + "ms: the harness's ZooKeeper members "
          + "take session timeouts from 1s to 10s (ticks of 500ms)");
    }
    return lease;
  }

  public static Target start(String name, Options o) {
    Duration lease = check(name, o);
    return switch (name) {
      case "native" -> new NativeTarget(o.algorithm() == null ? "lease" : o.algorithm(), lease, o);
      case "zookeeper" -> new ZooKeeperTarget(lease, o);
      case "postgresql" -> new PostgresTarget(o.mode() == null ? "lease" : o.mode(), lease, o);
      default -> new RedisTarget(name, lease, o);
    };
  }

  private static String millis(Duration d) {
    return d.toMillis() + "ms";
  }

  private static <T> T random(List<T> list) {
    return list.get(ThreadLocalRandom.current().nextInt(list.size()));
  }

  /**
   * What the targets the harness starts have in common: a name, a lease term, the failover's own time (the
   * {@link #allowance()}), and what {@link #close()} stops.
   */
  private abstract static class Started implements Target {
    final String name;
    final Duration lease;
    private final Duration allowance;
    private AutoCloseable servers = () -> { };

    Started(String name, Duration lease, Duration allowance) {
      this.name = name;
      this.lease = lease;
      this.allowance = allowance;
    }

    /** What {@link #close()} stops. */
    final void stops(AutoCloseable what) {
      this.servers = what;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public Duration leaseTime() {
      return lease;
    }

    @Override
    public Duration allowance() {
      return allowance;
    }

    @Override
    public void close() {
      try {
        servers.close();
      } catch (Exception e) {
        throw new IllegalStateException("cannot stop " + name + ": " + e.getMessage(), e);
      }
    }

    @Override
    public Set<Fault> faults() {
      return Backends.faults(name);
    }

    @Override
    public String whyNot(Fault fault) {
      return Backends.whyNot(name, fault);
    }

    String describe(List<? extends Server> servers, List<String> addresses) {
      List<String> parts = new ArrayList<>();
      for (int i = 0; i < servers.size(); i++) {
        parts.add(servers.get(i).id() + (i < addresses.size() ? " " + addresses.get(i) : ""));
      }
      return String.join(", ", parts);
    }
  }

  /** One Redis server, Redlock's masters, a sentinel set-up or a cluster. */
  private static final class RedisTarget extends Started {
    private final List<RedisProcess> masters = new ArrayList<>();
    private RedisSentinels sentinels;
    private RedisCluster cluster;
    private final Path dir;

    RedisTarget(String name, Duration lease, Options o) {
      // sentinels: 1 s to call the primary down, then a vote and a promotion; cluster: a 2 s node timeout, then the
      // replica's election; restarted single servers answer at once
      super(name, lease, name.equals("redis-sentinel") || name.equals("redis-cluster") ? Duration.ofSeconds(6)
          : Duration.ofSeconds(2));
      this.dir = o.dir().resolve("redis");
      try {
        java.nio.file.Files.createDirectories(dir);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      switch (name) {
        case "redis" -> masters.add(RedisProcess.start(dir, Processes.freePort(), List.of(), false, "redis-1"));
        case "redlock" -> {
          for (int i = 1; i <= 3; i++) {
            masters.add(RedisProcess.start(dir, Processes.freePort(), List.of(), false, "redis-" + i));
          }
        }
        case "redis-sentinel" -> sentinels = RedisSentinels.start(dir);
        case "redis-cluster" -> cluster = RedisCluster.start(dir, 3, true);
        default -> throw new IllegalArgumentException(name);
      }
      stops(() -> {
        masters.forEach(RedisProcess::close);
        if (sentinels != null) {
          sentinels.close();
        }
        if (cluster != null) {
          cluster.close();
        }
      });
    }

    @Override
    public String describe() {
      return switch (name) {
        case "redis" -> "one Redis server (" + describe(masters, addresses()) + "), no persistence";
        case "redlock" -> "3 independent Redis masters (" + describe(masters, addresses()) + "), no persistence";
        case "redis-sentinel" -> "a Redis primary and a replica watched by 3 sentinels (" + describe(servers(),
            servers().stream().map(s -> ((RedisProcess) s).address()).toList()) + "), no persistence";
        default -> "a Redis Cluster of 3 masters with a replica each (" + describe(servers(), cluster.addresses())
            + "), no persistence";
      };
    }

    @Override
    public List<String> addresses() {
      return sentinels != null || cluster != null ? List.of() : masters.stream().map(RedisProcess::address).toList();
    }

    @Override
    public String url(List<String> proxied) {
      String t = "leaseTime=" + millis(lease);
      return switch (name) {
        case "redis" -> "lock:redis://" + proxied.getFirst() + "?" + t;
        case "redlock" -> "lock:redis://" + String.join(",", proxied) + "?mode=redlock&" + t;
        case "redis-sentinel" -> sentinels.url(t);
        default -> "lock:redis://" + String.join(",", cluster.addresses()) + "?mode=cluster&" + t;
      };
    }

    @Override
    public List<Server> servers() {
      List<Server> s = new ArrayList<>(masters);
      if (sentinels != null) {
        s.addAll(sentinels.servers());
        s.addAll(sentinels.sentinels());
      }
      if (cluster != null) {
        s.addAll(cluster.nodes());
      }
      return s;
    }

    @Override
    public Optional<Server> leader() {
      if (sentinels != null) {
        try {
          return Optional.of(sentinels.primary());
        } catch (RuntimeException e) {
          return Optional.empty();
        }
      }
      if (cluster != null) {
        List<RedisProcess> current = new ArrayList<>();
        for (RedisProcess n : cluster.nodes()) {
          if (n.isRunning()) {
            try (Jedis j = n.client()) {
              if (j.info("replication").contains("role:master")) {
                current.add(n);
              }
            } catch (RuntimeException e) {
              // not answering: not a master to kill
            }
          }
        }
        return current.isEmpty() ? Optional.empty() : Optional.of(random(current));
      }
      return Optional.of(random(masters));
    }

    @Override
    public boolean tookOver(Server killed) {
      if (cluster != null) {
        return cluster.servedByRunningNodes();
      }
      return super.tookOver(killed);
    }

  }

  /** A 3-member ZooKeeper ensemble. */
  private static final class ZooKeeperTarget extends Started {
    private final ZooKeeperEnsemble ensemble;

    ZooKeeperTarget(Duration lease, Options o) {
      // a follower gives up on a silent leader after syncLimit (2 s), then the election
      super("zookeeper", lease, Duration.ofSeconds(5));
      this.ensemble = ZooKeeperEnsemble.start(3, o.dir().resolve("zookeeper"), o.java());
      stops(ensemble);
    }

    @Override
    public String describe() {
      return "a ZooKeeper ensemble of 3 members (" + describe(ensemble.members(), ensemble.addresses()) + ")";
    }

    @Override
    public List<String> addresses() {
      return ensemble.addresses();
    }

    @Override
    public String url(List<String> proxied) {
      return "lock:zookeeper://" + String.join(",", proxied) + "/torture?leaseTime=" + millis(lease);
    }

    @Override
    public List<Server> servers() {
      return List.copyOf(ensemble.members());
    }

    @Override
    public Optional<Server> leader() {
      return ensemble.leader().map(m -> m);
    }

  }

  /** One PostgreSQL server. */
  private static final class PostgresTarget extends Started {
    private final String mode;
    private final PostgresServer server;

    PostgresTarget(String mode, Duration lease, Options o) {
      // crash recovery, then the pool's new connections
      super("postgresql", lease, Duration.ofSeconds(5));
      this.mode = mode;
      this.server = PostgresServer.start(o.dir().resolve("postgresql"), "postgres-1");
      stops(server::close);
    }

    @Override
    public String describe() {
      return "one PostgreSQL server (" + server.id() + " " + server.address() + "), mode=" + mode;
    }

    @Override
    public List<String> addresses() {
      return List.of(server.address());
    }

    @Override
    public String url(List<String> proxied) {
      return server.lockUrl(proxied.getFirst()) + "&createSchema=true" + (mode.equals("advisory") ? "&mode=advisory"
          : "&leaseTime=" + millis(lease));
    }

    @Override
    public List<Server> servers() {
      return List.of(server);
    }

    @Override
    public Optional<Server> leader() {
      return Optional.of(server);
    }

  }

  /** Three {@code tumbler node} members; the clients are thin clients of them. */
  private static final class NativeTarget extends Started {
    private static final Duration LEADER_LEASE = Duration.ofSeconds(2);
    private static final Duration ELECTION_DELAY = Duration.ofSeconds(2);
    private final String algorithm;
    private final NativeCluster cluster;

    NativeTarget(String algorithm, Duration lease, Options o) {
      // the others give up on a dead leader after 1.5 leader leases, elect without it after the election delay, and
      // the new server grants nothing for its grace: a lease term and 1.5 leader leases (NATIVE-ALGORITHMS, lease)
      super("native", lease, LEADER_LEASE.multipliedBy(3).plus(ELECTION_DELAY).plus(lease));
      this.algorithm = algorithm;
      Map<String, String> params = new LinkedHashMap<>();
      params.put("leaseTime", millis(lease));
      params.put("leaderLease", millis(LEADER_LEASE));
      params.put("electionDelay", millis(ELECTION_DELAY));
      params.put("peerTimeout", "5s");
      params.put("idleTimeout", "2s");
      this.cluster = NativeCluster.start(3, algorithm, params, o.dir().resolve("native"), o.java());
      stops(cluster);
    }

    @Override
    public String describe() {
      return "a native cluster of 3 tumbler node members, algorithm " + algorithm + " (" + describe(cluster.members(),
          cluster.members().stream().map(NativeCluster.Member::listen).toList()) + "), thin clients";
    }

    @Override
    public List<String> addresses() {
      return cluster.clientAddresses();
    }

    @Override
    public String url(List<String> proxied) {
      return "lock:native://" + String.join(",", proxied) + "?algorithm=" + algorithm + "&leaseTime=" + millis(lease)
          + "&peerTimeout=5s&idleTimeout=2s&backoffMin=50ms&backoffMax=500ms";
    }

    @Override
    public Map<String, String> clientEnvironment() {
      return Map.of("TUMBLER_CLIENT_SECRET", cluster.clientSecret());
    }

    @Override
    public List<Server> servers() {
      return List.copyOf(cluster.members());
    }

    @Override
    public Optional<Server> leader() {
      return cluster.leader().map(m -> m);
    }

  }

  // ---- a user's URL

  private static final Pattern AUTHORITY = Pattern.compile("^(lock:[A-Za-z0-9+.-]+:(?:[A-Za-z0-9+.-]+:)?//)"
      + "((?:[^@/?#]*@)?)([^/?#]*)(.*)$");
  private static final Map<String, Integer> DEFAULT_PORTS = Map.of("redis", 6379, "zookeeper", 2181,
      "jdbc:postgresql", 5432);

  /** The lease term when neither the URL nor the caller gives one. */
  public static final Duration DEFAULT_LEASE_TIME = Duration.ofSeconds(2);

  /**
   * A user's lock URL: only client faults apply (kill, pause; partition where every connection goes through the
   * clients' proxies: the URL's hosts with their ports, not a Redis Cluster or sentinel URL). The URL is opened once
   * here (with the {@code password} and {@code clientSecret} of the environment, as the clients do), to check it and
   * read the provider's capabilities. The lease term: {@code leaseTime} if given (added to the URL when the provider's
   * leases expire and the URL has none; an error if the URL's differs), else the URL's {@code leaseTime} (or
   * {@code sessionTimeout}), else 2 s, added to the URL when the provider's leases expire. For a provider without
   * expiry it only scales the faults.
   *
   * @param url the lock URL
   * @param leaseTime the lease term asked for, or null
   * @throws IllegalArgumentException for a URL whose locks are not shared between processes, or a term that differs
   *     from the URL's
   * @throws dev.tumbler.lock.InvalidLockUrlException for a bad URL
   * @throws dev.tumbler.lock.ServiceUnavailableException if the backend cannot be reached
   */
  public static Target url(String url, Duration leaseTime) {
    LockUrl parsed = LockUrl.parse(url);
    String lower = url.toLowerCase(Locale.ROOT);
    if (lower.startsWith("lock:native:local") || lower.startsWith("lock:native:mem/")
        || lower.startsWith("lock:jdbc:h2:mem:")) {
      throw new IllegalArgumentException("the locks of " + parsed + " live inside one process: each client would "
          + "have its own; give a URL of a backend the client processes share");
    }
    Set<dev.tumbler.lock.Capability> caps;
    try (dev.tumbler.lock.LockService probe = dev.tumbler.lock.LockProviders.connect(url, Worker.properties())) {
      caps = probe.info().capabilities();
    }
    boolean expires = caps.contains(dev.tumbler.lock.Capability.LEASE_EXPIRY);
    Optional<Duration> given = parsed.parameter("leaseTime").or(() -> parsed.parameter("sessionTimeout"))
        .map(LockUrl::parseDuration);
    Duration lease;
    if (leaseTime != null) {
      if (given.isPresent() && !given.get().equals(leaseTime)) {
        throw new IllegalArgumentException("--lease-time " + leaseTime.toMillis() + "ms differs from the URL's "
            + given.get().toMillis() + "ms: give one of them");
      }
      lease = leaseTime;
    } else {
      lease = given.orElse(DEFAULT_LEASE_TIME);
    }
    if (given.isEmpty() && expires) {
      url = url + (url.contains("?") ? "&" : "?") + "leaseTime=" + millis(lease);
    }
    return url(url, lease, parsed);
  }

  private static Target url(String url, Duration leaseTime, LockUrl parsed) {
    Matcher m = AUTHORITY.matcher(url);
    List<String> hosts = new ArrayList<>();
    String why = null;
    String mode = parsed.parameter("mode").orElse("");
    if (!m.matches() || m.group(3).isEmpty()) {
      why = "the URL names no host:port to put a proxy in front of";
    } else if (mode.equals("cluster") || mode.equals("sentinel")) {
      why = "a Redis " + mode + " hands the clients its nodes' own addresses, and the Redis provider has no hook to "
          + "map them to a proxy";
    } else {
      String scheme = m.group(1).substring(5, m.group(1).length() - 3);
      for (String h : m.group(3).split(",")) {
        boolean bracket = h.startsWith("[");
        int colon = h.lastIndexOf(':');
        boolean hasPort = colon > 0 && (!bracket || h.lastIndexOf(']') < colon);
        if (hasPort) {
          hosts.add(h);
        } else if (DEFAULT_PORTS.containsKey(scheme)) {
          hosts.add(h + ":" + DEFAULT_PORTS.get(scheme));
        } else {
          why = "host '" + h + "' has no port, and " + scheme + " has no default port the harness knows";
          hosts.clear();
          break;
        }
      }
    }
    return new UrlTarget(url, m.matches() ? m : null, hosts, why, leaseTime);
  }

  private static final class UrlTarget implements Target {
    private final String url;
    private final String prefix;
    private final String suffix;
    private final List<String> hosts;
    private final String noPartition;
    private final Duration lease;

    UrlTarget(String url, Matcher m, List<String> hosts, String noPartition, Duration lease) {
      this.url = url;
      this.prefix = m == null ? null : m.group(1) + m.group(2);
      this.suffix = m == null ? null : m.group(4);
      this.hosts = List.copyOf(hosts);
      this.noPartition = noPartition;
      this.lease = lease;
    }

    @Override
    public String name() {
      return "url";
    }

    @Override
    public String describe() {
      return LockUrl.parse(url).toString();
    }

    @Override
    public Duration leaseTime() {
      return lease;
    }

    @Override
    public List<String> addresses() {
      return hosts;
    }

    @Override
    public String url(List<String> proxied) {
      return hosts.isEmpty() ? url : prefix + String.join(",", proxied) + suffix;
    }

    @Override
    public Set<Fault> faults() {
      return hosts.isEmpty() ? EnumSet.of(Fault.KILL, Fault.PAUSE) : EnumSet.copyOf(CLIENT);
    }

    @Override
    public String whyNot(Fault fault) {
      if (faults().contains(fault)) {
        return null;
      }
      if (fault == Fault.PARTITION) {
        return "partition does not apply to this URL: " + noPartition;
      }
      return fault.label() + " needs a backend the harness started itself (--backend): against a URL only client "
          + "faults run (kill, pause, partition)";
    }

    @Override
    public void close() {
      // not ours
    }
  }
}
