package dev.tumbler.peer.transport.tcp;

import static dev.tumbler.peer.transport.tcp.TcpTestSupport.SECRET;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.assertClosedByNode;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.await;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.config;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.freePort;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.id;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.peer.transport.tcp.Frames.Frame;
import dev.tumbler.peer.transport.tcp.Frames.FrameSealer;
import dev.tumbler.peer.transport.tcp.TcpTestSupport.Recorder;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A node under attack by raw sockets: each bad input closes that connection with a logged reason, and the
 * node keeps its link to a good peer (no peerDown, payloads still flow).
 */
@Timeout(60)
class TcpBadPeerTest {
  private String nodeId;
  private String goodId;
  private String fakeId; // a member that never runs: the raw sockets pretend to be it
  private TcpTransport node;
  private TcpTransport good;
  private Recorder nodeEvents;
  private Recorder goodEvents;
  private final AtomicInteger probe = new AtomicInteger();

  @BeforeEach
  void startNodes() throws IOException {
    nodeId = id(freePort());
    goodId = id(freePort());
    fakeId = id(freePort());
    List<String> all = List.of(nodeId, goodId, fakeId);
    nodeEvents = new Recorder();
    goodEvents = new Recorder();
    node = TcpTransport.open(config(nodeId, all).build());
    good = TcpTransport.open(config(goodId, all).build());
    node.start(nodeEvents);
    good.start(goodEvents);
    await("good link up", () -> nodeEvents.isUp(goodId) && goodEvents.isUp(nodeId));
  }

  @AfterEach
  void stop() {
    node.close();
    good.close();
  }

  /** The node still serves the good peer: no link went down, and a payload goes both ways. */
  private void assertNodeUnharmed() {
    int n = probe.incrementAndGet();
    node.send(goodId, new byte[] {(byte) n});
    good.send(nodeId, new byte[] {(byte) n});
    await("probe " + n + " delivered", () -> goodEvents.from(nodeId).size() == n && nodeEvents.from(goodId).size() == n);
    assertEquals(0, nodeEvents.count("down " + goodId), nodeEvents.events.toString());
    assertEquals(0, goodEvents.count("down " + nodeId), goodEvents.events.toString());
    assertFalse(nodeEvents.delivered.containsKey(fakeId), "nothing from the fake peer was delivered");
  }

  private Socket connect() throws IOException {
    Socket s = new Socket("127.0.0.1", node.port());
    s.setTcpNoDelay(true);
    return s;
  }

  /** Runs {@code action}, returning what the node logged meanwhile (slf4j-simple writes to System.err). */
  private String logged(IoAction action) throws Exception {
    PrintStream saved = System.err;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    PrintStream tee = new PrintStream(new TeeStream(saved, buf), true, StandardCharsets.UTF_8);
    System.setErr(tee);
    try {
      action.run();
      // the node logs just after it closes: wait for a line, then until nothing more comes for a while
      long deadline = System.nanoTime() + 5_000_000_000L;
      int size = -1;
      while (System.nanoTime() < deadline && (buf.size() == 0 || buf.size() != size)) {
        size = buf.size();
        Thread.sleep(200);
      }
    } finally {
      System.setErr(saved);
    }
    String log = buf.toString(StandardCharsets.UTF_8);
    assertFalse(log.contains(new String(SECRET, StandardCharsets.UTF_8)), "secret in the log: " + log);
    return log;
  }

  interface IoAction {
    void run() throws Exception;
  }

  private static final class TeeStream extends OutputStream {
    private final OutputStream a;
    private final OutputStream b;

    TeeStream(OutputStream a, OutputStream b) {
      this.a = a;
      this.b = b;
    }

    @Override
    public synchronized void write(int c) throws IOException {
      a.write(c);
      b.write(c);
    }

    @Override
    public synchronized void write(byte[] d, int off, int len) throws IOException {
      a.write(d, off, len);
      b.write(d, off, len);
    }
  }

  /** A hand-driven dialer, speaking the wire format directly. */
  private final class RawDialer implements AutoCloseable {
    final Socket socket;
    final DataInputStream in;
    final DataOutputStream out;
    final byte[] nonce = new byte[Frames.NONCE_BYTES];
    byte[] acceptorNonce;
    byte[] acceptorProof;

