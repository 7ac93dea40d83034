package dev.tumbler.lock.redis;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.lock.spi.LockUrl;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The settings of one Redis lock service, read from its URL:
 * {@code lock:redis://[user:password@]host[:port][,host[:port]...][/db][?parameters]}. The hosts are the
 * server ({@code mode=single}), the independent masters ({@code mode=redlock}), seed nodes of a Redis
 * Cluster ({@code mode=cluster}) or the sentinels ({@code mode=sentinel&master=<name>}).
 *
 * <p>Authentication: the user info (or the {@code user} and {@code password} properties) is for the
 * servers that hold the keys: the single server, the masters, the cluster's nodes, the primary and
 * replicas that sentinels watch. Sentinels are separate processes with their own ACLs, often none; they
 * take {@code sentinelUser} and {@code sentinelPassword} (redacted like every parameter whose name holds
 * {@code password}), and no credentials when those are absent.
 *
 * <p>Validated when read: every problem is an {@link InvalidLockUrlException} naming the parameter; the
 * password is kept here only and never shown ({@link #toString()} omits it). Immutable.
 *
 * @param url the URL, for messages (its {@code toString()} is redacted)
 * @param hosts the servers: one in {@link Mode#SINGLE}, at least three in {@link Mode#REDLOCK}, seed nodes
 *     in {@link Mode#CLUSTER}, the sentinels in {@link Mode#SENTINEL}
 * @param user the ACL user, if any
 * @param password the password, if any
 * @param database the logical database ({@code /db} path), 0 by default
 * @param tls whether to connect with TLS
 * @param mode one server, independent masters with Redlock, a cluster, or a primary found by sentinels
 * @param timeout connect and socket timeout of one call
 * @param recheck the longest a waiter sleeps without a notification before it asks again
 * @param lease the common lease settings (term, renewal, namespace)
 * @param master the name the sentinels monitor the primary under ({@link Mode#SENTINEL} only)
 * @param sentinelUser the sentinels' ACL user, if any ({@link Mode#SENTINEL} only)
 * @param sentinelPassword the sentinels' password, if any ({@link Mode#SENTINEL} only)
 * @param client the application's Jedis client the service runs on, described for messages ("the application's
 *     JedisPooled client"); empty when the service connects itself (then {@code hosts} are the servers)
 */
record RedisConfig(LockUrl url, List<LockUrl.HostAndPort> hosts, Optional<String> user, Optional<String> password,
    int database, boolean tls, Mode mode, Duration timeout, Duration recheck, LeaseSettings lease,
    Optional<String> master, Optional<String> sentinelUser, Optional<String> sentinelPassword,
    Optional<String> client) {

  /** How the service uses its servers. */
  enum Mode {
    /** One Redis server (or a primary with replicas behind one address, or a cluster node: see the README). */
    SINGLE,
    /** Several independent masters; a grant needs a majority of them (Redlock). */
    REDLOCK,
    /** A Redis Cluster, found from seed nodes; each lock lives on the master of its hash slot. */
    CLUSTER,
    /** A primary (with replicas) that sentinels watch and fail over; found through the sentinels. */
    SENTINEL
  }

  static final int DEFAULT_PORT = 6379;
  static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(2);
  static final Duration DEFAULT_RECHECK = Duration.ofSeconds(1);

  /** Every parameter this provider accepts. */
  static final Set<String> PARAMETERS;

  static {
    Set<String> p = new HashSet<>(LeaseSettings.PARAMETERS);
    p.addAll(List.of("tls", "mode", "timeout", "recheck", "master", "sentinelUser", "sentinelPassword"));
    PARAMETERS = Set.copyOf(p);
  }

  @Override
  public String toString() {
    // the password stays out of every string
    return "RedisConfig[" + url + "]";
  }

  /**
   * Reads the settings of {@code url}.
   *
   * @throws InvalidLockUrlException naming what is wrong
   */
  static RedisConfig from(LockUrl url) {
    if (!url.isHierarchical()) {
      throw new InvalidLockUrlException("lock URL " + url + ": the Redis provider needs hosts, as in "
          + "lock:redis://localhost:6379, lock:redis://h1,h2,h3?mode=redlock, lock:redis://h1,h2,h3?mode=cluster or "
          + "lock:redis://s1,s2,s3?mode=sentinel&master=mymaster");
    }
    url.requireKnownParameters(PARAMETERS);
    if (url.hosts().isEmpty()) {
      throw new InvalidLockUrlException("lock URL " + url + ": no host (as in lock:redis://localhost:6379)");
    }
    List<LockUrl.HostAndPort> hosts = url.hosts(DEFAULT_PORT);
    for (LockUrl.HostAndPort h : hosts) {
      if (h.port() == 0) {
        throw new InvalidLockUrlException("lock URL " + url + ": port 0 of host '" + h.host() + "' cannot be connected to");
      }
    }
    if (new HashSet<>(hosts).size() != hosts.size()) {
      throw new InvalidLockUrlException("lock URL " + url + ": a host is listed twice");
    }
    Mode mode = url.enumValue("mode", Mode.class, Mode.SINGLE);
    if (mode == Mode.SINGLE && hosts.size() != 1) {
      throw new InvalidLockUrlException("lock URL " + url + ": " + hosts.size() + " hosts need mode=redlock "
          + "(independent masters), mode=cluster (seed nodes) or mode=sentinel (sentinels); mode=single takes one host");
    }
    if (mode == Mode.REDLOCK && hosts.size() < 3) {
      throw new InvalidLockUrlException("lock URL " + url + ": mode=redlock needs at least 3 independent masters, got "
          + hosts.size() + " (with fewer, one server down stops every lock)");
    }
    int db = 0;
    String path = url.path();
    if (!path.isEmpty() && !path.equals("/")) {
      String d = path.substring(1);
      if (d.isEmpty() || d.length() > 5 || !d.chars().allMatch(c -> c >= '0' && c <= '9')) {
        throw new InvalidLockUrlException("lock URL " + url + ": the path is the database number, as in /0; got '" + path + "'");
      }
      db = Integer.parseInt(d);
    }
    if (mode == Mode.CLUSTER && db != 0) {
      throw new InvalidLockUrlException("lock URL " + url + ": mode=cluster has only database 0; got the path '" + path + "'");
    }
    Optional<String> master = url.parameter("master");
    Optional<String> sentinelUser = url.parameter("sentinelUser");
    Optional<String> sentinelPassword = url.parameter("sentinelPassword");
    if (mode == Mode.SENTINEL) {
      if (master.isEmpty() || master.get().isBlank()) {
        throw new InvalidLockUrlException("lock URL " + url + ": mode=sentinel needs parameter 'master', the name the "
            + "sentinels monitor the primary under (as in master=mymaster)");
      }
    } else {
      for (String p : List.of("master", "sentinelUser", "sentinelPassword")) {
        if (url.parameter(p).isPresent()) {
          throw new InvalidLockUrlException("lock URL " + url + ": parameter '" + p + "' applies to mode=sentinel only; "
              + "this is mode=" + mode.name().toLowerCase(Locale.ROOT));
        }
      }
    }
    if (sentinelPassword.isPresent() && sentinelPassword.get().isEmpty()) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'sentinelPassword' is empty");
    }
    boolean tls = url.bool("tls", false);
    Duration timeout = timeout(url);
    Duration recheck = recheck(url);
    LeaseSettings lease = LeaseSettings.fromUrl(url);
    return new RedisConfig(url, hosts, url.user(), url.password(), db, tls, mode, timeout, recheck, lease,
        master.map(String::trim), sentinelUser, sentinelPassword, Optional.empty());
  }

  /** The parameters that describe a connection, which an application's client has already: refused with one. */
  private static final List<String> CONNECTION_PARAMETERS =
      List.of("tls", "mode", "master", "sentinelUser", "sentinelPassword");

  /**
   * Reads the settings of {@code url} for a service on the application's own Jedis client, which is connected
   * already: the URL names no hosts and no database ({@code lock:redis:///?namespace=...}),
   * and the parameters of a connection ({@code tls}, {@code mode}, {@code master}, credentials) are refused, since
   * they are set where the client is built. {@code timeout} is the longest one call on the client takes (not applied
   * to it: at least its socket timeout; default 2s); {@code leaseTime}, {@code renew}, {@code namespace} and {@code recheck} are as usual.
   *
   * @param mode what the client is: one server, a cluster or a sentinel-watched primary
   * @param client the client, described for messages
   * @throws InvalidLockUrlException naming what is wrong
   */
  static RedisConfig forClient(LockUrl url, Mode mode, String client) {
    if (url.isHierarchical() ? !url.hosts().isEmpty() : !url.opaque().isEmpty()) {
      throw new InvalidLockUrlException("lock URL " + url + ": with the application's Jedis client the URL names no "
          + "hosts (the client has them): lock:redis:///[?namespace=...&leaseTime=...]");
    }
    if (url.isHierarchical() && !url.path().isEmpty() && !url.path().equals("/")) {
      throw new InvalidLockUrlException("lock URL " + url + ": with the application's Jedis client the database is "
          + "the client's; the URL has no path (got '" + url.path() + "')");
    }
    for (String p : CONNECTION_PARAMETERS) {
      if (url.parameter(p).isPresent()) {
        throw new InvalidLockUrlException("lock URL " + url + ": parameter '" + p + "' does not apply with the "
            + "application's Jedis client: the connection is set where the client is built");
      }
    }
    if (url.user().isPresent() || url.password().isPresent()) {
      throw new InvalidLockUrlException("lock URL " + url + ": credentials do not apply with the application's Jedis "
          + "client: its connections are authenticated where the client is built");
    }
    url.requireKnownParameters(PARAMETERS);
    Duration timeout = timeout(url);
    Duration recheck = recheck(url);
    return new RedisConfig(url, List.of(), Optional.empty(), Optional.empty(), 0, false, mode, timeout, recheck,
        LeaseSettings.fromUrl(url), Optional.empty(), Optional.empty(), Optional.empty(), Optional.of(client));
  }

  /** Parameter {@code timeout}: the longest one call takes (connect and socket timeout), default 2s. */
  private static Duration timeout(LockUrl url) {
    Duration timeout = url.duration("timeout", DEFAULT_TIMEOUT);
    if (timeout.isZero() || timeout.toMillis() > Integer.MAX_VALUE) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'timeout': must be within (0, "
          + Integer.MAX_VALUE + "ms]: " + timeout);
    }
    return timeout;
  }

  /** Parameter {@code recheck}: the longest a waiter sleeps without a notification, default 1s, at least 10ms. */
  private static Duration recheck(LockUrl url) {
    Duration recheck = url.duration("recheck", DEFAULT_RECHECK);
    if (recheck.toMillis() < 10) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'recheck': at least 10ms: " + recheck);
    }
    return recheck;
  }
}
