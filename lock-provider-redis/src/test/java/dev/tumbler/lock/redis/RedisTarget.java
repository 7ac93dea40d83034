package dev.tumbler.lock.redis;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.ProxiedTarget;
import dev.tumbler.lock.tck.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisPooled;

/**
 * The TCK's view of the Redis provider: real servers started here (one, or several masters for
 * Redlock), and every service the TCK opens reaching them through its own {@link TcpProxy}s, so that
 * one client can be cut off while the others go on. Faults: cut a client off (blackhole its proxies),
 * pause its renewals (the SPI's renewer), crash and restart the live servers (no persistence: every key
 * is gone after a restart); for Redlock with a majority to spare, crash and restart one more master, or
 * partition it away from every client.
 *
 * <p>{@link #applicationClients}: each service on a {@link JedisPooled} the target builds (as an application does,
 * through the service's proxy) and passes under {@link RedisLockProvider#JEDIS}, with a URL that names no hosts; the
 * target closes those clients at the end, after the TCK closed the services on them.
 */
final class RedisTarget extends ProxiedTarget {
  private final List<EmbeddedRedis> servers;
  private final List<EmbeddedRedis> live;
  private final String params;
  private final Duration leaseTime;
  /** The application clients the services run on; null when each service connects itself. */
  private final List<JedisPooled> clients;

  /** One server; every service on an application's {@link JedisPooled} (see the class comment). */
  static RedisTarget applicationClients(EmbeddedRedis server, Duration leaseTime) {
    return new RedisTarget(List.of(server), 0, leaseTime, "", new CopyOnWriteArrayList<>());
  }

  /**
   * @param servers the servers, all started
   * @param down how many of the last servers to stop for the whole run (a minority, for Redlock)
   */
  RedisTarget(List<EmbeddedRedis> servers, int down, Duration leaseTime, String extraParams) {
    this(servers, down, leaseTime, extraParams, null);
  }

  private RedisTarget(List<EmbeddedRedis> servers, int down, Duration leaseTime, String extraParams,
      List<JedisPooled> clients) {
    this.clients = clients;
    this.servers = List.copyOf(servers);
    this.live = List.copyOf(servers.subList(0, servers.size() - down));
    for (EmbeddedRedis s : servers.subList(servers.size() - down, servers.size())) {
      s.stop();
    }
    this.leaseTime = leaseTime;
    // Redlock asks every master at once and needs a majority within one timeout: at 500 ms, a loaded suite run saw
    // two of the four live masters' answers come late to a contended try (their calls' virtual threads share the
    // carriers with the contenders), "only 2 of 5 masters answered"
    this.params = "leaseTime=" + leaseTime.toMillis() + "ms&timeout=" + (servers.size() > 1 ? "1s" : "500ms")
        + "&recheck=500ms" + (servers.size() > 1 ? "&mode=redlock" : "") + extraParams;
  }

  private String urlFor(List<String> addresses) {
    return "lock:redis://" + String.join(",", addresses) + "?" + params;
  }

  @Override
  protected List<String> backend() {
    return servers.stream().map(EmbeddedRedis::address).toList();
  }

  @Override
  protected LockService connect(List<String> addresses) {
    if (clients == null) {
      return LockProviders.connect(urlFor(addresses));
    }
    // as an application builds its client: its own timeouts, here those the URL of the other targets sets
    JedisPooled client = new JedisPooled(HostAndPort.from(addresses.getFirst()),
        DefaultJedisClientConfig.builder().connectionTimeoutMillis(500).socketTimeoutMillis(500).build());
    clients.add(client);
    Properties p = new Properties();
    p.put(RedisLockProvider.JEDIS, client);
    return LockProviders.connect("lock:redis:///?leaseTime=" + leaseTime.toMillis() + "ms&timeout=500ms&recheck=500ms",
        p);
  }

  @Override
  public Duration leaseTime() {
    return leaseTime;
  }

  @Override
  public Optional<String> url() {
    return Optional.of(urlFor(backend()));
  }

  @Override
  public Set<Fault> supported() {
    if (majorityAfterOneMore()) {
      return Set.of(Fault.CUT_OFF_CLIENT, Fault.PAUSE_RENEWALS, Fault.CRASH_BACKEND, Fault.CRASH_MINORITY,
          Fault.PARTITION_MINORITY);
    }
    return Set.of(Fault.CUT_OFF_CLIENT, Fault.PAUSE_RENEWALS, Fault.CRASH_BACKEND);
  }

  /** Whether a majority of the masters stays up when one more live master fails (Redlock with enough masters). */
  private boolean majorityAfterOneMore() {
    return servers.size() > 1 && live.size() - 1 > servers.size() / 2;
  }

  /** Every Redlock client talks to every master: crashing the first live one spares no client in particular. */
  @Override
  public void crashMinority(java.util.Collection<LockService> spare) {
    live.get(0).stop();
  }

  @Override
  public void restartMinority() {
    live.get(0).restart();
  }

  @Override
  public void partitionMinority(java.util.Collection<LockService> spare) {
    partitionFromClients(servers.indexOf(live.get(0)));
  }

  @Override
  public void healMinority() {
    healPartitions();
  }

  /**
   * The servers run without persistence: a restart frees every lock at once, and a holder hears at its next renewal
   * (the README's "What it does not guarantee").
   */
  @Override
  public boolean crashEndsGrantsUnheard() {
    return true;
  }

  @Override
  public void crashBackend() {
    live.forEach(EmbeddedRedis::stop);
  }

  @Override
  public void restartBackend() {
    live.forEach(EmbeddedRedis::restart);
  }

  @Override
  protected void closeBackend() {
    if (clients != null) {
      clients.forEach(JedisPooled::close);
    }
    servers.forEach(EmbeddedRedis::close);
  }
}
