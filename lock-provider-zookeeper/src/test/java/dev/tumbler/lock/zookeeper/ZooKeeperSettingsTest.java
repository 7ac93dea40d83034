package dev.tumbler.lock.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.lock.spi.LockUrl;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ZooKeeperSettingsTest {

  private static ZooKeeperSettings parse(String url) {
    return ZooKeeperSettings.fromUrl(LockUrl.parse(url));
  }

  private static String rejected(String url) {
    return assertThrows(InvalidLockUrlException.class, () -> parse(url), url).getMessage();
  }

  @Test
  void defaults() {
    ZooKeeperSettings s = parse("lock:zookeeper://h1,h2:2182");
    assertEquals("h1:2181,h2:2182", s.connectString());
    assertEquals("/tumbler", s.root());
    assertEquals(Duration.ofSeconds(30), s.sessionTimeout());
    assertEquals(Duration.ofSeconds(30), s.lease().leaseTime());
    assertEquals(Duration.ofSeconds(15), s.connectionTimeout());
    assertEquals(LeaseSettings.Renew.AUTO, s.lease().renew());
    assertEquals("/tumbler/locks/a%2Fb", s.path("locks", "a/b"));
  }

  @Test
  void chrootNamespaceAndTimeouts() {
    ZooKeeperSettings s = parse("lock:zookeeper://h:2181/apps/x/?sessionTimeout=5s&connectionTimeout=2s&namespace=team/a&renew=manual");
    assertEquals("/apps/x/team%2Fa", s.root());
    assertEquals("/apps/x/team%2Fa/rwlocks/n", s.path("rwlocks", "n"));
    assertEquals(Duration.ofSeconds(5), s.sessionTimeout());
    assertEquals(Duration.ofSeconds(5), s.lease().leaseTime());
    assertEquals(Duration.ofSeconds(2), s.connectionTimeout());
    assertEquals(LeaseSettings.Renew.MANUAL, s.lease().renew());
    assertEquals("/locks/n", parse("lock:zookeeper://h/").path("locks", "n"));
  }

  @Test
  void leaseTimeIsTheSessionTimeout() {
    assertEquals(Duration.ofSeconds(7), parse("lock:zookeeper://h?leaseTime=7s").sessionTimeout());
    assertEquals(Duration.ofSeconds(7), parse("lock:zookeeper://h?leaseTime=7s&sessionTimeout=7s").sessionTimeout());
    String m = rejected("lock:zookeeper://h?leaseTime=7s&sessionTimeout=8s");
    assertTrue(m.contains("leaseTime") && m.contains("sessionTimeout"), m);
  }

  @Test
  void badUrls() {
    assertTrue(rejected("lock:zookeeper://h?sesionTimeout=5s").contains("sesionTimeout"));
    assertTrue(rejected("lock:zookeeper://h?sessionTimeout=5").contains("sessionTimeout"));
    assertTrue(rejected("lock:zookeeper://h?sessionTimeout=10ms").contains("sessionTimeout"));
    assertTrue(rejected("lock:zookeeper://h?connectionTimeout=0s").contains("connectionTimeout"));
    assertTrue(rejected("lock:zookeeper://h?leaseTime=banana").contains("leaseTime"));
    assertTrue(rejected("lock:zookeeper:local").contains("hosts"));
    assertTrue(rejected("lock:zookeeper://h/zookeeper/x").contains("reserved"));
    assertTrue(rejected("lock:zookeeper://h/a/./b").contains("chroot"));
    String m = rejected("lock:zookeeper://u:hunter2@h");
    assertFalse(m.contains("hunter2"), m);
  }
}
