package dev.tumbler.peer.transport.tcp;

import static dev.tumbler.peer.transport.tcp.TcpTestSupport.CLIENT_SECRET;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.SECRET;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.assertClosedByNode;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.await;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.clientConfig;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.config;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.freePort;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.id;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.logged;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.memberConfig;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.randomClientId;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.transport.tcp.Frames.Frame;
import dev.tumbler.peer.transport.tcp.RawClient.Sealers;
import dev.tumbler.peer.transport.tcp.TcpProtocolException.Reason;
import dev.tumbler.peer.transport.tcp.TcpTestSupport.Sequenced;
import java.io.IOException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A member's two listeners under attack by raw sockets that mix them up: a client credential on the peer
 * listener, the peer secret or a member's id on the client listener, malformed client ids, proofs under the
 * other listener's labels, reflected frames, silence, floods. Each is refused with its reason asserted, and
 * the member keeps its peer and its client.
 */
@Timeout(60)
class TcpClientBadPeerTest {
  private String nodeId;
  private String goodId;
  private String fakeId; // a member that never runs: raw sockets pretend to be it
  private TcpTransport node;
  private TcpTransport good;
  private TcpClientTransport client;
  private String clientAddr;
  private Sequenced nodeEvents;
  private Sequenced goodEvents;
  private Sequenced clientEvents;
  private final AtomicInteger probe = new AtomicInteger();
  /** Events before the test's attack: a busy machine may flap a link while the nodes start. */
  private int nodeBaseline;
  private int goodBaseline;
  private int clientBaseline;

  @BeforeEach
  void start() throws IOException {
    nodeId = id(freePort());
    goodId = id(freePort());
    fakeId = id(freePort());
    List<String> all = List.of(nodeId, goodId, fakeId);
    nodeEvents = new Sequenced();
    goodEvents = new Sequenced();
    clientEvents = new Sequenced();
    node = TcpTransport.open(memberConfig(nodeId, all, "127.0.0.1:0").build());
    good = TcpTransport.open(config(goodId, all).build());
    node.start(nodeEvents);
    good.start(goodEvents);
    clientAddr = id(node.clientPort());
    client = TcpClientTransport.open(clientConfig(List.of(clientAddr)).build());
    client.start(clientEvents);
    await("good links up", () -> nodeEvents.isUp(goodId) && goodEvents.isUp(nodeId) && clientEvents.isUp(clientAddr)
        && nodeEvents.isUp(client.self()));
    nodeBaseline = nodeEvents.events.size();
    goodBaseline = goodEvents.events.size();
    clientBaseline = clientEvents.events.size();
  }

  /** The events of {@code r} since the test's set-up was done. */
  private static List<String> since(Sequenced r, int baseline) {
    return new ArrayList<>(r.events.subList(baseline, r.events.size()));
  }

  @AfterEach
  void stop() {
    client.close();
    node.close();
    good.close();
  }

  /** The node still serves its peer and its client: no link went down, and payloads go every way. */
  private void assertNodeUnharmed() {
    int n = probe.incrementAndGet();
    String c = client.self();
    node.send(goodId, new byte[] {(byte) n});
    good.send(nodeId, new byte[] {(byte) n});
    node.send(c, new byte[] {(byte) n});
    client.send(clientAddr, new byte[] {(byte) n});
    await("probe " + n + " delivered", () -> goodEvents.from(nodeId).size() == n && nodeEvents.from(goodId).size() == n
        && clientEvents.from(clientAddr).size() == n && nodeEvents.from(c).size() == n);
    List<String> node = since(nodeEvents, nodeBaseline);
    assertFalse(node.contains("down " + goodId) || node.contains("down " + c), node.toString());
    assertFalse(since(goodEvents, goodBaseline).contains("down " + nodeId), goodEvents.events.toString());
    assertFalse(since(clientEvents, clientBaseline).contains("down " + clientAddr), clientEvents.events.toString());
    assertFalse(nodeEvents.delivered.containsKey(fakeId), "nothing from the fake member was delivered");
    assertEquals(List.of(), nodeEvents.violations);
  }

  /** No client but the good one was ever up on the node. */
  private void assertNoOtherClientUp() {
    for (String e : nodeEvents.events) {
      if (e.startsWith("up client/")) {
        assertEquals("up " + client.self(), e, nodeEvents.events.toString());
      }
    }
  }

  // ---- a credential on the wrong listener

