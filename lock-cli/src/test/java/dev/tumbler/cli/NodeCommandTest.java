package dev.tumbler.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.tumbler.lock.tck.LoopbackPorts;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

@Timeout(60)
class NodeCommandTest {
  @TempDir
  Path dir;

  @Test
  void aNodePrintsItsIdListensAndStopsCleanly() throws Exception {
    int port = LoopbackPorts.freePort();
    Path secret = dir.resolve("secret");
    Files.writeString(secret, "node-command-test-secret\n");
    CommandLine cl = Tumbler.commandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    NodeCommand node = cl.getSubcommands().get("node").getCommand();
    node.env = Map.of(); // this machine's TUMBLER_ variables, if any, are not this test's
    AtomicInteger code = new AtomicInteger(-1);
    Thread t = Thread.ofPlatform().start(() -> code.set(cl.execute("node", "--listen", "127.0.0.1:" + port,
        "--peers", "127.0.0.1:" + LoopbackPorts.freePort(), "--algorithm", "ricart-agrawala", "--secret-file",
        secret.toString())));
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (!out.toString().contains(" up: ") && System.nanoTime() < deadline && t.isAlive()) {
      Thread.sleep(20);
    }
    String shown = out.toString();
    assertTrue(shown.contains("tumbler node 127.0.0.1:" + port + " up: algorithm ricart-agrawala"), shown + err);
    assertTrue(shown.contains("&secret=***"), "the URL shown is redacted: " + shown);
    assertFalse(shown.contains("node-command-test-secret"), "the secret is never printed: " + shown);
    try (Socket s = new Socket("127.0.0.1", port)) {
      assertTrue(s.isConnected(), "the node listens on its --listen address");
    }
    t.interrupt();
    t.join(20_000);
    assertFalse(t.isAlive());
    assertEquals(0, code.get(), out + "\n" + err);
    assertTrue(out.toString().contains("tumbler node 127.0.0.1:" + port + " stopping: "), out.toString());
    assertTrue(out.toString().contains("tumbler node 127.0.0.1:" + port + " stopped: "), out.toString());
  }

  private static CliTestSupport.Result node(Map<String, String> env, String... args) {
    return CliTestSupport.runNode(env, args);
  }

  @Test
  void aSecretOnTheCommandLineIsRefusedAndNotShown() {
    CliTestSupport.Result r = node(Map.of(), "--listen", "127.0.0.1:7701", "--peers", "127.0.0.1:7702",
        "--param", "secret=shown-to-every-user");
    assertEquals(ExitCodes.CONFIG, r.code(), r.toString());
    assertTrue(r.err().contains("tumbler node: option --param secret: a secret is never taken on the command line"),
        r.toString());
    assertTrue(r.err().contains("--secret-file FILE, $TUMBLER_SECRET, or as secret=... in the --config file "
        + "(chmod 600)"), r.toString());
    assertFalse(r.toString().contains("shown-to-every-user"), r.toString());
  }

