package dev.tumbler.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.spi.LockProvider;
import dev.tumbler.lock.spi.TumblerVersion;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Every provider of one build reports lock-api's version: one source, no constant per provider. */
class ProviderVersionsTest {

  @Test
  void everyProviderFoundByServiceLoaderReportsTheApiVersion() {
    String api = TumblerVersion.current();
    assertTrue(!api.equals(TumblerVersion.UNKNOWN), "lock-api's version was not filled in by the build");
    Set<String> schemes = new TreeSet<>();
    for (LockProvider p : ServiceLoader.load(LockProvider.class, getClass().getClassLoader())) {
      schemes.add(p.scheme());
      assertEquals(api, p.info().version(), p.scheme() + " provider " + p.getClass().getName());
    }
    assertTrue(schemes.containsAll(Set.of("native", "redis", "zookeeper", "jdbc")), "found " + schemes);
  }

  @Test
  void providersAndVersionPrintTheApiVersion() {
    String api = TumblerVersion.current();
    CliTestSupport.Result providers = CliTestSupport.run("providers");
    for (String line : providers.out().lines().filter(l -> !l.startsWith(" ")).toList()) {
      assertTrue(line.endsWith(" " + api), line);
    }
    CliTestSupport.Result version = CliTestSupport.run("--version");
    assertTrue(version.out().startsWith("tumbler " + api + "\n"), version.toString());
  }
}