  @Test
  void aClientWithThePeersSecretIsRefusedByTheClientListener() throws Exception {
    String log = logged(() -> {
      try (RawClient raw = new RawClient(node.clientPort())) {
        raw.hello(randomClientId(), clientAddr);
        raw.readChallenge();
        assertFalse(Arrays.equals(raw.proof(SECRET, Frames.MEMBER_PROOF), raw.memberProof),
            "the member's proof is not under the peers' secret");
        raw.respond(raw.proof(SECRET, Frames.CLIENT_PROOF));
        assertEquals(Reason.BAD_MAC, raw.readReject());
        assertClosedByNode(raw.socket);
      }
      // and a real client given the peers' secret never comes up: the member cannot prove that secret to it
      Sequenced events = new Sequenced();
      try (TcpClientTransport wrong = TcpClientTransport.open(clientConfig(List.of(clientAddr)).clientSecret(SECRET)
          .build())) {
        wrong.start(events);
        await("its attempts refused", () -> TcpTestSupport.logSoFar().contains("did not prove the client secret"));
        assertFalse(wrong.isUp(clientAddr));
        assertTrue(events.events.isEmpty(), events.events.toString());
      }
    });
    assertTrue(log.contains("authentication failed") && log.contains("not the client secret"), log);
    assertTrue(log.contains("did not prove the client secret"), log);
    assertNoOtherClientUp();
    assertNodeUnharmed();
  }

