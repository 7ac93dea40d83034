package dev.tumbler.lock.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LockUrl;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Fuzzes the {@link LockUrl} parser. Without {@code JAZZER_FUZZ} these replay the kept inputs under
 * {@code src/test/resources/dev/tumbler/lock/fuzz/LockUrlFuzzTestInputs}; with it they fuzz (see the README's
 * "Fuzzing" section and {@code .ci/fuzz}).
 *
 * <p>Oracles: a string parses or fails with {@link InvalidLockUrlException} and a message, nothing else; the
 * typed getters fail only that way; a URL without secrets prints in a form that parses back to an equal
 * URL; a password or secret parameter never shows in {@code toString()} or in any error.
 */
class LockUrlFuzzTest {

  private enum Sample { A, B_C }

  @FuzzTest(maxDuration = "10s", maxExecutions = 100_000)
  void parse(FuzzedDataProvider data) {
    String text = data.consumeRemainingAsString();
    LockUrl url;
    try {
      url = LockUrl.parse(text);
    } catch (InvalidLockUrlException e) {
      assertNotNull(e.getMessage(), "an InvalidLockUrlException without a message");
      return;
    }
    exerciseGetters(url);
    boolean secrets = url.password().isPresent()
        || url.parameters().keySet().stream().anyMatch(LockUrl::isSecretParameter);
    if (!secrets) {
      String shown = url.toString();
      LockUrl again;
      try {
        again = LockUrl.parse(shown);
      } catch (InvalidLockUrlException e) {
        throw new AssertionError("'" + text + "' parsed, but its printed form '" + shown + "' does not: "
            + e.getMessage(), e);
      }
      assertEquals(url, again, "'" + text + "' printed as '" + shown + "' parses to a different URL");
    }
  }

  @FuzzTest(maxDuration = "10s", maxExecutions = 100_000)
  void secretsNeverShow(FuzzedDataProvider data) {
    // a secret made of characters the rest of the URL cannot form by chance
    String secret = "Zq9" + Long.toString(data.consumeLong() & Long.MAX_VALUE, 36) + "Qz";
    // the fragments around the secret keep it where it is (user info, a secret-named parameter's value)
    String user = plain(data.consumeString(8));
    String host = plain(data.consumeString(16));
    String path = plain(data.consumeString(8));
    String name = plain(data.consumeString(4)) + data.pickValue(SECRET_NAMES) + plain(data.consumeString(4));
    String tail = data.consumeRemainingAsString();
    if (decoded(user + host + path + tail).contains(secret)) {
      return; // the fuzzer wrote the secret somewhere it is no secret (it learns it from the comparisons)
    }
    String text = "lock:x://" + user + ":" + secret + "@" + host + "/" + path + "?" + name + "=" + secret + "&" + tail;
    try {
      LockUrl url = LockUrl.parse(text);
      assertFalse(url.toString().contains(secret), "toString() shows the secret: " + url);
      for (String p : url.parameters().keySet()) {
        try {
          url.duration(p, null);
          url.integer(p, 0, Integer.MIN_VALUE, Integer.MAX_VALUE);
          url.bool(p, false);
        } catch (InvalidLockUrlException e) {
          assertFalse(e.getMessage().contains(secret), "an error shows the secret: " + e.getMessage());
        }
      }
    } catch (InvalidLockUrlException e) {
      assertFalse(e.getMessage().contains(secret), "the parse error shows the secret: " + e.getMessage());
    }
  }

  private static final String[] SECRET_NAMES = {"password", "Secret", "TOKEN", "credential"};

  private static String decoded(String s) {
    try {
      return java.net.URLDecoder.decode(s.replace("+", "%2B"), java.nio.charset.StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return s;
    }
  }

  /** {@code s} without the characters that would move the secret to another part of the URL. */
  private static String plain(String s) {
    return s.replaceAll("[@:/?#&=%\\[\\]]", "");
  }

  /** Every typed getter on every parameter: a value or InvalidLockUrlException, nothing else. */
  private static void exerciseGetters(LockUrl url) {
    url.hosts();
    url.hosts(2181);
    url.path();
    url.opaque();
    for (Map.Entry<String, String> e : url.parameters().entrySet()) {
      String p = e.getKey();
      assertEquals(e.getValue(), url.string(p, null));
      typed(() -> url.duration(p, Duration.ZERO));
      typed(() -> url.integer(p, 0, -5, 1000));
      typed(() -> url.bool(p, false));
      typed(() -> url.enumValue(p, Sample.class, Sample.A));
      typed(() -> url.oneOf(p, List.of("a", "b-c"), "a"));
      try {
        LockUrl.parseDuration(e.getValue());
      } catch (IllegalArgumentException x) {
        assertEquals(IllegalArgumentException.class, x.getClass(), "parseDuration threw " + x);
      }
    }
    typed(() -> url.requireKnownParameters(java.util.List.of("leaseTime")));
    Properties overrides = new Properties();
    overrides.setProperty("leaseTime", "5s");
    typed(() -> url.withOverrides(overrides));
  }

  private static void typed(Runnable r) {
    try {
      r.run();
    } catch (InvalidLockUrlException e) {
      assertNotNull(e.getMessage(), "a typed error without a message");
    }
  }
}
