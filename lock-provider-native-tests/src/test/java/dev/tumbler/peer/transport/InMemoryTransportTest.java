package dev.tumbler.peer.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class InMemoryTransportTest {

  private static final class Recorder implements Transport.Receiver {
    final BlockingQueue<String> events = new LinkedBlockingQueue<>();

    @Override
    public void deliver(String peer, byte[] payload) {
      events.add(peer + ":" + payload[0]);
    }

    @Override
    public void peerUp(String peer) {
      events.add("up " + peer);
    }

    @Override
    public void peerDown(String peer) {
      events.add("down " + peer);
    }

    String next() throws InterruptedException {
      String e = events.poll(5, TimeUnit.SECONDS);
      assertTrue(e != null, "no event");
      return e;
    }
  }

  @Test
  void fifoLinksWithDownAndUpInOrder() throws Exception {
    InMemoryNetwork net = new InMemoryNetwork("t-" + UUID.randomUUID(), Set.of("a", "b"));
    Recorder ra = new Recorder();
    Recorder rb = new Recorder();
    try (InMemoryTransport a = net.transport("a"); InMemoryTransport b = net.transport("b")) {
      a.start(ra);
      b.start(rb);
      assertEquals("up b", ra.next());
      assertEquals("up a", rb.next());
      assertTrue(a.isUp("b"));
      for (int i = 0; i < 100; i++) {
        a.send("b", new byte[] {(byte) i});
      }
      for (int i = 0; i < 100; i++) {
        assertEquals("a:" + i, rb.next());
      }
      net.cut("a", "b");
      a.send("b", new byte[] {1}); // dropped
      assertEquals("down a", rb.next());
      assertEquals("down b", ra.next());
      assertFalse(a.isUp("b"));
      net.heal("a", "b");
      a.send("b", new byte[] {2});
      assertEquals("up a", rb.next());
      assertEquals("a:2", rb.next());
      assertEquals("up b", ra.next());
      b.close();
      assertEquals("down b", ra.next());
      assertTrue(ra.events.isEmpty() && rb.events.isEmpty());
    }
  }

  @Test
  void membershipIsChecked() {
    InMemoryNetwork net = new InMemoryNetwork("t-" + UUID.randomUUID(), Set.of("a", "b"));
    assertThrows(IllegalArgumentException.class, () -> net.transport("z"));
    assertEquals(Set.of("b"), net.transport("a").peers());
    String name = "t-" + UUID.randomUUID();
    InMemoryNetwork.named(name, Set.of("a"));
    assertThrows(IllegalArgumentException.class, () -> InMemoryNetwork.named(name, Set.of("a", "b")));
  }
}
