package dev.tumbler.cli;

import static dev.tumbler.cli.CliTestSupport.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.cli.CliTestSupport.Result;
import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.spi.LockUrl;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 40: a misspelled secret ({@code pasword=hunter2}) is an unknown parameter to every provider, and the error
 * showed the URL whole. Every provider the command line ships, through {@code tumbler run}.
 */
@Timeout(60)
class SecretParametersTest {
  /** One URL per provider (and native form), with no backend behind it: the parameters are checked first. */
  @ParameterizedTest
  @ValueSource(strings = {
      "lock:redis://127.0.0.1:1",
      "lock:redis://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3?mode=redlock",
      "lock:zookeeper://127.0.0.1:1/tumbler",
      "lock:jdbc:h2:mem:secret-parameters",
      "lock:native:local",
      "lock:native://127.0.0.1:1?peers=127.0.0.1:2&algorithm=lease",
      "lock:native://127.0.0.1:1,127.0.0.1:2?algorithm=lease&clientSecret=0123456789abcdef0"})
  void aMisspelledSecretIsNamedAndItsValueNeverShown(String base) {
    for (String key : new String[] {"pasword", "passwd", "keyStorePasswd", "sentinelPasword"}) {
      String url = base + (base.contains("?") ? "&" : "?") + key + "=hunter2";
      Result r = run("run", "--url", url, "--lock", "a", "--", "true");
      assertEquals(ExitCodes.CONFIG, r.code(), r.toString());
      assertTrue(r.err().contains("unknown parameter") && r.err().contains(key), r.toString());
      assertFalse(r.toString().contains("hunter2"), r.toString());
    }
  }

  /**
   * The rule for secrets' names is broad; the parameters every provider accepts show it is not too broad: only the
   * credentials among them are secrets (and so are redacted, and refused on the node's command line).
   */
  @ParameterizedTest
  @ValueSource(strings = {
      "lock:redis://127.0.0.1:1",
      "lock:zookeeper://127.0.0.1:1",
      "lock:jdbc:h2:mem:secret-parameters",
      "lock:native:local",
      "lock:native://127.0.0.1:1?peers=127.0.0.1:2&algorithm=lease",
      "lock:native://127.0.0.1:1,127.0.0.1:2?algorithm=lease&clientSecret=0123456789abcdef0"})
  void onlyTheCredentialsAmongTheAcceptedParametersAreSecrets(String base) {
    String url = base + (base.contains("?") ? "&" : "?") + "zz=1";
    InvalidLockUrlException e = org.junit.jupiter.api.Assertions.assertThrows(InvalidLockUrlException.class,
        () -> LockProviders.connect(url).close());
    Matcher m = Pattern.compile("accepted: \\[([^]]*)]").matcher(e.getMessage());
    assertTrue(m.find(), e.getMessage());
    Set<String> secrets = new TreeSet<>();
    for (String name : m.group(1).split(", ")) {
      if (LockUrl.isSecretParameter(name)) {
        secrets.add(name);
      }
    }
    Set<String> credentials = Set.of("password", "sentinelPassword", "secret", "clientSecret", "keyStorePassword",
        "trustStorePassword");
    assertTrue(credentials.containsAll(secrets), "secrets among " + m.group(1) + ": " + secrets);
  }
}
