package dev.tumbler.lock.redis;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.FaultInjector;
import dev.tumbler.lock.tck.TckTarget;
import dev.tumbler.torture.backend.RedisCluster;
import dev.tumbler.torture.backend.RedisProcess;
import dev.tumbler.torture.backend.RedisSentinels;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * The TCK's view of the Redis provider on a Redis Cluster or a sentinel set-up. Clients connect to the
 * real addresses: the cluster and the sentinels announce the nodes' own addresses, which a per-client
 * TCP proxy cannot stand in for, so no client can be cut off alone. Faults: pause a client's renewals
 * (the SPI's renewer); on the cluster, also crash every node and restart it (empty: no persistence; the
 * nodes keep their cluster membership in their {@code nodes.conf} and form the cluster again).
 */
final class ReplicatedTarget implements TckTarget, FaultInjector {
  private final String url;
  private final Duration leaseTime;
  private final RedisCluster cluster;
  private final AutoCloseable backend;

  private ReplicatedTarget(String url, Duration leaseTime, RedisCluster cluster, AutoCloseable backend) {
    this.url = url;
    this.leaseTime = leaseTime;
    this.cluster = cluster;
    this.backend = backend;
  }

  static String params(Duration leaseTime) {
    return "leaseTime=" + leaseTime.toMillis() + "ms&timeout=500ms&recheck=500ms";
  }

  static ReplicatedTarget cluster(RedisCluster cluster, Duration leaseTime) {
    return new ReplicatedTarget("lock:redis://" + String.join(",", cluster.addresses()) + "?mode=cluster&"
        + params(leaseTime), leaseTime, cluster, cluster);
  }

  static ReplicatedTarget sentinel(RedisSentinels sentinels, Duration leaseTime) {
    return new ReplicatedTarget(sentinels.url(params(leaseTime)), leaseTime, null, sentinels);
  }

  @Override
  public LockService open() {
    return LockProviders.connect(url);
  }

  /** Each client reaches the backend through proxies, a session and renewals of its own: its faults stay with it. */
  @Override
  public boolean isolatesClients() {
    return true;
  }

  @Override
  public Duration leaseTime() {
    return leaseTime;
  }

  @Override
  public Optional<String> url() {
    return Optional.of(url);
  }

  @Override
  public Optional<FaultInjector> faults() {
    return Optional.of(this);
  }

  @Override
  public Set<Fault> supported() {
    return cluster != null ? Set.of(Fault.PAUSE_RENEWALS, Fault.CRASH_BACKEND) : Set.of(Fault.PAUSE_RENEWALS);
  }

  /** The nodes run without persistence: a restart frees every lock at once, heard at the holder's next renewal. */
  @Override
  public boolean crashEndsGrantsUnheard() {
    return true;
  }

  @Override
  public void crashBackend() {
    cluster.nodes().forEach(RedisProcess::kill);
  }

  @Override
  public void restartBackend() {
    cluster.nodes().forEach(RedisProcess::restart);
    cluster.awaitOk();
  }

  @Override
  public void close() {
    try {
      backend.close();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