    RawDialer() throws IOException {
      socket = connect();
      in = new DataInputStream(socket.getInputStream());
      out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
      Arrays.fill(nonce, (byte) 7);
    }

    void hello(String from, String to) throws IOException {
      Frames.write(out, Frames.HELLO, Frames.hello(from, to, nonce));
      out.flush();
    }

    /** Reads the CHALLENGE (or fails on a REJECT). */
    void readChallenge() throws IOException {
      Frame f = Frames.read(in, Frames.MAX_HANDSHAKE_FRAME);
      assertEquals(Frames.CHALLENGE, f.type());
      byte[][] c = Frames.parseChallenge(f.body());
      acceptorNonce = c[0];
      acceptorProof = c[1];
      assertArrayEquals(Frames.proof(SECRET, Frames.ACCEPTOR_PROOF, fakeId, nodeId, nonce, acceptorNonce),
          acceptorProof, "the node proves the secret");
    }

    void respond(byte[] proof) throws IOException {
      Frames.write(out, Frames.RESPONSE, proof);
      out.flush();
    }

    byte[] validProof() {
      return Frames.proof(SECRET, Frames.DIALER_PROOF, fakeId, nodeId, nonce, acceptorNonce);
    }

    /** A complete, valid handshake as the fake member; returns the sealer of the data direction. */
    FrameSealer authenticate() throws IOException {
      hello(fakeId, nodeId);
      readChallenge();
      respond(validProof());
      Frame f = Frames.read(in, Frames.MAX_HANDSHAKE_FRAME);
      assertEquals(Frames.ACCEPT, f.type());
      return new FrameSealer(Frames.proof(SECRET, Frames.SESSION_KEY, fakeId, nodeId, nonce, acceptorNonce));
    }

