package dev.tumbler.peer.provider;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;

/**
 * A whole native cluster inside this JVM, its peers talking TCP on loopback with a fresh random secret:
 * what {@code tumbler demo} and the benchmarks run on. A member can be crashed (its node stops at once,
 * whatever its services are doing) and restarted (a new node, with empty state, on the same address), as
 * the demo does to show a fault-tolerant algorithm at work. Not for production, where every peer is its
 * own process. Thread safe.
 */
public final class LoopbackCluster implements AutoCloseable {

  private final List<String> urls;
  private final Properties props;
  private final List<LockService> services;
  /** The members' client addresses, in member order; empty when they take no thin clients. */
  private final List<String> clientAddresses;
  private final String algorithm;
  private final String parameters;

  private LoopbackCluster(List<String> urls, Properties props, List<LockService> services,
      List<String> clientAddresses, String algorithm, String parameters) {
    this.urls = List.copyOf(urls);
    this.props = props;
    this.services = new ArrayList<>(services);
    this.clientAddresses = List.copyOf(clientAddresses);
    this.algorithm = algorithm;
    this.parameters = parameters;
  }

  /**
   * Starts {@code nodes} peers running {@code algorithm}, each URL with {@code parameters} added
   * ({@code &leaseTime=5s}, or empty), as {@link #start(String, int)} does.
   */
  public static LoopbackCluster open(String algorithm, int nodes, String parameters) throws Exception {
    return open(algorithm, nodes, parameters, false);
  }

  /**
   * As {@link #open(String, int, String)}, and with {@code clients} each member also takes thin clients on a client
   * listener of its own, under a fresh random client secret ({@link #clientUrl}, {@link #clientProperties}). Such
   * members join a lease term after they start, as every member that takes clients does.
   */
  public static LoopbackCluster open(String algorithm, int nodes, String parameters, boolean clients)
      throws Exception {
    Throwable lastBindFailure = null;
    for (int attempt = 0; attempt < 3; attempt++) {
      List<String> ids = new ArrayList<>();
      List<String> clientAddresses = new ArrayList<>();
      List<Integer> ports = freePorts(clients ? 2 * nodes : nodes);
      for (int i = 0; i < nodes; i++) {
        ids.add("127.0.0.1:" + ports.get(i));
        if (clients) {
          clientAddresses.add("127.0.0.1:" + ports.get(nodes + i));
        }
      }
      Properties props = new Properties();
      props.setProperty("secret", randomSecret());
      if (clients) {
        props.setProperty("clientSecret", randomSecret());
      }
      List<String> urls = new ArrayList<>();
      for (int i = 0; i < nodes; i++) {
        String id = ids.get(i);
        List<String> others = new ArrayList<>(ids);
        others.remove(id);
        urls.add("lock:native://" + id + "?peers=" + String.join(",", others) + "&algorithm=" + algorithm
            + parameters + (clients ? "&clientListen=" + clientAddresses.get(i) : ""));
      }
      List<CompletableFuture<LockService>> futures = new ArrayList<>();
      for (String url : urls) {
        CompletableFuture<LockService> f = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
          try {
            f.complete(LockProviders.connect(url, props));
          } catch (Throwable t) {
            f.completeExceptionally(t);
          }
        });
        futures.add(f);
      }
      List<LockService> services = new ArrayList<>();
      Throwable failure = null;
      for (CompletableFuture<LockService> f : futures) {
        try {
          services.add(f.join());
        } catch (RuntimeException e) {
          failure = failure == null ? e.getCause() == null ? e : e.getCause() : failure;
        }
      }
      if (failure == null) {
        return new LoopbackCluster(urls, props, services, clientAddresses, algorithm, parameters);
      }
      close(services);
      if (!isBindFailure(failure)) {
        if (failure instanceof Exception ex) {
          throw ex;
        }
        throw new IllegalStateException(failure);
      }
      lastBindFailure = failure;
    }
    throw new IllegalStateException("could not bind free loopback ports: " + lastBindFailure, lastBindFailure);
  }

  private static String randomSecret() {
    byte[] raw = new byte[24];
    new SecureRandom().nextBytes(raw);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
  }

  /**
   * The URL of a thin client of these members (their client addresses from member {@code first} on, so that clients
   * made with different {@code first} are served by different members), with the members' algorithm and parameters.
   *
   * @throws IllegalStateException if the members take no clients
   */
  public String clientUrl(int first) {
    if (clientAddresses.isEmpty()) {
      throw new IllegalStateException("these members take no thin clients");
    }
    List<String> order = new ArrayList<>();
    for (int k = 0; k < clientAddresses.size(); k++) {
      order.add(clientAddresses.get(Math.floorMod(first + k, clientAddresses.size())));
    }
    return "lock:native://" + String.join(",", order) + "?algorithm=" + algorithm + parameters;
  }

  /** A thin client's credential, for {@link #clientUrl}: the client secret, never the members' secret. */
  public Properties clientProperties() {
    Properties p = new Properties();
    p.setProperty("clientSecret", props.getProperty("clientSecret", ""));
    return p;
  }

  /** The members' client addresses, in member order; empty when they take no clients. */
  public List<String> clientAddresses() {
    return clientAddresses;
  }

  /** The service on each member, in the order of their ids; a restarted member's new one. */
  public synchronized List<LockService> services() {
    return List.copyOf(services);
  }

  /**
   * Member {@code i} crashes: its node stops at once, its connections drop, and every wait and grant of its
   * services ends. The other members see it go as they would see a killed process.
   */
  public void crash(int i) {
    LockService s;
    synchronized (this) {
      s = services.get(i);
    }
    NativeNodes.of(s).close();
  }

  /** Member {@code i} starts again after {@link #crash}: a new node with empty state, on the same address. */
  public LockService restart(int i) {
    LockService old;
    synchronized (this) {
      old = services.get(i);
    }
    old.close();
    LockService s = LockProviders.connect(urls.get(i), props);
    synchronized (this) {
      services.set(i, s);
    }
    return s;
  }

  @Override
  public void close() {
    close(services());
  }

  /**
   * Starts {@code nodes} peers running {@code algorithm} on free loopback ports, opening them in parallel
   * (a peer may wait for the others while it connects); a port taken between being picked and bound makes
   * it try again with new ones, three times at most.
   *
   * @return one service per peer, in the order of their ids; close them with {@link #close}
   */
  public static List<LockService> start(String algorithm, int nodes) throws Exception {
    return open(algorithm, nodes, "").services();
  }

  /** Closes {@code services} in parallel (each waits a moment for its releases to leave), 10 s at most each. */
  public static void close(List<LockService> services) {
    List<Thread> closers = new ArrayList<>();
    for (LockService s : services) {
      closers.add(Thread.ofVirtual().start(s::close));
    }
    for (Thread t : closers) {
      try {
        t.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  private static boolean isBindFailure(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof BindException) {
        return true;
      }
    }
    return false;
  }

  /** {@code n} loopback ports free a moment ago. */
  public static List<Integer> freePorts(int n) throws IOException {
    List<ServerSocket> held = new ArrayList<>();
    try {
      List<Integer> ports = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        held.add(s);
        ports.add(s.getLocalPort());
      }
      return ports;
    } finally {
      for (ServerSocket s : held) {
        s.close();
      }
    }
  }
}
