package dev.tumbler.lock.tck;

import static dev.tumbler.lock.tck.LockTck.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ProviderInfo;
import dev.tumbler.lock.TransactionOptions;
import dev.tumbler.lock.UnsupportedCapabilityException;
import dev.tumbler.lock.spi.LockProvider;
import dev.tumbler.lock.spi.LockUrl;
import java.util.List;
import java.util.Properties;
import java.util.ServiceLoader;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The TCK group "registry and URL" ({@link LockTck.Registry}; needs: — (URL tests: TckTarget.url())). It checks:
 * ServiceLoader finds the provider; the URL connects through LockProviders; unknown parameters, a bad leaseTime,
 * malformed URLs and unknown schemes fail with InvalidLockUrlException naming the problem; secrets never appear in
 * errors or info().url(); supports() agrees with info(); undeclared capabilities throw
 * UnsupportedCapabilityException.
 */
abstract class RegistryGroup extends TckGroup {

  RegistryGroup(LockTck tck) {
    super(tck);
  }

  @Test
  @DisplayName("the service describes itself and its capabilities")
  void serviceInfo() {
    LockService s = open();
    assertFalse(s.info().provider().isBlank(), "info().provider() is blank");
    assertFalse(s.info().providerVersion().isBlank(), "info().providerVersion() is blank");
    target.url().ifPresent(u -> assertTrue(s.info().url().startsWith("lock:" + s.info().provider() + ":"),
        "info().url() is not a lock URL of the provider's scheme: " + s.info().url()));
    assertTrue(s.info().capabilities().contains(Capability.MUTEX), "every provider declares MUTEX");
    for (Capability c : Capability.values()) {
      assertEquals(s.info().capabilities().contains(c), s.supports(c), "supports(" + c + ") disagrees with info()");
    }
    assertFalse(s.isClosed(), "a new service is closed");
  }

  @Test
  @DisplayName("undeclared capabilities throw UnsupportedCapabilityException")
  void undeclaredCapabilitiesRejected() {
    LockService s = open();
    String n = name("unsupported");
    check(s, Capability.READ_WRITE, () -> s.readWriteLock(n));
    check(s, Capability.SEMAPHORE, () -> s.semaphore(n, 2));
    check(s, Capability.LEADER_ELECTION, () -> s.election(n));
    check(s, Capability.TRANSACTIONS, () -> s.beginTransaction(TransactionOptions.defaults()));
  }

  private void check(LockService s, Capability c, Executable call) {
    if (s.supports(c)) {
      return;
    }
    UnsupportedCapabilityException e = assertThrows(UnsupportedCapabilityException.class, call,
        "a service without " + c + " must refuse it");
    assertEquals(c, e.capability());
  }

  @Test
  @DisplayName("unwrap of an unrelated type throws LockException")
  void unwrapUnrelated() {
    LockService s = open();
    assertThrows(LockException.class, () -> s.unwrap(java.util.regex.Pattern.class));
  }

  @Test
  @Requires(url = true)
  @DisplayName("the provider is found by ServiceLoader and listed by LockProviders")
  void foundByServiceLoader() {
    String scheme = LockUrl.parse(target.url().orElseThrow()).scheme();
    boolean found = false;
    ClassLoader cl = Thread.currentThread().getContextClassLoader();
    for (LockProvider p : ServiceLoader.load(LockProvider.class, cl == null ? LockTck.class.getClassLoader() : cl)) {
      if (scheme.equals(p.scheme())) {
        found = true;
      }
    }
    assertTrue(found, "no provider of scheme '" + scheme + "' in META-INF/services/" + LockProvider.class.getName());
    ProviderInfo info = LockProviders.providers().stream().filter(p -> p.scheme().equals(scheme)).findFirst()
        .orElseThrow(() -> new AssertionError("LockProviders.providers() does not list '" + scheme + "'"));
    LockService s = open();
    assertTrue(info.capabilities().containsAll(s.info().capabilities()),
        "the service declares capabilities its provider does not: " + s.info().capabilities() + " vs " + info.capabilities());
  }

