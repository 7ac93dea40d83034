package dev.tumbler.peer.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.lamport.LamportCodec;
import dev.tumbler.peer.lamport.LamportCore;
import dev.tumbler.peer.lamport.LamportMessage;
import dev.tumbler.peer.transport.InMemoryNetwork;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A client whose wait ends just as its grant arrives calls {@link PeerNode#cancel} after the grant has
 * completed its outcome. The grant then belongs to the client (it reads the outcome and uses or releases
 * it), so the cancel must not free it in the core: a node that did let another client in while the first
 * went on as the holder (a soak run of {@code NativeFaultTest} caught two holders at once).
 */
class PeerNodeCancelTest {

  @ParameterizedTest
  @EnumSource(LamportCore.Variant.class)
  void aCancelAfterTheGrantArrivedLeavesItHeld(LamportCore.Variant variant) throws Exception {
    try (PeerNode<LamportMessage> node = single(variant)) {
      PeerNode.Pending first = node.acquire("s1", Claim.exclusive("x"), false);
      PeerNode.Outcome granted = first.outcome().get(10, TimeUnit.SECONDS);
      assertTrue(granted.granted(), granted.toString());

      node.cancel(first.requestId()); // the client's wait ended as the grant came: the grant won the race

      PeerNode.Outcome second = node.acquire("s2", Claim.exclusive("x"), true).outcome().get(10, TimeUnit.SECONDS);
      assertFalse(second.granted(), "granted to a second client while the first holds it: " + second);
      assertEquals(Output.Failure.CONTENDED, second.failure());

      node.release(first.requestId());
      PeerNode.Outcome third = node.acquire("s2", Claim.exclusive("x"), true).outcome().get(10, TimeUnit.SECONDS);
      assertTrue(third.granted(), "free again after the holder released it: " + third);
    }
  }

  private static PeerNode<LamportMessage> single(LamportCore.Variant variant) {
    String id = "n1";
    InMemoryNetwork net = new InMemoryNetwork("cancel-" + variant + "-" + System.nanoTime(), Set.of(id));
    LamportCore core = new LamportCore(id, Set.of(), variant, TimeUnit.SECONDS.toNanos(1), 0);
    PeerNode<LamportMessage> node = new PeerNode<>(core, new LamportCodec(), net.transport(id), Ticker.system());
    node.start();
    return node;
  }
}
