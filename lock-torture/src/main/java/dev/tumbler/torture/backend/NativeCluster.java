package dev.tumbler.torture.backend;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A native cluster of {@code tumbler node} member processes on loopback ports, each taking thin clients
 * ({@code clientListen}) and serving {@code /health} and {@code /metrics} ({@code http}), with fresh random secrets
 * for the members and for their clients. Ready when every member's {@code /health} says {@code ok} (a member that
 * takes clients joins a lease term after it starts). {@link #leader()} reads, from a member's {@code /metrics}, the
 * member at position 0 of the elected view: the lock server of {@code lease} and {@code buckets}.
 */
public final class NativeCluster implements AutoCloseable {
  private static final Pattern VIEW_LEADER =
      Pattern.compile("^tumbler_view_leader\\{node=\"([^\"]+)\",position=\"0\"", Pattern.MULTILINE);

  private final List<Member> members;
  private final String clientSecret;

  private NativeCluster(List<Member> members, String clientSecret) {
    this.members = members;
    this.clientSecret = clientSecret;
  }

  /**
   * Starts {@code size} members running {@code algorithm}, each with the URL parameters {@code params}
   * ({@code leaseTime}, {@code leaderLease}, …), logs in {@code dir}, and waits until all serve.
   */
  public static NativeCluster start(int size, String algorithm, Map<String, String> params, Path dir,
      JavaCommand java) {
    SecureRandom r = new SecureRandom();
    String secret = secret(r);
    String clientSecret = secret(r);
    List<String> listen = new ArrayList<>();
    for (int i = 0; i < size; i++) {
      listen.add("127.0.0.1:" + Processes.freePort());
    }
    List<Member> members = new ArrayList<>();
    try {
      Files.createDirectories(dir);
      for (int i = 0; i < size; i++) {
        List<String> peers = new ArrayList<>(listen);
        peers.remove(i);
        int client = Processes.freePort();
        int http = Processes.freePort();
        List<String> args = new ArrayList<>(List.of("node", "--listen", listen.get(i), "--peers",
            String.join(",", peers), "--algorithm", algorithm, "--param", "clientListen=127.0.0.1:" + client,
            "--param", "http=127.0.0.1:" + http));
        for (Map.Entry<String, String> p : params.entrySet()) {
          args.add("--param");
          args.add(p.getKey() + "=" + p.getValue());
        }
        members.add(new Member("member-" + (i + 1), listen.get(i), client, http, java.tumbler(List.of(), args),
            Map.of("TUMBLER_SECRET", secret, "TUMBLER_CLIENT_SECRET", clientSecret),
            dir.resolve("member-" + (i + 1) + ".log")));
      }
      for (Member m : members) {
        m.launch();
      }
      for (Member m : members) {
        m.awaitHealthy(Duration.ofSeconds(90));
      }
      return new NativeCluster(members, clientSecret);
    } catch (IOException e) {
      members.forEach(Member::kill);
      throw new UncheckedIOException(e);
    } catch (RuntimeException e) {
      members.forEach(Member::kill);
      throw e;
    }
  }

  private static String secret(SecureRandom r) {
    byte[] b = new byte[24];
    r.nextBytes(b);
    return Base64.getEncoder().encodeToString(b);
  }

  public List<Member> members() {
    return members;
  }

  /** The members' client addresses, {@code 127.0.0.1:port} each. */
  public List<String> clientAddresses() {
    return members.stream().map(m -> "127.0.0.1:" + m.clientPort).toList();
  }

  /** The thin clients' credential (for {@code TUMBLER_CLIENT_SECRET}); never printed. */
  public String clientSecret() {
    return clientSecret;
  }

  /** The member the running members' view names at position 0 (the lock server of single-server algorithms). */
  public Optional<Member> leader() {
    for (Member m : members) {
      if (!m.isRunning()) {
        continue;
      }
      Optional<String> metrics = m.get("/metrics");
      if (metrics.isEmpty()) {
        continue;
      }
      Matcher x = VIEW_LEADER.matcher(metrics.get());
      if (x.find()) {
        String id = x.group(1);
        return members.stream().filter(p -> p.listen.equals(id)).findFirst();
      }
    }
    return Optional.empty();
  }

  @Override
  public void close() {
    members.forEach(Member::kill);
  }

  /** One {@code tumbler node}. */
  public static final class Member extends ProcessServer {
    private final String id;
    private final String listen;
    private final int clientPort;
    private final int httpPort;
    private final List<String> command;
    private final Map<String, String> env;
    private final Path log;

    Member(String id, String listen, int clientPort, int httpPort, List<String> command, Map<String, String> env,
        Path log) {
      this.id = id;
      this.listen = listen;
      this.clientPort = clientPort;
      this.httpPort = httpPort;
      this.command = command;
      this.env = new LinkedHashMap<>(env);
      this.log = log;
    }

    @Override
    public String id() {
      return id;
    }

    /** Its member id, the address its peers dial. */
    public String listen() {
      return listen;
    }

    void launch() {
      ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      b.environment().putAll(env);
      launch(b);
    }

    void awaitHealthy(Duration max) {
      Processes.await(max, "native member " + id + " to serve (/health ok)", () -> {
        if (!isRunning()) {
          throw Processes.exited("native member " + id, log);
        }
        return get("/health").map(s -> s.startsWith("ok")).orElse(false);
      });
    }

    /** Starts the member again and waits until its {@code /health} says {@code ok}. */
    @Override
    public synchronized void start() {
      kill();
      launch();
      awaitHealthy(Duration.ofSeconds(90));
    }

    /** The body of a 200 answer to {@code GET path} on its HTTP endpoint, or empty. */
    Optional<String> get(String path) {
      try {
        HttpURLConnection c = (HttpURLConnection) URI.create("http://127.0.0.1:" + httpPort + path).toURL()
            .openConnection();
        c.setConnectTimeout(500);
        c.setReadTimeout(2000);
        try {
          if (c.getResponseCode() != 200) {
            return Optional.empty();
          }
          try (InputStream in = c.getInputStream()) {
            return Optional.of(new String(in.readAllBytes(), StandardCharsets.UTF_8));
          }
        } finally {
          c.disconnect();
        }
      } catch (IOException e) {
        return Optional.empty();
      }
    }
  }
}
