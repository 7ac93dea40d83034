package dev.tumbler.torture;

import dev.tumbler.lock.tck.TcpProxy;
import dev.tumbler.torture.backend.JavaCommand;
import dev.tumbler.torture.backend.Processes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The client processes of a run: each a JVM of its own running {@link Worker} ({@code tumbler torture-worker}), with
 * a {@link TcpProxy} of its own in front of each of the target's addresses, its output in {@code clients/<id>.log} of
 * the report directory. The harness records a {@code spawn} event when it starts one and an {@code exit} event when
 * one ends, whatever ended it.
 */
final class Clients {
  private final Target target;
  private final Register register;
  private final JavaCommand java;
  private final List<String> names;
  private final Duration maxWait;
  private final long holdMillis;
  private final Path logs;
  private final SplittableRandom seeds;
  private final List<Client> live = new CopyOnWriteArrayList<>();
  private final List<Client> all = new CopyOnWriteArrayList<>();
  private int next;

  /** One client process. */
  static final class Client {
    final String id;
    final Process process;
    final List<TcpProxy> proxies;

    Client(String id, Process process, List<TcpProxy> proxies) {
      this.id = id;
      this.process = process;
      this.proxies = proxies;
    }
  }

  Clients(Target target, Register register, JavaCommand java, List<String> names, Duration maxWait, long holdMillis,
      Path logs, long seed) {
    this.target = target;
    this.register = register;
    this.java = java;
    this.names = names;
    this.maxWait = maxWait;
    this.holdMillis = holdMillis;
    this.logs = logs;
    this.seeds = new SplittableRandom(seed);
    try {
      Files.createDirectories(logs);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Starts a new client (id {@code c<n>}) and records it; does not wait for it to connect. */
  synchronized Client spawn() {
    String id = "c" + (++next);
    List<TcpProxy> proxies = new ArrayList<>();
    List<String> proxied = new ArrayList<>();
    for (String a : target.addresses()) {
      int colon = a.lastIndexOf(':');
      String host = a.substring(0, colon);
      if (host.startsWith("[") && host.endsWith("]")) {
        host = host.substring(1, host.length() - 1);
      }
      TcpProxy p = TcpProxy.start(host, Integer.parseInt(a.substring(colon + 1)));
      proxies.add(p);
      proxied.add(p.address());
    }
    List<String> args = List.of("torture-worker", "--register", register.address(), "--client", id, "--names",
        String.join(",", names), "--wait", Long.toString(maxWait.toMillis()), "--hold", Long.toString(holdMillis),
        "--seed", Long.toString(seeds.nextLong()));
    List<String> jvm = List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper=error");
    ProcessBuilder b = new ProcessBuilder(java.tumblerMain() == null ? java.main(Worker.class.getName(), jvm,
        args.subList(1, args.size())) : java.tumbler(jvm, args))
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(logs.resolve(id + ".log").toFile()));
    Map<String, String> env = b.environment();
    env.put(Worker.URL_ENV, target.url(proxied));
    env.putAll(target.clientEnvironment());
    if (target.clientEnvironment().containsKey("TUMBLER_CLIENT_SECRET")) {
      // a thin client gives the clients' credential and never the members' own
      env.remove("TUMBLER_SECRET");
    }
    Process process;
    try {
      process = Processes.start(b);
    } catch (IOException e) {
      proxies.forEach(TcpProxy::close);
      throw new UncheckedIOException("cannot start client " + id, e);
    }
    Client c = new Client(id, process, proxies);
    register.record(Event.of(Event.Type.SPAWN).withClient(id).withDetail("pid=" + process.pid()));
    live.add(c);
    all.add(c);
    process.onExit().thenRun(() -> {
      register.record(Event.of(Event.Type.EXIT).withClient(id).withDetail("exit code " + process.exitValue()));
      c.proxies.forEach(TcpProxy::close);
      live.remove(c);
    });
    return c;
  }

  /** The clients that run now. */
  List<Client> live() {
    return List.copyOf(live);
  }

  Client byId(String id) {
    for (Client c : live) {
      if (c.id.equals(id)) {
        return c;
      }
    }
    return null;
  }

  /** The last lines of a client's log, for an error message. */
  String tail(String id, int lines) {
    try {
      List<String> all = Files.readAllLines(logs.resolve(id + ".log"));
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  /**
   * Asks every client to stop (closes its standard input: it finishes its lease and says bye), waits at most
   * {@code grace}, then kills those still running.
   */
  void stopAll(Duration grace) throws InterruptedException {
    for (Client c : live()) {
      try {
        c.process.getOutputStream().close();
      } catch (IOException ignored) {
        // it is gone
      }
    }
    long end = System.nanoTime() + grace.toNanos();
    for (Client c : all) {
      long left = end - System.nanoTime();
      if (left > 0) {
        c.process.waitFor(left, TimeUnit.NANOSECONDS);
      }
    }
    killAll();
  }

  /** Kills every client still running and waits for their exit events. */
  void killAll() throws InterruptedException {
    for (Client c : all) {
      if (c.process.isAlive()) {
        Processes.resume(List.of(c.process.pid()));
        Processes.kill(c.process);
      }
    }
    for (Client c : all) {
      c.process.onExit().join();
    }
    // the exit events are recorded by onExit callbacks: give them a moment to land
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!live.isEmpty() && System.nanoTime() - end < 0) {
      Thread.sleep(10);
    }
  }
}