    Frame readReject() throws IOException {
      Frame f = Frames.read(in, Frames.MAX_HANDSHAKE_FRAME);
      assertEquals(Frames.REJECT, f.type(), "a REJECT frame");
      return f;
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  @Test
  void aValidRawHandshakeIsAcceptedAndDelivers() throws Exception {
    // the control case: the raw dialer is right, so the failures below come from the bad input alone
    try (RawDialer d = new RawDialer()) {
      FrameSealer sealer = d.authenticate();
      Frames.write(d.out, Frames.DATA, sealer.seal(Frames.DATA, "hello".getBytes()));
      d.out.flush();
      await("delivered", () -> nodeEvents.from(fakeId).size() == 1);
      assertEquals("hello", new String(nodeEvents.from(fakeId).get(0)));
      nodeEvents.delivered.remove(fakeId);
    }
    assertNodeUnharmed();
  }

  @Test
  void corruptLengthBeforeHandshake() throws Exception {
    String log = logged(() -> {
      try (Socket s = connect()) {
        new DataOutputStream(s.getOutputStream()).writeInt(-5);
        assertClosedByNode(s);
      }
    });
    assertTrue(log.contains("corrupt frame: length -5"), log);
    assertNodeUnharmed();
  }

  @Test
  void oversizedFrameBeforeHandshake() throws Exception {
    String log = logged(() -> {
      try (Socket s = connect()) {
        new DataOutputStream(s.getOutputStream()).writeInt(100_000_000);
        assertClosedByNode(s);
      }
    });
    assertTrue(log.contains("oversized frame"), log);
    assertNodeUnharmed();
  }

  @Test
  void garbageBeforeHandshake() throws Exception {
    String log = logged(() -> {
      try (Socket s = connect()) {
        s.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        assertClosedByNode(s);
      }
    });
    assertTrue(log.contains("closing connection from"), log);
    assertNodeUnharmed();
  }

  @Test
  void helloWithBadMagicOrVersion() throws Exception {
    String log = logged(() -> {
      try (RawDialer d = new RawDialer()) {
        byte[] hello = Frames.hello(fakeId, nodeId, d.nonce);
        hello[0] = 'X';
        Frames.write(d.out, Frames.HELLO, hello);
        d.out.flush();
        assertClosedByNode(d.socket);
      }
      try (RawDialer d = new RawDialer()) {
        byte[] hello = Frames.hello(fakeId, nodeId, d.nonce);
        hello[4] = 99;
        Frames.write(d.out, Frames.HELLO, hello);
        d.out.flush();
        assertEquals(TcpProtocolException.Reason.VERSION.code, d.readReject().body()[0]);
        assertClosedByNode(d.socket);
      }
    });
    assertTrue(log.contains("not a tumbler peer"), log);
    assertTrue(log.contains("unsupported protocol version"), log);
    assertNodeUnharmed();
  }

  @Test
  void unknownPeerIdIsRejected() throws Exception {
    String log = logged(() -> {
      try (RawDialer d = new RawDialer()) {
        d.hello("10.9.8.7:6543", nodeId);
        assertEquals(TcpProtocolException.Reason.UNKNOWN_PEER.code, d.readReject().body()[0]);
        assertClosedByNode(d.socket);
      }
    });
    assertTrue(log.contains("peer id not in the membership: '10.9.8.7:6543'"), log);
    assertNodeUnharmed();
  }

  @Test
  void dialingTheWrongNodeIdIsRejected() throws Exception {
    String log = logged(() -> {
      try (RawDialer d = new RawDialer()) {
        d.hello(fakeId, goodId);
        assertEquals(TcpProtocolException.Reason.WRONG_NODE.code, d.readReject().body()[0]);
        assertClosedByNode(d.socket);
      }
    });
    assertTrue(log.contains("dialled a different node id"), log);
    assertNodeUnharmed();
  }

  @Test
  void wrongSecretIsRejected() throws Exception {
    String log = logged(() -> {
      try (RawDialer d = new RawDialer()) {
        d.hello(fakeId, nodeId);
        d.readChallenge();
        byte[] wrong = "a different secret of some length".getBytes(StandardCharsets.UTF_8);
        d.respond(Frames.proof(wrong, Frames.DIALER_PROOF, fakeId, nodeId, d.nonce, d.acceptorNonce));
        assertEquals(TcpProtocolException.Reason.BAD_MAC.code, d.readReject().body()[0]);
        assertClosedByNode(d.socket);
      }
    });
    assertTrue(log.contains("authentication failed"), log);
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
   * Issue 40: a member whose secret differs checks the acceptor's proof first and sends a REJECT, which the acceptor
   * logged as "unexpected frame type" at every redial. The acceptor names the refusal (rate-limited), and the dialer
   * warns once, not at every redial.
   */
  @Test
  void aMemberWithAnotherSecretIsRefusedAndBothEndsSaySo() throws Exception {
    byte[] other = "another cluster's secret, long enough".getBytes(StandardCharsets.UTF_8);
    String log = TcpTestSupport.logged(() -> {
      try (TcpTransport wrong = TcpTransport.open(config(fakeId, List.of(nodeId, goodId)).secret(other).build())) {
        wrong.start(new Recorder());
        await("redialled a few times", () -> count(TcpTestSupport.logSoFar(), "'" + fakeId + "' refused this node's "
            + "proof: its secret differs from this node's") >= 3);
      }
    });
    assertFalse(log.contains("unexpected frame type"), log);
    assertEquals(1, count(log, fakeId + ": link to " + nodeId + " refused: authentication failed (secrets differ, or "
        + "a replayed or reflected handshake): " + nodeId + " did not prove the shared secret: its secret differs from "
        + "this node's"), "the dialer warns once, not at every redial: " + log);
    assertEquals(0, nodeEvents.count("up " + fakeId));
    assertNodeUnharmed();
  }

  @Test
  void reflectedProofIsRejected() throws Exception {
    // sending the node its own proof back must fail: proofs are bound to a direction
    try (RawDialer d = new RawDialer()) {
      d.hello(fakeId, nodeId);
      d.readChallenge();
      d.respond(d.acceptorProof);
      assertEquals(TcpProtocolException.Reason.BAD_MAC.code, d.readReject().body()[0]);
      assertClosedByNode(d.socket);
    }
    assertNodeUnharmed();
  }

  @Test
  void replayedHandshakeIsRejected() throws Exception {
    byte[] recordedResponse;
    try (RawDialer d = new RawDialer()) {
      d.authenticate();
      recordedResponse = d.validProof();
    }
    // a replay of the same HELLO and RESPONSE meets a fresh acceptor nonce
    try (RawDialer d = new RawDialer()) {
      d.hello(fakeId, nodeId);
      d.readChallenge();
      d.respond(recordedResponse);
      assertEquals(TcpProtocolException.Reason.BAD_MAC.code, d.readReject().body()[0]);
      assertClosedByNode(d.socket);
    }
    assertNodeUnharmed();
  }

  @Test
  void slowlorisDuringHandshakeIsCutOff() throws Exception {
    String log = logged(() -> {
      try (RawDialer d = new RawDialer()) {
        byte[] frame = new byte[4 + 1 + 60];
        java.nio.ByteBuffer.wrap(frame).putInt(61).put(Frames.HELLO);
        long start = System.nanoTime();
        // one byte every 300 ms: every read succeeds before any per-read timeout, never a whole frame in time
        try {
          for (byte b : frame) {
            d.socket.getOutputStream().write(b);
            d.socket.getOutputStream().flush();
            Thread.sleep(300);
            if (System.nanoTime() - start > 10_000_000_000L) {
              break;
            }
          }
        } catch (IOException e) {
          // closed by the node, as expected
        }
        assertClosedByNode(d.socket);
        assertTrue(System.nanoTime() - start < 10_000_000_000L, "cut off well before the frame completed");
      }
    });
    assertTrue(log.contains("handshake timed out"), log);
    assertNodeUnharmed();
  }

  @Test
  void aMemberGetsThroughMoreStalledConnectionsThanThePoolHolds() throws Exception {
    // more attackers than the pool of connections awaiting HELLO: each closed one reconnects at once, so the
    // pool is always full and only evicting lets anyone in. On a busy machine the node accepts faster than its
    // handshake threads start, so the oldest admitted connection may not have been read: evicting it closed
    // the good peer's connections before their HELLO was read, redial after redial
    int attackers = Listener.MAX_UNIDENTIFIED + 44;
    java.util.concurrent.atomic.AtomicBoolean attacking = new java.util.concurrent.atomic.AtomicBoolean(true);
    List<Thread> threads = new java.util.ArrayList<>();
    long[] rejoinMs = new long[1];
    long[] atBreak = new long[1];
    java.util.concurrent.atomic.AtomicLong connections = new java.util.concurrent.atomic.AtomicLong();
    long captureStart = System.nanoTime();
    String log = logged(() -> {
      try {
        for (int i = 0; i < attackers; i++) {
          threads.add(Thread.ofVirtual().start(() -> {
            while (attacking.get()) {
              try (Socket s = connect()) {
                connections.incrementAndGet();
                s.getOutputStream().write(new byte[] {0, 0});
                s.getInputStream().read();
              } catch (IOException e) {
                // closed: again
              }
            }
          }));
        }
        // a fixed pause is not enough: 300 connects at once overflow the listen backlog, and the dropped ones
        // retry after the kernel's SYN time-out (1 s, then 3 s), so a second after the start the pool often
        // held some 130 connections, none evicted. A node closes a stalled connection only to admit another
        // (or at its handshake time-out), so 2 reconnects per attacker mean the flood is on.
        await("the flood under way", () -> connections.get() >= 3L * attackers);
        atBreak[0] = connections.get();
        long t0 = System.nanoTime();
        good.breakLink(nodeId); // the good peer dials the node again, into the flood
        await("the good peer's link back up", () -> goodEvents.count("down " + nodeId) > 0 && good.isUp(nodeId)
            && node.isUp(goodId));
        rejoinMs[0] = (System.nanoTime() - t0) / 1_000_000;
      } finally {
        attacking.set(false);
        for (Thread t : threads) {
          t.join(5000);
        }
      }
    });
    // bound: the backoff ceiling (250 ms) and eight handshake time-outs (1 s each) of the test configuration. An
    // attempt ends within one time-out, and is evicted only when 256 connections read after it came in first; but
    // here the 300 attackers' threads share the node's JVM and its two carriers, so on a loaded machine the good
    // peer's HELLO may wait several time-outs to be read: suite runs measured 2,016 ms and, with both cores busy to
    // the end, 4,611 ms (against three time-outs then). Without the eviction order (the oldest admitted closed, read
    // or not) it never got through while the flood lasted (the 20 s of the wait above).
    assertTrue(rejoinMs[0] < 250 + 8 * 1000, "the good peer needed " + rejoinMs[0] + " ms to get through ("
        + atBreak[0] + " attacker connections before the break, " + connections.get() + " in all)");
    assertTrue(log.length() < 64 * 1024, "the flood wrote " + log.length() + " chars of log");
    // a burst per window the capture touched: the one open when it began (opened by an earlier connection, so it
    // may close within it) and one per window length after (21 lines were seen once, in a 6.4 s capture)
    long captured = System.nanoTime() - captureStart;
    long windows = 2 + captured / TimeUnit.SECONDS.toNanos(Listener.LOG_WINDOW_SECONDS);
    long lines = log.lines().filter(l -> l.contains("closing connection from")).count();
    assertTrue(lines <= windows * Listener.LOG_BURST, lines + " lines for closed connections in "
        + TimeUnit.NANOSECONDS.toMillis(captured) + " ms: not rate-limited");
    assertTrue(connections.get() > 5L * windows * Listener.LOG_BURST, "the flood was " + connections.get()
        + " connections: too small to show the rate limit");
    // the break was ours: apart from it, the good link stays whole
    int n = probe.incrementAndGet();
    node.send(goodId, new byte[] {(byte) n});
    await("probe delivered after the flood", () -> goodEvents.from(nodeId).size() == n);
  }

  @Test
  void garbageAfterHandshake() throws Exception {
    String log = logged(() -> {
      try (RawDialer d = new RawDialer()) {
        d.authenticate();
        d.socket.getOutputStream().write("this is not a frame at all, just noise".getBytes());
        assertClosedByNode(d.socket);
      }
    });
    assertTrue(log.contains("closing connection from"), log);
    assertNodeUnharmed();
  }

  @Test
  void oversizedFrameAfterHandshake() throws Exception {
    String log = logged(() -> {
      try (RawDialer d = new RawDialer()) {
        d.authenticate();
        d.out.writeInt(TcpLinkSettings.DEFAULT_MAX_FRAME_SIZE + 1000);
        d.out.flush();
        assertClosedByNode(d.socket);
      }
    });
    assertTrue(log.contains("oversized frame"), log);
    assertNodeUnharmed();
  }

  @Test
  void tamperedOrInjectedFrameAfterHandshake() throws Exception {
    String log = logged(() -> {
      try (RawDialer d = new RawDialer()) {
        FrameSealer sealer = d.authenticate();
        byte[] sealed = sealer.seal(Frames.DATA, "pay me".getBytes());
        sealed[0] ^= 1; // one bit flipped in transit
        Frames.write(d.out, Frames.DATA, sealed);
        d.out.flush();
        assertClosedByNode(d.socket);
      }
    });
    assertTrue(log.contains("frame tag does not match"), log);
    assertNodeUnharmed();
  }

  @Test
  void unknownFrameTypeAfterHandshake() throws Exception {
    String log = logged(() -> {
      try (RawDialer d = new RawDialer()) {
        d.authenticate();
        Frames.write(d.out, (byte) 42, new byte[3]);
        d.out.flush();
        assertClosedByNode(d.socket);
      }
    });
    assertTrue(log.contains("unexpected frame type: type 42"), log);
    assertNodeUnharmed();
  }

  @Test
  void silentPeerAfterHandshakeIsClosedAfterIdleTimeout() throws Exception {
    String log = logged(() -> {
      try (RawDialer d = new RawDialer()) {
        d.authenticate();
        assertClosedByNode(d.socket); // sends no heartbeat
      }
    });
    assertTrue(log.contains("nothing received for"), log);
    assertNodeUnharmed();
  }

  // ---- the node as dialer: the member it dials must prove the secret too

  /** Listens on the fake member's address, so that the node dials this test. */
  private java.net.ServerSocket listenAsFake() throws IOException {
    java.net.ServerSocket server = new java.net.ServerSocket();
    server.setReuseAddress(true);
    server.bind(new java.net.InetSocketAddress("127.0.0.1", Sockets.portOf(fakeId)));
    server.setSoTimeout((int) TcpTestSupport.WAIT.toMillis());
    return server;
  }

  private record Dialled(Socket socket, Frames.Hello hello) {}

  /**
   * Accepts until the node under test dials (the good peer dials the fake member as well; its
   * connections are closed), and reads the node's HELLO.
   */
  private Dialled acceptFromNode(java.net.ServerSocket server) throws IOException {
    while (true) {
      Socket s = server.accept();
      s.setSoTimeout((int) TcpTestSupport.WAIT.toMillis());
      Frames.Hello hello = Frames.parseHello(Frames.read(new DataInputStream(s.getInputStream()),
          Frames.MAX_HANDSHAKE_FRAME).body());
      if (hello.dialer().equals(nodeId)) {
        assertEquals(fakeId, hello.dialled());
        return new Dialled(s, hello);
      }
      s.close();
    }
  }

  /** Answers the node's HELLO with a CHALLENGE whose proof is made under {@code secret}. */
  private void challenge(Dialled d, byte[] secret) throws IOException {
    DataOutputStream out = new DataOutputStream(d.socket().getOutputStream());
    byte[] nonce = new byte[Frames.NONCE_BYTES];
    Frames.write(out, Frames.CHALLENGE, Frames.challenge(nonce,
        Frames.proof(secret, Frames.ACCEPTOR_PROOF, d.hello().dialer(), fakeId, d.hello().nonce(), nonce)));
    out.flush();
  }

  @Test
  void anAcceptorThatCannotProveTheSecretIsNeverUp() throws Exception {
    String log = logged(() -> {
      try (java.net.ServerSocket server = listenAsFake()) {
        Dialled d = acceptFromNode(server);
        try (Socket s = d.socket()) {
          challenge(d, "not the cluster's secret at all".getBytes(StandardCharsets.UTF_8));
          // the node answers with a REJECT instead of its own proof, and closes
          Frame f = Frames.read(new DataInputStream(s.getInputStream()), Frames.MAX_HANDSHAKE_FRAME);
          assertEquals(Frames.REJECT, f.type(), "the node does not prove itself to an impostor");
          assertClosedByNode(s);
        }
      }
    });
    assertTrue(log.contains("did not prove the shared secret"), log);
    assertFalse(nodeEvents.isUp(fakeId));
    assertEquals(0, nodeEvents.count("up " + fakeId));
    assertNodeUnharmed();
  }

  @Test
  void anAcceptorThatSendsDataOnTheSendOnlyLinkIsDropped() throws Exception {
    String log = logged(() -> {
      try (java.net.ServerSocket server = listenAsFake()) {
        Dialled d = acceptFromNode(server);
        try (Socket s = d.socket()) {
          challenge(d, SECRET);
          DataInputStream in = new DataInputStream(s.getInputStream());
          assertEquals(Frames.RESPONSE, Frames.read(in, Frames.MAX_HANDSHAKE_FRAME).type());
          DataOutputStream out = new DataOutputStream(s.getOutputStream());
          Frames.write(out, Frames.ACCEPT, new byte[0]);
          out.flush();
          await("the node sees the fake member up", () -> nodeEvents.isUp(fakeId));
          out.write("unsolicited".getBytes(StandardCharsets.UTF_8));
          out.flush();
          await("the node drops the link", () -> nodeEvents.count("down " + fakeId) == 1);
        }
      }
    });
    assertTrue(log.contains("sent data on a send-only link"), log);
    assertNodeUnharmed();
  }

  @Test
  void anAcceptorThatNeverAnswersTimesOutAndIsRetried() throws Exception {
    String log = logged(() -> {
      try (java.net.ServerSocket server = listenAsFake()) {
        Dialled first = acceptFromNode(server); // never answered
        long t0 = System.nanoTime();
        Dialled second = acceptFromNode(server); // the node gave up on the first and dialled again
        assertTrue(System.nanoTime() - t0 >= 500_000_000L, "waited for the handshake timeout");
        first.socket().close();
        second.socket().close();
      }
    });
    assertTrue(log.contains("handshake timed out"), log);
    assertNodeUnharmed();
  }
}
