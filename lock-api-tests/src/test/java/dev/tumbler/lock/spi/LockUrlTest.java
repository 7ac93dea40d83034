package dev.tumbler.lock.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.InvalidLockUrlException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LockUrlTest {

  enum Algorithm { LAMPORT, RICART_AGRAWALA }

  @Test
  void opaqueUrl() {
    LockUrl u = LockUrl.parse("lock:native:local");
    assertEquals("native", u.scheme());
    assertFalse(u.isHierarchical());
    assertEquals("local", u.opaque());
    assertEquals(List.of(), u.hosts());
    assertEquals("lock:native:local", u.toString());
  }

  @Test
  void schemeIsCaseInsensitiveAndLowerCased() {
    assertEquals("redis", LockUrl.parse("LOCK:Redis://h").scheme());
  }

  @Test
  void hostsPortsPathAndParameters() {
    LockUrl u = LockUrl.parse("lock:native://127.0.0.1:7701?peers=127.0.0.1:7702,127.0.0.1:7703&algorithm=lamport");
    assertEquals(List.of(new LockUrl.HostAndPort("127.0.0.1", 7701)), u.hosts());
    assertEquals("127.0.0.1:7702,127.0.0.1:7703", u.parameter("peers").orElseThrow());
    assertEquals(Algorithm.LAMPORT, u.enumValue("algorithm", Algorithm.class, Algorithm.RICART_AGRAWALA));

    LockUrl z = LockUrl.parse("lock:zookeeper://h1:2181,h2:2181/tumbler?sessionTimeout=15s");
    assertEquals(List.of(new LockUrl.HostAndPort("h1", 2181), new LockUrl.HostAndPort("h2", 2181)), z.hosts());
    assertEquals("/tumbler", z.path());
    assertEquals(Duration.ofSeconds(15), z.duration("sessionTimeout", Duration.ZERO));
  }

  @Test
  void defaultPortsFillOnlyMissingOnes() {
    LockUrl u = LockUrl.parse("lock:redis://h1,h2:7000,[::1]");
    assertEquals(List.of(new LockUrl.HostAndPort("h1", 6379), new LockUrl.HostAndPort("h2", 7000),
        new LockUrl.HostAndPort("::1", 6379)), u.hosts(6379));
    assertFalse(u.hosts().get(0).hasPort());
  }

  @Test
  void ipv6Literals() {
    LockUrl u = LockUrl.parse("lock:zookeeper://[::1]:2181,[fe80::1%25eth0]:2182/x");
    assertEquals("::1", u.hosts().get(0).host());
    assertEquals(2181, u.hosts().get(0).port());
    assertEquals("[::1]:2181", u.hosts().get(0).toString());
    assertEquals(2182, u.hosts().get(1).port());
  }

  @Test
  void userInfoIsDecodedAndPasswordRedacted() {
    LockUrl u = LockUrl.parse("lock:redis://us%40er:p%3Ass%2Fw0rd@h:6379/0?leaseTime=10s");
    assertEquals("us@er", u.user().orElseThrow());
    assertEquals("p:ss/w0rd", u.password().orElseThrow());
    assertEquals("/0", u.path());
    assertEquals("lock:redis://us%40er:***@h:6379/0?leaseTime=10s", u.toString());
  }

  @Test
  void anEncodedColonInAHostNameIsRejected() {
    // decoded, it would print as an IPv6 literal that does not parse (a 10 s CI fuzz run found it)
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
        () -> LockUrl.parse("lock:k://ll,%3alll:2181"));
    assertTrue(e.getMessage().contains("':'"), e.getMessage());
  }

  @Test
  void percentDecodingInPathAndParameters() {
    LockUrl u = LockUrl.parse("lock:zookeeper://h/a%20b/%C3%A9?namespace=x%26y&k%3D=v");
    assertEquals("/a b/é", u.path());
    assertEquals("x&y", u.parameter("namespace").orElseThrow());
    assertEquals("v", u.parameter("k=").orElseThrow());
  }

  @Test
  void typedGetters() {
    LockUrl u = LockUrl.parse("lock:x://h?a=500ms&b=30s&c=2m&d=1h&e=1d&f=PT3S&n=42&t=yes&u=false&flag&alg=ricart-agrawala");
    assertEquals(Duration.ofMillis(500), u.duration("a", null));
    assertEquals(Duration.ofSeconds(30), u.duration("b", null));
    assertEquals(Duration.ofMinutes(2), u.duration("c", null));
    assertEquals(Duration.ofHours(1), u.duration("d", null));
    assertEquals(Duration.ofDays(1), u.duration("e", null));
    assertEquals(Duration.ofSeconds(3), u.duration("f", null));
    assertEquals(Duration.ofSeconds(9), u.duration("missing", Duration.ofSeconds(9)));
    assertEquals(42, u.integer("n", 0, 0, 100));
    assertTrue(u.bool("t", false));
    assertFalse(u.bool("u", true));
    assertTrue(u.bool("flag", false));
    assertEquals(Algorithm.RICART_AGRAWALA, u.enumValue("alg", Algorithm.class, Algorithm.LAMPORT));
    assertEquals("ricart-agrawala", u.oneOf("alg", List.of("lamport", "ricart-agrawala"), "lamport"));
    assertEquals("bakery", u.oneOf("missing", List.of("bakery"), "bakery"));
  }

  @Test
  void badTypedValuesNameTheParameter() {
    LockUrl u = LockUrl.parse("lock:x://h?a=10&b=-5s&c=fast&n=x&m=500&t=maybe&alg=paxos");
    assertMessage(() -> u.duration("a", null), "'a'", "no unit");
    assertMessage(() -> u.duration("b", null), "'b'", "negative");
    assertMessage(() -> u.duration("c", null), "'c'", "not a duration");
    assertMessage(() -> u.integer("n", 0, 0, 10), "'n'", "not an integer");
    assertMessage(() -> u.integer("m", 0, 0, 10), "'m'", "[0, 10]");
    assertMessage(() -> u.bool("t", false), "'t'", "not a boolean");
    assertMessage(() -> u.enumValue("alg", Algorithm.class, null), "'alg'", "lamport", "ricart-agrawala");
    assertMessage(() -> u.oneOf("alg", List.of("lamport", "bakery"), null), "'alg'", "'paxos'", "[lamport, bakery]");
    // found by LockUrlFuzzTest: a count of days or hours past Duration's range was an ArithmeticException
    LockUrl huge = LockUrl.parse("lock:x://h?d=4999999999999999995d&h=9223372036854775807h");
    assertMessage(() -> huge.duration("d", null), "'d'", "too large");
    assertMessage(() -> huge.duration("h", null), "'h'", "too large");
  }

  @Test
  void unknownParametersAreNamedWithTheAcceptedOnes() {
    LockUrl u = LockUrl.parse("lock:redis://h?leaseTim=10s&leaseTime=5s");
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
        () -> u.requireKnownParameters(Set.of("leaseTime", "renew")));
    assertTrue(e.getMessage().contains("leaseTim]"), e.getMessage());
    assertTrue(e.getMessage().contains("accepted: [leaseTime, renew]"), e.getMessage());
  }

  /**
   * Issue 40: a misspelled secret ({@code pasword=hunter2}) is an unknown parameter, and the error about it showed
   * the URL whole. The error names unknown parameters but shows none of their values, whatever their names.
   */
  @ParameterizedTest
  @ValueSource(strings = {"pasword", "passwd", "keyStorePasswd", "sentinelPasword", "colour"})
  void theErrorForUnknownParametersNeverShowsTheirValues(String name) {
    LockUrl u = LockUrl.parse("lock:redis://h?leaseTime=5s&" + name + "=hunter2");
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
        () -> u.requireKnownParameters(Set.of("leaseTime", "password", "sentinelPassword", "keyStorePassword")));
    assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
    assertTrue(e.getMessage().contains("unknown parameter [" + name + "]"), e.getMessage());
    assertTrue(e.getMessage().contains("leaseTime=5s&" + name + "=***"), e.getMessage());
  }

  /** Names that look like a secret's, misspellings included, are redacted wherever the URL is shown. */
  @ParameterizedTest
  @ValueSource(strings = {"pasword", "passwd", "keyStorePasswd", "sentinelPasword", "passwrod", "PASSWORT",
      "secert", "clientScret", "credentails", "keystorepasword", "trustStorePassw", "pwd", "pass", "pw", "auth",
      "authToken", "accessToken", "apiKey", "api_key", "privateKey", "sslpassword", "passphrase", "bearer"})
  void namesThatLookLikeASecretsAreRedacted(String name) {
    assertTrue(LockUrl.isSecretParameter(name), name);
    String url = "lock:redis://h?" + name + "=hunter2";
    LockUrl u = LockUrl.parse(url);
    assertEquals("lock:redis://h?" + name + "=***", u.toString());
    assertEquals("hunter2", u.parameter(name).orElseThrow(), "redacted when shown, never when read");
    for (String bad : List.of(url + "#x", url + "&&", url + "&x=%zz")) {
      InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, () -> LockUrl.parse(bad));
      assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
    }
    for (Runnable typed : List.<Runnable>of(() -> u.duration(name, null), () -> u.integer(name, 0, 0, 1),
        () -> u.bool(name, false), () -> u.oneOf(name, List.of("a"), null))) {
      InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, typed::run);
      assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
    }
  }

  /** The rule is broad, but not so broad that the providers' ordinary parameters hide their values. */
  @ParameterizedTest
  @ValueSource(strings = {"leaseTime", "renew", "namespace", "tls", "mode", "timeout", "recheck", "master",
      "sentinelUser", "user", "sessionTimeout", "connectionTimeout", "peers", "keyStore", "trustStore", "maxFrameSize",
      "connectTimeout", "handshakeTimeout", "idleTimeout", "backoffMin", "backoffMax", "dialAddresses",
      "clientListen", "maxClients", "cache", "recallInterval", "bucketSize", "priority", "electionDelay",
      "leaderLease", "writerMode", "quietPeriod", "algorithm", "peerTimeout", "node", "table", "createSchema",
      "maximumPoolSize", "poolName", "connectionInitSql", "schema", "catalog", "driverClassName", "sslmode",
      "sslkey", "authenticationPluginClassName", "bypass", "compass", "passive", "author", "session", "select"})
  void ordinaryNamesAreNotSecrets(String name) {
    assertFalse(LockUrl.isSecretParameter(name), name);
  }

  @Test
  void aMisspellingIsAtMostOneEditFromASixLetterWordAndTwoFromALongerOne() {
    assertEquals(0, LockUrl.nearestSubstringDistance("secret", "clientsecretx"));
    assertEquals(1, LockUrl.nearestSubstringDistance("secret", "secert"), "a swap is one edit");
    assertEquals(1, LockUrl.nearestSubstringDistance("password", "sentinelpasword"));
    assertEquals(2, LockUrl.nearestSubstringDistance("password", "paswrd"));
    assertTrue(LockUrl.nearestSubstringDistance("secret", "select") > 1);
    assertTrue(LockUrl.nearestSubstringDistance("password", "keyword") > 2);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "redis://h",                     // no lock: prefix
      "lock:redis",                    // no ':' after scheme
      "lock:9x://h",                   // bad scheme
      "lock:redis:",                   // nothing after scheme
      "lock:redis://h:port",           // non-numeric port
      "lock:redis://h:70000",          // port out of range
      "lock:redis://h:",               // empty port
      "lock:redis://h1,,h2",           // empty host
      "lock:redis://h1,",              // trailing comma (found by LockUrlFuzzTest: was an index error)
      "lock:redis://h1,h2,/db?a=1",    // trailing comma before the path
      "lock:redis://[::1",             // unclosed IPv6
      "lock:redis://[zz::1]:6379",     // not IPv6
      "lock:redis://h#frag",           // fragment
      "lock:redis://h?a=1&&b=2",       // empty parameter
      "lock:redis://h?a=1&a=2",        // duplicate
      "lock:redis://h?=1",             // no name
      "lock:redis://h/%zz",            // bad escape
      "lock:redis://h/%4",             // incomplete escape
      "lock:redis://h o",              // space
      "lock:redis://h\u0001",          // control char
      "lock:redis://h!x",              // bad host char
  })
  void malformedUrlsSayWhere(String url) {
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, () -> LockUrl.parse(url));
    assertTrue(e.getMessage().startsWith("malformed lock URL"), e.getMessage());
    assertTrue(e.getMessage().contains("at character "), e.getMessage());
  }

  @Test
  void errorPositionPointsAtTheProblem() {
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, () -> LockUrl.parse("lock:redis://h:port"));
    assertTrue(e.getMessage().contains("at character 16: port 'port' is not a number"), e.getMessage());
  }

  /** Every URL form of the design, with a password or secret: never shown by toString or any error. */
  @ParameterizedTest
  @ValueSource(strings = {
      "lock:redis://user:S3cr3tPw@h:6379/0?leaseTime=10s",
      "lock:redis://user:S3cr3tPw@h1:6379,h2:6379,h3:6379?mode=redlock",
      "lock:redis://:S3cr3tPw@h:6379?tls=true",
      "lock:zookeeper://digest:S3cr3tPw@h1:2181,h2:2181/tumbler?sessionTimeout=15s",
      "lock:native://127.0.0.1:7701?peers=127.0.0.1:7702,127.0.0.1:7703&algorithm=lamport&secret=S3cr3tPw",
      "lock:native:local?secret=S3cr3tPw",
      "lock:redis://h?password=S3cr3tPw&keyStorePassword=S3cr3tPw&authToken=S3cr3tPw",
  })
  void secretsNeverShow(String url) {
    LockUrl u = LockUrl.parse(url);
    assertFalse(u.toString().contains("S3cr3tPw"), u.toString());
    assertTrue(u.toString().contains("***"), u.toString());
    // errors about the URL or its parameters quote only the redacted form
    for (Runnable bad : List.<Runnable>of(
        () -> u.requireKnownParameters(Set.of()),
        () -> u.duration("secret", null),
        () -> u.duration("password", null),
        () -> u.integer("keyStorePassword", 0, 0, 1),
        () -> u.bool("authToken", false),
        () -> u.enumValue("secret", Algorithm.class, null),
        () -> u.oneOf("secret", List.of("a"), null))) {
      try {
        bad.run();
      } catch (InvalidLockUrlException e) {
        assertFalse(e.getMessage().contains("S3cr3tPw"), e.getMessage());
      }
    }
    // a malformed URL with the same secret: the message must not show it either
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, () -> LockUrl.parse(url + "#x"));
    assertFalse(e.getMessage().contains("S3cr3tPw"), e.getMessage());
    InvalidLockUrlException e2 = assertThrows(InvalidLockUrlException.class, () -> LockUrl.parse(url + "&&"));
    assertFalse(e2.getMessage().contains("S3cr3tPw"), e2.getMessage());
  }

  @Test
  void badEscapeInsidePasswordDoesNotEchoIt() {
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
        () -> LockUrl.parse("lock:redis://u:S3cr3t%zzPw@h"));
    assertFalse(e.getMessage().contains("S3cr3t"), e.getMessage());
    InvalidLockUrlException e2 = assertThrows(InvalidLockUrlException.class,
        () -> LockUrl.parse("lock:redis://h?secret=S3cr3t%zz"));
    assertFalse(e2.getMessage().contains("S3cr3t"), e2.getMessage());
  }

  @Test
  void propertiesOverrideParametersAndUserInfo() {
    Properties p = new Properties();
    p.setProperty("leaseTime", "5s");
    p.setProperty("password", "fromProps");
    p.setProperty("user", "bob");
    p.put("object", new Object()); // not a string: left for the provider
    LockUrl u = LockUrl.parse("lock:redis://alice:fromUrl@h?leaseTime=10s&renew=auto").withOverrides(p);
    assertEquals(Duration.ofSeconds(5), u.duration("leaseTime", null));
    assertEquals("bob", u.user().orElseThrow());
    assertEquals("fromProps", u.password().orElseThrow());
    assertEquals(Map.of("leaseTime", "5s", "renew", "auto"), u.parameters());
    assertFalse(u.toString().contains("fromProps"));
  }

  @Test
  void namespaceIsCheckedLikeAName() {
    assertEquals("app", LeaseSettings.namespace(LockUrl.parse("lock:x:y?namespace=app")));
    assertEquals("", LeaseSettings.namespace(LockUrl.parse("lock:x:y")));
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
        () -> LeaseSettings.namespace(LockUrl.parse("lock:x:y?namespace=%20")));
    assertTrue(e.getMessage().contains("'namespace'") && e.getMessage().contains("blank"), e.getMessage());
  }

  @Test
  void toStringRoundTrips() {
    for (String s : List.of("lock:native:local", "lock:zookeeper://h1:2181,h2:2181/tumbler?sessionTimeout=15s",
        "lock:redis://[::1]:6379/0?leaseTime=10s", "lock:x://h/a%20b?k=a%26b",
        // found by LockUrlFuzzTest: an escaped '%' in an opaque part or a host name printed unescaped
        "lock:x:a%25b", "lock:x:%2F%2Fnot-hosts", "lock:x://a%25b,c/p")) {
      assertEquals(LockUrl.parse(s), LockUrl.parse(LockUrl.parse(s).toString()), s);
    }
  }

  private static void assertMessage(Runnable r, String... parts) {
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, r::run);
    for (String p : parts) {
      assertTrue(e.getMessage().contains(p), () -> "'" + e.getMessage() + "' lacks " + p);
    }
  }
}
