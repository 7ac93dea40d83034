package dev.tumbler.cli;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code tumbler node}: one peer of a native cluster, in its own process, until it is stopped. */
@Command(name = "node", mixinStandardHelpOptions = true,
    description = {"Runs one peer of a native cluster until stopped (Ctrl-C or SIGTERM).",
        "Example: TUMBLER_SECRET=... tumbler node --listen 127.0.0.1:7701 --peers 127.0.0.1:7702,127.0.0.1:7703",
        "The shared secret comes from --secret-file or $" + Secrets.SECRET_ENV
            + ", never from the command line (ps shows arguments to every user)."})
final class NodeCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = "--listen", required = true, paramLabel = "HOST:PORT",
      description = "The address this peer listens on; it is also the peer's id.")
  String listen;

  @Option(names = "--peers", required = true, split = ",", paramLabel = "HOST:PORT",
      description = "The other peers, comma-separated, spelled as they spell their own --listen.")
  List<String> peers;

  @Option(names = "--algorithm", defaultValue = "lamport", paramLabel = "NAME",
      description = "The native algorithm: ${COMPLETION-CANDIDATES}. Default: ${DEFAULT-VALUE}.",
      completionCandidates = AlgorithmNames.class)
  String algorithm;

  @Option(names = "--secret-file", paramLabel = "FILE",
      description = "A file holding the cluster's shared secret (else $" + Secrets.SECRET_ENV + ").")
  Path secretFile;

  @Option(names = "--param", paramLabel = "KEY=VALUE",
      description = "Another URL parameter for the native provider (repeatable), e.g. --param leaseTime=10s.")
  Map<String, String> params = new LinkedHashMap<>();

  Map<String, String> env = System.getenv();

  /** Counted down to stop the node (by the shutdown hook, or by tests). */
  final CountDownLatch stop = new CountDownLatch(1);
  /** Counted down once the service is closed, so that the shutdown hook lets the JVM end only then. */
  final CountDownLatch closed = new CountDownLatch(1);

  String url() {
    StringBuilder sb = new StringBuilder("lock:native://").append(listen).append("?peers=")
        .append(String.join(",", peers)).append("&algorithm=").append(algorithm);
    for (Map.Entry<String, String> e : params.entrySet()) {
      sb.append('&').append(e.getKey()).append('=').append(e.getValue());
    }
    return sb.toString();
  }

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    Properties props = Secrets.properties(secretFile, null, env);
    if (props.getProperty("secret") == null) {
      throw new Secrets.SecretException("no shared secret: give --secret-file FILE or set " + Secrets.SECRET_ENV);
    }
    try (LockService service = LockProviders.connect(url(), props)) {
      Thread hook = new Thread(() -> {
        stop.countDown();
        try {
          closed.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, "tumbler-node-shutdown");
      Runtime.getRuntime().addShutdownHook(hook);
      out.println("tumbler node " + listen + " up: algorithm " + algorithm + ", peers " + peers + " ("
          + service.info().url() + "); stop with Ctrl-C");
      out.flush();
      try {
        stop.await();
      } catch (InterruptedException e) {
        // interrupted (an embedding program stopping it): stop like on SIGTERM
      } finally {
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
          // shutting down
        }
      }
      out.println("tumbler node " + listen + " stopping");
      out.flush();
    } finally {
      closed.countDown();
    }
    return ExitCodes.OK;
  }
}
