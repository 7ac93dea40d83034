package dev.tumbler.peer.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.peer.node.NodeStats;
import dev.tumbler.peer.runtime.PeerNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The provider through the public API: URLs, capabilities, sharing, namespaces, stats. */
class NativeProviderTest {

  private static String cluster() {
    return "t-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static List<String> memUrls(String cluster, String algorithm, String... ids) {
    List<String> urls = new ArrayList<>();
    for (String id : ids) {
      List<String> peers = new ArrayList<>(List.of(ids));
      peers.remove(id);
      urls.add("lock:native:mem/" + cluster + "?node=" + id + "&peers=" + String.join(",", peers) + "&algorithm="
          + algorithm);
    }
    return urls;
  }

  @Test
  void declaresOnlyWhatLamportKeeps() {
    try (LockService s = LockProviders.connect("lock:native:local")) {
      assertEquals("native", s.info().provider());
      assertTrue(s.supports(Capability.MUTEX));
      assertTrue(s.supports(Capability.FENCING));
      assertFalse(s.supports(Capability.LEASE_EXPIRY), "a Lamport grant never expires");
      assertFalse(s.supports(Capability.FAULT_TOLERANT), "every Lamport peer must be up");
      assertFalse(s.supports(Capability.LOST_NOTIFICATION));
    }
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "lock:native:nowhere|lock:native:local",
      "lock:native:local?leaseTime=10s|leaseTime",
      "lock:native:local?algorithm=paxos|ricart-agrawala",
      "lock:native:local?peerTimeout=0s|peerTimeout",
      "lock:native:local?peerTimeout=soon|peerTimeout",
      "lock:native:local?namespace=%20|namespace",
      "lock:native:mem/x?peers=b|node",
      "lock:native:mem/x?node=a&peers=b,a|itself",
      "lock:native:mem/x?node=a&peers=b,b|twice",
      "lock:native://127.0.0.1:1?peers=127.0.0.1:2|secret",
      "lock:native://127.0.0.1:1?peers=127.0.0.1:2&secret=0123456789abcdef&tpyo=1|tpyo",
      "lock:native://127.0.0.1?peers=127.0.0.1:2&secret=0123456789abcdef|port",
      "lock:native://127.0.0.1:0?peers=127.0.0.1:2&secret=0123456789abcdef|port 0",
      "lock:native://127.0.0.1:1?peers=127.0.0.1:2&secret=0123456789abcdef&dialAddresses=127.0.0.1:3=h:1|dialAddresses",
      "lock:native://127.0.0.1:1,127.0.0.1:2?secret=0123456789abcdef|clientSecret",
      "lock:native://127.0.0.1:1,127.0.0.1:2?secret=0123456789abcdef&clientSecret=fedcba9876543210|neither 'secret'",
      "lock:native://127.0.0.1:1,127.0.0.1:2?clientSecret=fedcba9876543210|cannot serve thin clients",
      // issue 40: a member that takes clients on an algorithm without terms was a NullPointerException
      "lock:native://127.0.0.1:1?peers=127.0.0.1:2&secret=0123456789abcdef&clientSecret=fedcba9876543210&clientListen=127.0.0.1:3|parameter 'clientListen': algorithm lamport cannot serve thin clients",
      "lock:native://127.0.0.1:1?peers=127.0.0.1:2&algorithm=ricart-agrawala&secret=0123456789abcdef&clientSecret=fedcba9876543210&clientListen=127.0.0.1:3|parameter 'clientListen': algorithm ricart-agrawala cannot serve",
      "lock:native://127.0.0.1:1,127.0.0.1:2?algorithm=lease&clientSecret=short|clientSecret",
      "lock:native://127.0.0.1:1,127.0.0.1:2?algorithm=lease&clientSecret=fedcba9876543210&clientListen=x:1|several hosts",
      "lock:native://127.0.0.1:1,127.0.0.1:2?algorithm=lease&clientSecret=fedcba9876543210&bucketz=1|bucketz",
      "lock:native://127.0.0.1:1,127.0.0.1?algorithm=lease&clientSecret=fedcba9876543210|no port",
  })
  void badUrlsFailNamingTheProblem(String url, String named) {
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect(url).close());
    assertTrue(e.getMessage().contains(named), "'" + e.getMessage() + "' does not name " + named);
  }

  /** {@code unwrap} hands out the node's counters, not the node: no cast reaches the runtime. */
  @Test
  void unwrapGivesTheCountersNotTheNode() {
    try (LockService s = LockProviders.connect("lock:native:local")) {
      NodeStats stats = s.unwrap(NodeStats.class);
      assertFalse(stats instanceof PeerNode, stats.getClass().getName());
      assertEquals(NativeNodes.of(s).nodeId(), stats.nodeId());
      assertThrows(LockException.class, () -> s.unwrap(PeerNode.class));
    }
  }

  /**
   * Port 0 is refused with peers (they could not dial an ephemeral port), and accepted alone: the node is
   * then known everywhere by the port it bound, never by "host:0".
   */
  @Test
  void ephemeralPortAloneUsesTheBoundPortEverywhere() throws InterruptedException {
    try (LockService s = LockProviders.connect("lock:native://127.0.0.1:0?secret=0123456789abcdef")) {
      String id = s.unwrap(NodeStats.class).nodeId();
      assertTrue(id.startsWith("127.0.0.1:") && !id.equals("127.0.0.1:0"), id);
      PeerNode<?> node = NativeNodes.of(s);
      assertEquals(id, node.transport().self(), "core and transport agree");
      assertEquals(id, "127.0.0.1:" + ((dev.tumbler.peer.transport.tcp.TcpTransport) node.transport()).port());
      Lease l = s.lock("p").tryAcquire(Duration.ofSeconds(5)).orElseThrow();
      assertTrue(s.lock("p").tryAcquire(Duration.ZERO).isEmpty());
      try (LockService second = LockProviders.connect("lock:native://127.0.0.1:0?secret=0123456789abcdef")) {
        assertEquals(id, second.unwrap(NodeStats.class).nodeId(), "the same URL shares the running node");
        assertTrue(second.lock("p").tryAcquire(Duration.ZERO).isEmpty(), "and its locks");
      }
      l.release();
    }
  }

  @Test
  void secretNeverInAnError() {
    String secret = "s3cret-that-must-not-show-0123";
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect(
        "lock:native://127.0.0.1:1?peers=127.0.0.1:2&secret=" + secret + "&bogus=1").close());
    assertFalse(e.getMessage().contains(secret), e.getMessage());
    Properties p = new Properties();
    p.setProperty("secret", "short");
    e = assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect(
        "lock:native://127.0.0.1:1?peers=127.0.0.1:2", p).close());
    assertFalse(e.getMessage().contains("short"), e.getMessage());
  }

  /** A thin client's URL: its secret never in an error or in the service's URL. */
  @Test
  void aClientsSecretNeverShows() {
    String secret = "client-secret-0123456789";
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect(
        "lock:native://127.0.0.1:1,127.0.0.1:2?algorithm=lamport&clientSecret=" + secret).close());
    assertFalse(e.getMessage().contains(secret), e.getMessage());
    e = assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect(
        "lock:native://127.0.0.1:1,127.0.0.1:2?algorithm=lease&clientSecret=" + secret + "&tpyo=1").close());
    assertFalse(e.getMessage().contains(secret), e.getMessage());
    assertTrue(e.getMessage().contains("tpyo"), e.getMessage());
  }

  @Test
  void nodeSharedPerUrlMustAgree() {
    String c = cluster();
    try (LockService a = LockProviders.connect("lock:native:mem/" + c + "?node=a&peers=b")) {
      InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
          () -> LockProviders.connect("lock:native:mem/" + c + "?node=a&peers=b&algorithm=ricart-agrawala").close());
      assertTrue(e.getMessage().contains("lamport"), e.getMessage());
      assertThrows(InvalidLockUrlException.class,
          () -> LockProviders.connect("lock:native:mem/" + c + "?node=z&peers=b").close(), "not a member");
      assertEquals("a", a.unwrap(NodeStats.class).nodeId());
      e = assertThrows(InvalidLockUrlException.class,
          () -> LockProviders.connect("lock:native:mem/" + c + "?node=a&peers=b,c").close(), "other peers");
      assertTrue(e.getMessage().contains("[b]"), e.getMessage());
    }
    String d = cluster();
    try (LockService a = LockProviders.connect("lock:native:mem/" + d + "?node=a&peers=b,c");
        LockService again = LockProviders.connect("lock:native:mem/" + d + "?node=a&peers=c,b")) {
      assertSame(NativeNodes.of(a), NativeNodes.of(again), "the same peers in another order");
    }
  }

  @Test
  void servicesOnOneLocalNodeExcludeEachOtherAndCloseIndependently() throws InterruptedException {
    try (LockService one = LockProviders.connect("lock:native:local");
        LockService two = LockProviders.connect("lock:native:local")) {
      Lease l = one.lock("shared").tryAcquire(Duration.ofSeconds(5)).orElseThrow();
      assertTrue(two.lock("shared").tryAcquire(Duration.ZERO).isEmpty(), "two services on one node both hold it");
      one.close();
      assertFalse(l.isValid(), "closing the service ends its leases");
      Lease l2 = two.lock("shared").tryAcquire(Duration.ofSeconds(5)).orElseThrow(() ->
          new AssertionError("closing one service did not release its lock for the other"));
      assertTrue(l2.fencingToken() > l.fencingToken());
      l2.release();
    }
  }

  @Test
  void tokensKeepIncreasingWhenTheNodeStopsAndStartsAgain() throws InterruptedException {
    String url = "lock:native:mem/" + cluster() + "?node=solo";
    long first;
    try (LockService s = LockProviders.connect(url)) {
      first = s.lock("restart").acquire().fencingToken();
    } // the last service closed: the node stopped, its memory gone
    try (LockService s = LockProviders.connect(url)) {
      Lease l = s.lock("restart").acquire();
      assertTrue(l.fencingToken() > first, "token " + l.fencingToken() + " after " + first
          + ": the clock of a restarted node must start past the old one (wall-clock microseconds)");
      l.release();
    }
  }

  /**
   * The elected algorithms put a term in the token's high bits, and a node that starts with no peer to learn from
   * takes its first term from the wall clock in 16-second units: a single node stopped and started again within
   * the same 16 s (an embedded {@code lock:native:local} reopened, an application context refreshed) began the same
   * term again, and its first tokens repeated the old ones. A node now starts above every node this JVM started
   * before; the default local node's semaphores are elected too.
   */
  @ParameterizedTest
  @CsvSource({"lease,lock", "bakery,lock", "buckets,lock", "lamport,semaphore"})
  void tokensOfAnElectedAlgorithmKeepIncreasingWhenTheNodeStartsAgainAtOnce(String algorithm, String kind)
      throws InterruptedException {
    String url = "lock:native:mem/" + cluster() + "?node=solo&algorithm=" + algorithm;
    long last = 0;
    for (int life = 0; life < 3; life++) {
      try (LockService s = LockProviders.connect(url)) {
        for (int i = 0; i < 3; i++) {
          Lease l = kind.equals("lock") ? s.lock("restart").acquire() : s.semaphore("restart", 2).acquire(1);
          assertTrue(l.fencingToken() > last, algorithm + " " + kind + ": token " + l.fencingToken() + " after "
              + last + " (life " + life + " of the node, grant " + i + ")");
          last = l.fencingToken();
          l.release();
        }
      } // the last service closed: the node stopped, its memory gone
    }
  }

  @Test
  void namespacesSeparateLocks() throws InterruptedException {
    // namespace x and y are apart; so are namespace a with b/c, a/b with c and none with a/b/c, which a plain
    // join on '/' once made one lock
    try (LockService x = LockProviders.connect("lock:native:local?namespace=x");
        LockService x2 = LockProviders.connect("lock:native:local?namespace=x");
        LockService y = LockProviders.connect("lock:native:local?namespace=y");
        LockService none = LockProviders.connect("lock:native:local");
        LockService a = LockProviders.connect("lock:native:local?namespace=inj-a");
        LockService ab = LockProviders.connect("lock:native:local?namespace=inj-a/b")) {
      Lease l = x.lock("n").acquire();
      assertTrue(y.lock("n").tryAcquire(Duration.ZERO).isPresent(), "namespace y conflicts with x");
      assertTrue(x2.lock("n").tryAcquire(Duration.ZERO).isEmpty(), "one namespace does not exclude itself");
      l.release();
      Lease joined = none.lock("inj-a/b/c").acquire();
      assertTrue(a.lock("b/c").tryAcquire(Duration.ZERO).isPresent(), "namespace inj-a + b/c is no namespace + inj-a/b/c");
      assertTrue(ab.lock("c").tryAcquire(Duration.ZERO).isPresent(), "namespace inj-a/b + c is no namespace + inj-a/b/c");
      assertTrue(none.lock("inj-a/b/c").tryAcquire(Duration.ZERO).isEmpty(), "no namespace does not exclude itself");
      joined.release();
    }
  }

  @ParameterizedTest
  @CsvSource({"lamport,3", "ricart-agrawala,2"})
  void messagesPerEntryThroughTheRuntime(String algorithm, int factor) throws Exception {
    List<String> urls = memUrls(cluster(), algorithm, "a", "b", "c", "d");
    List<LockService> services = new ArrayList<>();
    try {
      for (String u : urls) {
        services.add(LockProviders.connect(u));
      }
      // the first entry also waits for every node's Sync: count from after it. Lamport holds a release back
      // from a peer that does not wait for the name until its next message to that peer, so the count runs
      // from the end of one round over the four nodes to the end of another: the same releases are held
      // back at both ends
      services.get(0).lock("warm-up").acquire().release();
      for (LockService s : services) {
        s.lock("counted").acquire().release();
      }
      long before = quietTotal(services);
      int entries = 2 * services.size();
      for (int i = 0; i < entries; i++) {
        services.get(i % services.size()).lock("counted").acquire().release();
      }
      long after = quietTotal(services);
      assertEquals((long) factor * (urls.size() - 1) * entries, after - before,
          algorithm + ": messages for " + entries + " entries on 4 nodes");
      NodeStats stats = services.get(0).unwrap(NodeStats.class);
      assertEquals(algorithm, stats.algorithm());
      assertTrue(stats.grants() >= 3);
    } finally {
      for (LockService s : services) {
        s.close();
      }
    }
  }

  /** Total messages sent, once no node has sent anything for a while (releases go out asynchronously). */
  private static long quietTotal(List<LockService> services) throws InterruptedException {
    long last = -1;
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (System.nanoTime() < deadline) {
      long now = 0;
      for (LockService s : services) {
        NodeStats st = s.unwrap(NodeStats.class);
        now += st.messagesSent();
        assertEquals(st.messagesSent(), st.messagesSent());
      }
      long received = 0;
      for (LockService s : services) {
        received += s.unwrap(NodeStats.class).messagesReceived();
      }
      if (now == last && received == now) {
        return now;
      }
      last = now;
      Thread.sleep(50);
    }
    throw new AssertionError("the cluster never went quiet");
  }
}
