package dev.tumbler.peer.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tumbler.lock.HeldLock;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ServiceClosedException;
import dev.tumbler.lock.ServiceUnavailableException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code heldLocks()} of the algorithms with a server, and of {@code agent} (by the word of a majority of the members),
 * across nodes of a 3-node in-memory cluster: a node lists the grants of another by the server's word, or the
 * holder's own (a lock, and a semaphore's permits, which {@code buckets} serves, with holder, token and time left), a
 * holder's own listing drops a release at once, and another node's within a term. The TCK's listing group checks a
 * service's own grants and namespaces; this checks what only a cluster shows.
 */
class NativeListingTest {
  private static final Duration TERM = Duration.ofSeconds(2);
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final Duration PEER_TIMEOUT = Duration.ofMillis(500);
  /** Scheduling slack on a busy machine for the bounds above. */
  private static final Duration SLACK = Duration.ofMillis(750);

  private static LockService node(String cluster, String node, String peers, String algorithm) {
    return LockProviders.connect(url(cluster, node, peers, algorithm) + "&leaseTime=" + TERM.toMillis() + "ms");
  }

  private static String url(String cluster, String node, String peers, String algorithm) {
    return "lock:native:mem/" + cluster + "?node=" + node + "&peers=" + peers + "&algorithm=" + algorithm;
  }

