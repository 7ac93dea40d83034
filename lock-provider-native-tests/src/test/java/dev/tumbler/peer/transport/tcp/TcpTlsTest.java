package dev.tumbler.peer.transport.tcp;

import static dev.tumbler.peer.transport.tcp.TcpTestSupport.assertClosedByNode;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.await;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.freePort;
import static dev.tumbler.peer.transport.tcp.TcpTestSupport.id;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.peer.transport.tcp.TcpTestSupport.Recorder;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** TLS links, with a key store made by {@code keytool} at test time; the HMAC handshake applies inside TLS. */
@Timeout(120)
class TcpTlsTest {
  private static final String STORE_PASSWORD = "store-password-123";
  private static final String SECRET = "tls-cluster-shared-secret";

  @TempDir
  static Path dir;
  private static Path keyStore;
  private static Path otherKeyStore;

  private final List<TcpTransport> open = new ArrayList<>();

  @BeforeAll
  static void makeKeyStores() throws Exception {
    keyStore = genKey("node", "ip:127.0.0.1");
    otherKeyStore = genKey("other", "ip:127.0.0.1");
  }

  private static Path genKey(String name, String san) throws Exception {
    Path file = dir.resolve(name + ".p12");
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    Process p = new ProcessBuilder(keytool.toString(), "-genkeypair", "-alias", name, "-keyalg", "EC",
        "-groupname", "secp256r1", "-dname", "CN=" + name, "-ext", "SAN=" + san, "-validity", "2",
        "-storetype", "PKCS12", "-keystore", file.toString(), "-storepass", STORE_PASSWORD, "-keypass",
        STORE_PASSWORD).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "keytool finished");
    assertEquals(0, p.exitValue(), "keytool: " + out);
    assertTrue(Files.size(file) > 0);
    return file;
  }

  @AfterEach
  void closeAll() {
    open.forEach(TcpTransport::close);
  }

  private TcpTransport node(String self, String peer, Path trust, String secret, Recorder r) {
    return node(self, peer, trust, secret, r, "");
  }

  private TcpTransport node(String self, String peer, Path trust, String secret, Recorder r, String extra) {
    String url = "lock:native://" + self + "?peers=" + peer + extra + "&secret=" + secret + "&tls=true&keyStore="
        + keyStore + "&keyStorePassword=" + STORE_PASSWORD + "&trustStore=" + trust + "&trustStorePassword="
        + STORE_PASSWORD + "&handshakeTimeout=2s&backoffMin=20ms&backoffMax=200ms";
    TcpTransportConfig config = TcpTransportConfig.fromUrl(LockUrl.parse(url), new Properties());
    assertTrue(config.link().tls());
    TcpTransport t = TcpTransport.open(config);
    open.add(t);
    t.start(r);
    return t;
  }

  /**
   * A peer dialled at a dial address is still checked against its id: the certificates name only the IP
   * 127.0.0.1, the id is 127.0.0.1:port, and the address dialled is localhost:proxyport. Checking the
   * certificate against the address dialled ("localhost") would refuse the link.
   */
  @Test
  void aDialAddressKeepsTheCertificateCheckOnTheId() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        java.net.InetAddress.getByName("localhost").equals(java.net.InetAddress.getByName("127.0.0.1")),
        "localhost is not 127.0.0.1 here");
    String a = id(freePort());
    String b = id(freePort());
    try (dev.tumbler.lock.tck.TcpProxy proxy = dev.tumbler.lock.tck.TcpProxy.start("127.0.0.1",
        Sockets.portOf(b))) {
      Recorder ra = new Recorder();
      Recorder rb = new Recorder();
      TcpTransport ta = node(a, b, keyStore, SECRET, ra, "&dialAddresses=" + b + "=localhost:" + proxy.port());
      node(b, a, keyStore, SECRET, rb);
      await("up over TLS through the proxy", () -> ra.isUp(b) && rb.isUp(a));
      ta.send(b, new byte[] {42});
      await("delivered", () -> rb.from(a).size() == 1);
      proxy.cut();
      await("the link went through the proxy", () -> !ta.isUp(b));
    }
  }

  @Test
  void twoNodesExchangeOverTls() throws Exception {
    String a = id(freePort());
    String b = id(freePort());
    Recorder ra = new Recorder();
    Recorder rb = new Recorder();
    TcpTransport ta = node(a, b, keyStore, SECRET, ra);
    TcpTransport tb = node(b, a, keyStore, SECRET, rb);
    await("up over TLS", () -> ra.isUp(b) && rb.isUp(a));
    for (int i = 0; i < 100; i++) {
      ta.send(b, new byte[] {(byte) i});
      tb.send(a, new byte[] {(byte) i});
    }
    await("all delivered", () -> ra.from(b).size() == 100 && rb.from(a).size() == 100);
    for (int i = 0; i < 100; i++) {
      assertEquals((byte) i, rb.from(a).get(i)[0]);
    }
  }

  private static final String CLIENT_SECRET = "tls-cluster-client-secret";

  @Test
  void aClientOverTlsExchangesWithAMemberOverTls() throws Exception {
    String a = id(freePort());
    String b = id(freePort());
    Recorder ra = new Recorder();
    TcpTransport ta = node(a, b, keyStore, SECRET, ra, "&clientListen=127.0.0.1:0&clientSecret=" + CLIENT_SECRET);
    String member = id(ta.clientPort());
    // a client needs no key store: members ask no certificate of it; it checks the member's against the host
    TcpClientConfig config = TcpClientConfig.fromUrl(LockUrl.parse("lock:native://" + member + "?clientSecret="
        + CLIENT_SECRET + "&tls=true&trustStore=" + keyStore + "&trustStorePassword=" + STORE_PASSWORD
        + "&handshakeTimeout=2s&backoffMin=20ms&backoffMax=200ms"), new Properties());
    assertTrue(config.link().tls());
    Recorder rc = new Recorder();
    String cid;
    try (TcpClientTransport c = TcpClientTransport.open(config)) {
      cid = c.self();
      c.start(rc);
      await("the client up over TLS", () -> rc.isUp(member) && ra.isUp(c.self()));
      for (int i = 0; i < 100; i++) {
        c.send(member, new byte[] {(byte) i});
        ta.send(c.self(), new byte[] {(byte) i});
      }
      await("all delivered both ways", () -> ra.from(c.self()).size() == 100 && rc.from(member).size() == 100);
      for (int i = 0; i < 100; i++) {
        assertEquals((byte) i, ra.from(c.self()).get(i)[0]);
        assertEquals((byte) i, rc.from(member).get(i)[0]);
      }
    }
    await("the member sees the client leave", () -> ra.count("down " + cid) == 1);

    // a client that does not trust the member's certificate never comes up
    TcpClientConfig untrusting = TcpClientConfig.fromUrl(LockUrl.parse("lock:native://" + member + "?clientSecret="
        + CLIENT_SECRET + "&tls=true&trustStore=" + otherKeyStore + "&trustStorePassword=" + STORE_PASSWORD
        + "&handshakeTimeout=2s&backoffMin=20ms&backoffMax=200ms"), new Properties());
    Recorder ru = new Recorder();
    String log = TcpTestSupport.logged(() -> {
      try (TcpClientTransport u = TcpClientTransport.open(untrusting)) {
        u.start(ru);
        await("the member saw the TLS handshake fail", () -> TcpTestSupport.logSoFar().contains(
            "closing client connection from"));
        assertFalse(ru.isUp(member), "the client must not trust the member");
        assertFalse(ra.isUp(u.self()));
      }
    });
    assertFalse(log.contains(CLIENT_SECRET), log);
  }

  @Test
  void tlsDoesNotReplaceTheSharedSecret() throws Exception {
    // both trust the certificate, but their secrets differ: no link
    String a = id(freePort());
    String b = id(freePort());
    Recorder ra = new Recorder();
    Recorder rb = new Recorder();
    node(a, b, keyStore, SECRET, ra);
    node(b, a, keyStore, "another-secret-of-enough-length", rb);
    Thread.sleep(1500);
    assertFalse(ra.isUp(b));
    assertFalse(rb.isUp(a));
    assertTrue(ra.events.isEmpty() && rb.events.isEmpty(), ra.events + " " + rb.events);
  }

  @Test
  void untrustedCertificateIsRefused() throws Exception {
    // b trusts only a certificate that a does not have
    String a = id(freePort());
    String b = id(freePort());
    Recorder ra = new Recorder();
    Recorder rb = new Recorder();
    node(a, b, keyStore, SECRET, ra);
    node(b, a, otherKeyStore, SECRET, rb);
    Thread.sleep(1500);
    assertFalse(rb.isUp(a), "b must not trust a");
  }

  @Test
  void plainTextToATlsNodeIsClosed() throws Exception {
    String a = id(freePort());
    String b = id(freePort());
    Recorder ra = new Recorder();
    TcpTransport ta = node(a, b, keyStore, SECRET, ra);
    try (Socket s = new Socket("127.0.0.1", ta.port())) {
      new DataOutputStream(s.getOutputStream()).writeInt(12345678);
      assertClosedByNode(s);
    }
  }

  @Test
  void sslContextFromProperties() throws Exception {
    String a = id(freePort());
    Properties info = new Properties();
    SSLContext ctx = SSLContext.getDefault();
    info.put(TcpLinkSettings.SSL_CONTEXT_PROPERTY, ctx);
    TcpTransportConfig c = TcpTransportConfig.fromUrl(LockUrl.parse("lock:native://" + a + "?secret=" + SECRET), info);
    assertTrue(c.link().tls());
    assertTrue(c.link().sslContext() == ctx);
    info.put(TcpLinkSettings.SSL_CONTEXT_PROPERTY, "not a context");
    assertThrows(InvalidLockUrlException.class,
        () -> TcpTransportConfig.fromUrl(LockUrl.parse("lock:native://" + a + "?secret=" + SECRET), info));
  }

  @Test
  void wrongKeyStorePasswordNamesTheParameterNotThePassword() throws IOException {
    String url = "lock:native://127.0.0.1:7000?secret=" + SECRET + "&tls=true&keyStore=" + keyStore
        + "&keyStorePassword=wrong-password-xyz";
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
        () -> TcpTransportConfig.fromUrl(LockUrl.parse(url), new Properties()));
    assertTrue(e.getMessage().contains("keyStore"), e.getMessage());
    assertFalse(e.getMessage().contains("wrong-password-xyz"), e.getMessage());
    assertFalse(e.getMessage().contains(SECRET), e.getMessage());
  }

}
