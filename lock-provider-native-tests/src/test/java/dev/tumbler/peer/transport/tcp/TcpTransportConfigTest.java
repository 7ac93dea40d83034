package dev.tumbler.peer.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LockUrl;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class TcpTransportConfigTest {
  private static final String SECRET = "0123456789abcdef-secret";

  private static TcpTransportConfig parse(String url) {
    return TcpTransportConfig.fromUrl(LockUrl.parse(url), new Properties());
  }

  private static InvalidLockUrlException fails(String url) {
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, () -> parse(url));
    assertFalse(e.getMessage().contains(SECRET), "secret leaked: " + e.getMessage());
    return e;
  }

  @Test
  void fullUrl() {
    TcpTransportConfig c = parse("lock:native://127.0.0.1:7701?peers=127.0.0.1:7702,127.0.0.1:7701,"
        + "LOCALHOST:7703,[::1]:7704&secret=" + SECRET + "&maxFrameSize=4096&connectTimeout=1s"
        + "&handshakeTimeout=750ms&idleTimeout=3s&backoffMin=10ms&backoffMax=2s");
    assertEquals("127.0.0.1:7701", c.self());
    assertEquals(List.of("127.0.0.1:7702", "localhost:7703", "[::1]:7704"), c.peers(), "self skipped, normalized");
    assertArrayEquals(SECRET.getBytes(StandardCharsets.UTF_8), c.secret());
    assertFalse(c.link().tls());
    assertNull(c.link().sslContext());
    assertEquals(4096, c.link().maxFrameSize());
    assertEquals(Duration.ofSeconds(1), c.link().connectTimeout());
    assertEquals(Duration.ofMillis(750), c.link().handshakeTimeout());
    assertEquals(Duration.ofSeconds(3), c.link().idleTimeout());
    assertEquals(Duration.ofMillis(10), c.link().backoffMin());
    assertEquals(Duration.ofSeconds(2), c.link().backoffMax());
    assertFalse(c.toString().contains(SECRET), c.toString());
  }

  @Test
  void defaults() {
    TcpTransportConfig c = parse("lock:native://127.0.0.1:7701?secret=" + SECRET);
    assertEquals(List.of(), c.peers());
    assertEquals(TcpLinkSettings.DEFAULT_MAX_FRAME_SIZE, c.link().maxFrameSize());
    assertEquals(Duration.ofSeconds(5), c.link().handshakeTimeout());
  }

  @Test
  void propertiesOverrideAndMayCarryTheSecretAsBytes() {
    Properties info = new Properties();
    info.setProperty("peers", "127.0.0.1:9");
    info.put("secret", "bytes-secret-of-16+".getBytes(StandardCharsets.UTF_8));
    TcpTransportConfig c = TcpTransportConfig.fromUrl(LockUrl.parse("lock:native://127.0.0.1:7701?peers=127.0.0.1:8"), info);
    assertEquals(List.of("127.0.0.1:9"), c.peers());
    assertArrayEquals("bytes-secret-of-16+".getBytes(StandardCharsets.UTF_8), c.secret());
  }

  @Test
  void badValuesNameTheParameter() {
    assertTrue(fails("lock:native://127.0.0.1:7701").getMessage().contains("'secret'"));
    assertTrue(fails("lock:native://127.0.0.1:7701?secret=short").getMessage().contains("at least 16 bytes"));
    assertTrue(fails("lock:native://127.0.0.1:7701?secret=" + SECRET + "&peers=127.0.0.1").getMessage()
        .contains("'peers'"));
    assertTrue(fails("lock:native://127.0.0.1:7701?secret=" + SECRET + "&peers=127.0.0.1:0").getMessage()
        .contains("'peers'"));
    assertTrue(fails("lock:native://127.0.0.1:7701?secret=" + SECRET + "&peers=a:1,a:1").getMessage()
        .contains("twice"));
    assertTrue(fails("lock:native://127.0.0.1:7701?secret=" + SECRET + "&maxFrameSize=10").getMessage()
        .contains("'maxFrameSize'"));
    assertTrue(fails("lock:native://127.0.0.1:7701?secret=" + SECRET + "&handshakeTimeout=0s").getMessage()
        .contains("'handshakeTimeout'"));
    assertTrue(fails("lock:native://127.0.0.1:7701?secret=" + SECRET + "&backoffMin=2s&backoffMax=1s").getMessage()
        .contains("'backoffMax'"));
    assertTrue(fails("lock:native://127.0.0.1:7701?secret=" + SECRET + "&tls=true").getMessage()
        .contains("'keyStore'"));
    assertTrue(fails("lock:native://127.0.0.1:7701?secret=" + SECRET + "&tls=true&keyStore=/nonexistent/ks.p12"
        + "&keyStorePassword=pw").getMessage().contains("cannot read file"));
    assertTrue(fails("lock:native://127.0.0.1:7701?secret=" + SECRET + "&keyStore=/x").getMessage()
        .contains("without tls=true"));
    assertTrue(fails("lock:native://127.0.0.1?secret=" + SECRET).getMessage().contains("listen address"));
    assertTrue(fails("lock:native://a:1,b:2?secret=" + SECRET).getMessage().contains("exactly one"));
  }

  @Test
  void builderChecksItsArguments() {
    assertThrows(IllegalArgumentException.class, () -> TcpTransportConfig.builder("nohost"));
    assertThrows(IllegalArgumentException.class, () -> TcpTransportConfig.builder("h:1").secret(new byte[3]));
    assertThrows(IllegalStateException.class, () -> TcpTransportConfig.builder("h:1").build());
    assertThrows(IllegalArgumentException.class, () -> TcpTransportConfig.builder("h:1").maxFrameSize(1));
    assertThrows(IllegalArgumentException.class,
        () -> TcpTransportConfig.builder("h:1").backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)));
    assertThrows(NullPointerException.class, () -> TcpTransportConfig.builder(null));
  }

  /** Members and clients read the links' parameters alike: one record, one set of defaults, one set of checks. */
  @Test
  void linkSettingsAreTheSameOnBothSides() {
    String link = "&tls=false&maxFrameSize=4096&connectTimeout=1s&handshakeTimeout=750ms&idleTimeout=3s"
        + "&backoffMin=10ms&backoffMax=2s";
    TcpLinkSettings member = parse("lock:native://127.0.0.1:7701?secret=" + SECRET + link).link();
    TcpLinkSettings client = TcpClientConfig.fromUrl(LockUrl.parse("lock:native://127.0.0.1:7781?clientSecret="
        + CLIENT_SECRET + link), new Properties()).link();
    assertEquals(member.describe(), client.describe());
    assertEquals(parse("lock:native://127.0.0.1:7701?secret=" + SECRET).link().describe(),
        TcpClientConfig.builder(List.of("h:1")).clientSecret(CLIENT_SECRET.getBytes(StandardCharsets.UTF_8)).build()
            .link().describe(), "the same defaults");
    for (String bad : List.of("&maxFrameSize=10", "&idleTimeout=0s", "&backoffMin=2s&backoffMax=1s", "&keyStore=/x")) {
      String m = fails("lock:native://127.0.0.1:7701?secret=" + SECRET + bad).getMessage();
      String c = assertThrows(InvalidLockUrlException.class, () -> TcpClientConfig.fromUrl(LockUrl.parse(
          "lock:native://127.0.0.1:7781?clientSecret=" + CLIENT_SECRET + bad), new Properties())).getMessage();
      assertEquals(m.substring(m.indexOf(": parameter")), c.substring(c.indexOf(": parameter")), bad);
    }
    Duration s = Duration.ofSeconds(1);
    assertThrows(IllegalArgumentException.class, () -> new TcpLinkSettings(null, 10, s, s, s, s, s, member.random()));
    assertThrows(IllegalArgumentException.class,
        () -> new TcpLinkSettings(null, 4096, s, s, Duration.ZERO, s, s, member.random()));
    assertThrows(IllegalArgumentException.class,
        () -> new TcpLinkSettings(null, 4096, s, s, s, s.plusSeconds(1), s, member.random()));
  }

  @Test
  void parametersListsWhatFromUrlReads() {
    for (String p : List.of("peers", "secret", "tls", "keyStore", "keyStorePassword", "trustStore",
        "trustStorePassword", "maxFrameSize", "connectTimeout", "handshakeTimeout", "idleTimeout", "backoffMin",
        "backoffMax")) {
      assertTrue(TcpTransportConfig.PARAMETERS.contains(p), p);
    }
  }

  @Test
  void dialAddressesFromTheUrlAndFromProperties() {
    TcpTransportConfig c = parse("lock:native://127.0.0.1:7701?peers=127.0.0.1:7702,127.0.0.1:7703&secret=" + SECRET
        + "&dialAddresses=127.0.0.1:7702=LOCALHOST:9002");
    assertEquals(java.util.Map.of("127.0.0.1:7702", "localhost:9002"), c.dialAddresses(), "normalized");
    assertEquals("localhost:9002", c.dialAddress("127.0.0.1:7702"));
    assertEquals("127.0.0.1:7703", c.dialAddress("127.0.0.1:7703"), "no dial address: the id");
    assertEquals(List.of("127.0.0.1:7702", "127.0.0.1:7703"), c.peers(), "ids unchanged");
    assertTrue(c.toString().contains("dialAddresses={127.0.0.1:7702=localhost:9002}"), c.toString());

    Properties info = new Properties();
    info.put("dialAddresses", java.util.Map.of("127.0.0.1:7703", "[::1]:9003"));
    c = TcpTransportConfig.fromUrl(LockUrl.parse("lock:native://127.0.0.1:7701?peers=127.0.0.1:7702,"
        + "127.0.0.1:7703&secret=" + SECRET + "&dialAddresses=127.0.0.1:7702=h:1"), info);
    assertEquals(java.util.Map.of("127.0.0.1:7703", "[::1]:9003"), c.dialAddresses(), "a Map in Properties wins");
    info.setProperty("dialAddresses", "127.0.0.1:7702=h:2");
    c = TcpTransportConfig.fromUrl(LockUrl.parse("lock:native://127.0.0.1:7701?peers=127.0.0.1:7702&secret="
        + SECRET), info);
    assertEquals(java.util.Map.of("127.0.0.1:7702", "h:2"), c.dialAddresses(), "a String in Properties");
  }

  @Test
  void badDialAddressesAreRejectedNamingTheParameter() {
    String base = "lock:native://127.0.0.1:7701?peers=127.0.0.1:7702&secret=" + SECRET + "&dialAddresses=";
    for (String bad : List.of("127.0.0.1:7702", "127.0.0.1:7702=nohost", "127.0.0.1:7702=h:0",
        "127.0.0.1:7709=h:1", "127.0.0.1:7701=h:1", "127.0.0.1:7702=h:1,127.0.0.1:7702=h:2", "x=h:1")) {
      InvalidLockUrlException e = fails(base + bad);
      assertTrue(e.getMessage().contains("'dialAddresses'"), bad + ": " + e.getMessage());
    }
    assertTrue(fails(base + "127.0.0.1:7709=h:1").getMessage().contains("not one of the peers"));
    Properties info = new Properties();
    info.put("dialAddresses", java.util.Map.of("127.0.0.1:7702", 9002));
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, () -> TcpTransportConfig.fromUrl(
        LockUrl.parse("lock:native://127.0.0.1:7701?peers=127.0.0.1:7702&secret=" + SECRET), info));
    assertTrue(e.getMessage().contains("dialAddresses"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> TcpTransportConfig.builder("127.0.0.1:7701")
        .secret(SECRET.getBytes(StandardCharsets.UTF_8)).dialAddress("127.0.0.1:7702", "h:1").build(),
        "a dial address for a non-member");
  }

  // ---- the client listener

  private static final String CLIENT_SECRET = "fedcba9876543210-clients";

  @Test
  void clientListenerFromTheUrlAndFromProperties() {
    TcpTransportConfig c = parse("lock:native://127.0.0.1:7701?secret=" + SECRET + "&clientListen=LOCALHOST:7781"
        + "&clientSecret=" + CLIENT_SECRET + "&maxClients=10");
    assertEquals(java.util.Optional.of("localhost:7781"), c.clientListen(), "normalized");
    assertArrayEquals(CLIENT_SECRET.getBytes(StandardCharsets.UTF_8), c.clientSecret());
    assertEquals(10, c.maxClients());
    assertTrue(c.toString().contains("clientListen=localhost:7781, clientSecret=***, maxClients=10"), c.toString());
    assertFalse(c.toString().contains(CLIENT_SECRET), c.toString());

    Properties info = new Properties();
    info.put("clientSecret", CLIENT_SECRET.getBytes(StandardCharsets.UTF_8));
    c = TcpTransportConfig.fromUrl(LockUrl.parse("lock:native://127.0.0.1:7701?secret=" + SECRET
        + "&clientListen=127.0.0.1:0"), info);
    assertEquals(java.util.Optional.of("127.0.0.1:0"), c.clientListen(), "port 0: a free port");
    assertArrayEquals(CLIENT_SECRET.getBytes(StandardCharsets.UTF_8), c.clientSecret(), "bytes from Properties");
    assertEquals(TcpTransportConfig.DEFAULT_MAX_CLIENTS, c.maxClients());
    info = new Properties();
    info.setProperty("clientSecret", CLIENT_SECRET);
    c = TcpTransportConfig.fromUrl(LockUrl.parse("lock:native://127.0.0.1:7701?secret=" + SECRET
        + "&clientListen=127.0.0.1:0&clientSecret=overridden-by-properties"), info);
    assertArrayEquals(CLIENT_SECRET.getBytes(StandardCharsets.UTF_8), c.clientSecret(), "a String in Properties");

    c = parse("lock:native://127.0.0.1:7701?secret=" + SECRET);
    assertEquals(java.util.Optional.empty(), c.clientListen());
    assertNull(c.clientSecret());
    assertFalse(c.toString().contains("clientSecret"), "no clientSecret=*** when none is set: " + c);
  }

  /** A failure naming both parameters, and quoting neither secret. */
  private static void failsNaming(String url, String... expected) {
    InvalidLockUrlException e = fails(url);
    assertFalse(e.getMessage().contains(CLIENT_SECRET), "client secret leaked: " + e.getMessage());
    for (String x : expected) {
      assertTrue(e.getMessage().contains(x), x + " in: " + e.getMessage());
    }
  }

  @Test
  void theClientSecretIsRequiredAndMustDifferFromTheSecret() {
    String base = "lock:native://127.0.0.1:7701?secret=" + SECRET;
    failsNaming(base + "&clientListen=127.0.0.1:7781", "'clientSecret'", "clientListen");
    failsNaming(base + "&clientListen=127.0.0.1:7781&clientSecret=" + SECRET, "'clientSecret'", "'secret'",
        "must differ");
    failsNaming(base + "&clientListen=127.0.0.1:7781&clientSecret=short", "'clientSecret'", "at least 16 bytes");
    failsNaming(base + "&clientSecret=" + CLIENT_SECRET, "'clientSecret'", "without clientListen");
    failsNaming(base + "&maxClients=3", "'maxClients'", "without clientListen");
    failsNaming(base + "&clientListen=127.0.0.1&clientSecret=" + CLIENT_SECRET, "'clientListen'");
    failsNaming(base + "&clientListen=127.0.0.1:7701&clientSecret=" + CLIENT_SECRET, "'clientListen'",
        "this peer's listen address");
    failsNaming(base + "&clientListen=127.0.0.1:7781&clientSecret=" + CLIENT_SECRET + "&maxClients=0", "'maxClients'");
    failsNaming(base + "&clientListen=127.0.0.1:7781&clientSecret=" + CLIENT_SECRET + "&maxClients=65537",
        "'maxClients'");
    Properties info = new Properties();
    info.put("clientSecret", SECRET.getBytes(StandardCharsets.UTF_8));
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, () -> TcpTransportConfig.fromUrl(
        LockUrl.parse(base + "&clientListen=127.0.0.1:7781"), info));
    assertTrue(e.getMessage().contains("'clientSecret'") && e.getMessage().contains("'secret'"), e.getMessage());
    assertFalse(e.getMessage().contains(SECRET), e.getMessage());

    byte[] secret = SECRET.getBytes(StandardCharsets.UTF_8);
    TcpTransportConfig.Builder b = TcpTransportConfig.builder("127.0.0.1:7701").secret(secret).clientListen("127.0.0.1:0");
    IllegalStateException missing = assertThrows(IllegalStateException.class, b::build);
    assertTrue(missing.getMessage().contains("clientSecret") && missing.getMessage().contains("clientListen"),
        missing.getMessage());
    IllegalArgumentException same = assertThrows(IllegalArgumentException.class, () -> b.clientSecret(secret.clone())
        .build());
    assertTrue(same.getMessage().contains("clientSecret") && same.getMessage().contains("'secret'"), same.getMessage());
    assertFalse(same.getMessage().contains(SECRET), same.getMessage());
    assertThrows(IllegalArgumentException.class, () -> TcpTransportConfig.builder("127.0.0.1:7701").secret(secret)
        .clientSecret(CLIENT_SECRET.getBytes(StandardCharsets.UTF_8)).build(), "a client secret without clientListen");
    assertThrows(IllegalArgumentException.class, () -> b.maxClients(0));
    assertThrows(IllegalArgumentException.class, () -> b.maxClients(65537));
    assertThrows(IllegalArgumentException.class, () -> b.clientListen("nohost"));
    assertThrows(IllegalArgumentException.class, () -> b.clientSecret(new byte[15]));
    TcpTransportConfig ok = b.clientSecret(CLIENT_SECRET.getBytes(StandardCharsets.UTF_8)).maxClients(65536).build();
    assertEquals(65536, ok.maxClients());
    byte[] copy = ok.clientSecret();
    copy[0] ^= 1;
    assertArrayEquals(CLIENT_SECRET.getBytes(StandardCharsets.UTF_8), ok.clientSecret(), "copied out");
  }

  @Test
  void parametersListTheClientListener() {
    for (String p : List.of("clientListen", "clientSecret", "maxClients", "dialAddresses")) {
      assertTrue(TcpTransportConfig.PARAMETERS.contains(p), p);
    }
  }

  // ---- a client's settings

  @Test
  void aClientUrlNamesTheMembersInOrder() {
    TcpClientConfig c = TcpClientConfig.fromUrl(LockUrl.parse("lock:native://127.0.0.1:7783,LOCALHOST:7781,[::1]:7782"
        + "?clientSecret=" + CLIENT_SECRET + "&idleTimeout=3s&backoffMin=10ms&backoffMax=2s&maxFrameSize=4096"),
        new Properties());
    assertEquals(List.of("127.0.0.1:7783", "localhost:7781", "[::1]:7782"), c.members());
    assertArrayEquals(CLIENT_SECRET.getBytes(StandardCharsets.UTF_8), c.clientSecret());
    assertEquals(Duration.ofSeconds(3), c.link().idleTimeout());
    assertEquals(Duration.ofMillis(10), c.link().backoffMin());
    assertEquals(4096, c.link().maxFrameSize());
    assertFalse(c.link().tls());
    assertFalse(c.toString().contains(CLIENT_SECRET), c.toString());
    assertTrue(c.toString().contains("clientSecret=***"), c.toString());

    Properties info = new Properties();
    info.put("clientSecret", CLIENT_SECRET.getBytes(StandardCharsets.UTF_8));
    c = TcpClientConfig.fromUrl(LockUrl.parse("lock:native://127.0.0.1:7781"), info);
    assertArrayEquals(CLIENT_SECRET.getBytes(StandardCharsets.UTF_8), c.clientSecret(), "bytes from Properties");
    // a client needs no key store with TLS (members ask no certificate of it): the trust store is what is read
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, () -> TcpClientConfig.fromUrl(
        LockUrl.parse("lock:native://127.0.0.1:7781?tls=true&trustStore=/nonexistent/ts.p12"), info));
    assertTrue(e.getMessage().contains("'trustStore'") && e.getMessage().contains("cannot read file"), e.getMessage());
    for (String p : List.of("clientSecret", "tls", "trustStore", "trustStorePassword", "keyStore", "idleTimeout")) {
      assertTrue(TcpClientConfig.PARAMETERS.contains(p), p);
    }
    assertFalse(TcpClientConfig.PARAMETERS.contains("secret"), "a client has no peer secret");
  }

  @Test
  void badClientUrlsNameTheParameter() {
    for (String[] bad : new String[][] {
        {"lock:native://127.0.0.1:7781", "'clientSecret'"},
        {"lock:native://127.0.0.1:7781?clientSecret=short", "at least 16 bytes"},
        {"lock:native://127.0.0.1:7781,127.0.0.1:7781?clientSecret=" + CLIENT_SECRET, "twice"},
        {"lock:native://127.0.0.1?clientSecret=" + CLIENT_SECRET, "no port"},
        {"lock:native:local?clientSecret=" + CLIENT_SECRET, "client addresses"},
        {"lock:native://127.0.0.1:7781?clientSecret=" + CLIENT_SECRET + "&trustStore=/x", "without tls=true"},
        {"lock:native://127.0.0.1:7781?clientSecret=" + CLIENT_SECRET + "&idleTimeout=0s", "'idleTimeout'"}}) {
      InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
          () -> TcpClientConfig.fromUrl(LockUrl.parse(bad[0]), new Properties()), bad[0]);
      assertTrue(e.getMessage().contains(bad[1]), bad[1] + " in: " + e.getMessage());
      assertFalse(e.getMessage().contains(CLIENT_SECRET), e.getMessage());
    }
    assertThrows(IllegalArgumentException.class, () -> TcpClientConfig.builder(List.of()));
    assertThrows(IllegalStateException.class, () -> TcpClientConfig.builder(List.of("127.0.0.1:1")).build());
  }
}
