package dev.tumbler.peer.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.peer.algorithm.CoreContext;
import dev.tumbler.peer.algorithm.AlgorithmSettings;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.lamport.LamportAlgorithm;
import dev.tumbler.peer.composite.Envelope;
import dev.tumbler.peer.composite.Hosting;
import dev.tumbler.peer.transport.InMemoryNetwork;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The node runtime's side of renewals and losses: {@code renew} completes with the core's answer, a
 * {@code Lost} reaches the grant's listener on a thread other than the node's, and the messages sent are
 * counted by type; a holder query completes with the core's answer as well.
 */
class PeerNodeRenewTest {

  @Test
  void aHeldGrantIsRenewedAndOneNotHeldIsLostToItsListener() throws Exception {
    List<String> ids = List.of("a", "b");
    InMemoryNetwork net = new InMemoryNetwork("renew-" + System.nanoTime(), Set.copyOf(ids));
    List<PeerNode<Envelope>> nodes = new ArrayList<>();
    try {
      for (String id : ids) {
        PeerNode<Envelope> n = node(net, id, ids);
        n.start();
        nodes.add(n);
      }
      PeerNode<Envelope> a = nodes.get(0);
      PeerNode.Pending held = a.acquire("s", Claim.exclusive("x"), false);
      assertTrue(held.outcome().get(10, TimeUnit.SECONDS).granted());
      PeerNode.Outcome g = held.outcome().get();
      assertEquals(1, g.permits());
      assertEquals(Long.MAX_VALUE, g.validUntil(), "a Lamport grant has no term");

      PeerNode.Renewal renewed = a.renew(held.requestId()).get(10, TimeUnit.SECONDS);
      assertTrue(renewed.renewed(), renewed.toString());
      assertEquals(Long.MAX_VALUE, renewed.validUntil());

      // a request that was never granted: its renewal says lost, and its listener hears it off the node thread
      PeerNode.Pending refused = a.acquire("t", Claim.exclusive("x"), true);
      assertFalse(refused.outcome().get(10, TimeUnit.SECONDS).granted());
      CompletableFuture<String> heard = new CompletableFuture<>();
      a.onLost(refused.requestId(), (reason, detail) ->
          heard.complete(reason + " " + detail + " on " + Thread.currentThread().getName()));
      PeerNode.Renewal lost = a.renew(refused.requestId()).get(10, TimeUnit.SECONDS);
      assertFalse(lost.renewed());
      assertEquals(Output.LostReason.REVOKED, lost.lost());
      String told = heard.get(10, TimeUnit.SECONDS);
      assertTrue(told.startsWith("REVOKED not held on tumbler-lost-"), told);
      assertEquals(1, a.lost());

      a.release(held.requestId());
      // the node may still be sending (the release just asked for, a Sync): compare at a quiet moment, when the total
      // read before and after the counts by type is the same (a loaded run read 5 sent against 4 by type)
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      long total;
      Map<String, Long> byType;
      do {
        total = a.messagesSent();
        byType = a.messagesSentByType();
      } while (total != a.messagesSent() && System.nanoTime() < deadline);
      assertEquals(total, byType.values().stream().mapToLong(Long::longValue).sum(), byType.toString());
      assertTrue(byType.getOrDefault("lock/Request", 0L) >= 2 && byType.containsKey("lock/Sync"), byType.toString());
    } finally {
      for (PeerNode<Envelope> n : nodes) {
        n.close();
      }
    }
  }

  @Test
  void aHolderQueryCompletesWithTheCoresAnswerAndFailsOnceTheNodeIsClosed() throws Exception {
    InMemoryNetwork net = new InMemoryNetwork("holder-" + System.nanoTime(), Set.of("a"));
    PeerNode<Envelope> a = node(net, "a", List.of("a"));
    a.start();
    PeerNode.Pending held = a.acquire("s", Claim.exclusive("x").withTag("cand-1"), false);
    assertTrue(held.outcome().get(10, TimeUnit.SECONDS).granted());
    assertEquals(java.util.Optional.empty(), a.holder("x").get(10, TimeUnit.SECONDS),
        "Lamport cannot tell who holds a lock: it says so at once");
    a.close();
    assertTrue(a.holder("x").isCompletedExceptionally(), "asked after close");
  }

  @Test
  void aRenewalAfterCloseFailsWithNodeClosed() throws Exception {
    InMemoryNetwork net = new InMemoryNetwork("renew-closed-" + System.nanoTime(), Set.of("a"));
    PeerNode<Envelope> a = node(net, "a", List.of("a"));
    a.start();
    a.close();
    CompletableFuture<PeerNode.Renewal> f = a.renew(1);
    assertTrue(f.isCompletedExceptionally(), f.toString());
  }

  private static PeerNode<Envelope> node(InMemoryNetwork net, String id, List<String> ids) {
    List<String> peers = new ArrayList<>(ids);
    peers.remove(id);
    LamportAlgorithm alg = LamportAlgorithm.LAMPORT;
    return new PeerNode<>(Hosting.core(alg, new CoreContext(id, peers, TimeUnit.SECONDS.toNanos(5), 0, 0,
        new SplittableRandom(1), AlgorithmSettings.NONE)), Hosting.codec(alg), net.transport(id), Ticker.system());
  }
}
