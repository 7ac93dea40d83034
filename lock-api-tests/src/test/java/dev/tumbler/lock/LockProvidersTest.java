package dev.tumbler.lock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.spi.LockProvider;
import dev.tumbler.lock.spi.LockUrl;
import java.util.EnumSet;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class LockProvidersTest {

  @Test
  void discoversProvidersThroughServiceLoader() {
    assertTrue(LockProviders.providers().stream().anyMatch(p -> p.scheme().equals("test")),
        LockProviders.providers().toString());
  }

  @Test
  void providerThatFailsToLoadIsReportedNotSwallowed() {
    assertTrue(LockProviders.loadFailures().stream().anyMatch(f -> f.contains("NoSuchProviderClass")),
        LockProviders.loadFailures().toString());
  }

  @Test
  void unknownSchemeNamesItAndListsInstalledProviders() {
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect("lock:nosuch:x"));
    assertTrue(e.getMessage().contains("'nosuch'"), e.getMessage());
    assertTrue(e.getMessage().contains("installed providers: test"), e.getMessage());
    assertTrue(e.getMessage().contains("NoSuchProviderClass"), e.getMessage());
  }

  @Test
  void unknownSchemeWithPasswordDoesNotShowIt() {
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
        () -> LockProviders.connect("lock:nosuch://u:S3cr3tPw@h?secret=S3cr3tPw"));
    assertFalse(e.getMessage().contains("S3cr3tPw"), e.getMessage());
  }

  @Test
  void malformedUrlFailsBeforeAnyProviderIsAsked() {
    assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect("redis://h"));
    assertThrows(NullPointerException.class, () -> LockProviders.connect(null));
  }

  @Test
  void connectsAndPropertiesOverrideUrlParameters() {
    Properties p = new Properties();
    p.setProperty("leaseTime", "2s");
    try (LockService s = LockProviders.connect("lock:test:mem?leaseTime=10s", p)) {
      assertEquals("test", s.info().provider());
      assertTrue(s.supports(Capability.MUTEX));
    }
    LockUrl seen = dev.tumbler.lock.spi.TestProviderAccess.lastUrl();
    assertEquals("2s", seen.parameter("leaseTime").orElseThrow());
  }

  @Test
  void unknownParameterOfAProviderIsAnError() {
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
        () -> LockProviders.connect("lock:test:mem?leaseTyme=10s"));
    assertTrue(e.getMessage().contains("leaseTyme"), e.getMessage());
  }

  @Test
  void registerTakesPrecedenceAndDeregisterRemoves() {
    LockService marker = dev.tumbler.lock.spi.TestProviderAccess.newService();
    LockProvider mine = new LockProvider() {
      @Override
      public String scheme() {
        return "mine";
      }

      @Override
      public ProviderInfo info() {
        return new ProviderInfo("mine", "Mine", "0", "registered by hand", EnumSet.of(Capability.MUTEX));
      }

      @Override
      public LockService connect(LockUrl url, Properties info) {
        return marker;
      }
    };
    LockProviders.register(mine);
    try {
      assertSame(marker, LockProviders.connect("lock:mine:x"));
      assertTrue(LockProviders.providers().stream().anyMatch(p -> p.scheme().equals("mine")));
    } finally {
      LockProviders.deregister(mine);
    }
    assertThrows(InvalidLockUrlException.class, () -> LockProviders.connect("lock:mine:x"));
    marker.close();
  }

  @Test
  void providersSortedAndReloadKeepsRegistered() {
    LockProvider early = named("aaa-first");
    LockProvider late = named("zzz-last");
    LockProviders.register(late);
    LockProviders.register(early);
    try {
      LockProviders.reload();
      java.util.List<String> schemes = LockProviders.providers().stream().map(ProviderInfo::scheme).toList();
      assertEquals(schemes.stream().sorted().toList(), schemes, "providers() is not sorted by scheme");
      assertEquals(schemes.stream().distinct().toList(), schemes, "providers() lists a scheme twice");
      assertTrue(schemes.containsAll(java.util.List.of("aaa-first", "test", "zzz-last")), schemes.toString());
    } finally {
      LockProviders.deregister(early);
      LockProviders.deregister(late);
    }
    assertFalse(LockProviders.providers().stream().anyMatch(p -> p.scheme().equals("aaa-first")));
  }

  private static LockProvider named(String scheme) {
    return new LockProvider() {
      @Override
      public String scheme() {
        return scheme;
      }

      @Override
      public ProviderInfo info() {
        return new ProviderInfo(scheme, scheme, "0", "registered by hand", EnumSet.of(Capability.MUTEX));
      }

      @Override
      public LockService connect(LockUrl url, Properties info) {
        throw new UnsupportedOperationException();
      }
    };
  }
}