  @Test
  void aConfigFileWithASecretThatOthersCanReadIsRefused() throws IOException {
    Path config = dir.resolve("node.conf");
    Files.writeString(config, "listen=127.0.0.1:7701\npeers=127.0.0.1:7702\nsecret=readable-secret-0123456789\n");
    Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("rw-r--r--"));
    CliTestSupport.Result r = node(Map.of(), "--config", config.toString());
    assertEquals(ExitCodes.CONFIG, r.code(), r.toString());
    assertTrue(r.err().endsWith("but group or others may read it (rw-r--r--): run chmod 600 " + config
        + System.lineSeparator()), r.toString());
    assertFalse(r.toString().contains("readable-secret"), r.toString());
  }

  @Test
  void withoutAListenAddressAnywhereTheErrorSaysWhereToGiveIt() {
    CliTestSupport.Result r = node(Map.of("TUMBLER_SECRET", "a-secret-of-sixteen-bytes"), "--peers", "127.0.0.1:7702");
    assertEquals(ExitCodes.CONFIG, r.code(), r.toString());
    assertTrue(r.err().contains("no 'listen' given: give --listen HOST:PORT, set TUMBLER_LISTEN, or write listen=... "
        + "in the --config file"), r.toString());
  }

  @Test
  void withoutASecretTheErrorSaysWhereToGiveIt() {
    CliTestSupport.Result r = node(Map.of(), "--listen", "127.0.0.1:7701", "--peers", "127.0.0.1:7702");
    assertEquals(ExitCodes.CONFIG, r.code(), r.toString());
    assertTrue(r.err().contains("no shared secret: give it with --secret-file FILE, $TUMBLER_SECRET"), r.toString());
  }

  @Test
  void anUnknownParameterIsRefusedByTheProviderAndToldWhereItCameFrom() throws IOException {
    int port = LoopbackPorts.freePort();
    CliTestSupport.Result r = node(Map.of("TUMBLER_SECRET", "a-secret-of-sixteen-bytes", "TUMBLER_LEASE_TIMEOUT",
        "10s"), "--listen", "127.0.0.1:" + port, "--peers", "127.0.0.1:" + LoopbackPorts.freePort(), "--algorithm", "lease");
    assertEquals(ExitCodes.CONFIG, r.code(), r.toString());
    assertTrue(r.err().contains("unknown parameter [leaseTimeout] for provider 'native'"), r.toString());
    assertTrue(r.err().contains("(leaseTimeout from environment variable TUMBLER_LEASE_TIMEOUT)"), r.toString());
    assertTrue(r.out().contains("ERROR tumbler.node - tumbler node 127.0.0.1:" + port + " failed to start"),
        "the log says so too: " + r);
    assertFalse(r.toString().contains("a-secret-of-sixteen-bytes"), r.toString());
  }

  /**
   * Issue 40: a member that takes thin clients on an algorithm whose grants never expire crashed with a
   * NullPointerException and exit 70. It is the configuration error CLIENTS.md promises, named before anything
   * starts: no log file, no port.
   */
  @Test
  void clientListenOnAnAlgorithmWithoutTermsIsAConfigurationError() throws IOException {
    for (String algorithm : new String[] {"lamport", "ricart-agrawala"}) {
      int port = LoopbackPorts.freePort();
      int clientPort = LoopbackPorts.freePort();
      Path log = dir.resolve(algorithm + ".log");
      CliTestSupport.Result r = node(Map.of("TUMBLER_SECRET", "a-secret-of-sixteen-bytes", "TUMBLER_CLIENT_SECRET",
          "a-client-secret-of-16", "TUMBLER_CLIENT_LISTEN", "127.0.0.1:" + clientPort, "TUMBLER_LOG", log.toString()),
          "--listen", "127.0.0.1:" + port, "--peers", "127.0.0.1:" + LoopbackPorts.freePort(), "--algorithm", algorithm);
      assertEquals(ExitCodes.CONFIG, r.code(), r.toString());
      assertTrue(r.err().contains("tumbler node: key 'clientListen' (from environment variable TUMBLER_CLIENT_LISTEN): "
          + "algorithm " + algorithm + " (key 'algorithm' from option --algorithm) cannot serve thin clients"),
          r.toString());
      assertTrue(r.err().contains("take clients with one of [") && r.err().contains("lease"), r.toString());
      assertFalse(r.toString().contains("NullPointerException") || r.toString().contains("a-client-secret"),
          r.toString());
      assertFalse(Files.exists(log), "nothing started: no log");
      for (int p : new int[] {port, clientPort}) {
        try (ServerSocket s = new ServerSocket(p, 1, InetAddress.getLoopbackAddress())) {
          assertTrue(s.isBound(), "nothing listens on " + p);
        }
      }
    }
  }

  /**
   * Issue 40: a misspelled secret key is unknown to the provider; its error, on stderr and in the log, names the key
   * and where it came from but never shows the value.
   */
  @Test
  void aMisspelledSecretKeyIsNamedButItsValueNeverShows() throws IOException {
    Path config = dir.resolve("node.conf");
    Files.writeString(config, "algorithm=lease\nkeyStorePasswd=hunter2\n");
    Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("rw-r--r--"));
    Map<String, String> env = Map.of("TUMBLER_SECRET", "a-secret-of-sixteen-bytes");
    String[] where = {"--listen", "127.0.0.1:" + LoopbackPorts.freePort(), "--peers", "127.0.0.1:" + LoopbackPorts.freePort()};
    CliTestSupport.Result readable = node(env, concat(where, "--config", config.toString()));
    assertEquals(ExitCodes.CONFIG, readable.code(), readable.toString());
    assertTrue(readable.err().contains("holds a secret (key 'keyStorePasswd' at " + config + ":2) but group or others "
        + "may read it"), readable.toString());
    assertFalse(readable.toString().contains("hunter2"), readable.toString());

    Files.setPosixFilePermissions(config, PosixFilePermissions.fromString("rw-------"));
    CliTestSupport.Result unknown = node(env, concat(where, "--config", config.toString()));
    assertEquals(ExitCodes.CONFIG, unknown.code(), unknown.toString());
    assertTrue(unknown.err().contains("unknown parameter [keyStorePasswd] for provider 'native'"), unknown.toString());
    assertTrue(unknown.err().contains("(keyStorePasswd from " + config + ":2)"), unknown.toString());
    assertTrue(unknown.out().contains(" starting: ") && unknown.out().contains("keyStorePasswd=***"),
        "the start-up line shows the key, redacted: " + unknown);
    assertTrue(unknown.out().contains(" failed to start: "), unknown.toString());
    assertFalse(unknown.toString().contains("hunter2"), unknown.toString());

    Map<String, String> misspelled = new HashMap<>(env);
    misspelled.put("TUMBLER_PASWORD", "hunter2");
    CliTestSupport.Result fromEnv = node(misspelled, concat(where, "--algorithm", "lease"));
    assertEquals(ExitCodes.CONFIG, fromEnv.code(), fromEnv.toString());
    assertTrue(fromEnv.err().contains("unknown parameter [pasword] for provider 'native'")
        && fromEnv.err().contains("(pasword from environment variable TUMBLER_PASWORD)"), fromEnv.toString());
    assertFalse(fromEnv.toString().contains("hunter2"), fromEnv.toString());
  }

  private static String[] concat(String[] a, String... b) {
    String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, all, a.length, b.length);
    return all;
  }

  @Test
  void aNodeLogsToARotatingFileWhenTold() throws Exception {
    int port = LoopbackPorts.freePort();
    Path log = dir.resolve("logs").resolve("node.log");
    Files.createDirectories(log.getParent());
    CommandLine cl = Tumbler.commandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    NodeCommand node = cl.getSubcommands().get("node").getCommand();
    node.env = Map.of("TUMBLER_SECRET", "node-command-test-secret", "TUMBLER_LOG", log.toString(),
        "TUMBLER_LOG_MAX_SIZE", "300", "TUMBLER_LOG_FILES", "2");
    AtomicInteger code = new AtomicInteger(-1);
    Thread t = Thread.ofPlatform().start(() -> code.set(cl.execute("node", "--listen", "127.0.0.1:" + port,
        "--peers", "127.0.0.1:" + LoopbackPorts.freePort())));
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (node.status() != NodeStatus.SERVING && System.nanoTime() < deadline && t.isAlive()) {
      Thread.sleep(20);
    }
    assertEquals(NodeStatus.SERVING, node.status(), out + "\n" + err);
    node.requestStop();
    t.join(20_000);
    assertEquals(0, code.get(), out + "\n" + err);
    assertEquals("tumbler node 127.0.0.1:" + port + ": logging to " + log + System.lineSeparator(), out.toString(),
        "stdout says where the log is, and nothing more");
    // starting, up, stopping, stopped: each line is longer than half of 300 bytes, so a file holds one of them,
    // and of two files the oldest, with the starting line, is gone (whatever else a provider may log between)
    Path previous = dir.resolve("logs").resolve("node.log.1");
    assertTrue(Files.exists(previous) && !Files.exists(dir.resolve("logs").resolve("node.log.2")), "2 files in all");
    for (Path f : new Path[] {previous, log}) {
      String content = Files.readString(f);
      assertTrue(content.endsWith("\n") && (content.length() <= 300 || content.lines().count() == 1),
          f + " holds whole lines within 300 bytes, or one longer line: " + content);
      assertFalse(content.contains(" starting: "), content);
    }
    assertTrue((Files.readString(previous) + Files.readString(log)).contains("tumbler node 127.0.0.1:" + port
        + " stopped: "), Files.readString(log));
    assertEquals("", err.toString());
  }

  @Test
  void theHelpListsTheConfigurationKeysAndTheirEnvironmentVariables() {
    CliTestSupport.Result r = CliTestSupport.run("node", "--help");
    assertEquals(0, r.code(), r.toString());
    for (String s : new String[] {"--config=FILE", "--client-secret-file=FILE", "--param=KEY=VALUE", "clientListen",
        "TUMBLER_CLIENT_LISTEN", "logMaxSize", "TUMBLER_LOG_FILES", "An option wins over the environment"}) {
      assertTrue(r.out().contains(s), s + " in:\n" + r.out());
    }
  }
}
