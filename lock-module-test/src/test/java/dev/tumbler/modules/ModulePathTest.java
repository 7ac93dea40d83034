package dev.tumbler.modules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import redis.embedded.RedisServer;

/**
 * Each provider boots on the module path: a JVM with no class path runs a small application module that
 * requires only {@code dev.tumbler.lock}, connects to one URL, and takes and releases a lock. The provider comes
 * by service binding, from its named module, which exports only the provider's API (most have none).
 *
 * <p>ZooKeeper's two jars share packages, which the module system refuses: {@code zookeeper-jute} goes into the
 * {@code zookeeper} module ({@code --patch-module}) instead of onto the module path, as the README says. The
 * servers run in this JVM, on the class path.
 */
class ModulePathTest {
  /** A JVM start on a busy 2-core machine, plus a connection and one lock. */
  private static final long BOOT_SECONDS = 120;
  private static final Pattern BOOTED = Pattern.compile("^booted (\\S+) (\\S+) token (\\d+) exports \\[(.*)\\]$",
      Pattern.MULTILINE);

  @TempDir
  static Path work;
  private static List<Path> modulePath;
  private static Path jute;
  private static Path boot;
  private static RedisServer redis;
  private static int redisPort;
  private static TestingServer zookeeper;

  @BeforeAll
  static void compileTheApplication() throws IOException {
    String line = Files.readString(Path.of(System.getProperty("tumbler.module-path.file"))).strip();
    modulePath = new ArrayList<>();
    for (String entry : line.split(File.pathSeparator)) {
      Path p = Path.of(entry);
      if (p.getFileName().toString().startsWith("zookeeper-jute")) {
        jute = p;
      } else {
        modulePath.add(p);
      }
    }
    assertTrue(jute != null, "zookeeper-jute is a run-time dependency of the ZooKeeper provider: " + line);
    boot = work.resolve("boot");
    Path sources = Path.of(System.getProperty("tumbler.boot.sources"));
    List<String> args = new ArrayList<>(List.of("-d", boot.toString(), "--module-path", join(modulePath)));
    try (Stream<Path> files = Files.walk(sources)) {
      files.filter(f -> f.toString().endsWith(".java")).forEach(f -> args.add(f.toString()));
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    assertEquals(0, javac.run(null, null, null, args.toArray(String[]::new)), "the application module compiles");
  }

  @AfterAll
  static void stopServers() throws IOException {
    if (redis != null) {
      redis.stop();
    }
    if (zookeeper != null) {
      zookeeper.close();
    }
  }

  @Test
  void nativeProvider() throws Exception {
    assertBoots("lock:native:local", "native", "dev.tumbler.peer", "dev.tumbler.peer.node");
  }

  @Test
  void jdbcProviderOnH2() throws Exception {
    assertBoots("lock:jdbc:h2:mem:modules;DB_CLOSE_DELAY=-1?createSchema=true", "jdbc", "dev.tumbler.lock.jdbc",
        "dev.tumbler.lock.jdbc");
  }

  @Test
  void redisProvider() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      redisPort = s.getLocalPort();
    }
    redis = RedisServer.builder().port(redisPort).bind("127.0.0.1").setting("save \"\"").setting("appendonly no")
        .build();
    redis.start();
    assertBoots("lock:redis://127.0.0.1:" + redisPort, "redis", "dev.tumbler.lock.redis", "");
  }

  @Test
  void zooKeeperProvider() throws Exception {
    zookeeper = new TestingServer(true);
    assertBoots("lock:zookeeper://" + zookeeper.getConnectString(), "zookeeper", "dev.tumbler.lock.zookeeper",
        "");
  }

  /**
   * Runs the application on {@code url}: it must exit 0 having been granted a lock by {@code module}, which
   * exports exactly {@code exports} (comma-separated, sorted).
   */
  private static void assertBoots(String url, String provider, String module, String exports) throws Exception {
    Path log = work.resolve(provider + ".log");
    List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--module-path", boot + File.pathSeparator + join(modulePath),
        "--patch-module", "zookeeper=" + jute,
        "--module", "dev.tumbler.lock.boot/dev.tumbler.lock.boot.Boot", url);
    Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!p.waitFor(BOOT_SECONDS, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor();
      throw new AssertionError(provider + ": no exit in " + BOOT_SECONDS + " s; output:\n" + read(log));
    }
    String out = read(log);
    assertEquals(0, p.exitValue(), provider + " on the module path; output:\n" + out);
    Matcher m = BOOTED.matcher(out);
    assertTrue(m.find(), "no result line; output:\n" + out);
    assertEquals(provider, m.group(1), out);
    assertEquals(module, m.group(2), "the service is in the provider's named module; output:\n" + out);
    assertEquals(exports, m.group(4), "what the provider's module exports; output:\n" + out);
  }

  private static String join(List<Path> paths) {
    return String.join(File.pathSeparator, paths.stream().map(Path::toString).toList());
  }

  private static String read(Path log) throws IOException {
    return Files.readString(log, StandardCharsets.UTF_8);
  }
}
