package dev.tumbler.lock.tck;

import dev.tumbler.lock.LockService;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Opens every client of a TCK target through its own {@link TcpProxy}s — one per backend address — so
 * that {@link FaultInjector#cutOff} can blackhole one client while the others go on. A provider's
 * {@link TckTarget#open()} calls {@link #open}; its {@code cutOff}/{@code heal} call {@link #cutOff} and
 * {@link #heal}. Proxies of services that were closed are dropped at the next {@link #open}. Thread safe.
 *
 * <pre>{@code
 * public LockService open() {
 *   return clients.open(List.of("127.0.0.1:" + server.port()),
 *       addresses -> LockProviders.connect("lock:acme://" + String.join(",", addresses)));
 * }
 * }</pre>
 */
public final class ProxiedClients implements AutoCloseable {
  private final Map<LockService, List<TcpProxy>> proxies = new ConcurrentHashMap<>();
  /** The backend addresses (by index) cut off from every client, those opened later included. */
  private final Set<Integer> partitioned = ConcurrentHashMap.newKeySet();

  /**
   * Starts one proxy per {@code host:port} in {@code backend} and opens a service through them.
   *
   * @param backend the backend's addresses, {@code host:port} each
   * @param connect opens the service given the proxies' addresses, in the same order
   */
  public LockService open(List<String> backend, Function<List<String>, LockService> connect) {
    Objects.requireNonNull(connect, "connect");
    proxies.entrySet().removeIf(e -> {
      if (e.getKey().isClosed()) {
        e.getValue().forEach(TcpProxy::close);
        return true;
      }
      return false;
    });
    List<TcpProxy> ps = new ArrayList<>();
    try {
      for (String address : backend) {
        int colon = address.lastIndexOf(':');
        if (colon < 0) {
          throw new IllegalArgumentException("backend address '" + address + "' is not host:port");
        }
        ps.add(TcpProxy.start(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1))));
      }
      for (int i : partitioned) {
        if (i < ps.size()) {
          ps.get(i).blackhole();
        }
      }
      LockService service = connect.apply(ps.stream().map(TcpProxy::address).toList());
      proxies.put(service, ps);
      return service;
    } catch (RuntimeException e) {
      ps.forEach(TcpProxy::close);
      throw e;
    }
  }

  /** Blackholes every proxy of {@code client}: a partition it notices only by timeouts. */
  public void cutOff(LockService client) {
    of(client).forEach(TcpProxy::blackhole);
  }

  /** Forwards again for {@code client}; its connections that lived through the blackhole are closed. */
  public void heal(LockService client) {
    of(client).forEach(TcpProxy::heal);
  }

  /**
   * Blackholes the proxies of every client, present and future, to the backend address at {@code index}
   * (in the order given to {@link #open}): that server is partitioned away from all of them.
   */
  public void partition(int index) {
    partitioned.add(index);
    for (List<TcpProxy> ps : proxies.values()) {
      ps.get(index).blackhole();
    }
  }

  /** Undoes every {@link #partition}; connections that lived through the blackhole are closed. */
  public void healPartitions() {
    for (int index : List.copyOf(partitioned)) {
      for (List<TcpProxy> ps : proxies.values()) {
        ps.get(index).heal();
      }
    }
    partitioned.clear();
  }

  /** The proxies of {@code client}. */
  public List<TcpProxy> of(LockService client) {
    List<TcpProxy> ps = proxies.get(client);
    if (ps == null) {
      throw new IllegalArgumentException("not a service opened through these proxies: " + client);
    }
    return ps;
  }

  @Override
  public void close() {
    for (List<TcpProxy> ps : proxies.values()) {
      ps.forEach(TcpProxy::close);
    }
    proxies.clear();
  }
}
