package dev.tumbler.lock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LockUrl;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Key layout and URL settings, without a server. */
class RedisKeysAndConfigTest {

  @Test
  void encodingIsInjectiveAndFreeOfSeparators() {
    List<String> names = List.of("a", "A", "a:b", "a/b", "a%3Ab", "a%3ab", "a{b", "a}b", "{ab}", "a b", "a\tb".replace('\t', '_'),
        "é", "e\u0301", "日本", "%", "%25", ":", "tumbler:m:{x}");
    Set<String> encoded = new HashSet<>();
    for (String n : names) {
      String e = RedisKeys.encode(n);
      assertTrue(encoded.add(e), "collision for " + n);
      assertFalse(e.contains("{") || e.contains("}") || e.contains(":") || e.contains(" "), e);
    }
    assertEquals("orders/42", RedisKeys.encode("orders/42"), "common names stay readable");
  }

  @Test
  void kindsAndNamespacesNeverShareAKey() {
    RedisKeys plain = new RedisKeys("");
    RedisKeys ns = new RedisKeys("m");
    Set<String> keys = new HashSet<>();
    for (RedisKeys k : List.of(plain, ns)) {
      for (String n : List.of("x", "m", "e")) {
        for (RedisKeys.Kind kind : List.of(RedisKeys.Kind.MUTEX, RedisKeys.Kind.ELECTION)) {
          for (String key : k.mutex(kind, n)) {
            assertTrue(keys.add(key), key);
          }
        }
        k.readWrite(n).forEach(key -> assertTrue(keys.add(key), key));
        k.semaphore(n).forEach(key -> assertTrue(keys.add(key), key));
      }
    }
  }

  @Test
  void everyKeyOfOnePrimitiveHasTheSameHashTag() {
    RedisKeys k = new RedisKeys("app{1}");
    for (List<String> keys : List.of(k.mutex(RedisKeys.Kind.MUTEX, "a}b{c"), k.readWrite("x"), k.semaphore("y"))) {
      Set<String> tags = new HashSet<>();
      for (String key : keys) {
        int open = key.indexOf('{');
        tags.add(key.substring(open + 1, key.indexOf('}', open)));
        assertEquals(open, key.lastIndexOf('{'), "one '{' only: " + key);
      }
      assertEquals(1, tags.size(), keys.toString());
    }
  }

  static RedisConfig config(String url) {
    return RedisConfig.from(LockUrl.parse(url));
  }

  @Test
  void urlForms() {
    RedisConfig c = config("lock:redis://cache");
    assertEquals(6379, c.hosts().getFirst().port());
    assertEquals(0, c.database());
    assertEquals(RedisConfig.Mode.SINGLE, c.mode());
    assertEquals(Duration.ofSeconds(30), c.lease().leaseTime());
    assertFalse(c.tls());

    RedisConfig d = config("lock:redis://app:pw@cache:6380/3?tls=true&leaseTime=10s&timeout=500ms&recheck=200ms&namespace=x");
    assertEquals(6380, d.hosts().getFirst().port());
    assertEquals(3, d.database());
    assertTrue(d.tls());
    assertEquals("app", d.user().orElseThrow());
    assertEquals("pw", d.password().orElseThrow());
    assertEquals(Duration.ofMillis(500), d.timeout());
    assertEquals(Duration.ofMillis(200), d.recheck());
    assertFalse(d.toString().contains("pw"), d.toString());

    RedisConfig r = config("lock:redis://h1,h2:7000,h3?mode=redlock");
    assertEquals(RedisConfig.Mode.REDLOCK, r.mode());
    assertEquals(3, r.hosts().size());
  }

