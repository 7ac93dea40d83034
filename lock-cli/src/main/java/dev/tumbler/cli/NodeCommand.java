package dev.tumbler.cli;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.peer.node.NodeStats;
import dev.tumbler.peer.provider.NativeNodes;
import dev.tumbler.peer.runtime.PeerNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code tumbler node}: one member of a native cluster, in its own process, until it is stopped: its
 * configuration ({@link NodeConfig}), its log ({@link NodeLog}), its health and metrics endpoint
 * ({@link HealthEndpoint}), and the order it starts and stops in.
 */
@Command(name = "node", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Runs one member of a native cluster until stopped (Ctrl-C or SIGTERM).",
        "Example: TUMBLER_SECRET=... tumbler node --listen 127.0.0.1:7701 --peers 127.0.0.1:7702,127.0.0.1:7703",
        "     or: TUMBLER_SECRET=... tumbler node --config node1.conf",
        "Secrets come from --secret-file or $" + Secrets.SECRET_ENV + ", --client-secret-file or $"
            + NodeCommand.CLIENT_SECRET_ENV + ", or a --config file only others cannot read (chmod 600); never "
            + "from the command line (ps shows arguments to every user).",
        ""},
    footerHeading = "%nConfiguration keys: a --config file's key=value lines, or environment variables "
        + "TUMBLER_<KEY> in upper snake case. An option wins over the environment, the environment over the "
        + "file.%n",
    footer = {
        "  key           environment             value",
        "  listen        TUMBLER_LISTEN          HOST:PORT this member listens on; its id",
        "  peers         TUMBLER_PEERS           the other members: HOST:PORT,HOST:PORT",
        "  algorithm     TUMBLER_ALGORITHM       a native algorithm (default lamport)",
        "  clientListen  TUMBLER_CLIENT_LISTEN   HOST:PORT thin clients connect to",
        "  http          TUMBLER_HTTP            HOST:PORT of GET /health and /metrics",
        "  log           TUMBLER_LOG             stdout (default), or a file rotated",
        "  logMaxSize    TUMBLER_LOG_MAX_SIZE    the size it is rotated at (default 10MB)",
        "  logFiles      TUMBLER_LOG_FILES       log files kept in all (default 5)",
        "  secret        TUMBLER_SECRET          the members' shared secret",
        "  clientSecret  TUMBLER_CLIENT_SECRET   the thin clients' credential",
        "  leaseTime     TUMBLER_LEASE_TIME      and any other key: a native URL parameter",
        "--listen, --peers and --algorithm give their keys, --secret-file and",
        "--client-secret-file the secrets, --param KEY=VALUE any other key but a secret.",
        "",
        "Exit codes: 0 stopped; 2 bad usage; 69 cannot listen; 70 internal error (a",
        "bug; --verbose shows the stack trace); 78 invalid configuration or secret."})
final class NodeCommand implements Callable<Integer> {
  /** The environment variable of the thin clients' credential, when no file is given. */
  static final String CLIENT_SECRET_ENV = Secrets.CLIENT_SECRET_ENV;
  /** How long a stop may take in all, from its start until the JVM may end. */
  static final Duration STOP_BOUND = Duration.ofSeconds(10);
  /** Of {@link #STOP_BOUND}, what is left for the steps after the service's close. */
  private static final Duration AFTER_CLOSE = Duration.ofSeconds(1);

  @Spec
  CommandSpec spec;

  @Option(names = "--config", paramLabel = "FILE",
      description = "A file of key=value lines (# comments); the keys are listed below.")
  Path configFile;

  @Option(names = "--listen", paramLabel = "HOST:PORT",
      description = "The address this member listens on; it is also the member's id (key listen).")
  String listen;

  @Option(names = "--peers", split = ",", paramLabel = "HOST:PORT",
      description = "The other members, comma-separated, spelled as they spell their own listen address "
          + "(key peers).")
  List<String> peers;

  @Option(names = "--algorithm", paramLabel = "NAME", completionCandidates = AlgorithmNames.class,
      description = "The native algorithm: ${COMPLETION-CANDIDATES}. Default: " + NodeConfig.DEFAULT_ALGORITHM
          + " (key algorithm).")
  String algorithm;