  @Test
  @Requires(url = true)
  @DisplayName("the URL parses and connects through LockProviders")
  void urlConnects() throws InterruptedException {
    String url = target.url().orElseThrow();
    LockUrl parsed = LockUrl.parse(url);
    LockService s = LockProviders.connect(url);
    opened.add(s);
    assertEquals(parsed.scheme(), s.info().provider(), "info().provider() is not the URL's scheme");
    parsed.password().ifPresent(p -> {
      assertFalse(s.info().url().contains(p), "info().url() shows the password");
      assertFalse(String.valueOf(s).contains(p), "the service's toString() shows the password");
    });
    try (Lease l = held(s.lock(name("url")).tryAcquire(GRANT_WAIT), "a free lock was not granted")) {
      assertTrue(l.isValid());
    }
  }

  @Test
  @Requires(url = true)
  @DisplayName("an unknown URL parameter is an error that names it")
  void unknownParameterRejected() {
    String url = target.url().orElseThrow();
    String bad = url + (url.contains("?") ? "&" : "?") + "tckNoSuchParameter=1";
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class, () -> opened.add(LockProviders.connect(bad)),
        "an unknown parameter must not silently fall back to a default");
    assertTrue(e.getMessage().contains("tckNoSuchParameter"), "the error does not name the parameter: " + e.getMessage());
  }

  @Test
  @Requires(url = true)
  @DisplayName("a secret given to connect never appears in an error")
  void secretNotShown() {
    String url = target.url().orElseThrow();
    String secret = "tckS3cretValue" + RUN;
    Properties p = new Properties();
    p.setProperty("password", secret);
    p.setProperty("tckNoSuchParameter", "1");
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
        () -> opened.add(LockProviders.connect(url, p)));
    assertFalse(e.getMessage().contains(secret), "the error shows the password: " + e.getMessage());
  }

  @Test
  @Requires(url = true)
  @DisplayName("a password given in the connect properties never shows in info().url() or toString()")
  void propertiesSecretNotShown() throws InterruptedException {
    String url = target.url().orElseThrow();
    LockUrl parsed = LockUrl.parse(url);
    // the target's own password where it has one (it must then connect), else one it may ignore or refuse
    String secret = parsed.password().orElse("tckPr0pS3cret" + RUN);
    Properties p = new Properties();
    p.setProperty("password", secret);
    LockService s;
    try {
      s = LockProviders.connect(url, p);
    } catch (LockException e) {
      assertTrue(parsed.password().isEmpty(), "the target's own password, given in the properties, was refused: " + e);
      assertFalse(String.valueOf(e.getMessage()).contains(secret), "the refusal shows the password: " + e.getMessage());
      return;
    }
    opened.add(s);
    assertFalse(s.info().url().contains(secret), "info().url() shows the password given in the properties: "
        + s.info().url());
    assertFalse(String.valueOf(s.info()).contains(secret), "info().toString() shows the password given in the properties");
    assertFalse(String.valueOf(s).contains(secret), "the service's toString() shows the password given in the properties");
  }

  @Test
  @Requires(value = Capability.LEASE_EXPIRY, url = true)
  @DisplayName("a bad leaseTime is an error that names it")
  void badLeaseTimeRejected() {
    String url = target.url().orElseThrow();
    for (String v : List.of("banana", "-5s", "10")) {
      Properties p = new Properties();
      p.setProperty("leaseTime", v);
      InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
          () -> opened.add(LockProviders.connect(url, p)), "leaseTime=" + v + " was accepted");
      assertTrue(e.getMessage().contains("leaseTime"), "the error does not name leaseTime: " + e.getMessage());
    }
  }

  @Test
  @Requires(url = true)
  @DisplayName("malformed URLs and unknown schemes fail clearly")
  void malformedUrlsRejected() {
    String scheme = LockUrl.parse(target.url().orElseThrow()).scheme();
    for (String bad : List.of("lock:" + scheme + ":", "lock:" + scheme + "://host:99999", "jdbc:" + scheme + "://x",
        "lock:" + scheme + "://h1,,h2", "lock:" + scheme + "://host?a=1&a=2")) {
      InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
          () -> opened.add(LockProviders.connect(bad)), "'" + bad + "' was accepted");
      assertFalse(e.getMessage() == null || e.getMessage().isBlank(), "no message for '" + bad + "'");
    }
    InvalidLockUrlException e = assertThrows(InvalidLockUrlException.class,
        () -> opened.add(LockProviders.connect("lock:tcknosuchscheme://x")));
    assertTrue(e.getMessage().contains(scheme), "an unknown scheme's error does not list installed '" + scheme
        + "': " + e.getMessage());
  }
}
