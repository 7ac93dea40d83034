package dev.tumbler.peer.provider;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.peer.node.PeerNode;
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

  private LoopbackCluster(List<String> urls, Properties props, List<LockService> services) {
    this.urls = List.copyOf(urls);
    this.props = props;
    this.services = new ArrayList<>(services);
  }

  /**
   * Starts {@code nodes} peers running {@code algorithm}, each URL with {@code parameters} added
   * ({@code &leaseTime=5s}, or empty), as {@link #start(String, int)} does.
   */
  public static LoopbackCluster open(String algorithm, int nodes, String parameters) throws Exception {
    Throwable lastBindFailure = null;
    for (int attempt = 0; attempt < 3; attempt++) {
      List<String> ids = new ArrayList<>();
      for (int port : freePorts(nodes)) {
        ids.add("127.0.0.1:" + port);
      }
      byte[] raw = new byte[24];
      new SecureRandom().nextBytes(raw);
      Properties props = new Properties();
      props.setProperty("secret", Base64.getUrlEncoder().withoutPadding().encodeToString(raw));
      List<String> urls = new ArrayList<>();
      for (String id : ids) {
        List<String> others = new ArrayList<>(ids);
        others.remove(id);
        urls.add("lock:native://" + id + "?peers=" + String.join(",", others) + "&algorithm=" + algorithm
            + parameters);
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
        return new LoopbackCluster(urls, props, services);
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
    s.unwrap(PeerNode.class).close();
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
