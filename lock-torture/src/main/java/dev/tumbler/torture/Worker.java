package dev.tumbler.torture;

import dev.tumbler.lock.Capability;
import dev.tumbler.lock.Lease;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.ServiceInfo;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * A torture client: one process, one {@link LockService}, one loop. It picks a name, reports the acquire it invokes,
 * waits at most {@code --wait} for the lock, reports the grant with its fencing token (or the empty end of the wait,
 * or the exception), registers an {@code onLost} listener that reports the loss to the register the moment it
 * fires, then uses the lock as a careful application does: it checks that the lease is still valid, does some work
 * (sleeps) and writes its token to the fenced register; one to three times, now and then with long work that spans
 * several renewals. Then it reports that it releases the lease, releases it, and reports that the release returned.
 * Every report waits for the register's answer, so the register's order is the order things happened in.
 *
 * <p>The check-then-work-then-write is on purpose: a process paused (SIGSTOP) or cut off between its check and its
 * write wakes up with a write its lease no longer covers, the write Kleppmann's fencing argument is about; the
 * register rejects it if a later holder has written.
 *
 * <p>Run by the harness as {@code tumbler torture-worker --register HOST:PORT --client ID --names A,B --wait MS
 * --hold MS --seed N}, with the lock URL in the environment variable {@code TUMBLER_TORTURE_URL} (never on a command
 * line, where {@code ps} shows it), and {@code TUMBLER_PASSWORD} / {@code TUMBLER_CLIENT_SECRET} passed to the
 * provider as the properties {@code password} / {@code clientSecret}. It stops when its standard input ends (the
 * harness closed it, or died): it finishes the lease it holds, says {@code bye} and closes the service.
 */
public final class Worker {
  /** The environment variable that carries the lock URL. */
  public static final String URL_ENV = "TUMBLER_TORTURE_URL";

  private final String client;
  private final String registerAddress;
  private final List<String> names;
  private final Duration maxWait;
  private final long holdMillis;
  private final SplittableRandom random;
  private volatile boolean stop;
  private Reporter reporter;

  private Worker(String client, String register, List<String> names, Duration maxWait, long holdMillis, long seed) {
    this.client = client;
    this.registerAddress = register;
    this.names = names;
    this.maxWait = maxWait;
    this.holdMillis = holdMillis;
    this.random = new SplittableRandom(seed);
  }

  public static void main(String[] args) {
    System.exit(run(args));
  }

  /**
   * Runs a worker until its standard input ends.
   *
   * @return 0 after a clean stop; 2 for bad arguments; 3 if the service cannot be opened; 4 if the register is gone
   */
  public static int run(String... args) {
    Map<String, String> opts;
    try {
      opts = Args.parse(args, List.of("--register", "--client", "--names", "--wait", "--hold", "--seed"));
    } catch (IllegalArgumentException e) {
      System.err.println("torture-worker: " + e.getMessage());
      return 2;
    }
    String url = System.getenv(URL_ENV);
    if (url == null || url.isBlank()) {
      System.err.println("torture-worker: the lock URL is not set (environment variable " + URL_ENV + ")");
      return 2;
    }
    Worker w = new Worker(opts.get("--client"), opts.get("--register"), List.of(opts.get("--names").split(",")),
        Duration.ofMillis(Long.parseLong(opts.get("--wait"))), Long.parseLong(opts.get("--hold")),
        Long.parseLong(opts.get("--seed")));
    LockService service;
    try {
      service = LockProviders.connect(url, properties());
    } catch (RuntimeException e) {
      System.err.println("torture-worker " + w.client + ": cannot open the lock service: " + e);
      return 3;
    }
    try (service) {
      w.reporter = new Reporter(w.registerAddress, w.client);
      w.reporter.hello(describe(service.info()));
      Thread.ofPlatform().daemon().name("stdin-watch").start(w::watchInput);
      w.loop(service);
      w.reporter.send(Event.of(Event.Type.BYE));
      return 0;
    } catch (UncheckedIOException e) {
      System.err.println("torture-worker " + w.client + ": the register is gone: " + e.getMessage());
      return 4;
    } catch (InterruptedException e) {
      return 0;
    }
  }

  /** The provider properties the environment gives: {@code password} and {@code clientSecret}. */
  static Properties properties() {
    Properties props = new Properties();
    putEnv(props, "password", "TUMBLER_PASSWORD");
    putEnv(props, "clientSecret", "TUMBLER_CLIENT_SECRET");
    return props;
  }

  private static void putEnv(Properties props, String key, String env) {
    String v = System.getenv(env);
    if (v != null && !v.isEmpty()) {
      props.put(key, v);
    }
  }

  /** {@code provider=redis;capabilities=FENCING,MUTEX,…;pid=123}: what the checker needs of the provider. */
  static String describe(ServiceInfo info) {
    TreeSet<String> caps = new TreeSet<>();
    for (Capability c : info.capabilities()) {
      caps.add(c.name());
    }
    return "provider=" + info.provider() + ";capabilities=" + String.join(",", caps) + ";pid="
        + ProcessHandle.current().pid();
  }