  @Option(names = "--secret-file", paramLabel = "FILE",
      description = "A file holding the members' shared secret (else $" + Secrets.SECRET_ENV + ", else key secret).")
  Path secretFile;

  @Option(names = "--client-secret-file", paramLabel = "FILE",
      description = "A file holding the thin clients' credential (else $" + CLIENT_SECRET_ENV
          + ", else key clientSecret).")
  Path clientSecretFile;

  @Option(names = "--param", paramLabel = "KEY=VALUE",
      description = "Any other key but a secret (repeatable): a native URL parameter, e.g. --param "
          + "leaseTime=10s, or clientListen, http, log, logMaxSize, logFiles.")
  Map<String, String> params = new LinkedHashMap<>();

  /** The environment the configuration and secrets are read from; tests replace it. */
  Map<String, String> env = System.getenv();

  /** Counted down to stop the node (by {@link #requestStop}). */
  final CountDownLatch stop = new CountDownLatch(1);
  /** Counted down once the node has stopped, so that the shutdown hook lets the JVM end only then. */
  final CountDownLatch closed = new CountDownLatch(1);

  private final AtomicReference<NodeStatus> status = new AtomicReference<>(NodeStatus.STARTING);
  private volatile NodeStats stats;
  private volatile HealthEndpoint endpoint;

  /** Where the node is in its life. */
  NodeStatus status() {
    return status.get();
  }

