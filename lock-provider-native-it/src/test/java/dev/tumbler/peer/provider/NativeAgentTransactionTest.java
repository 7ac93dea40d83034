package dev.tumbler.peer.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.LeaseLostEvent;
import dev.tumbler.lock.LockMode;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.LockTransaction;
import dev.tumbler.lock.TransactionOptions;
import dev.tumbler.lock.TransactionOptions.Quorum;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code agent}'s transactions through the API on a 3-node in-memory cluster, beyond what the TCK asks: locks held
 * past several lease terms (renewed in the background), the transaction options, and a client node that crashes
 * while its transaction holds locks. Bounds come from the lease term ({@link NativeTargets#LEASE_TIME}).
 */
class NativeAgentTransactionTest {

  private static final Duration T = NativeTargets.LEASE_TIME;
  private static final Duration GRANT = Duration.ofSeconds(15);

  private NativeTargets.Cluster cluster;
  private final List<LockService> services = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() {
    cluster = NativeTargets.memory("agent");
  }

  @AfterEach
  void stop() {
    services.forEach(LockService::close);
    cluster.close();
  }

  private LockService open(int node) {
    LockService s = cluster.open(node);
    services.add(s);
    return s;
  }

  @Test
  void locksStayHeldPastSeveralTermsWhileTheTransactionIsOpen() throws Exception {
    LockService a = open(0);
    LockService b = open(1);
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    LockTransaction t1 = a.beginTransaction(TransactionOptions.defaults()).lock(LockMode.WRITE, "acct", "1");
    t1.onLost(lost::add);
    assertTrue(t1.await(GRANT), "a free path was not granted");
    long token = t1.fencingTokens().get(List.of("acct", "1"));
    LockTransaction t2 = b.beginTransaction(TransactionOptions.defaults()).lock(LockMode.WRITE, "acct");
    assertFalse(t2.await(T.multipliedBy(3)), "[acct] was granted while [acct,1] is held, three terms on");
    assertEquals(Map.of(List.of("acct", "1"), token), t1.fencingTokens(), "the held lock changed or went");
    assertTrue(lost.isEmpty(), "a renewed transaction lock was lost: " + lost);
    t1.close();
    assertTrue(t2.await(GRANT), "the ancestor was not granted once the holder closed");
    assertTrue(t2.fencingTokens().get(List.of("acct")) > 0);
    t2.close();
  }

  @Test
  void optionsAreChecked() throws Exception {
    LockService a = open(0);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> a.beginTransaction(TransactionOptions.defaults().withNodes(List.of("a", "nowhere"))));
    assertTrue(e.getMessage().contains("'nowhere' is not a member"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class,
        () -> a.beginTransaction(TransactionOptions.defaults().withLeaseTime(T.plusMillis(1))));
    assertTrue(e.getMessage().contains("longer than the service's leaseTime"), e.getMessage());
    // a transaction on one node's server only: local, and it excludes only what is claimed on that server
    LockTransaction t = a.beginTransaction(TransactionOptions.defaults().withNodes(List.of("a"))
        .withQuorum(Quorum.ANY).withLeaseTime(Duration.ofSeconds(1)));
    try {
      assertTrue(t.lock(LockMode.WRITE, "solo").await(GRANT));
    } finally {
      t.close();
    }
    assertThrows(IllegalStateException.class, () -> t.lock(LockMode.READ, "solo"), "lock() after close");
  }

  @Test
  void aCrashedClientNodesLocksAreFreedByTheirLeases() throws Exception {
    LockService onC = open(2);
    LockTransaction holder = onC.beginTransaction(TransactionOptions.defaults().withQuorum(Quorum.MAJORITY))
        .lock(LockMode.WRITE, "job");
    assertTrue(holder.await(GRANT));
    LockService a = open(0);
    LockTransaction next = a.beginTransaction(TransactionOptions.defaults().withQuorum(Quorum.MAJORITY))
        .lock(LockMode.WRITE, "job");
    assertFalse(next.await(Duration.ofMillis(300)), "granted while the holder lives");
    long t0 = System.nanoTime();
    cluster.crashMinority(List.of(a, open(1)));
    assertTrue(next.await(T.multipliedBy(4).plus(GRANT)), "the crashed node's lock was never freed");
    long waited = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(next.fencingTokens().containsKey(List.of("job")));
    next.close();
    assertTrue(NativeNodes.of(onC).isClosed(), "the crashed node still runs");
    System.out.println("freed " + waited + " ms after the crash (lease " + T.toMillis() + " ms)");
  }
}
