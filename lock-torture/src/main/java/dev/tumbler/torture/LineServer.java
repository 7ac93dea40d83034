package dev.tumbler.torture;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * A TCP server on an ephemeral loopback port that answers each line with one line: each connection gets a handler of
 * its own (from {@code handlers}), a virtual thread, and ends when the client closes it or the server is closed. What
 * the register and the known-answer tests' lock server both are.
 */
final class LineServer implements AutoCloseable {
  private final ServerSocket server;
  private final Supplier<UnaryOperator<String>> handlers;
  private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;

  /** @param handlers makes the handler of a new connection: a line in, the answer out */
  LineServer(String name, Supplier<UnaryOperator<String>> handlers) {
    this.handlers = handlers;
    try {
      this.server = new ServerSocket(0, 100, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open a port for the " + name, e);
    }
    Thread.ofVirtual().name(name + "-accept").start(this::acceptLoop);
  }

  /** {@code 127.0.0.1:port}. */
  String address() {
    return "127.0.0.1:" + server.getLocalPort();
  }

  private void acceptLoop() {
    while (!closed) {
      Socket s;
      try {
        s = server.accept();
      } catch (IOException e) {
        return;
      }
      connections.add(s);
      Thread.ofVirtual().start(() -> serve(s));
    }
  }

  private void serve(Socket s) {
    UnaryOperator<String> handler = handlers.get();
    try (s;
        BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
        Writer out = new OutputStreamWriter(s.getOutputStream(), StandardCharsets.UTF_8)) {
      String line;
      while ((line = in.readLine()) != null) {
        out.write(handler.apply(line));
        out.write('\n');
        out.flush();
      }
    } catch (IOException | RuntimeException e) {
      // the client is gone (killed, or done), or sent what its handler refuses to answer
    } finally {
      connections.remove(s);
    }
  }

  @Override
  public void close() {
    closed = true;
    closeQuietly(server);
    connections.forEach(LineServer::closeQuietly);
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // closing anyway
    }
  }
}