  @Test
  void badUrls() {
    for (String bad : List.of("lock:redis://h?mode=single&mode=x", "lock:redis://h1,h2", "lock:redis://h1,h2?mode=redlock",
        "lock:redis://h/abc", "lock:redis://h/1/2", "lock:redis://h?recheck=1ms", "lock:redis://h?tls=maybe",
        "lock:redis://h:0", "lock:redis://h,h?mode=redlock", "lock:redis:local", "lock:redis://h?leaseTime=10ms")) {
      assertThrows(InvalidLockUrlException.class, () -> config(bad), bad);
    }
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
        () -> config("lock:redis://u:topsecret@h?colour=blue"));
    assertTrue(e.getMessage().contains("colour"));
    assertFalse(e.getMessage().contains("topsecret"));
  }

  @Test
  void clusterAndSentinelUrls() {
    RedisConfig c = config("lock:redis://n1:7000,n2:7001?mode=cluster");
    assertEquals(RedisConfig.Mode.CLUSTER, c.mode());
    assertEquals(2, c.hosts().size());
    assertEquals(RedisConfig.Mode.CLUSTER, config("lock:redis://n1:7000/0?mode=cluster").mode());

    RedisConfig s = config("lock:redis://app:dataPw@s1:26379,s2:26379,s3:26379/2?mode=sentinel&master=orders"
        + "&sentinelUser=watch&sentinelPassword=sentPw");
    assertEquals(RedisConfig.Mode.SENTINEL, s.mode());
    assertEquals("orders", s.master().orElseThrow());
    assertEquals(2, s.database());
    assertEquals("dataPw", s.password().orElseThrow());
    assertEquals("watch", s.sentinelUser().orElseThrow());
    assertEquals("sentPw", s.sentinelPassword().orElseThrow());
    assertFalse(s.toString().contains("dataPw"), s.toString());
    assertFalse(s.toString().contains("sentPw"), s.toString());
    assertFalse(s.url().toString().contains("sentPw"), s.url().toString());
  }

  @Test
  void badClusterAndSentinelUrls() {
    Map<String, String> bad = Map.of(
        "lock:redis://s1,s2?mode=sentinel", "master",
        "lock:redis://s1?mode=sentinel&master=", "master",
        "lock:redis://n1,n2/3?mode=cluster", "database 0",
        "lock:redis://h?master=x", "master",
        "lock:redis://n1?mode=cluster&sentinelUser=x", "sentinelUser",
        "lock:redis://h?mode=galaxy", "mode",
        "lock:redis://s1?mode=sentinel&master=m&sentinelPassword=", "sentinelPassword");
    bad.forEach((url, named) -> {
      InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, () -> config(url), url);
      assertTrue(e.getMessage().contains(named), url + " -> " + e.getMessage());
    });
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
        () -> config("lock:redis://u:topsecret@s1?mode=sentinel&sentinelPassword=alsosecret"));
    assertFalse(e.getMessage().contains("topsecret") || e.getMessage().contains("alsosecret"), e.getMessage());
  }

  @Test
  void clockFlooredScriptsDrawTheirTokenFromTheClock() {
    for (Scripts.Script acquire : List.of(Scripts.MUTEX_ACQUIRE, Scripts.READ_ACQUIRE, Scripts.WRITE_ACQUIRE,
        Scripts.SEMAPHORE_ACQUIRE)) {
      Scripts.Script floored = Scripts.clockFloored(acquire);
      assertNotEquals(acquire.sha(), floored.sha(), acquire.name());
      assertTrue(floored.source().contains("if tok < now then tok = now end"), acquire.name());
      String unseeded = "if tok < " + Scripts.SEEDED + " then";
      assertTrue(acquire.source().contains(unseeded), acquire.name() + " seeds an unseeded counter");
      assertFalse(floored.source().contains(unseeded), acquire.name() + " floors every token");
    }
    assertThrows(IllegalArgumentException.class, () -> Scripts.clockFloored(Scripts.HOLDER));
  }

  @Test
  void scriptsHaveDistinctDigests() {
    Set<String> shas = new HashSet<>();
    for (Scripts.Script s : List.of(Scripts.MUTEX_ACQUIRE, Scripts.MUTEX_RENEW, Scripts.MUTEX_RELEASE, Scripts.READ_ACQUIRE,
        Scripts.WRITE_ACQUIRE, Scripts.READ_RENEW, Scripts.READ_RELEASE, Scripts.SEMAPHORE_ACQUIRE,
        Scripts.SEMAPHORE_RENEW, Scripts.SEMAPHORE_RELEASE, Scripts.SEMAPHORE_AVAILABLE, Scripts.RAISE_FENCE,
        Scripts.SEED_FENCE, Scripts.HOLDER)) {
      assertTrue(shas.add(s.sha()), s.name());
      assertEquals(40, s.sha().length());
    }
    assertNotEquals(Scripts.MUTEX_ACQUIRE.sha(), Scripts.WRITE_ACQUIRE.sha());
  }
}
