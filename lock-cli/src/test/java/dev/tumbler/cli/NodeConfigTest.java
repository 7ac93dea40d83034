package dev.tumbler.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.cli.NodeConfig.ConfigException;
import dev.tumbler.cli.NodeConfig.Options;
import dev.tumbler.lock.spi.LockUrl;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NodeConfigTest {
  @TempDir
  Path dir;

  private Path file(String name, String content, String perms) throws IOException {
    Path f = dir.resolve(name);
    Files.writeString(f, content);
    Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(perms));
    return f;
  }

  private static Options options(Path config, String listen, List<String> peers, Map<String, String> params) {
    return new Options(config, listen, peers, null, params, null, null);
  }

  private static Options fileOnly(Path config) {
    return options(config, null, null, Map.of());
  }

  @Test
  void aFileGivesKeysSkippingCommentsAndBlankLinesAndTrimming() throws IOException {
    Path f = file("node.conf", """
        # the first member

          listen = 127.0.0.1:7701\s
        peers=127.0.0.1:7702, 127.0.0.1:7703
        algorithm=lease
        # a URL parameter, passed through
        leaseTime = 5s
        http=127.0.0.1:7781
        keyStore=/etc/tumbler/a b&c.p12
        """, "rw-r--r--");
    NodeConfig c = NodeConfig.resolve(fileOnly(f), Map.of());
    assertEquals("127.0.0.1:7701", c.listen().toString());
    assertEquals(List.of("127.0.0.1:7702", "127.0.0.1:7703"), c.peers());
    assertEquals("lease", c.algorithm());
    assertEquals("127.0.0.1", c.http().orElseThrow().host());
    assertEquals(7781, c.http().orElseThrow().port());
    assertEquals(Optional.of(f + ":3"), c.sourceOf("listen"));
    assertEquals("lock:native://127.0.0.1:7701?peers=127.0.0.1:7702,127.0.0.1:7703&algorithm=lease&leaseTime=5s"
        + "&keyStore=/etc/tumbler/a%20b%26c.p12", c.url(), "daemon keys stay out; values are escaped");
    assertEquals("/etc/tumbler/a b&c.p12", LockUrl.parse(c.url()).parameter("keyStore").orElseThrow());
    assertEquals(Optional.empty(), c.log().file(), "the log goes to stdout by default");
  }

  @Test
  void aLineWithoutEqualsOrAKeyGivenTwiceIsAnErrorNamingTheFileAndLine() throws IOException {
    Path noEquals = file("a.conf", "listen=127.0.0.1:7701\n\nsecret-looking-line-without-equals\n", "rw-------");
    ConfigException e = assertThrows(ConfigException.class, () -> NodeConfig.resolve(fileOnly(noEquals), Map.of()));
    assertEquals(noEquals + ":3: not a key=value line", e.getMessage());

    Path twice = file("b.conf", "listen=127.0.0.1:7701\n# again\nlisten = 127.0.0.1:7702\n", "rw-r--r--");
    e = assertThrows(ConfigException.class, () -> NodeConfig.resolve(fileOnly(twice), Map.of()));
    assertEquals(twice + ":3: key 'listen' is given twice (first at " + twice + ":1)", e.getMessage());

    Path badKey = file("c.conf", "lease-time=1s\n", "rw-r--r--");
    e = assertThrows(ConfigException.class, () -> NodeConfig.resolve(fileOnly(badKey), Map.of()));
    assertTrue(e.getMessage().startsWith(badKey + ":1: 'lease-time' is not a key"), e.getMessage());

    Path missing = dir.resolve("missing.conf");
    e = assertThrows(ConfigException.class, () -> NodeConfig.resolve(fileOnly(missing), Map.of()));
    assertTrue(e.getMessage().startsWith("cannot read config file " + missing), e.getMessage());
  }

  @Test
  void anOptionWinsOverTheEnvironmentWhichWinsOverTheFile() throws IOException {
    Path f = file("node.conf", "listen=127.0.0.1:7701\npeers=127.0.0.1:7702\nleaseTime=1s\nalgorithm=lease\n",
        "rw-r--r--");
    Map<String, String> env = Map.of("TUMBLER_LISTEN", "127.0.0.1:7801", "TUMBLER_LEASE_TIME", "2s",
        "TUMBLER_PEERS", "127.0.0.1:7802,127.0.0.1:7803");

    NodeConfig fileAndEnv = NodeConfig.resolve(fileOnly(f), env);
    assertEquals("127.0.0.1:7801", fileAndEnv.listen().toString());
    assertEquals(List.of("127.0.0.1:7802", "127.0.0.1:7803"), fileAndEnv.peers());
    assertEquals(Optional.of("environment variable TUMBLER_LEASE_TIME"), fileAndEnv.sourceOf("leaseTime"));
    assertTrue(fileAndEnv.url().contains("&leaseTime=2s"), fileAndEnv.url());
    assertEquals("lease", fileAndEnv.algorithm(), "the file's key where nothing else gives it");

    Map<String, String> params = new LinkedHashMap<>();
    params.put("leaseTime", "3s");
    NodeConfig all = NodeConfig.resolve(options(f, "127.0.0.1:7901", List.of("127.0.0.1:7902"), params), env);
    assertEquals("127.0.0.1:7901", all.listen().toString());
    assertEquals(List.of("127.0.0.1:7902"), all.peers());
    assertTrue(all.url().contains("&leaseTime=3s") && !all.url().contains("2s"), all.url());
    assertEquals(Optional.of("option --param leaseTime"), all.sourceOf("leaseTime"));
  }

  @Test
  void environmentNamesAreTheKeysInUpperSnakeCase() {
    assertEquals("clientListen", NodeConfig.keyOf("TUMBLER_CLIENT_LISTEN"));
    assertEquals("leaseTime", NodeConfig.keyOf("TUMBLER_LEASE_TIME"));
    assertEquals("logMaxSize", NodeConfig.keyOf("TUMBLER_LOG_MAX_SIZE"));
    assertEquals("TUMBLER_KEY_STORE_PASSWORD", NodeConfig.envName("keyStorePassword"));
    assertEquals("TUMBLER_SECRET", NodeConfig.envName("secret"));
    assertEquals("TUMBLER_CLIENT_SECRET", NodeConfig.envName("clientSecret"));

    Map<String, String> env = new HashMap<>();
    env.put("TUMBLER_LISTEN", "127.0.0.1:7701");
    env.put("TUMBLER_PEERS", "127.0.0.1:7702");
    env.put("TUMBLER_CLIENT_LISTEN", "127.0.0.1:7801");
    // issue 40: a member that takes clients runs an algorithm whose grants have a term; the default has none
    ConfigException noTerms = assertThrows(ConfigException.class, () -> NodeConfig.resolve(fileOnly(null), env));
    assertTrue(noTerms.getMessage().startsWith("key 'clientListen' (from environment variable TUMBLER_CLIENT_LISTEN): "
        + "algorithm lamport (the default) cannot serve thin clients"), noTerms.getMessage());
    env.put("TUMBLER_ALGORITHM", "lease");
    env.put("TUMBLER_JAVA_OPTS", "-Xmx64m"); // the launcher's, not a key
    env.put("TUMBLER_PASSWORD", "redis-password"); // tumbler run's, not a key
    env.put("HOME", "/root");
    NodeConfig c = NodeConfig.resolve(fileOnly(null), env);
    assertEquals(Optional.of("127.0.0.1:7801"), c.clientListen());
    assertEquals("lock:native://127.0.0.1:7701?peers=127.0.0.1:7702&algorithm=lease&clientListen=127.0.0.1:7801",
        c.url());

    env.put("TUMBLER_lease_time", "1s");
    ConfigException e = assertThrows(ConfigException.class, () -> NodeConfig.resolve(fileOnly(null), env));
    assertTrue(e.getMessage().startsWith("environment variable TUMBLER_lease_time: not a node key"), e.getMessage());
  }

  @Test
  void secretsInAPrivateFileReachTheProviderAsPropertiesAndNeverTheUrl() throws IOException {
    Path f = file("node.conf", "listen=127.0.0.1:7701\npeers=127.0.0.1:7702\nsecret=file-secret-0123456789\n"
        + "clientSecret=file-client-secret-0123\n", "rw-------");
    NodeConfig c = NodeConfig.resolve(fileOnly(f), Map.of());
    Properties secrets = c.secrets();
    assertEquals("file-secret-0123456789", secrets.getProperty("secret"));
    assertEquals("file-client-secret-0123", secrets.getProperty("clientSecret"));
    assertFalse(c.url().contains("ecret"), c.url());
    String shown = LockUrl.parse(c.url()).withOverrides(secrets).toString();
    assertTrue(shown.contains("secret=***") && shown.contains("clientSecret=***"), shown);
    assertFalse(shown.contains("file-secret") || shown.contains("file-client-secret"), shown);

    Map<String, String> env = Map.of("TUMBLER_CLIENT_SECRET", "env-client-secret-0123");
    assertEquals("env-client-secret-0123", NodeConfig.resolve(fileOnly(f), env).secrets().getProperty("clientSecret"),
        "the environment wins over the file");
    Path clientSecretFile = file("client-secret", "option-client-secret-0123\n", "rw-------");
    NodeConfig fromOption = NodeConfig.resolve(new Options(f, null, null, null, Map.of(), null, clientSecretFile), env);
    assertEquals("option-client-secret-0123", fromOption.secrets().getProperty("clientSecret"),
        "--client-secret-file wins over the environment");
  }

  @Test
  void aSecretInAFileOthersCanReadIsRefusedWithChmod600() throws IOException {
    Path f = file("node.conf", "listen=127.0.0.1:7701\npeers=127.0.0.1:7702\n\nclientSecret=readable-by-all-0123\n",
        "rw-r-----");
    ConfigException e = assertThrows(ConfigException.class, () -> NodeConfig.resolve(fileOnly(f), Map.of()));
    assertEquals("config file " + f + " holds a secret (key 'clientSecret' at " + f + ":4) but group or others may "
        + "read it (rw-r-----): run chmod 600 " + f, e.getMessage());
  }

  /** Issue 40: a misspelled secret's key passed the permission check and went into the URL the node logs. */
  @Test
  void aMisspelledSecretKeyIsASecretInTheFileTheEnvironmentAndOnTheCommandLine() throws IOException {
    Path readable = file("node.conf", "listen=127.0.0.1:7701\npeers=127.0.0.1:7702\nkeyStorePasswd=hunter2\n",
        "rw-r--r--");
    ConfigException e = assertThrows(ConfigException.class, () -> NodeConfig.resolve(fileOnly(readable), Map.of()));
    assertEquals("config file " + readable + " holds a secret (key 'keyStorePasswd' at " + readable + ":3) but group "
        + "or others may read it (rw-r--r--): run chmod 600 " + readable, e.getMessage());

    Path private600 = file("private.conf", "listen=127.0.0.1:7701\npeers=127.0.0.1:7702\nkeyStorePasswd=hunter2\n"
        + "sentinelPasword=hunter3\n", "rw-------");
    NodeConfig c = NodeConfig.resolve(fileOnly(private600), Map.of("TUMBLER_PASWORD", "hunter4"));
    Properties secrets = c.secrets();
    assertEquals(Set.of("keyStorePasswd", "sentinelPasword", "pasword"), secrets.stringPropertyNames());
    String shown = LockUrl.parse(c.url()).withOverrides(secrets).toString();
    for (String s : List.of(c.url(), shown)) {
      assertFalse(s.contains("hunter"), s);
    }
    assertTrue(shown.contains("keyStorePasswd=***") && shown.contains("pasword=***"), shown);

    ConfigException onTheCommandLine = assertThrows(ConfigException.class, () -> NodeConfig.resolve(
        options(null, "127.0.0.1:7701", List.of("127.0.0.1:7702"), Map.of("passwd", "hunter2")), Map.of()));
    assertTrue(onTheCommandLine.getMessage().startsWith("option --param passwd: a secret is never taken on the "
        + "command line"), onTheCommandLine.getMessage());
    assertFalse(onTheCommandLine.getMessage().contains("hunter2"), onTheCommandLine.getMessage());
  }

  @Test
  void aSecretOnTheCommandLineIsRefusedSayingWhereItGoes() {
    for (String key : List.of("secret", "clientSecret", "keyStorePassword")) {
      Map<String, String> params = Map.of(key, "on-the-command-line");
      ConfigException e = assertThrows(ConfigException.class, () -> NodeConfig.resolve(
          options(null, "127.0.0.1:7701", List.of("127.0.0.1:7702"), params), Map.of()));
      assertFalse(e.getMessage().contains("on-the-command-line"), e.getMessage());
      assertTrue(e.getMessage().startsWith("option --param " + key + ": a secret is never taken on the command line"),
          e.getMessage());
      assertTrue(e.getMessage().contains("$" + NodeConfig.envName(key)) && e.getMessage().contains("chmod 600"),
          e.getMessage());
    }
    ConfigException e = assertThrows(ConfigException.class, () -> NodeConfig.resolve(
        options(null, "127.0.0.1:7701", List.of("127.0.0.1:7702"), Map.of("secret", "x")), Map.of()));
    assertTrue(e.getMessage().contains("--secret-file FILE, $TUMBLER_SECRET, or as secret=... in the --config file"),
        e.getMessage());
  }

  @Test
  void aMissingListenOrPeersSaysWhereToGiveIt() {
    ConfigException e = assertThrows(ConfigException.class, () -> NodeConfig.resolve(fileOnly(null), Map.of()));
    assertEquals("no 'listen' given: give --listen HOST:PORT, set TUMBLER_LISTEN, or write listen=... in the "
        + "--config file", e.getMessage());
    e = assertThrows(ConfigException.class,
        () -> NodeConfig.resolve(fileOnly(null), Map.of("TUMBLER_LISTEN", "127.0.0.1:7701")));
    assertEquals("no 'peers' given: give --peers HOST:PORT,HOST:PORT, set TUMBLER_PEERS, or write peers=... in the "
        + "--config file", e.getMessage());
  }

  @Test
  void invalidValuesNameTheKeyAndWhereItCameFrom() throws IOException {
    Map<String, String> base = Map.of("TUMBLER_PEERS", "127.0.0.1:7702");
    assertError("key 'listen' (from option --listen): 'localhost' is not HOST:PORT",
        options(null, "localhost", null, Map.of()), base);
    Path f = file("node.conf", "listen=127.0.0.1:7701\nhttp=127.0.0.1:70000\n", "rw-r--r--");
    assertError("key 'http' (from " + f + ":2): port 70000 is not within 0-65535", fileOnly(f), base);
    assertError("key 'peers' (from environment variable TUMBLER_PEERS): an empty peer in '127.0.0.1:7702,' "
        + "(peers are HOST:PORT,HOST:PORT)",
        fileOnly(null), Map.of("TUMBLER_LISTEN", "127.0.0.1:7701", "TUMBLER_PEERS", "127.0.0.1:7702,"));
    Map<String, String> env = new HashMap<>(base);
    env.put("TUMBLER_LISTEN", "127.0.0.1:7701");
    env.put("TUMBLER_ALGORITHM", "paxos");
    ConfigException e = assertThrows(ConfigException.class, () -> NodeConfig.resolve(fileOnly(null), env));
    assertTrue(e.getMessage().startsWith("key 'algorithm' (from environment variable TUMBLER_ALGORITHM): 'paxos' is "
        + "not a native algorithm; one of [lamport, ricart-agrawala"), e.getMessage());
    env.remove("TUMBLER_ALGORITHM");
    env.put("TUMBLER_LOG", dir.resolve("node.log").toString());
    env.put("TUMBLER_LOG_MAX_SIZE", "ten");
    assertError("key 'logMaxSize' (from environment variable TUMBLER_LOG_MAX_SIZE): 'ten' is not a size (as in 10MB, "
        + "512KB or 4096)", fileOnly(null), env);
    env.put("TUMBLER_LOG_MAX_SIZE", "1KB");
    env.put("TUMBLER_LOG_FILES", "0");
    assertError("key 'logFiles' (from environment variable TUMBLER_LOG_FILES): 0 is not within 1-1000",
        fileOnly(null), env);
    env.remove("TUMBLER_LOG");
    env.remove("TUMBLER_LOG_FILES");
    assertError("key 'logMaxSize' (from environment variable TUMBLER_LOG_MAX_SIZE) applies only to a log file, and "
        + "the log goes to stdout (key 'log')", fileOnly(null), env);
    env.remove("TUMBLER_LOG_MAX_SIZE");
    env.put("TUMBLER_CLIENT_LISTEN", "");
    assertError("environment variable TUMBLER_CLIENT_LISTEN is set but empty", fileOnly(null), env);
  }

  private static void assertError(String expected, Options options, Map<String, String> env) {
    ConfigException e = assertThrows(ConfigException.class, () -> NodeConfig.resolve(options, env));
    assertEquals(expected, e.getMessage());
  }

  @Test
  void aLogFileHasItsSizeAndCount() {
    Map<String, String> env = Map.of("TUMBLER_LISTEN", "127.0.0.1:7701", "TUMBLER_PEERS", "127.0.0.1:7702",
        "TUMBLER_LOG", "/var/log/tumbler/node.log", "TUMBLER_LOG_MAX_SIZE", "512KB", "TUMBLER_LOG_FILES", "3");
    NodeConfig.LogSettings log = NodeConfig.resolve(fileOnly(null), env).log();
    assertEquals(new NodeConfig.LogSettings(Optional.of(Path.of("/var/log/tumbler/node.log")), 512 * 1024, 3), log);
    Map<String, String> defaults = new HashMap<>(env);
    defaults.remove("TUMBLER_LOG_MAX_SIZE");
    defaults.remove("TUMBLER_LOG_FILES");
    assertEquals(new NodeConfig.LogSettings(Optional.of(Path.of("/var/log/tumbler/node.log")), 10 << 20, 5),
        NodeConfig.resolve(fileOnly(null), defaults).log());
  }

  @Test
  void sizesTakeBinaryUnits() {
    assertEquals(10L << 20, NodeConfig.parseSize(new NodeConfig.Setting("logMaxSize", "10MB", "test")));
    assertEquals(512L << 10, NodeConfig.parseSize(new NodeConfig.Setting("logMaxSize", "512kb", "test")));
    assertEquals(1L << 30, NodeConfig.parseSize(new NodeConfig.Setting("logMaxSize", "1G", "test")));
    assertEquals(4096, NodeConfig.parseSize(new NodeConfig.Setting("logMaxSize", "4096", "test")));
    assertThrows(ConfigException.class, () -> NodeConfig.parseSize(new NodeConfig.Setting("logMaxSize", "0MB", "t")));
  }

  @Test
  void theProvidersErrorIsToldWhereTheParametersItNamesCameFrom() {
    NodeConfig c = NodeConfig.resolve(fileOnly(null), Map.of("TUMBLER_LISTEN", "127.0.0.1:7701",
        "TUMBLER_PEERS", "127.0.0.1:7702", "TUMBLER_LEASE_TIMEOUT", "10s"));
    assertEquals(" (leaseTimeout from environment variable TUMBLER_LEASE_TIMEOUT)",
        c.sourcesIn("lock URL lock:native://…: unknown parameter [leaseTimeout] for provider 'native'"));
    assertEquals("", c.sourcesIn("lock URL lock:native://…: parameter 'peerTimeout' must be positive"));
    assertEquals(" (leaseTimeout from environment variable TUMBLER_LEASE_TIMEOUT)", c.sourcesIn("lock URL "
        + "lock:native://…: parameter 'leaseTimeout': not a duration; accepted: [leaseTime, peers, secret]"));
    assertEquals("", c.sourcesIn("lock URL …: unknown parameter [tls] for provider 'native'; accepted: [leaseTimeout]"),
        "a parameter only listed as accepted is not the one in question");
  }
}