  private static int count(String text, String part) {
    int n = 0;
    for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
      n++;
    }
    return n;
  }

  /**
   * Issue 40: a thin client with another clientSecret checked the member's proof first and sent a REJECT, which the
   * member logged as "unexpected frame type: expected RESPONSE, got type 5"; the client logged a warning at every
   * redial and could not tell its caller. Now the member names the refusal, the client says it once, and
   * {@link TcpClientTransport#credentialRefused} tells a caller at once.
   */
  @Test
  void aClientWithAnotherClientSecretIsRefusedAndBothEndsSaySo() throws Exception {
    byte[] other = "another client secret, long enough".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    String log = logged(() -> {
      try (TcpClientTransport wrong = TcpClientTransport.open(clientConfig(List.of(clientAddr)).clientSecret(other)
          .backoff(java.time.Duration.ofMillis(20), java.time.Duration.ofMillis(50)).build())) {
        assertEquals(java.util.Optional.empty(), wrong.credentialRefused(), "nothing tried yet");
        wrong.start(new Sequenced());
        await("the client knows it is refused", () -> wrong.credentialRefused().isPresent());
        assertEquals("refused by " + clientAddr, wrong.credentialRefused().orElseThrow());
        await("redialled a few times", () -> count(TcpTestSupport.logSoFar(), "refused this node's proof") >= 3);
        assertFalse(wrong.isUp(clientAddr));
      }
    });
    assertFalse(log.contains("unexpected frame type"), log);
    assertTrue(log.contains("closing client connection from ") && log.contains("refused this node's proof: its "
        + "clientSecret differs from this node's"), log);
    assertEquals(1, count(log, "did not prove the client secret: this client's clientSecret differs from the "
        + "member's"), "the client warns once, not at every redial: " + log);
    assertNoOtherClientUp();
    assertNodeUnharmed();
  }

  @Test
  void aPeerWithTheClientSecretIsRefusedByThePeerListener() throws Exception {
    String log = logged(() -> {
      for (String label : List.of(Frames.DIALER_PROOF, Frames.CLIENT_PROOF)) {
        try (RawClient raw = new RawClient(node.port())) {
          raw.hello(fakeId, nodeId);
          raw.readChallenge();
          raw.respond(raw.proof(CLIENT_SECRET, label));
          assertEquals(Reason.BAD_MAC, raw.readReject(), label);
          assertClosedByNode(raw.socket);
        }
      }
    });
    assertTrue(log.contains("authentication failed"), log);
    assertEquals(0, nodeEvents.count("up " + fakeId));
    assertNodeUnharmed();
  }

  @Test
  void aClientIdOnThePeerListenerIsRefused() throws Exception {
    String cid = randomClientId();
    String log = logged(() -> {
      try (RawClient raw = new RawClient(node.port())) {
        raw.hello(cid, nodeId);
        assertEquals(Reason.UNKNOWN_PEER, raw.readReject());
        assertClosedByNode(raw.socket);
      }
      // the good client's own id, on the wrong port
      try (RawClient raw = new RawClient(node.port())) {
        raw.hello(client.self(), nodeId);
        assertEquals(Reason.UNKNOWN_PEER, raw.readReject());
        assertClosedByNode(raw.socket);
      }
    });
    assertTrue(log.contains("peer id not in the membership: '" + cid + "'"), log);
    assertTrue(log.contains("clients connect to a member's client listener"), log);
    assertNodeUnharmed();
  }

  @Test
  void aMemberIdOnTheClientListenerIsRefused() throws Exception {
    String log = logged(() -> {
      for (String member : List.of(goodId, fakeId, nodeId)) {
        try (RawClient raw = new RawClient(node.clientPort())) {
          raw.hello(member, clientAddr);
          assertEquals(Reason.BAD_CLIENT_ID, raw.readReject(), member);
          assertClosedByNode(raw.socket);
        }
      }
    });
    assertTrue(log.contains("not a client id (client/ and 32 lowercase hex digits): '" + goodId
        + "' is a member's id: members dial the peer listener"), log);
    assertFalse(since(nodeEvents, nodeBaseline).contains("down " + goodId),
        "a member's id on the client port touches no member link");
    assertNodeUnharmed();
  }

  @Test
  void malformedClientIdsAreRefused() throws Exception {
    String hex = randomClientId().substring("client/".length());
    List<String> bad = List.of("client/" + hex.toUpperCase(), "client/" + hex.substring(1), "client/" + hex + "0",
        "client/" + hex.substring(1) + "g", "Client/" + hex, "clients/" + hex, "client/", "client/" + hex + "\n",
        "10.0.0.1:7701");
    String log = logged(() -> {
      for (String id : bad) {
        try (RawClient raw = new RawClient(node.clientPort())) {
          raw.hello(id, clientAddr);
          assertEquals(Reason.BAD_CLIENT_ID, raw.readReject(), id);
          assertClosedByNode(raw.socket);
        }
      }
    });
    assertTrue(log.contains("not a client id (client/ and 32 lowercase hex digits): 'client/" + hex.toUpperCase()
        + "'"), log);
    assertTrue(log.contains("'client/" + hex + "?'"), "control characters are not logged: " + log);
    assertNoOtherClientUp();
    assertNodeUnharmed();
  }

  // ---- the client handshake's own labels and keys

  /**
   * The labels alone keep a proof made for one listener from verifying on the other: a client that proves
   * the right (client) secret under the peers' labels is refused, and the member's challenge is not the
   * peers' proof either. (Mutation check: the client listener checking {@code DIALER_PROOF} fails this.)
   */
  @Test
  void aProofUnderThePeersLabelsIsRefusedEvenWithTheClientSecret() throws Exception {
    String log = logged(() -> {
      try (RawClient raw = new RawClient(node.clientPort())) {
        raw.hello(randomClientId(), clientAddr);
        raw.readChallenge();
        assertArrayEquals(raw.proof(CLIENT_SECRET, Frames.MEMBER_PROOF), raw.memberProof);
        assertFalse(Arrays.equals(raw.proof(CLIENT_SECRET, Frames.ACCEPTOR_PROOF), raw.memberProof),
            "the member does not prove itself under the peers' label");
        raw.respond(raw.proof(CLIENT_SECRET, Frames.DIALER_PROOF));
        assertEquals(Reason.BAD_MAC, raw.readReject());
        assertClosedByNode(raw.socket);
      }
      // nor is the member's own proof sent back (reflected)
      try (RawClient raw = new RawClient(node.clientPort())) {
        raw.hello(randomClientId(), clientAddr);
        raw.readChallenge();
        raw.respond(raw.memberProof);
        assertEquals(Reason.BAD_MAC, raw.readReject());
        assertClosedByNode(raw.socket);
      }
    });
    assertTrue(log.contains("authentication failed"), log);
    assertNoOtherClientUp();
    assertNodeUnharmed();
  }

  @Test
  void aValidRawClientIsServedBothWays() throws Exception {
    // the control case for the raw client: the failures here come from the bad input alone
    String cid = randomClientId();
    try (RawClient raw = new RawClient(node.clientPort())) {
      Sealers s = raw.authenticate(cid, clientAddr, CLIENT_SECRET);
      await("the raw client up", () -> nodeEvents.isUp(cid));
      raw.send(s.toMember(), Frames.DATA, "hello".getBytes());
      await("delivered", () -> nodeEvents.from(cid).size() == 1);
      assertEquals("hello", new String(nodeEvents.from(cid).get(0)));
      node.send(cid, "from the member".getBytes());
      Frame f = raw.read();
      while (f.type() == Frames.PING) {
        s.fromMember().open(Frames.PING, f.body());
        f = raw.read();
      }
      assertEquals(Frames.DATA, f.type());
      assertEquals("from the member", new String(s.fromMember().open(Frames.DATA, f.body())));
    }
    await("the raw client down", () -> !nodeEvents.isUp(cid));
    assertEquals(List.of("up " + cid, "down " + cid), nodeEvents.links(cid));
    assertNodeUnharmed();
  }

  /**
   * The member's own frames sent back to it, in order, line up with the sequence numbers it expects from the
   * client (both directions count from zero): only the key of each direction tells them apart. (Mutation
   * check: one key for both directions fails this.)
   */
  @Test
  void theMembersOwnFramesSentBackToItAreRefused() throws Exception {
    String cid = randomClientId();
    String log = logged(() -> {
      try (RawClient raw = new RawClient(node.clientPort())) {
        Sealers s = raw.authenticate(cid, clientAddr, CLIENT_SECRET);
        await("the raw client up", () -> nodeEvents.isUp(cid));
        node.send(cid, "from the member".getBytes());
        List<Frame> frames = new ArrayList<>();
        Frame f;
        do {
          f = raw.read();
          frames.add(f);
          s.fromMember().open(f.type(), f.body()); // each one the member's, in order
        } while (f.type() != Frames.DATA);
        for (Frame back : frames) {
          Frames.write(raw.out, back.type(), back.body());
        }
        raw.out.flush();
        assertClosedByNode(raw.socket);
      }
      await("the raw client down", () -> !nodeEvents.isUp(cid));
    });
    assertTrue(log.contains("frame tag does not match"), log);
    assertFalse(nodeEvents.delivered.containsKey(cid), "the member's own payload came back as the client's");
    assertEquals(List.of("up " + cid, "down " + cid), nodeEvents.links(cid));
    assertNodeUnharmed();
  }

  @Test
  void aSilentClientIsPingedAndClosedAfterTheIdleTimeout() throws Exception {
    String cid = randomClientId();
    long[] pings = new long[1];
    String log = logged(() -> {
      try (RawClient raw = new RawClient(node.clientPort())) {
        Sealers s = raw.authenticate(cid, clientAddr, CLIENT_SECRET);
        long t0 = System.nanoTime();
        try {
          while (true) {
            Frame f = raw.read(); // the member's heartbeats, every quarter of its idle timeout
            assertEquals(Frames.PING, f.type());
            s.fromMember().open(Frames.PING, f.body());
            pings[0]++;
          }
        } catch (IOException e) {
          // closed by the member: the client sent nothing
        }
        assertTrue(System.nanoTime() - t0 >= 1_500_000_000L, "closed only after about the idle timeout (2 s)");
      }
    });
    assertTrue(pings[0] >= 2, pings[0] + " PINGs from the member before it gave up");
    assertTrue(log.contains("nothing received for 2000 ms"), log);
    assertEquals(List.of("up " + cid, "down " + cid), nodeEvents.links(cid));
    assertNodeUnharmed();
  }

  // ---- floods

  /**
   * Stalled connections on the client listener, more than its pool holds and each reconnecting as soon as it
   * is closed, do not keep a member from getting through on the peer listener: the pools are separate.
   */
  @Test
  void aClientFloodDoesNotStopAMemberConnecting() throws Exception {
    int attackers = Listener.MAX_UNIDENTIFIED + 44;
    AtomicBoolean attacking = new AtomicBoolean(true);
    List<Thread> threads = new ArrayList<>();
    AtomicLong connections = new AtomicLong();
    long[] rejoinMs = new long[1];
    String log = logged(() -> {
      try {
        for (int i = 0; i < attackers; i++) {
          threads.add(Thread.ofVirtual().start(() -> {
            while (attacking.get()) {
              try (Socket s = new Socket("127.0.0.1", node.clientPort())) {
                connections.incrementAndGet();
                s.getOutputStream().write(new byte[] {0, 0});
                s.getInputStream().read();
              } catch (IOException e) {
                // closed: again
              }
            }
          }));
        }
        await("the flood under way", () -> connections.get() >= 2L * attackers);
        long downs = goodEvents.count("down " + nodeId);
        long t0 = System.nanoTime();
        good.breakLink(nodeId); // the good peer dials the node again, during the flood
        await("the good peer's link back up", () -> goodEvents.count("down " + nodeId) > downs && good.isUp(nodeId)
            && node.isUp(goodId));
        rejoinMs[0] = (System.nanoTime() - t0) / 1_000_000;
      } finally {
        attacking.set(false);
        for (Thread t : threads) {
          t.join(5000);
        }
      }
    });
    // bound: the backoff ceiling (250 ms) and one handshake time-out (1 s) of the test configuration
    assertTrue(rejoinMs[0] < 250 + 1000, "the good peer needed " + rejoinMs[0] + " ms to get through ("
        + connections.get() + " attacker connections)");
    long lines = log.lines().filter(l -> l.contains("closing client connection from")).count();
    assertTrue(lines <= Listener.LOG_BURST, lines + " lines for closed client connections: not rate-limited");
    int n = probe.incrementAndGet();
    node.send(goodId, new byte[] {(byte) n});
    await("probe delivered after the flood", () -> goodEvents.from(nodeId).size() == n);
  }
}
