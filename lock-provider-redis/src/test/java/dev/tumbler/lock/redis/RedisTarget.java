package dev.tumbler.lock.redis;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.spi.LeaseRenewer;
import dev.tumbler.lock.tck.FaultInjector;
import dev.tumbler.lock.tck.TckTarget;
import dev.tumbler.lock.tck.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * The TCK's view of the Redis provider: real servers started here (one, or several masters for
 * Redlock), and every service the TCK opens reaching them through its own {@link TcpProxy}s, so that
 * one client can be cut off while the others go on. Faults: cut a client off (blackhole its proxies),
 * pause its renewals (the SPI's renewer), crash and restart the live servers (no persistence: every key
 * is gone after a restart).
 */
final class RedisTarget implements TckTarget, FaultInjector {
  private final List<EmbeddedRedis> servers;
  private final List<EmbeddedRedis> live;
  private final String params;
  private final Duration leaseTime;
  private final Map<LockService, List<TcpProxy>> proxies = new ConcurrentHashMap<>();

  /**
   * @param servers the servers, all started
   * @param down how many of the last servers to stop for the whole run (a minority, for Redlock)
   */
  RedisTarget(List<EmbeddedRedis> servers, int down, Duration leaseTime, String extraParams) {
    this.servers = List.copyOf(servers);
    this.live = List.copyOf(servers.subList(0, servers.size() - down));
    for (EmbeddedRedis s : servers.subList(servers.size() - down, servers.size())) {
      s.stop();
    }
    this.leaseTime = leaseTime;
    this.params = "leaseTime=" + leaseTime.toMillis() + "ms&timeout=500ms&recheck=500ms"
        + (servers.size() > 1 ? "&mode=redlock" : "") + extraParams;
  }

  private String urlFor(List<String> addresses) {
    return "lock:redis://" + String.join(",", addresses) + "?" + params;
  }

  @Override
  public LockService open() {
    List<TcpProxy> ps = new ArrayList<>();
    for (EmbeddedRedis s : servers) {
      ps.add(TcpProxy.start("127.0.0.1", s.port()));
    }
    LockService service = LockProviders.connect(urlFor(ps.stream().map(TcpProxy::address).toList()));
    proxies.put(service, ps);
    return service;
  }

  @Override
  public Duration leaseTime() {
    return leaseTime;
  }

  @Override
  public Optional<String> url() {
    return Optional.of(urlFor(servers.stream().map(EmbeddedRedis::address).collect(Collectors.toList())));
  }

  @Override
  public Optional<FaultInjector> faults() {
    return Optional.of(this);
  }

  @Override
  public Set<Fault> supported() {
    return Set.of(Fault.CUT_OFF_CLIENT, Fault.PAUSE_RENEWALS, Fault.CRASH_BACKEND);
  }

  @Override
  public void cutOff(LockService client) {
    proxiesOf(client).forEach(TcpProxy::blackhole);
  }

  @Override
  public void heal(LockService client) {
    proxiesOf(client).forEach(TcpProxy::heal);
  }

  @Override
  public void pauseRenewals(LockService client) {
    client.unwrap(LeaseRenewer.class).pause();
  }

  @Override
  public void resumeRenewals(LockService client) {
    client.unwrap(LeaseRenewer.class).resume();
  }

  @Override
  public void crashBackend() {
    live.forEach(EmbeddedRedis::stop);
  }

  @Override
  public void restartBackend() {
    live.forEach(EmbeddedRedis::restart);
  }

  private List<TcpProxy> proxiesOf(LockService client) {
    List<TcpProxy> ps = proxies.get(client);
    if (ps == null) {
      throw new IllegalArgumentException("not a service opened by this target: " + client);
    }
    return ps;
  }

  @Override
  public void close() {
    for (List<TcpProxy> ps : proxies.values()) {
      ps.forEach(TcpProxy::close);
    }
    proxies.clear();
    servers.forEach(EmbeddedRedis::close);
  }
}
