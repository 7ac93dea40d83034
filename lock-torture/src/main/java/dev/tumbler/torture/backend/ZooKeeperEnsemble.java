package dev.tumbler.torture.backend;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A ZooKeeper ensemble of separate server processes on loopback ports: each member a JVM of its own running
 * ZooKeeper's {@code QuorumPeerMain} from this JVM's class path (the zookeeper jar the Curator provider brings), with
 * a data directory that outlives it, so that a member killed and started again rejoins with what it logged.
 *
 * <p>Ticks of 500 ms: sessions between 1 s and 10 s, a follower that hears nothing from its leader for two seconds
 * ({@code syncLimit}) gives up on it. Only the {@code srvr} and {@code ruok} four-letter words are open: the ensemble
 * is ready when every member says it is a leader or a follower, and {@link #leader()} asks them which.
 */
public final class ZooKeeperEnsemble implements AutoCloseable {
  private final Path dir;
  private final List<Member> members;

  private ZooKeeperEnsemble(Path dir, List<Member> members) {
    this.dir = dir;
    this.members = members;
  }

  /** Starts {@code size} members under {@code dir} (logs there too) and waits until they form a quorum. */
  public static ZooKeeperEnsemble start(int size, Path dir, JavaCommand java) {
    List<Member> members = new ArrayList<>();
    try {
      Files.createDirectories(dir);
      List<String> servers = new ArrayList<>();
      int[] client = new int[size];
      for (int i = 1; i <= size; i++) {
        client[i - 1] = Processes.freePort();
        servers.add("server." + i + "=127.0.0.1:" + Processes.freePort() + ":" + Processes.freePort());
      }
      for (int i = 1; i <= size; i++) {
        Path data = dir.resolve("zk-" + i);
        Files.createDirectories(data);
        Files.writeString(data.resolve("myid"), Integer.toString(i));
        List<String> cfg = new ArrayList<>(List.of("tickTime=500", "initLimit=20", "syncLimit=4",
            "dataDir=" + data.toAbsolutePath(), "clientPort=" + client[i - 1], "clientPortAddress=127.0.0.1",
            "maxClientCnxns=0", "4lw.commands.whitelist=srvr,ruok", "admin.enableServer=false",
            "standaloneEnabled=false", "autopurge.purgeInterval=0"));
        cfg.addAll(servers);
        Path conf = dir.resolve("zoo-" + i + ".cfg");
        Files.write(conf, cfg);
        members.add(new Member("zk-" + i, client[i - 1], conf, dir.resolve("zk-" + i + ".log"), java));
      }
      for (Member m : members) {
        m.launch();
      }
      ZooKeeperEnsemble z = new ZooKeeperEnsemble(dir, members);
      z.awaitQuorum(Duration.ofSeconds(60));
      return z;
    } catch (IOException e) {
      members.forEach(Member::kill);
      throw new UncheckedIOException(e);
    } catch (RuntimeException e) {
      members.forEach(Member::kill);
      throw e;
    }
  }

  /** Waits until every running member is a leader or a follower, one of them the leader. */
  public void awaitQuorum(Duration max) {
    Processes.await(max, "the ZooKeeper ensemble to elect a leader", () -> {
      int leaders = 0;
      for (Member m : members) {
        if (!m.isRunning()) {
          continue;
        }
        String mode = m.mode().orElse("");
        if (mode.equals("leader")) {
          leaders++;
        } else if (!mode.equals("follower")) {
          return false;
        }
      }
      return leaders == 1;
    });
  }

  public List<Member> members() {
    return members;
  }

  /** The client addresses, {@code 127.0.0.1:port} each. */
  public List<String> addresses() {
    return members.stream().map(Member::address).toList();
  }

  /** The member that says it leads, if one does now. */
  public Optional<Member> leader() {
    for (Member m : members) {
      if (m.isRunning() && m.mode().orElse("").equals("leader")) {
        return Optional.of(m);
      }
    }
    return Optional.empty();
  }

  @Override
  public void close() {
    members.forEach(Member::kill);
  }

  /** The directory of the configurations, the data and the logs. */
  public Path dir() {
    return dir;
  }

  /** One member: a {@code QuorumPeerMain} JVM. */
  public static final class Member extends ProcessServer {
    private final String id;
    private final int port;
    private final Path conf;
    private final Path log;
    private final JavaCommand java;

    Member(String id, int port, Path conf, Path log, JavaCommand java) {
      this.id = id;
      this.port = port;
      this.conf = conf;
      this.log = log;
      this.java = java;
    }

    @Override
    public String id() {
      return id;
    }

    public String address() {
      return "127.0.0.1:" + port;
    }

    void launch() {
      launch(new ProcessBuilder(java.main("org.apache.zookeeper.server.quorum.QuorumPeerMain",
          List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dzookeeper.jmx.log4j.disable=true"),
          List.of(conf.toAbsolutePath().toString())))
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())));
    }

    /** Starts the member again and waits until it has joined the quorum as a leader or a follower. */
    @Override
    public synchronized void start() {
      kill();
      launch();
      Processes.await(Duration.ofSeconds(60), "ZooKeeper member " + id + " to rejoin its ensemble", () -> {
        if (!isRunning()) {
          throw Processes.exited("ZooKeeper member " + id, log);
        }
        String mode = mode().orElse("");
        return mode.equals("leader") || mode.equals("follower");
      });
    }

    /** What the member says of itself ({@code srvr}): {@code leader}, {@code follower}, …, or empty. */
    public Optional<String> mode() {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 500);
        s.setSoTimeout(1000);
        OutputStream out = s.getOutputStream();
        out.write("srvr".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
          if (line.startsWith("Mode: ")) {
            return Optional.of(line.substring(6).trim());
          }
        }
        return Optional.empty();
      } catch (IOException e) {
        return Optional.empty();
      }
    }
  }
}
