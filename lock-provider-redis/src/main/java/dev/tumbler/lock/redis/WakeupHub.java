package dev.tumbler.lock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;

/**
 * The push half of waiting: one subscriber connection per server and service, subscribed to the release
 * channels of the locks some thread of this service waits for (and to a private control channel that
 * keeps the connection in subscriber mode).
 *
 * <h2>No lost wake-ups</h2>
 * A waiter must not miss a release that happens between its failed attempt and its wait. So a waiter
 * first {@linkplain #register registers}, then waits until the server <em>confirmed</em> the
 * subscription, and only then retries; each retry reads the waiter's version first. A channel counts as
 * confirmed only when every SUBSCRIBE/UNSUBSCRIBE sent for it has been answered and the last one sent was
 * a SUBSCRIBE: replies to one connection arrive in order, so a stale reply cannot confirm a later
 * subscription. Channels with no waiter left are unsubscribed by the heartbeat once they have been idle
 * for a beat (a waiter that got its lock does not wait for that write, and a wait soon after finds the
 * channel confirmed).
 *
 * <h2>Faults</h2>
 * When the connection breaks, every waiter is signalled (a release may have been missed) and the hub
 * reconnects with backoff, resubscribing what is still wanted. A heartbeat PING every {@code heartbeat}
 * detects a connection that is silently dead (a partition): with no PONG for three beats, the hub drops
 * it and reconnects. Waiters never rely on the hub alone: they also re-check after a bounded time.
 *
 * <h2>Whom it listens to</h2>
 * The hub asks its address supplier where to connect each time it (re)connects: a fixed server; any node
 * of a Redis Cluster (a plain PUBLISH reaches subscribers on every node over the cluster bus), rotating
 * through the nodes so that a dead one is left behind; or the primary the sentinels name now, so that the
 * hub follows a failover (PUBLISH on the primary also reaches subscribers on its replicas).
 *
 * <p>On an application's own client ({@link #WakeupHub(UnifiedJedis, String, String, Duration)}) the hub opens no
 * connection: it borrows one from the client's pool for as long as the subscription lasts (a {@code JedisPooled}'s
 * pool; a cluster's: the pool of one node after another) and, when the subscription ends, marks it broken so that the
 * pool destroys it: a connection that was in subscriber mode never goes back to the application. A
 * {@code JedisSentineled} shows no pool: the hub subscribes through it ({@link UnifiedJedis#subscribe}, a connection
 * to the current primary), on a virtual reader, and drops that connection by interrupting the reader (a virtual
 * thread interrupted in a socket read closes the socket, and the client takes the broken connection out of its pool).
 * That client gives its connection back when the subscription ends however it ends, an error reply included (an ACL
 * that refuses the heartbeat's PING, say), and one given back in subscriber mode would fail the application's next
 * commands on it. So once the control channel is subscribed, the hub marks that connection broken: whenever it goes
 * back, the pool destroys it. Jedis shows the connection of a subscription nowhere, so the hub reads it from the
 * subscriber's fields ({@link #lentConnection}); a client whose Jedis keeps it elsewhere is refused at connect.
 *
 * <p>Thread safe. Runs a reader thread (platform, or virtual on a sentinel client) and a virtual one (the heartbeat)
 * until {@link #close()}.
 */
