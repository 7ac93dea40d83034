package dev.tumbler.lock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.torture.backend.Processes;
import dev.tumbler.torture.backend.RedisCluster;
import dev.tumbler.torture.backend.RedisSentinels;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.JedisSentineled;
import redis.clients.jedis.providers.SentineledConnectionProvider;

/**
 * Services on the application's own Jedis clients ({@link RedisLockProvider#JEDIS}): one server, a cluster and a
 * sentinel-watched primary. The release notifications must come through the client (a waiter whose re-check is far
 * away is woken by them), the client's pool must get back what the service borrowed, and closing the service must
 * leave the client open. {@link RedisAppClientTckTest} runs the whole TCK on the first kind.
 */
class RedisApplicationClientTest {
  /** Longer than every wait below: a waiter granted within them was woken by the release notification. */
  private static final String FAR_RECHECK = "recheck=60s";
  private static final JedisClientConfig CONFIG =
      DefaultJedisClientConfig.builder().connectionTimeoutMillis(2_000).socketTimeoutMillis(2_000).build();

  private static EmbeddedRedis server;

  @BeforeAll
  static void start() {
    server = EmbeddedRedis.start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static LockService connect(String url, Object client) {
    Properties p = new Properties();
    p.put(RedisLockProvider.JEDIS, client);
    return LockProviders.connect(url, p);
  }

  private static JedisPooled pooled() {
    return new JedisPooled(HostAndPort.from(server.address()), CONFIG);
  }

  @Test
  void anObjectThatIsNotOneOfTheJedisClientsIsRefusedByItsType() {
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
        () -> connect("lock:redis:///", "localhost:6379"));
    assertTrue(e.getMessage().contains("java.lang.String") && e.getMessage().contains("JedisPooled"), e.getMessage());
  }

