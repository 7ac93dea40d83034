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
 * what {@code tumbler demo} and the benchmarks run on. Not for production, where every peer is its own
 * process. Thread safe.
 */
public final class LoopbackCluster {

  private LoopbackCluster() {}

  /**
   * Starts {@code nodes} peers running {@code algorithm} on free loopback ports, opening them in parallel
   * (a peer may wait for the others while it connects); a port taken between being picked and bound makes
   * it try again with new ones, three times at most.
   *
   * @return one service per peer, in the order of their ids; close them with {@link #close}
   */
  public static List<LockService> start(String algorithm, int nodes) throws Exception {
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
      List<CompletableFuture<LockService>> futures = new ArrayList<>();
      for (String id : ids) {
        List<String> others = new ArrayList<>(ids);
        others.remove(id);
        String url = "lock:native://" + id + "?peers=" + String.join(",", others) + "&algorithm=" + algorithm;
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
        return services;
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