  @ParameterizedTest
  @ValueSource(strings = {"lease", "buckets", "bakery", "agent"})
  void aNodeListsAnothersGrantsByTheServersWord(String algorithm) throws Exception {
    String c = "listing-" + UUID.randomUUID();
    try (LockService a = node(c, "a", "b,c", algorithm); LockService b = node(c, "b", "a,c", algorithm);
        LockService unused = node(c, "c", "a,b", algorithm)) {
      Lease lock = a.lock("job").tryAcquire(WAIT).orElseThrow(() -> new AssertionError("a free lock not granted"));
      Lease permits = a.semaphore("pool", 3).tryAcquire(2, WAIT)
          .orElseThrow(() -> new AssertionError("free permits not granted"));

      List<HeldLock> onB = b.heldLocks().orElseThrow(() -> new AssertionError(algorithm + " cannot list"));
      HeldLock job = only(onB, "job");
      assertEquals("mutex", job.kind(), "kind of " + job);
      assertTrue(job.holder().startsWith("a"), "holder of " + job + " names node a");
      assertTrue(job.token().isPresent(), "no token in " + job);
      if (job.tokenIsHolders()) {
        assertEquals(lock.fencingToken(), job.token().getAsLong(), "token of " + job);
      } else {
        assertTrue(job.token().getAsLong() >= lock.fencingToken(), "token of " + job + " below the holder's "
            + lock.fencingToken());
      }
      // (a buckets grant of a session on the server's own node has no term there: none is listed)
      assertTrue(job.remaining().map(r -> r.compareTo(TERM) <= 0).orElse(!algorithm.equals("lease")),
          "time left of " + job + " is not within a term");
      HeldLock pool = only(onB, "pool");
      assertEquals("semaphore", pool.kind(), "kind of " + pool);
      assertTrue(pool.tokenIsHolders(), "a semaphore's grant keeps its own token: " + pool);
      assertEquals(permits.fencingToken(), pool.token().getAsLong(), "token of " + pool);

      lock.release();
      permits.release();
      List<HeldLock> onA = a.heldLocks().orElseThrow();
      assertTrue(named(onA, "job").isEmpty() && named(onA, "pool").isEmpty(), "a still lists what it released: " + onA);
      // another node's release is listed gone once the server hears of it: a lease cached on its node, at the node's
      // next renewal (half a term)
      long end = System.nanoTime() + TERM.multipliedBy(2).toNanos();
      while (true) {
        List<HeldLock> now = b.heldLocks().orElseThrow();
        if (named(now, "job").isEmpty() && named(now, "pool").isEmpty()) {
          break;
        }
        if (System.nanoTime() > end) {
          fail("b still lists a's released grants two terms on: " + now);
        }
        Thread.sleep(100);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"lamport", "ricart-agrawala"})
  void anAlgorithmWithNoServerCannotSay(String algorithm) {
    String c = "listing-" + UUID.randomUUID();
    try (LockService a = LockProviders.connect(url(c, "a", "b", algorithm));
        LockService b = LockProviders.connect(url(c, "b", "a", algorithm))) {
      assertTrue(a.lock("x").tryAcquire(WAIT).isPresent(), "a free lock not granted");
      assertFalse(b.heldLocks().isPresent(), algorithm + " has no server that knows every node's grants");
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /**
   * A listing no server or majority can answer (the node's peers never started) asks again and gives up with
   * ServiceUnavailableException after {@code peerTimeout} and a second, not later; an interrupt ends it at once with the
   * interrupt status kept; closing the service during the wait ends it with ServiceClosedException.
   */
  @ParameterizedTest
  @ValueSource(strings = {"lease", "buckets", "bakery", "agent"})
  void aListingNobodyCanAnswerEndsWithinItsBoundOnInterruptOrOnClose(String algorithm) throws Exception {
    String c = "listing-" + UUID.randomUUID();
    long bound = PEER_TIMEOUT.plusSeconds(1).toNanos();
    try (LockService alone = LockProviders.connect(url(c, "a", "b,c", algorithm) + "&peerTimeout="
        + PEER_TIMEOUT.toMillis() + "ms")) {
      long t0 = System.nanoTime();
      ServiceUnavailableException e = assertThrows(ServiceUnavailableException.class, alone::heldLocks);
      long took = System.nanoTime() - t0;
      assertTrue(took >= bound - SLACK.toNanos() && took <= bound + SLACK.toNanos(), algorithm + ": gave up after "
          + took / 1_000_000 + " ms, not peerTimeout and a second: " + e.getMessage());

      Thread.currentThread().interrupt();
      t0 = System.nanoTime();
      assertThrows(ServiceUnavailableException.class, alone::heldLocks);
      assertTrue(Thread.interrupted(), "the interrupt status is kept");
      assertTrue(System.nanoTime() - t0 < SLACK.toNanos(), "an interrupted listing ends at once");

      var pending = java.util.concurrent.CompletableFuture.supplyAsync(alone::heldLocks);
      Thread.sleep(300);
      t0 = System.nanoTime();
      alone.close();
      var failure = assertThrows(java.util.concurrent.ExecutionException.class,
          () -> pending.get(bound, java.util.concurrent.TimeUnit.NANOSECONDS));
      assertTrue(failure.getCause() instanceof ServiceClosedException, "a listing under close ended with "
          + failure.getCause());
      assertTrue(System.nanoTime() - t0 < SLACK.toNanos(), "the close ended the listing's wait at once");
    }
  }

  /**
   * A listing whose answer is larger than the links' {@code maxFrameSize} (here 4 KiB, for 30 held names of 200
   * characters) is not sent: a node that must hear it from the server gives up within its bound with
   * ServiceUnavailableException that names the frame size, and the server's node carries on with the rest of its step:
   * every node goes on granting, and listing once what is held fits again.
   */
  @Test
  void aListingLargerThanAFrameIsNotSentAndTheClusterCarriesOn() throws Exception {
    NativeTargets.Cluster c = NativeTargets.tcp("lease", PEER_TIMEOUT, u -> u + "&maxFrameSize=4096");
    List<LockService> nodes = new java.util.ArrayList<>();
    try {
      for (int i = 0; i < 3; i++) {
        nodes.add(c.open(i));
      }
      List<Lease> held = new java.util.ArrayList<>();
      for (int i = 0; i < 30; i++) {
        held.add(nodes.get(0).lock("n".repeat(200) + i).tryAcquire(WAIT)
            .orElseThrow(() -> new AssertionError("a free lock not granted")));
      }
      int refused = 0;
      for (LockService n : nodes) {
        try {
          n.heldLocks(); // the server's own node hears its answer without a link
        } catch (ServiceUnavailableException e) {
          assertTrue(e.getMessage().contains("maxFrameSize"), e.getMessage());
          refused++;
        }
      }
      assertTrue(refused >= 2, "the two nodes that are not the server were sent a listing larger than a frame");
      for (Lease l : held) {
        l.release();
      }
      long end = System.nanoTime() + WAIT.toNanos();
      for (LockService n : nodes) {
        try (Lease l = n.lock("after").tryAcquire(WAIT).orElseThrow(() -> new AssertionError("no grant after"))) {
          assertTrue(l.isValid());
        }
        while (true) {
          try {
            n.heldLocks().orElseThrow();
            break;
          } catch (ServiceUnavailableException e) {
            if (System.nanoTime() > end) {
              throw new AssertionError("a node still cannot list once the released names left the listing", e);
            }
          }
        }
      }
    } finally {
      for (LockService n : nodes) {
        n.close();
      }
      c.close();
    }
  }

  private static List<HeldLock> named(List<HeldLock> all, String name) {
    return all.stream().filter(h -> h.name().equals(name)).toList();
  }

  private static HeldLock only(List<HeldLock> all, String name) {
    List<HeldLock> n = named(all, name);
    assertEquals(1, n.size(), "'" + name + "' listed " + n.size() + " times in " + all);
    return n.getFirst();
  }
}