  @Test
  void aUrlThatDescribesAConnectionIsRefusedNamingWhatDoesNotApply() {
    try (JedisPooled client = pooled()) {
      for (String[] c : new String[][] {
          {"lock:redis://localhost:6379", "names no hosts"},
          {"lock:redis:///3", "database"},
          {"lock:redis:///?tls=true", "'tls'"},
          {"lock:redis:///?mode=cluster", "'mode'"},
          {"lock:redis:///?sentinelPassword=s3cret-sentinel", "'sentinelPassword'"},
          {"lock:redis:///?leaseTme=5s", "leaseTme"}}) {
        InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, () -> connect(c[0], client), c[0]);
        assertTrue(e.getMessage().contains(c[1]), c[0] + ": " + e.getMessage());
        assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
      }
      Properties p = new Properties();
      p.put(RedisLockProvider.JEDIS, client);
      p.setProperty("password", "hunter2-secret");
      InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
          () -> LockProviders.connect("lock:redis:///", p));
      assertTrue(e.getMessage().contains("credentials"), e.getMessage());
      assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
    }
  }

  @Test
  void onAPooledClientAWaiterIsWokenByTheReleaseAndClosingGivesBackTheConnectionAndLeavesTheClientOpen()
      throws Exception {
    try (JedisPooled client = pooled()) {
      LockService a = connect("lock:redis:///?namespace=app-pooled&" + FAR_RECHECK, client);
      LockService b = connect("lock:redis:///?namespace=app-pooled&" + FAR_RECHECK, client);
      try {
        exclusionAndWakeUp(a, b);
        // each service's subscriber holds one of the client's connections while it lives
        Processes.await(Duration.ofSeconds(10), "the two services' subscribers to hold a connection each",
            () -> client.getPool().getNumActive() == 2);
      } finally {
        a.close();
        b.close();
      }
      Processes.await(Duration.ofSeconds(10), "the services to give back every connection they borrowed",
          () -> client.getPool().getNumActive() == 0);
      assertEquals("PONG", client.ping(), "the application's client stays open");
    }
  }

  @Test
  void onAClusterClient() throws Exception {
    try (RedisCluster cluster = RedisCluster.start(3);
        JedisCluster client = new JedisCluster(cluster.addresses().stream().map(HostAndPort::from)
            .collect(Collectors.toCollection(LinkedHashSet::new)), CONFIG)) {
      twoServicesOn(client);
      client.set("tumbler-app-client", "still open");
      assertEquals("still open", client.get("tumbler-app-client"));
    }
  }

  @Test
  void onASentinelClient() throws Exception {
    try (RedisSentinels sentinels = RedisSentinels.start()) {
      Set<HostAndPort> addresses = sentinels.sentinels().stream().map(s -> HostAndPort.from(s.address()))
          .collect(Collectors.toCollection(LinkedHashSet::new));
      try (JedisSentineled client = new JedisSentineled(new SentineledConnectionProvider(RedisSentinels.MASTER, CONFIG,
          addresses, DefaultJedisClientConfig.builder().build()))) {
        twoServicesOn(client);
        assertEquals("PONG", client.ping(), "the application's client stays open");
      }
    }
  }

  /**
   * A subscription through a sentinel client that ends with an error reply must not give its connection, still in
   * subscriber mode, back to the application's pool: the application's next commands on it would fail ("only
   * SUBSCRIBE ... allowed in this context"). The client's ACL user may subscribe to the service's control channel but
   * to no lock's channel, so a waiter's SUBSCRIBE is refused with NOPERM after the control channel is subscribed; the
   * hub goes round again and again while the waiter waits, and the application runs commands meanwhile. (The holder
   * is on a client of its own with the default user: its release publishes on the lock's channel.)
   */
  @Test
  void aSubscriptionEndedByAnErrorReplyNeverGivesItsConnectionBackToASentinelClientsPool() throws Exception {
    try (RedisSentinels sentinels = RedisSentinels.start()) {
      HostAndPort primary = HostAndPort.from(sentinels.primary().address());
      try (redis.clients.jedis.Jedis admin = new redis.clients.jedis.Jedis(primary, CONFIG)) {
        admin.aclSetUser("app", "on", ">app-pw", "~*", "resetchannels", "&tumbler:*ctl:*", "+@all");
        admin.aclLogReset();
      }
      Set<HostAndPort> addresses = sentinels.sentinels().stream().map(s -> HostAndPort.from(s.address()))
          .collect(Collectors.toCollection(LinkedHashSet::new));
      JedisClientConfig app = DefaultJedisClientConfig.builder().connectionTimeoutMillis(2_000)
          .socketTimeoutMillis(2_000).user("app").password("app-pw").build();
      try (JedisSentineled client = new JedisSentineled(new SentineledConnectionProvider(RedisSentinels.MASTER, app,
              addresses, DefaultJedisClientConfig.builder().build()));
          LockService holder = LockProviders.connect("lock:redis://" + primary + "?" + FAR_RECHECK);
          LockService waiter = connect("lock:redis:///?recheck=1s", client)) {
        String name = "refused-channel-" + System.nanoTime();
        Lease held = holder.lock(name).acquire();
        CompletableFuture<Optional<Lease>> waiting = CompletableFuture.supplyAsync(() -> {
          try {
            return waiter.lock(name).tryAcquire(Duration.ofSeconds(3));
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        });
        List<String> failures = new ArrayList<>();
        long commands = 0;
        while (!waiting.isDone()) {
          try {
            client.set("tumbler-app-client", "v" + commands);
            commands++;
          } catch (redis.clients.jedis.exceptions.JedisException e) {
            failures.add(e.toString());
          }
        }
        Optional<Lease> got;
        try {
          got = waiting.get();
        } catch (java.util.concurrent.ExecutionException e) {
          throw new AssertionError("the waiter's own attempt failed, on a connection in subscriber mode that went back "
              + "to the client's pool? " + e.getCause(), e.getCause());
        }
        assertTrue(got.isEmpty(), "the waiter was granted a held name");
        try (redis.clients.jedis.Jedis admin = new redis.clients.jedis.Jedis(primary, CONFIG)) {
          assertTrue(admin.aclLog().stream().anyMatch(e -> e.getUsername().equals("app")
              && e.getReason().equals("channel")), "no SUBSCRIBE of a lock's channel was refused: the case did not "
              + "happen (ACL LOG: " + admin.aclLog() + ")");
        }
        assertEquals(List.of(), failures.stream().distinct().limit(3).toList(), failures.size() + " of "
            + (commands + failures.size()) + " application commands failed: a connection in subscriber mode went "
            + "back to the client's pool");
        held.release();
        assertEquals("PONG", client.ping(), "the application's client stays open");
      }
    }
  }

  /** {@link #exclusionAndWakeUp} between two services on {@code client}, both closed after. */
  private static void twoServicesOn(Object client) throws Exception {
    LockService a = connect("lock:redis:///?" + FAR_RECHECK, client);
    LockService b = connect("lock:redis:///?" + FAR_RECHECK, client);
    try {
      exclusionAndWakeUp(a, b);
    } finally {
      a.close();
      b.close();
    }
  }

  /**
   * {@code a} holds a name; {@code b} waits for it with a deadline far shorter than its re-check, so only the release
   * notification (through the application's client) can wake it in time; then {@code a} cannot have it while
   * {@code b} holds it.
   */
  private static void exclusionAndWakeUp(LockService a, LockService b) throws Exception {
    String name = "app-client-" + System.nanoTime();
    Lease first = a.lock(name).acquire();
    assertTrue(b.lock(name).tryAcquire(Duration.ZERO).isEmpty(), "b was granted a held name");
    CompletableFuture<Optional<Lease>> waiting = CompletableFuture.supplyAsync(() -> {
      try {
        return b.lock(name).tryAcquire(Duration.ofSeconds(10));
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
    Thread.sleep(500); // b subscribed and waits (a release before that is found by its check after subscribing)
    long token = first.fencingToken();
    first.release();
    Optional<Lease> second = waiting.get(15, TimeUnit.SECONDS);
    assertTrue(second.isPresent(), "b was not woken by the release within 10 s, its re-check 60 s away");
    assertTrue(second.get().fencingToken() > token, "tokens " + token + " then " + second.get().fencingToken());
    assertTrue(a.lock(name).tryAcquire(Duration.ZERO).isEmpty(), "a was granted the name b holds");
    second.get().release();
  }
}
