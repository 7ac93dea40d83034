package dev.tumbler.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

@Timeout(60)
class NodeCommandTest {
  @TempDir
  Path dir;

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Test
  void aNodePrintsItsIdListensAndStopsCleanly() throws Exception {
    int port = freePort();
    Path secret = dir.resolve("secret");
    Files.writeString(secret, "node-command-test-secret\n");
    CommandLine cl = Tumbler.commandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    AtomicInteger code = new AtomicInteger(-1);
    Thread t = Thread.ofPlatform().start(() -> code.set(cl.execute("node", "--listen", "127.0.0.1:" + port,
        "--peers", "127.0.0.1:" + freePortQuietly(), "--algorithm", "ricart-agrawala", "--secret-file",
        secret.toString())));
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (!out.toString().contains(" up: ") && System.nanoTime() < deadline && t.isAlive()) {
      Thread.sleep(20);
    }
    String shown = out.toString();
    assertTrue(shown.contains("tumbler node 127.0.0.1:" + port + " up: algorithm ricart-agrawala"), shown + err);
    assertFalse(shown.contains("node-command-test-secret"), "the secret is never printed: " + shown);
    try (Socket s = new Socket("127.0.0.1", port)) {
      assertTrue(s.isConnected(), "the node listens on its --listen address");
    }
    t.interrupt();
    t.join(20_000);
    assertFalse(t.isAlive());
    assertEquals(0, code.get(), out + "\n" + err);
    assertTrue(out.toString().contains("stopping"), out.toString());
  }

  private static int freePortQuietly() {
    try {
      return freePort();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
