package dev.tumbler.peer.transport.tcp;

import static dev.tumbler.peer.transport.tcp.TcpTestSupport.WAIT;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.await;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.config;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.freePort;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.id;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.tck.LoopbackPorts;
import dev.tumbler.peer.transport.tcp.TcpTestSupport.Recorder;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class TcpTransportTest {
  private final List<TcpTransport> open = new ArrayList<>();

  @AfterEach
  void closeAll() {
    open.forEach(TcpTransport::close);
  }

  private TcpTransport start(String self, List<String> all, Recorder r) {
    return start(config(self, all).build(), r);
  }

  private TcpTransport start(TcpTransportConfig config, Recorder r) {
    TcpTransport t = TcpTransport.open(config);
    open.add(t);
    t.start(r);
    return t;
  }

  private static byte[] numbered(String from, int n) {
    byte[] f = from.getBytes();
    return ByteBuffer.allocate(4 + f.length).putInt(n).put(f).array();
  }

  @Test
  void threeNodesExchangePayloadsInFifoOrder() throws Exception {
    List<String> ids = List.of(id(freePort()), id(freePort()), id(freePort()));
    List<Recorder> recorders = List.of(new Recorder(), new Recorder(), new Recorder());
    List<TcpTransport> nodes = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      nodes.add(start(ids.get(i), ids, recorders.get(i)));
    }
    for (int i = 0; i < 3; i++) {
      TcpTransport t = nodes.get(i);
      assertEquals(2, t.peers().size());
      assertFalse(t.peers().contains(t.self()), "self is not its own peer");
      for (String p : t.peers()) {
        Recorder r = recorders.get(i);
        await(t.self() + " sees " + p + " up", () -> r.isUp(p) && t.isUp(p));
      }
    }
    int count = 2000;
    for (int n = 0; n < count; n++) {
      for (TcpTransport t : nodes) {
        for (String p : t.peers()) {
          t.send(p, numbered(t.self(), n));
        }
      }
    }
    for (int i = 0; i < 3; i++) {
      Recorder r = recorders.get(i);
      for (String p : nodes.get(i).peers()) {
        await(ids.get(i) + " got all from " + p, () -> r.from(p).size() >= count);
        List<byte[]> got = r.from(p);
        assertEquals(count, got.size(), "no duplicates from " + p);
        for (int n = 0; n < count; n++) {
          ByteBuffer b = ByteBuffer.wrap(got.get(n));
          assertEquals(n, b.getInt(), "FIFO from " + p);
          byte[] rest = new byte[b.remaining()];
          b.get(rest);
          assertEquals(p, new String(rest), "sender");
        }
      }
      assertFalse(r.events.stream().anyMatch(e -> e.startsWith("down")), "no link went down: " + r.events);
    }
  }

  @Test
  void batchesArriveWholeAndInOrderAmongSingleSendsEvenWhenTheSocketTakesThemInParts() throws Exception {
    String a = id(freePort());
    String b = id(freePort());
    Recorder ra = new Recorder();
    Recorder rb = new Recorder();
    int big = 8 << 20;
    // sealing the 24 MiB batch holds the link (its PINGs too) for as long as the machine takes, and on a loaded
    // machine a cold JVM takes seconds: the idle timeout is not under test here, so it must not be a guess of that
    TcpTransport ta = start(config(a, List.of(a, b)).maxFrameSize(big).idleTimeout(WAIT).build(), ra);
    start(config(b, List.of(a, b)).maxFrameSize(big).idleTimeout(WAIT).build(), rb);
    await("a sees b up", () -> ra.isUp(b) && ta.isUp(b));
    // b stops reading at the first payload, so the first batch (24 MiB) is more than the socket takes: the
    // gathering write is taken in part, the dialer thread finishes it, and what follows queues behind it
    java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
    rb.gate = gate;
    List<Integer> sizes = new ArrayList<>();
    int n = 0;
    for (int batch = 0; batch < 300; batch++) {
      List<byte[]> payloads = new ArrayList<>();
      for (int k = 0; k <= (batch + 3) % 4; k++) {
        int size = batch == 0 && k > 0 ? big : 8;
        payloads.add(ByteBuffer.allocate(size).putInt(n++).array());
        sizes.add(size);
      }
      if (batch % 3 == 2) {
        for (byte[] p : payloads) {
          ta.send(b, p);
        }
      } else {
        ta.send(b, payloads);
      }
    }
    gate.countDown();
    int count = n;
    await("b got all " + count, () -> rb.from(a).size() >= count);
    List<byte[]> got = rb.from(a);
    assertEquals(count, got.size(), "no duplicates");
    for (int i = 0; i < count; i++) {
      assertEquals(i, ByteBuffer.wrap(got.get(i)).getInt(), "FIFO");
      assertEquals(sizes.get(i), got.get(i).length, "whole payload " + i);
    }
    assertFalse(rb.events.stream().anyMatch(e -> e.startsWith("down")), "no link went down: " + rb.events);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> ta.send(b, List.of(new byte[1], new byte[big + 1])));
    assertTrue(e.getMessage().contains("maxFrameSize"), e.getMessage());
  }

  @Test
  void reconnectsAfterPeerRestartsOnTheSamePort() throws Exception {
    String a = id(freePort());
    String b = id(freePort());
    Recorder ra = new Recorder();
    TcpTransport ta = start(a, List.of(a, b), ra);
    Recorder rb1 = new Recorder();
    TcpTransport tb1 = start(b, List.of(a, b), rb1);
    await("a-b up", () -> ra.isUp(b) && rb1.isUp(a));
    ta.send(b, new byte[] {1});
    await("b got 1", () -> rb1.from(a).size() == 1);

    tb1.close();
    await("a sees b down", () -> !ra.isUp(b) && !ta.isUp(b));
    ta.send(b, new byte[] {2}); // dropped: the link is down

    Recorder rb2 = new Recorder();
    // the same port again: a connection of tb1 still closing may hold it for a moment
    TcpTransport tb2 = LoopbackPorts.retryBind(java.time.Duration.ofSeconds(10), () -> start(b, List.of(a, b), rb2));
    await("a sees b up again", () -> ra.isUp(b) && rb2.isUp(a));
    assertEquals(List.of("up " + b, "down " + b, "up " + b), ra.events.subList(0, 3));
    ta.send(b, new byte[] {3});
    tb2.send(a, new byte[] {4});
    await("b2 got 3", () -> rb2.from(a).size() == 1);
    await("a got 4", () -> ra.from(b).size() == 1);
    assertEquals(3, rb2.from(a).get(0)[0], "the payload sent while down is never delivered later");
    assertTrue(rb1.from(a).size() == 1, "the closed transport got nothing more");
  }

  @Test
  void peerDownOnOneSideOfABrokenInboundLinkIsSeenByBoth() throws Exception {
    // breaking only the b→a direction must make both sides go down and up again, so both re-send
    String a = id(freePort());
    String b = id(freePort());
    Recorder ra = new Recorder();
    Recorder rb = new Recorder();
    TcpTransport ta = start(a, List.of(a, b), ra);
    TcpTransport tb = start(b, List.of(a, b), rb);
    await("up", () -> ra.isUp(b) && rb.isUp(a));
    tb.breakLink(a);
    await("a saw b go down and up", () -> ra.count("down " + b) >= 1 && ra.isUp(b));
    await("b saw a go down and up", () -> rb.count("down " + a) >= 1 && rb.isUp(a));
    ta.send(b, new byte[] {7});
    await("delivered after reconnection", () -> rb.from(a).size() == 1);
  }

  @Test
  void sendRejectsUnknownPeersAndOversizedPayloads() throws Exception {
    String a = id(freePort());
    TcpTransport t = TcpTransport.open(config(a, List.of(id(freePort()))).maxFrameSize(1024).build());
    open.add(t);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> t.send("10.0.0.1:1", new byte[1]));
    assertTrue(e.getMessage().contains("10.0.0.1:1"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> t.send(t.peers().iterator().next(), new byte[1025]));
    assertTrue(e.getMessage().contains("maxFrameSize"), e.getMessage());
    assertThrows(NullPointerException.class, () -> t.send(null, new byte[1]));
  }

  @Test
  void ephemeralPortAndBindFailure() throws Exception {
    TcpTransport t = TcpTransport.open(config("127.0.0.1:0", List.of()).build());
    open.add(t);
    assertTrue(t.port() > 0);
    assertEquals("127.0.0.1:" + t.port(), t.self());
    UncheckedIOException e = assertThrows(UncheckedIOException.class,
        () -> TcpTransport.open(config(t.self(), List.of()).build()));
    assertTrue(e.getMessage().contains(t.self()), e.getMessage());
    t.close();
    t.close(); // idempotent
    assertThrows(IllegalStateException.class, () -> t.start(new Recorder()));
  }

  @Test
  void backoffDoublesWithJitterAndIsBounded() {
    java.util.SplittableRandom random = new java.util.SplittableRandom(7);
    for (int failures = 0; failures < 40; failures++) {
      long ceiling = Math.min(5000, 100L << Math.min(failures, 30));
      for (int i = 0; i < 50; i++) {
        long wait = Redialer.backoffMillis(failures, 100, 5000, random);
        assertTrue(wait >= ceiling / 2 && wait <= ceiling, failures + " failures: " + wait + " not in upper half of " + ceiling);
      }
    }
    assertEquals(Redialer.backoffMillis(3, 100, 5000, new java.util.SplittableRandom(1)),
        Redialer.backoffMillis(3, 100, 5000, new java.util.SplittableRandom(1)), "seeded: reproducible");
  }

  @Test
  void aPeerThatStopsReadingNeverBlocksSendAndItsLinkIsClosed() throws Exception {
    String a = id(freePort());
    int stuckPort = freePort();
    String stuck = id(stuckPort);
    try (java.net.ServerSocket server = new java.net.ServerSocket()) {
      server.setReuseAddress(true);
      server.bind(new java.net.InetSocketAddress("127.0.0.1", stuckPort));
      Recorder ra = new Recorder();
      TcpTransport ta = start(a, List.of(a, stuck), ra);
      // the stuck peer completes the handshake as acceptor, then never reads again
      try (java.net.Socket s = server.accept()) {
        java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
        java.io.DataOutputStream out = new java.io.DataOutputStream(s.getOutputStream());
        Frames.Hello hello = Frames.parseHello(Frames.read(in, Frames.MAX_HANDSHAKE_FRAME).body());
        byte[] nonce = new byte[Frames.NONCE_BYTES];
        Frames.write(out, Frames.CHALLENGE, Frames.challenge(nonce, Frames.proof(TcpTestSupport.SECRET,
            Frames.ACCEPTOR_PROOF, hello.dialer(), stuck, hello.nonce(), nonce)));
        out.flush();
        Frames.read(in, Frames.MAX_HANDSHAKE_FRAME);
        Frames.write(out, Frames.ACCEPT, new byte[0]);
        out.flush();
        await("a sees the stuck peer up", () -> ra.isUp(stuck));
        byte[] payload = new byte[1 << 20];
        long t0 = System.nanoTime();
        for (int i = 0; i < 64 && ra.isUp(stuck); i++) {
          ta.send(stuck, payload);
        }
        assertTrue(System.nanoTime() - t0 < 10_000_000_000L, "send never blocked on the stuck peer");
        await("the overflowing link is closed", () -> ra.count("down " + stuck) >= 1);
      }
    }
  }

  @Test
  void dialsAPeerAtItsDialAddressUnderItsOwnId() throws Exception {
    // a dials b through a forwarder (NAT, alias, relay); b dials a directly. Ids stay the listen addresses.
    String a = id(freePort());
    String b = id(freePort());
    try (dev.tumbler.lock.tck.TcpProxy proxy = dev.tumbler.lock.tck.TcpProxy.start("127.0.0.1",
        Sockets.portOf(b))) {
      Recorder ra = new Recorder();
      Recorder rb = new Recorder();
      TcpTransport ta = start(config(a, List.of(b)).dialAddress(b, proxy.address()).build(), ra);
      TcpTransport tb = start(b, List.of(a), rb);
      await("up both ways", () -> ra.isUp(b) && rb.isUp(a));
      ta.send(b, new byte[] {1});
      await("b got 1 from a, under a's id", () -> rb.from(a).size() == 1);

      // a partition of the a→b path only (bytes dropped, connections kept): the idle timeout finds it, and
      // both sides see the break (b's inbound link from a dies, so b cycles its own link to a as well)
      proxy.blackhole();
      await("a sees b down", () -> !ra.isUp(b) && !ta.isUp(b));
      await("b saw a go down", () -> rb.count("down " + a) >= 1);
      ta.send(b, new byte[] {2}); // dropped: down
      proxy.heal();
      await("up again through the forwarder", () -> ra.isUp(b) && ta.isUp(b));
      ta.send(b, new byte[] {3});
      await("b got 3", () -> rb.from(a).size() == 2);
      assertEquals(3, rb.from(a).get(1)[0], "the payload sent while partitioned is never delivered");

      // the dialler really goes through the forwarder: cutting it takes the link down at once
      proxy.cut();
      await("a sees b down after the cut", () -> !ta.isUp(b));
      assertTrue(tb.peers().contains(a));
    }
  }
}
