package dev.tumbler.peer.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.peer.core.Claim;
import dev.tumbler.peer.core.Output;
import dev.tumbler.peer.lamport.LamportCodec;
import dev.tumbler.peer.lamport.LamportMessage;
import dev.tumbler.peer.transport.InMemoryNetwork;
import dev.tumbler.peer.transport.Transport;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A message larger than the transport takes (a listing of many claims above the links' {@code maxFrameSize}) is
 * dropped as a lost message would be, and the rest of the step is carried out: the messages after it to the same peer
 * leave, and the grant the step made reaches its client. Before, the transport's refusal went up through the step and
 * what followed the oversized message was never done.
 */
class PeerNodeOversizeTest {

  @Test
  void anOversizedMessageIsDroppedAndTheRestOfTheStepCarriedOut() throws Exception {
    ScriptedCore core = new ScriptedCore(); // an acquire: a message too large to send, a small one, the grant
    core.answers.add(a -> List.of(new Output.Send<>("n2", new LamportMessage.Request("x".repeat(500), 1, false)),
        new Output.Send<>("n2", new LamportMessage.Request("y", 2, false)),
        new Output.Granted<>(a.requestId(), a.claim().name(), 7)));
    InMemoryNetwork net = new InMemoryNetwork("oversize-" + System.nanoTime(), Set.of("n1", "n2"));
    Transport inner = net.transport("n1");
    Transport capped = new Transport() {
      @Override
      public String self() {
        return inner.self();
      }

      @Override
      public Set<String> peers() {
        return inner.peers();
      }

      @Override
      public void start(Receiver receiver) {
        inner.start(receiver);
      }

      @Override
      public void send(String peer, byte[] payload) {
        inner.send(peer, payload);
      }

      @Override
      public void send(String peer, List<byte[]> payloads) {
        for (byte[] p : payloads) {
          if (p.length > 100) { // as the TCP transports refuse a payload above maxFrameSize, before sending any
            throw new IllegalArgumentException("payload of " + p.length + " bytes exceeds maxFrameSize 100");
          }
        }
        inner.send(peer, payloads);
      }

      @Override
      public boolean isUp(String peer) {
        return inner.isUp(peer);
      }

      @Override
      public void close() {
        inner.close();
      }
    };
    List<LamportMessage> heard = new CopyOnWriteArrayList<>();
    LamportCodec codec = new LamportCodec();
    Transport other = net.transport("n2");
    other.start(new Transport.Receiver() {
      @Override
      public void deliver(String peer, byte[] payload) {
        heard.add(codec.decode(payload));
      }

      @Override
      public void peerUp(String peer) {}

      @Override
      public void peerDown(String peer) {}
    });
    try (PeerNode<LamportMessage> node = new PeerNode<>(core, codec, capped, Ticker.system())) {
      node.start();
      // the node drops what a step sends on a link whose coming up the core has not yet taken (its Sync comes
      // first); a busy machine took longer than the acquire below, and the small message was never sent
      long up = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (!core.up.contains("n2") && System.nanoTime() < up) {
        Thread.sleep(5);
      }
      assertTrue(core.up.contains("n2"), "the core was never told the link to n2 is up");
      PeerNode.Outcome o = node.acquire("s", Claim.exclusive("x"), false).outcome().get(10, TimeUnit.SECONDS);
      assertTrue(o.granted(), "the grant after the oversized message: " + o);
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (heard.isEmpty() && System.nanoTime() < end) {
        Thread.sleep(10);
      }
      assertEquals(List.of(new LamportMessage.Request("y", 2, false)), heard, "only the small message arrived");
    } finally {
      other.close();
    }
  }
}