  /** Begins the stop: from now on {@code /health} answers 503 {@code stopping}. SIGTERM and Ctrl-C call it. */
  void requestStop() {
    status.set(NodeStatus.STOPPING);
    stop.countDown();
  }

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    NodeConfig config = NodeConfig.resolve(new NodeConfig.Options(configFile, listen, peers, algorithm, params,
        secretFile, clientSecretFile), env);
    Properties secrets = config.secrets();
    if (secrets.getProperty("secret") == null) {
      throw new Secrets.SecretException("no shared secret: " + NodeConfig.whereSecretsGo("secret"));
    }
    NodeConfig.LogSettings logSettings = config.log();
    if (logSettings.file().isPresent()) {
      out.println("tumbler node " + config.listen() + ": logging to " + logSettings.file().get());
      out.flush();
    }
    Thread hook = new Thread(() -> {
      requestStop();
      try {
        closed.await(STOP_BOUND.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "tumbler-node-shutdown");
    try (NodeLog log = NodeLog.install(logSettings.file(), logSettings.maxBytes(), logSettings.files(), out, err)) {
      Runtime.getRuntime().addShutdownHook(hook);
      try {
        run(config, secrets, log.logger());
      } finally {
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
          // shutting down: the hook is running
        }
      }
    } finally {
      closed.countDown();
    }
    return ExitCodes.OK;
  }

  /** Starts the endpoint, then the service; serves until told to stop; then {@link #stopSequence}. */
  private void run(NodeConfig config, Properties secrets, Logger logger) {
    String id = config.listen().toString();
    HealthEndpoint http = null;
    LockService service;
    try {
      if (config.http().isPresent()) {
        http = startEndpoint(config);
        endpoint = http;
      }
      try {
        String redactedUrl = LockUrl.parse(config.url()).withOverrides(secrets).toString();
        logger.info("tumbler node {} starting: {}, url {}", id, describe(config), redactedUrl);
        service = Failures.connect(config.url(), secrets);
      } catch (InvalidLockUrlException e) {
        throw new InvalidLockUrlException(e.getMessage() + config.sourcesIn(e.getMessage()), e);
      }
    } catch (RuntimeException e) {
      logger.error("tumbler node {} failed to start: {}", id, e.getMessage());
      if (http != null) {
        http.close();
      }
      throw e;
    }
    try {
      stats = service.unwrap(NodeStats.class);
    } catch (RuntimeException e) {
      service.close();
      if (http != null) {
        http.close();
      }
      throw e;
    }
    if (status.compareAndSet(NodeStatus.STARTING, NodeStatus.SERVING)) { // else told to stop while it started
      logger.info("tumbler node {} up: {}, url {}; stop with Ctrl-C or SIGTERM", id, describe(config),
          service.info().url());
    }
    try {
      stop.await();
    } catch (InterruptedException e) {
      // interrupted (an embedding program stopping it): stop as on SIGTERM
    }
    stopSequence(id, describe(config) + ", url " + service.info().url(), service, http, logger);
  }

  /**
   * The stop, in order, bounded by {@link #STOP_BOUND} in all: {@code /health} answers 503 {@code stopping} (from
   * {@link #requestStop}, before anything else), the log says {@code stopping}, the service closes, the log says
   * {@code stopped}, and the endpoint closes last. A graceful stop's own steps (handing a leadership over, telling
   * thin clients the node is gone) go here, before the service closes.
   */
  private void stopSequence(String id, String described, LockService service, HealthEndpoint http, Logger logger) {
    long deadline = System.nanoTime() + STOP_BOUND.minus(AFTER_CLOSE).toNanos();
    status.set(NodeStatus.STOPPING);
    logger.info("tumbler node {} stopping: {}", id, described);
    leave(id, service, logger);
    Thread closing = Thread.ofPlatform().daemon().name("tumbler-node-close").start(service::close);
    boolean interrupted = false;
    while (closing.isAlive()) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        break;
      }
      try {
        closing.join(Duration.ofNanos(left));
      } catch (InterruptedException e) {
        interrupted = true; // the stop is bounded already: finish it
      }
    }
    if (closing.isAlive()) {
      logger.warn("tumbler node {}: the service did not close within {}s; stopping without it", id,
          STOP_BOUND.minus(AFTER_CLOSE).toSeconds());
    } else {
      logger.info("tumbler node {} stopped: {}", id, described);
    }
    if (http != null) {
      http.close();
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * The graceful part of the stop: the member tells whom it concerns that it goes ({@code PeerNode.leave}): its thin
   * clients hear {@code Gone} and open sessions at another member now, instead of a quarter of a lease term after
   * their links break. Their grants stay held until they expire, as after a crash: a client trusts a grant until the
   * word reaches it.
   */
  private static void leave(String id, LockService service, Logger logger) {
    try {
      PeerNode<?> node = NativeNodes.of(service);
      int sessions = node.clientSessions();
      node.leave();
      if (sessions > 0) {
        logger.info("tumbler node {}: told {} thin client session(s) that it stops", id, sessions);
      }
    } catch (RuntimeException e) {
      logger.warn("tumbler node {}: could not tell its clients that it stops: {}", id, e.toString());
    }
  }

  private HealthEndpoint startEndpoint(NodeConfig config) {
    NodeConfig.Address a = config.http().orElseThrow();
    String where = "key 'http' (from " + config.sourceOf("http").orElseThrow() + ")";
    InetSocketAddress address = new InetSocketAddress(a.host(), a.port());
    if (address.isUnresolved()) {
      throw new NodeConfig.ConfigException(where + ": cannot resolve host '" + a.host() + "'");
    }
    try {
      return HealthEndpoint.start(address, status::get, () -> stats);
    } catch (IOException e) {
      throw new ServiceUnavailableException("cannot listen on " + a + " for " + where + ": " + e.getMessage(), e);
    }
  }

  /** The node as its log lines name it: algorithm, peers, and where it listens. */
  private String describe(NodeConfig config) {
    StringBuilder sb = new StringBuilder("algorithm ").append(config.algorithm())
        .append(", peers ").append(String.join(",", config.peers()))
        .append(", listen ").append(config.listen());
    config.clientListen().ifPresent(c -> sb.append(", clients ").append(c));
    HealthEndpoint e = endpoint;
    if (e != null) {
      InetSocketAddress a = e.address();
      String host = a.getHostString();
      sb.append(", http ").append(host.indexOf(':') >= 0 ? "[" + host + "]" : host).append(':').append(a.getPort());
    }
    return sb.toString();
  }
}