final class WakeupHub implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WakeupHub.class);

  private final Supplier<HostAndPort> address;
  /** The application's client the hub subscribes through; null when it connects itself to {@link #address}. */
  private final UnifiedJedis client;
  /** Borrows a connection of {@link #client}'s pool; null for a client that shows no pool (it subscribes itself). */
  private final Supplier<Connection> borrow;
  private final String label;
  private final JedisClientConfig config;
  private final String controlChannel;
  private final long heartbeatNanos;
  private final Object lock = new Object();
  // guarded by lock
  private final Map<String, Channel> channels = new HashMap<>();
  private Subscriber current;
  private Connection connection;
  private HostAndPort connectedTo;
  private boolean ready;
  private long lastPong;
  private volatile boolean closed;
  /** Whether an error reply that ended a subscription was logged (once a hub). Reader thread only. */
  private boolean warnedErrorReply;
  private final Thread reader;
  private final Thread heartbeat;

  private static final class Channel {
    final Set<Waiter> waiters = new LinkedHashSet<>();
    int outstanding;
    boolean lastWasSubscribe;
    boolean confirmed;
    /** When the last waiter left (System.nanoTime), while the channel stays subscribed; 0 while it has waiters. */
    long idleSince;
  }

  WakeupHub(HostAndPort address, JedisClientConfig config, String controlChannel, Duration heartbeat) {
    this(() -> address, address.toString(), config, controlChannel, heartbeat);
  }

  /**
   * @param address where to connect, asked at every (re)connect; may throw (then the hub retries with backoff)
   * @param label names the hub in thread names and log lines
   */
  WakeupHub(Supplier<HostAndPort> address, String label, JedisClientConfig config, String controlChannel,
      Duration heartbeat) {
    this(address, null, label, config, controlChannel, heartbeat);
  }

  /**
   * A hub that subscribes through the application's {@code client} (see the class comment).
   *
   * @param label names the hub in thread names and log lines
   */
  WakeupHub(UnifiedJedis client, String label, String controlChannel, Duration heartbeat) {
    this(null, java.util.Objects.requireNonNull(client, "client"), label, null, controlChannel, heartbeat);
  }

  private WakeupHub(Supplier<HostAndPort> address, UnifiedJedis client, String label, JedisClientConfig config,
      String controlChannel, Duration heartbeat) {
    this.address = address;
    this.client = client;
    this.borrow = client == null ? null : borrower(client);
    this.label = label;
    this.config = config;
    this.controlChannel = controlChannel;
    this.heartbeatNanos = heartbeat.toNanos();
    // a platform thread: a message then wakes the waiter after one thread switch; a virtual reader adds the
    // poller's and a carrier's (measured: about 150-200 us more per hand-off on loopback). On an application's
    // sentinel client a virtual one, which an interrupt takes out of its read (the hub has no socket to close then)
    Thread.Builder readerThread = client == null || borrow != null ? Thread.ofPlatform().daemon() : Thread.ofVirtual();
    this.reader = readerThread.name("tumbler-redis-sub-" + label).unstarted(this::readLoop);
    this.heartbeat = Thread.ofVirtual().name("tumbler-redis-beat-" + label).unstarted(this::beatLoop);
    this.reader.start(); // started once both fields are set: a connection the reader drops interrupts the reader
    this.heartbeat.start();
  }

  /**
   * How the hub borrows a connection of {@code client}'s pool: a {@code JedisPooled}'s pool; a cluster's nodes' pools
   * in turn (a PUBLISH reaches every node's subscribers); null for a client that shows no pool (a sentinel client).
   */
  private static Supplier<Connection> borrower(UnifiedJedis client) {
    return switch (client) {
      case JedisPooled pooled -> () -> pooled.getPool().getResource();
      case JedisCluster cluster -> {
        java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        yield () -> {
          List<ConnectionPool> pools = new ArrayList<>(cluster.getClusterNodes().values());
          if (pools.isEmpty()) {
            throw new JedisConnectionException("the cluster client knows no node");
          }
          return pools.get(Math.floorMod(next.getAndIncrement(), pools.size())).getResource();
        };
      }
      default -> null;
    };
  }

  /**
   * Where Jedis keeps a subscription's connection: {@code JedisPubSubBase.authenticator.client} (Jedis 6). Null when
   * this Jedis keeps it elsewhere or will not let it be read.
   */
  private static final java.lang.reflect.Field[] LENT = lentFields();

  private static java.lang.reflect.Field[] lentFields() {
    try {
      java.lang.reflect.Field authenticator = redis.clients.jedis.JedisPubSubBase.class.getDeclaredField("authenticator");
      java.lang.reflect.Field client = authenticator.getType().getDeclaredField("client");
      if (!Connection.class.isAssignableFrom(client.getType())) {
        return null;
      }
      authenticator.setAccessible(true);
      client.setAccessible(true);
      return new java.lang.reflect.Field[] {authenticator, client};
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  /** Whether a subscription through a client that shows no pool can be kept out of that pool (see the class comment). */
  static boolean canLendSafely() {
    return LENT != null;
  }

  /** The connection {@code sub} is subscribed on, as Jedis lent it; null if it cannot be read. */
  static Connection lentConnection(JedisPubSub sub) {
    if (LENT == null) {
      return null;
    }
    try {
      Object authenticator = LENT[0].get(sub);
      return authenticator == null ? null : (Connection) LENT[1].get(authenticator);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  /** The server the subscriber connection is on now, or null between connections. */
  HostAndPort connectedTo() {
    synchronized (lock) {
      return connectedTo;
    }
  }

  /** Adds {@code w} to the waiters of {@code channel}, subscribing if it is the first. */
  void register(String channel, Waiter w) {
    synchronized (lock) {
      Channel c = channels.computeIfAbsent(channel, k -> new Channel());
      c.waiters.add(w);
      c.idleSince = 0;
      if (c.confirmed) {
        w.confirmed();
      } else if (ready && !(c.lastWasSubscribe && c.outstanding > 0)) {
        send(true, channel, c);
      }
    }
  }

  /** Removes {@code w}; unsubscribes the channel when no waiter is left. */
  void unregister(String channel, Waiter w) {
    synchronized (lock) {
      Channel c = channels.get(channel);
      if (c == null || !c.waiters.remove(w) || !c.waiters.isEmpty()) {
        return;
      }
      if (ready && (c.confirmed || c.outstanding > 0)) {
        // unsubscribed by the heartbeat once idle for a beat: the waiter that got the lock does not wait for
        // the write, and the next wait on this lock soon after finds its subscription confirmed already
        c.idleSince = Math.max(1, System.nanoTime());
      } else if (c.outstanding == 0) {
        channels.remove(channel);
      }
    }
  }

  // guarded by lock
  private void unsubscribeIdle() {
    long now = System.nanoTime();
    for (Map.Entry<String, Channel> e : List.copyOf(channels.entrySet())) {
      Channel c = e.getValue();
      if (c.waiters.isEmpty() && c.idleSince != 0 && now - c.idleSince >= heartbeatNanos) {
        c.idleSince = 0;
        if (c.confirmed || c.outstanding > 0) {
          send(false, e.getKey(), c);
        } else {
          channels.remove(e.getKey());
        }
      }
    }
  }

  // guarded by lock
  private void send(boolean subscribe, String channel, Channel c) {
    try {
      if (subscribe) {
        current.subscribe(channel);
      } else {
        current.unsubscribe(channel);
      }
      c.outstanding++;
      c.lastWasSubscribe = subscribe;
      c.confirmed = false;
    } catch (RuntimeException e) {
      // the connection is breaking; the reader notices, signals everyone and resubscribes
      LOG.debug("cannot {} {} on {}: {}", subscribe ? "subscribe" : "unsubscribe", channel,
          connectedTo != null ? connectedTo : label, e.toString());
      dropConnection();
    }
  }

  // guarded by lock
  private void dropConnection() {
    if (client != null && borrow == null) {
      if (current != null) {
        reader.interrupt(); // the client's connection, in a read on the (virtual) reader: closed by the interrupt
      }
      return;
    }
    Connection c = connection;
    if (c != null) {
      try {
        c.disconnect();
      } catch (RuntimeException ignored) {
        // already broken
      }
    }
  }

  private void readLoop() {
    long backoffMs = 50;
    while (!closed) {
      if (client != null) {
        Thread.interrupted(); // a drop of the connection that ended: not of the next one
      }
      Connection conn = null;
      Subscriber sub = new Subscriber();
      HostAndPort target = null;
      boolean wasReady = false;
      try {
        if (client == null) {
          target = address.get();
          conn = new Connection(target, config);
        } else if (borrow != null) {
          conn = borrow.get();
        }
        synchronized (lock) {
          if (closed) {
            if (conn != null) {
              conn.close();
            }
            return;
          }
          connection = conn;
          connectedTo = target;
          current = sub;
          lastPong = System.nanoTime();
        }
        if (conn != null) {
          sub.proceed(conn, controlChannel);
        } else {
          client.subscribe(sub, controlChannel); // one of the client's connections, given back when it ends
        }
      } catch (RuntimeException e) {
        if (!closed && e instanceof redis.clients.jedis.exceptions.JedisDataException && !warnedErrorReply) {
          // the server refused something the subscription needs (an ACL without SUBSCRIBE, PING or a channel): it
          // will again, so say it once where operators look; waiters still find their locks by re-checking
          warnedErrorReply = true;
          LOG.warn("the release subscription on {} ended with an error reply, and waiters are woken only by their "
              + "re-checks while it does: {}", target != null ? target : label, e.getMessage());
        } else if (!closed) {
          LOG.debug("subscriber connection to {} ({}) ended: {}", target, label, e.toString());
        }
      } finally {
        List<Waiter> toSignal = new ArrayList<>();
        synchronized (lock) {
          wasReady = ready;
          ready = false;
          current = null;
          connection = null;
          connectedTo = null;
          channels.values().removeIf(c -> c.waiters.isEmpty());
          for (Channel c : channels.values()) {
            c.outstanding = 0;
            c.confirmed = false;
            c.lastWasSubscribe = false;
            toSignal.addAll(c.waiters);
          }
        }
        // a release may have been published while we were not listening
        toSignal.forEach(Waiter::signal);
        if (conn != null) {
          try {
            if (client != null) {
              conn.setBroken(); // it was in subscriber mode: the application's pool destroys it, never lends it again
            }
            conn.close();
          } catch (RuntimeException ignored) {
            // broken anyway
          }
        }
      }
      // a connection that got as far as its subscription starts the backoff again
      backoffMs = wasReady ? 50 : backoffMs;
      if (!closed) {
        try {
          Thread.sleep(backoffMs);
        } catch (InterruptedException e) {
          if (closed) {
            return;
          }
        }
        backoffMs = Math.min(1000, backoffMs * 2);
      }
    }
  }

  private void beatLoop() {
    while (!closed) {
      try {
        Thread.sleep(Duration.ofNanos(heartbeatNanos));
      } catch (InterruptedException e) {
        return;
      }
      synchronized (lock) {
        if (!ready || current == null) {
          continue;
        }
        if (System.nanoTime() - lastPong > 3 * heartbeatNanos) {
          LOG.debug("no PONG from {} for {}ms; reconnecting the subscriber", connectedTo, 3 * heartbeatNanos / 1_000_000);
          dropConnection();
          continue;
        }
        try {
          current.ping();
        } catch (RuntimeException e) {
          dropConnection();
          continue;
        }
        unsubscribeIdle();
      }
    }
  }

  @Override
  public void close() {
    List<Waiter> toSignal = new ArrayList<>();
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      dropConnection();
      for (Channel c : channels.values()) {
        toSignal.addAll(c.waiters);
      }
    }
    toSignal.forEach(Waiter::signal);
    reader.interrupt();
    heartbeat.interrupt();
  }

  private final class Subscriber extends JedisPubSub {
    @Override
    public void onSubscribe(String channel, int count) {
      List<Waiter> toConfirm = List.of();
      synchronized (lock) {
        if (current != this) {
          return;
        }
        if (channel.equals(controlChannel)) {
          if (client != null && borrow == null) {
            Connection lent = lentConnection(this);
            if (lent == null) {
              // cannot happen once the constructor's check passed; if it does, leave subscriber mode at once
              LOG.warn("cannot find the connection of the subscription on {}; dropping it", label);
              dropConnection();
              return;
            }
            lent.setBroken(); // in subscriber mode from now on: destroyed when it goes back, never lent again
          }
          ready = true;
          lastPong = System.nanoTime();
          for (Map.Entry<String, Channel> e : channels.entrySet()) {
            if (!e.getValue().waiters.isEmpty()) {
              send(true, e.getKey(), e.getValue());
            }
          }
          return;
        }
        Channel c = channels.get(channel);
        if (c == null) {
          return;
        }
        c.outstanding--;
        if (c.outstanding <= 0 && c.lastWasSubscribe) {
          c.outstanding = 0;
          c.confirmed = true;
          toConfirm = new ArrayList<>(c.waiters);
        }
      }
      toConfirm.forEach(Waiter::confirmed);
    }

    @Override
    public void onUnsubscribe(String channel, int count) {
      synchronized (lock) {
        if (current != this) {
          return;
        }
        Channel c = channels.get(channel);
        if (c == null) {
          return;
        }
        c.outstanding--;
        if (c.outstanding <= 0) {
          c.outstanding = 0;
          if (c.waiters.isEmpty()) {
            channels.remove(channel);
          }
        }
      }
    }

    @Override
    public void onMessage(String channel, String message) {
      List<Waiter> toSignal;
      synchronized (lock) {
        Channel c = channels.get(channel);
        if (c == null) {
          return;
        }
        toSignal = new ArrayList<>(c.waiters);
      }
      for (Waiter w : toSignal) {
        w.signal(message);
      }
    }

    @Override
    public void onPong(String pattern) {
      synchronized (lock) {
        lastPong = System.nanoTime();
      }
    }
  }
}
