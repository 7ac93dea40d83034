package dev.tumbler.peer.transport;

import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Transport} between members of one {@link InMemoryNetwork} in this JVM: payloads are copied (so
 * no peer shares a mutable array with another) and delivered by one thread per member, in order. Used by
 * {@code lock:native:local} and by multi-node tests. Thread safe.
 */
public final class InMemoryTransport implements Transport {
  private static final Logger LOG = LoggerFactory.getLogger(InMemoryTransport.class);

  private final InMemoryNetwork network;
  private final String self;
  private final Set<String> peers;
  private final Set<String> up = ConcurrentHashMap.newKeySet();
  private final ExecutorService inbound;
  private volatile Receiver receiver;
  private volatile boolean closed;

  InMemoryTransport(InMemoryNetwork network, String self, Set<String> peers) {
    this.network = network;
    this.self = self;
    this.peers = peers;
    this.inbound = Executors.newSingleThreadExecutor(Thread.ofVirtual()
        .name("tumbler-mem-" + network.name() + "-" + self).factory());
  }

  @Override
  public String self() {
    return self;
  }

  @Override
  public Set<String> peers() {
    return peers;
  }

  @Override
  public void start(Receiver receiver) {
    Objects.requireNonNull(receiver, "receiver");
    if (this.receiver != null) {
      throw new IllegalStateException("transport " + self + " already started");
    }
    this.receiver = receiver;
    network.join(this);
  }

  @Override
  public void send(String peer, byte[] payload) {
    Objects.requireNonNull(payload, "payload");
    if (closed || !peers.contains(peer)) {
      return;
    }
    network.route(self, peer, payload.clone());
  }

  @Override
  public boolean isUp(String peer) {
    return up.contains(peer);
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    network.leave(this);
    inbound.shutdown();
  }

  // ---- from the network, under its lock

  void enqueuePayload(String from, byte[] payload) {
    run(() -> receiver.deliver(from, payload));
  }

  void linkUp(String peer) {
    run(() -> {
      up.add(peer);
      receiver.peerUp(peer);
    });
  }

  void linkDown(String peer) {
    run(() -> {
      // the receiver first: once isUp says down, the node has the news queued before anything asked after
      receiver.peerDown(peer);
      up.remove(peer);
    });
  }

  private void run(Runnable r) {
    try {
      inbound.execute(() -> {
        if (closed) {
          return; // no callback follows close()
        }
        try {
          r.run();
        } catch (RuntimeException e) {
          LOG.warn("in-memory node {}: receiver failed", self, e);
        }
      });
    } catch (RejectedExecutionException e) {
      // closed meanwhile: nothing is delivered to a closed transport
    }
  }

  @Override
  public String toString() {
    return "InMemoryTransport[" + self + " in " + network.name() + "]";
  }
}
