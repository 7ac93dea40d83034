package dev.tumbler.peer.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.CredentialsRefusedException;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.LoopbackPorts;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Issue 40: a thin client with a wrong {@code clientSecret} looked like an outage: {@code connect} waited out
 * {@code peerTimeout}, every request then failed with "no member reachable" after WARN lines at every redial, and the
 * member logged "unexpected frame type: expected RESPONSE, got type 5". A refused credential is a configuration error,
 * told at once on both sides.
 */
@Timeout(90)
class ClientCredentialTest {
  private static final String SECRET = "the members' own secret, 0123";
  private static final String CLIENT_SECRET = "the clients' credential, 0123";
  private static final String WRONG = "not the clients' credential, 0123";
  /** Long, so that failing within a fraction of it cannot be the old wait running out. */
  private static final Duration PEER_TIMEOUT = Duration.ofSeconds(20);

  private static Properties clientSecret(String value) {
    Properties p = new Properties();
    p.setProperty("clientSecret", value);
    return p;
  }

  @Test
  void aWrongClientSecretFailsTheConnectAtOnceNamingTheParameterAndTheMemberSaysSoOnce() throws Exception {
    int port = LoopbackPorts.freePort();
    int clientPort = LoopbackPorts.freePort();
    int nobody = LoopbackPorts.freePort();
    Properties memberSecrets = clientSecret(CLIENT_SECRET);
    memberSecrets.setProperty("secret", SECRET);
    String clientUrl = "lock:native://127.0.0.1:" + clientPort + ",127.0.0.1:" + nobody
        + "?algorithm=lease&leaseTime=2s&peerTimeout=" + PEER_TIMEOUT.toSeconds() + "s"
        + "&backoffMin=5s&backoffMax=10s"; // one attempt per member within the test: one line to count
    PrintStream saved = System.err;
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    System.setErr(new PrintStream(new OutputStream() {
      @Override
      public synchronized void write(int b) {
        saved.write(b);
        log.write(b);
      }

      @Override
      public synchronized void write(byte[] b, int off, int len) {
        saved.write(b, off, len);
        log.write(b, off, len);
      }
    }, true, StandardCharsets.UTF_8));
    try (LockService member = LockProviders.connect("lock:native://127.0.0.1:" + port + "?algorithm=lease"
        + "&leaseTime=2s&clientListen=127.0.0.1:" + clientPort, memberSecrets)) {
      long start = System.nanoTime();
      CredentialsRefusedException e = assertThrows(CredentialsRefusedException.class,
          () -> LockProviders.connect(clientUrl, clientSecret(WRONG)).close());
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      assertTrue(took.compareTo(PEER_TIMEOUT.dividedBy(2)) < 0, "told at once, not after peerTimeout: " + took);
      assertTrue(e.getMessage().contains("the members refused this thin client's credential: parameter "
          + "'clientSecret' is not the clientSecret the members were given (refused by 127.0.0.1:" + clientPort
          + "; not reached: 127.0.0.1:" + nobody + ")"), e.getMessage());
      assertFalse(e.getMessage().contains(WRONG) || e.getMessage().contains(CLIENT_SECRET), e.getMessage());

      // the right credential still gets in
      try (LockService client = LockProviders.connect(clientUrl, clientSecret(CLIENT_SECRET));
          Lease lease = client.lock("a").acquire()) {
        assertTrue(lease.isValid());
      }
    } finally {
      Thread.sleep(200); // the member's line about the last connection may come a moment after
      System.setErr(saved);
    }
    String logged = log.toString(StandardCharsets.UTF_8);
    assertFalse(logged.contains("unexpected frame type"), logged);
    long memberLines = logged.lines().filter(l -> l.contains("closing client connection from ")
        && l.contains("refused this node's proof: its clientSecret differs from this node's")).count();
    assertEquals(1, memberLines, "one attempt, one line at the member: " + logged);
    assertFalse(logged.contains(WRONG) || logged.contains(CLIENT_SECRET) || logged.contains(SECRET), logged);
  }
}
