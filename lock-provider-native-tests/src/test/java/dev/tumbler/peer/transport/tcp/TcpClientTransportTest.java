package dev.tumbler.peer.transport.tcp;

import static dev.tumbler.peer.transport.tcp.TcpTestSupport.CLIENT_SECRET;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.assertClosedByNode;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.await;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.clientAddress;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.clientConfig;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.freePort;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.id;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.logged;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.memberConfig;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.randomClientId;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.tck.LoopbackPorts;
import dev.tumbler.peer.transport.tcp.RawClient.Sealers;
import dev.tumbler.peer.transport.tcp.TcpTestSupport.Sequenced;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Thin clients and a member's client listener: frames both ways, the order of events, reconnection, limits. */
@Timeout(60)
class TcpClientTransportTest {
  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
  }

  private TcpTransport member(TcpTransportConfig config, Sequenced r) {
    TcpTransport t = TcpTransport.open(config);
    open.add(t);
    t.start(r);
    return t;
  }

  /** A member of a cluster of one, taking clients on a free port. */
  private TcpTransport member(Sequenced r) throws Exception {
    return member(memberConfig(id(freePort()), List.of(), "127.0.0.1:0").build(), r);
  }

  private TcpClientTransport client(TcpClientConfig config, Sequenced r) {
    TcpClientTransport c = TcpClientTransport.open(config);
    open.add(c);
    c.start(r);
    return c;
  }

  private TcpClientTransport client(TcpTransport member, Sequenced r) {
    return client(clientConfig(List.of(clientAddress(member))).build(), r);
  }

  private static byte[] numbered(int n) {
    return ByteBuffer.allocate(4).putInt(n).array();
  }

  private static void assertNumbered(List<byte[]> got, int count, String what) {
    assertEquals(count, got.size(), what + ": no loss, no duplicates");
    for (int i = 0; i < count; i++) {
      assertEquals(i, ByteBuffer.wrap(got.get(i)).getInt(), what + ": in order");
    }
  }

  @Test
  void aClientAndItsMemberExchangeFramesBothWaysInOrder() throws Exception {
    Sequenced rm = new Sequenced();
    Sequenced rc = new Sequenced();
    TcpTransport m = member(rm);
    assertTrue(m.clientPort() > 0 && m.clientPort() != m.port(), "a listener of its own: " + m.clientPort());
    TcpClientTransport c = client(m, rc);
    String addr = clientAddress(m);
    String cid = c.self();
    assertTrue(Frames.isClientId(cid), cid);
    assertEquals(new LinkedHashSet<>(List.of(addr)), c.peers());
    await("up on both ends", () -> rc.isUp(addr) && rm.isUp(cid) && c.isUp(addr) && m.isUp(cid));
    assertTrue(m.peers().isEmpty(), "peers() stays the members: " + m.peers());

    int count = 1000;
    for (int n = 0; n < count; n++) {
      if (n % 5 == 0 && n + 1 < count) {
        c.send(addr, List.of(numbered(n), numbered(n + 1))); // the list variant keeps the order too
        m.send(cid, List.of(numbered(n), numbered(n + 1)));
        n++;
      } else {
        c.send(addr, numbered(n));
        m.send(cid, numbered(n));
      }
    }
    await("all delivered both ways", () -> rm.from(cid).size() >= count && rc.from(addr).size() >= count);
    assertNumbered(rm.from(cid), count, "client to member");
    assertNumbered(rc.from(addr), count, "member to client");
    assertEquals("up " + cid, rm.events.get(0), "peerUp before any delivery");
    assertEquals("up " + addr, rc.events.get(0), "peerUp before any delivery");
    assertEquals(List.of(), rm.violations);
    assertEquals(List.of(), rc.violations);

    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> c.send("127.0.0.1:1", new byte[1]));
    assertTrue(e.getMessage().contains("127.0.0.1:1"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> c.send(addr, new byte[TcpLinkSettings.DEFAULT_MAX_FRAME_SIZE + 1]));
    assertThrows(IllegalArgumentException.class, () -> m.send(cid, new byte[TcpLinkSettings.DEFAULT_MAX_FRAME_SIZE + 1]));
    assertFalse(m.isUp(randomClientId()), "a client id that never connected is down");
    m.send(randomClientId(), new byte[1]); // dropped, no error
  }

  @Test
  void whenEitherEndClosesBothSeeTheLinkGoDown() throws Exception {
    Sequenced rm = new Sequenced();
    TcpTransport m = member(rm);
    String addr = clientAddress(m);

    // the client closes
    Sequenced rc1 = new Sequenced();
    TcpClientTransport c1 = client(m, rc1);
    await("c1 up", () -> rc1.isUp(addr) && rm.isUp(c1.self()));
    c1.close();
    await("the member sees c1 go down", () -> rm.count("down " + c1.self()) == 1 && !m.isUp(c1.self()));

    // the client breaks one connection: both ends see it end, and the client redials under the same id
    Sequenced rc2 = new Sequenced();
    TcpClientTransport c2 = client(m, rc2);
    String id2 = c2.self();
    await("c2 up", () -> rc2.isUp(addr) && rm.isUp(id2));
    c2.breakLink(addr);
    await("c2 back after the break", () -> rc2.count("down " + addr) == 1 && rc2.isUp(addr)
        && rm.count("down " + id2) == 1 && rm.isUp(id2));
    c2.send(addr, new byte[] {5});
    m.send(id2, new byte[] {6});
    await("frames on the new connection", () -> rm.from(id2).size() == 1 && rc2.from(addr).size() == 1);

    // the member closes
    m.close();
    await("the client sees the member go down", () -> rc2.count("down " + addr) == 2 && !c2.isUp(addr));
    assertEquals(List.of("up " + addr, "down " + addr, "up " + addr, "down " + addr), rc2.links(addr));
    assertEquals(List.of(), rm.violations);
    assertEquals(List.of(), rc2.violations);
  }

  @Test
  void theClientReconnectsAfterItsMemberRestartsOnTheSameClientPort() throws Exception {
    String self = id(freePort());
    String clientListen = id(freePort());
    Sequenced rm1 = new Sequenced();
    TcpTransport m1 = member(memberConfig(self, List.of(), clientListen).build(), rm1);
    Sequenced rc = new Sequenced();
    TcpClientTransport c = client(clientConfig(List.of(clientListen)).build(), rc);
    await("up", () -> rc.isUp(clientListen) && rm1.isUp(c.self()));
    c.send(clientListen, new byte[] {1});
    await("delivered", () -> rm1.from(c.self()).size() == 1);

    m1.close();
    await("the client sees the member down", () -> !rc.isUp(clientListen) && !c.isUp(clientListen));
    c.send(clientListen, new byte[] {2}); // dropped: down

    Sequenced rm2 = new Sequenced();
    TcpTransport m2 = LoopbackPorts.retryBind(Duration.ofSeconds(10),
        () -> member(memberConfig(self, List.of(), clientListen).build(), rm2));
    assertEquals(Sockets.portOf(clientListen), m2.clientPort());
    await("up again with the new member", () -> rc.isUp(clientListen) && rm2.isUp(c.self()));
    c.send(clientListen, new byte[] {3});
    m2.send(c.self(), new byte[] {4});
    await("frames both ways", () -> rm2.from(c.self()).size() == 1 && rc.from(clientListen).size() == 1);
    assertEquals(3, rm2.from(c.self()).get(0)[0], "the payload sent while down is never delivered later");
    assertEquals(List.of("up " + clientListen, "down " + clientListen, "up " + clientListen), rc.links(clientListen));
    assertEquals(List.of(), rc.violations);
  }

  @Test
  void aSecondConnectionWithTheSameIdReplacesTheFirstInOrder() throws Exception {
    Sequenced rm = new Sequenced();
    // the raw client's handshake is driven step by step from this thread: with the suite's 1 s handshake time-out the
    // member once closed it before its CHALLENGE was read, on a loaded machine; what is checked here is not timing
    TcpTransport m = member(memberConfig(id(freePort()), List.of(), "127.0.0.1:0")
        .handshakeTimeout(Duration.ofSeconds(10)).idleTimeout(Duration.ofSeconds(20)).build(), rm);
    String cid = randomClientId();
    String addr = clientAddress(m);
    List<RawClient> connections = new ArrayList<>();
    try {
      RawClient previous = null;
      for (int i = 0; i < 5; i++) {
        RawClient raw = new RawClient(m.clientPort());
        connections.add(raw);
        Sealers sealers = raw.authenticate(cid, addr, CLIENT_SECRET);
        int ups = i + 1;
        await("connection " + i + " up", () -> rm.count("up " + cid) == ups && m.isUp(cid));
        if (previous != null) {
          assertClosedByNode(previous.socket); // the member closed the one it replaced
        }
        byte n = (byte) i;
        raw.send(sealers.toMember(), Frames.DATA, new byte[] {n});
        await("frame " + i + " delivered", () -> rm.from(cid).size() == ups);
        assertEquals(n, rm.from(cid).get(i)[0]);
        previous = raw;
      }
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        expected.addAll(i == 0 ? List.of("up " + cid) : List.of("down " + cid, "up " + cid));
      }
      assertEquals(expected, rm.links(cid), "down for the old, then up for the new");
      assertEquals(List.of(), rm.violations);
    } finally {
      for (RawClient raw : connections) {
        raw.close();
      }
    }
    await("the last connection's end seen", () -> !rm.isUp(cid));
  }

  @Test
  void theClientBeyondMaxClientsIsRefusedWhileTheOthersKeepWorking() throws Exception {
    Sequenced rm = new Sequenced();
    TcpTransport m = member(memberConfig(id(freePort()), List.of(), "127.0.0.1:0").maxClients(2).build(), rm);
    String addr = clientAddress(m);
    Sequenced r1 = new Sequenced();
    Sequenced r2 = new Sequenced();
    TcpClientTransport c1 = client(m, r1);
    TcpClientTransport c2 = client(m, r2);
    await("two clients up", () -> r1.isUp(addr) && r2.isUp(addr) && rm.isUp(c1.self()) && rm.isUp(c2.self()));

    String log = logged(() -> {
      try (RawClient raw = new RawClient(m.clientPort())) {
        String third = randomClientId();
        raw.hello(third, addr);
        raw.readChallenge();
        raw.respond(raw.proof(CLIENT_SECRET, Frames.CLIENT_PROOF)); // a valid proof: refused for the number alone
        assertEquals(TcpProtocolException.Reason.TOO_MANY_CLIENTS, raw.readReject());
        assertClosedByNode(raw.socket);
      }
    });
    assertTrue(log.contains("too many clients") && log.contains("maxClients 2"), log);

    Sequenced r3 = new Sequenced();
    TcpClientTransport c3 = client(m, r3);
    c1.send(addr, new byte[] {1});
    c2.send(addr, new byte[] {2});
    m.send(c1.self(), new byte[] {3});
    m.send(c2.self(), new byte[] {4});
    await("the two served clients still work", () -> rm.from(c1.self()).size() == 1 && rm.from(c2.self()).size() == 1
        && r1.from(addr).size() == 1 && r2.from(addr).size() == 1);
    assertFalse(r3.isUp(addr), "a third client is not served");
    assertFalse(m.isUp(c3.self()));

    c1.close(); // room for one: the third, redialling, gets in
    await("the third client up once the first left", () -> r3.isUp(addr) && rm.isUp(c3.self()));
    assertEquals(1, rm.count("up " + c3.self()), "announced once");
    assertEquals(0, rm.count("down " + c2.self()), "the second never went down");
    assertEquals(List.of(), rm.violations);
  }

  @Test
  void aMemberThatStopsReadingNeverBlocksTheClientAndItsLinkIsClosed() throws Exception {
    // a member that completes the handshake and then reads nothing: the client's queue overflows
    try (java.net.ServerSocket server = new java.net.ServerSocket(0, 50,
        java.net.InetAddress.getByName("127.0.0.1"))) {
      String addr = id(server.getLocalPort());
      Sequenced rc = new Sequenced();
      TcpClientTransport c = client(clientConfig(List.of(addr)).idleTimeout(Duration.ofSeconds(30)).build(), rc);
      // the port is the kernel's, from its ephemeral range: another module's client redialling a server it knew there
      // may connect first (a build once saw such a stranger's first bytes: "not a tumbler peer"); only the client's
      // own connection counts
      Frames.Hello hello = null;
      java.net.Socket first = null;
      server.setSoTimeout(10_000);
      while (hello == null) {
        java.net.Socket s = server.accept();
        s.setSoTimeout(10_000);
        try {
          Frames.Hello h = Frames.parseHello(Frames.read(new java.io.DataInputStream(s.getInputStream()),
              Frames.MAX_HANDSHAKE_FRAME).body());
          if (h.dialer().equals(c.self())) {
            hello = h;
            first = s;
            continue;
          }
        } catch (java.io.IOException e) {
          // a stranger: not this test's client
        }
        s.close();
      }
      try (java.net.Socket s = first) {
        s.setSoTimeout(0);
        java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
        java.io.DataOutputStream out = new java.io.DataOutputStream(s.getOutputStream());
        assertEquals(addr, hello.dialled(), "the client names the address it dialled");
        byte[] nonce = new byte[Frames.NONCE_BYTES];
        Frames.write(out, Frames.CHALLENGE, Frames.challenge(nonce, Frames.proof(CLIENT_SECRET, Frames.MEMBER_PROOF,
            hello.dialer(), hello.dialled(), hello.nonce(), nonce)));
        out.flush();
        assertEquals(Frames.RESPONSE, Frames.read(in, Frames.MAX_HANDSHAKE_FRAME).type());
        Frames.write(out, Frames.ACCEPT, Frames.EMPTY);
        out.flush();
        await("the client sees the member up", () -> rc.isUp(addr));
        byte[] payload = new byte[1 << 20];
        long t0 = System.nanoTime();
        for (int i = 0; i < 64 && rc.isUp(addr); i++) {
          c.send(addr, payload);
        }
        assertTrue(System.nanoTime() - t0 < 10_000_000_000L, "send never blocked");
        await("the overflowing link is closed", () -> rc.count("down " + addr) >= 1);
      }
    }
  }
}