  private void watchInput() {
    try {
      while (System.in.read() >= 0) {
        // nothing is sent; the end of the input is the signal
      }
    } catch (IOException ignored) {
      // the same
    }
    stop = true;
  }

  private void loop(LockService service) throws InterruptedException {
    long grants = 0;
    while (!stop) {
      String name = names.get(random.nextInt(names.size()));
      reporter.send(Event.of(Event.Type.INVOKE).withName(name).withMillis(maxWait.toMillis()));
      long t0 = System.nanoTime();
      Optional<Lease> got;
      try {
        got = service.lock(name).tryAcquire(maxWait);
      } catch (RuntimeException e) {
        reporter.send(Event.of(Event.Type.FAIL).withName(name).withMillis(since(t0)).withDetail(e.toString()));
        Thread.sleep(20 + random.nextInt(100));
        continue;
      }
      long waited = since(t0);
      if (got.isEmpty()) {
        reporter.send(Event.of(Event.Type.TIMEOUT).withName(name).withMillis(waited));
        continue;
      }
      Lease lease = got.get();
      long grant = ++grants;
      long token = lease.fencingToken();
      reporter.send(Event.of(Event.Type.GRANT).withName(name).withToken(token).withGrant(grant).withMillis(waited));
      lease.onLost(e -> reporter.send(Event.of(Event.Type.LOST).withName(name).withToken(token).withGrant(grant)
          .withDetail(e.reason() + ": " + e.detail())));
      use(lease, name, token, grant);
      reporter.send(Event.of(Event.Type.RELEASE).withName(name).withToken(token).withGrant(grant));
      String error = null;
      try {
        lease.release();
      } catch (RuntimeException e) {
        error = e.toString();
      }
      Event released = Event.of(Event.Type.RELEASED).withName(name).withToken(token).withGrant(grant);
      reporter.send(error == null ? released : released.withDetail(error));
      Thread.sleep(random.nextInt(20));
    }
  }

  /** One to three writes, each after a check of the lease and some work; one grant in ten works long. */
  private void use(Lease lease, String name, long token, long grant) throws InterruptedException {
    int writes = 1 + random.nextInt(3);
    boolean slow = random.nextInt(10) == 0;
    for (int i = 0; i < writes && !stop; i++) {
      if (!lease.isValid()) {
        return;
      }
      long work = slow ? holdMillis * 2 + random.nextLong(holdMillis * 3 + 1) : random.nextLong(holdMillis + 1);
      Thread.sleep(work);
      reporter.send(Event.of(Event.Type.WRITE).withName(name).withToken(token).withGrant(grant));
    }
  }

  private static long since(long t0) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
  }

  /** The connection to the register: one line out, one line back, one at a time. */
  static final class Reporter {
    private final Socket socket;
    private final Writer out;
    private final BufferedReader in;
    private final String client;

    Reporter(String address, String client) {
      this.client = client;
      int colon = address.lastIndexOf(':');
      try {
        socket = new Socket();
        socket.connect(new InetSocketAddress(address.substring(0, colon),
            Integer.parseInt(address.substring(colon + 1))), 10_000);
        socket.setTcpNoDelay(true);
        out = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8);
        in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot reach the register at " + address, e);
      }
    }

    void hello(String detail) {
      send(Event.of(Event.Type.HELLO).withClient(client).withDetail(detail));
    }

    /** Sends {@code e} and returns the register's answer; blocks until it comes. */
    synchronized Map<String, Object> send(Event e) {
      try {
        Map<String, Object> f = e.fields();
        f.remove("seq");
        f.remove("at");
        out.write(Json.write(f));
        out.write('\n');
        out.flush();
        String line = in.readLine();
        if (line == null) {
          throw new IOException("the register closed the connection");
        }
        Map<String, Object> answer = Json.read(line);
        if (answer.containsKey("error")) {
          throw new IllegalStateException("the register refused " + e.type().wire() + ": " + answer.get("error"));
        }
        return answer;
      } catch (IOException ex) {
        throw new UncheckedIOException(ex);
      }
    }
  }

  /** {@code --key value} pairs, each required once. */
  static final class Args {
    private Args() {}

    static Map<String, String> parse(String[] args, List<String> required) {
      Map<String, String> m = new java.util.HashMap<>();
      for (int i = 0; i < args.length; i++) {
        String k = args[i];
        if (!required.contains(k)) {
          throw new IllegalArgumentException("unknown option " + k + "; expected " + String.join(" ", required));
        }
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("option " + k + " needs a value");
        }
        if (m.put(k, args[++i]) != null) {
          throw new IllegalArgumentException("option " + k + " given twice");
        }
      }
      for (String k : required) {
        if (!m.containsKey(k)) {
          throw new IllegalArgumentException("option " + k + " is required");
        }
      }
      for (String k : List.of("--wait", "--hold", "--seed")) {
        try {
          Long.parseLong(m.get(k));
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("option " + k + " is not an integer: " + m.get(k));
        }
      }
      return m;
    }
  }
}
