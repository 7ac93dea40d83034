package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.ProxiedTarget;
import dev.tumbler.lock.tck.TcpProxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.h2.tools.Server;

/**
 * The TCK's view of the JDBC provider on H2 in server mode: an in-memory database of this JVM served by
 * its own H2 TCP server ({@link Server}) on a free loopback port, and every service the TCK opens reaching
 * it through its own {@link TcpProxy} ({@code jdbc:h2:tcp://proxy/mem:...}). Faults: cut a client off
 * (blackhole its proxy; H2's {@code NETWORK_TIMEOUT} ends its calls), pause its renewals, and end its
 * sessions (each client is a user of its own: {@code ABORT_SESSION} on that user's sessions, with its
 * password changed until allowed again).
 *
 * <p>Not {@code CRASH_BACKEND}: the database is in memory, so a real crash loses every row and the fencing
 * sequence, and tokens would go back, which no deployment would accept; stopping only the TCP server while
 * the JVM keeps the database would be an outage, not a crash, and is not offered as one.
 */
final class H2Target extends ProxiedTarget {
  private final Duration leaseTime;
  private final String database;
  private final Connection keeper;
  private final Server server;
  private final AtomicInteger users = new AtomicInteger();
  private final Map<LockService, String> userOf = new ConcurrentHashMap<>();

  H2Target(Duration leaseTime) {
    this.leaseTime = leaseTime;
    this.database = "tck-" + UUID.randomUUID().toString().substring(0, 8);
    try {
      // created here, in this JVM: the TCP server does not create databases for remote clients
      this.keeper = DriverManager.getConnection("jdbc:h2:mem:" + database + ";DB_CLOSE_DELAY=-1");
      this.server = Server.createTcpServer("-tcpPort", Integer.toString(EmbeddedPg.freePort())).start();
    } catch (SQLException e) {
      throw new IllegalStateException("cannot start the H2 TCP server for the TCK: " + e.getMessage(), e);
    }
  }

  private String urlFor(String address) {
    return "lock:jdbc:h2:tcp://" + address + "/mem:" + database + "?createSchema=true&timeout=1s&leaseTime="
        + leaseTime.toMillis() + "ms";
  }

  @Override
  protected List<String> backend() {
    return List.of("127.0.0.1:" + server.getPort());
  }

  @Override
  protected LockService connect(List<String> addresses) {
    String user = "TCK_CLIENT_" + users.incrementAndGet();
    keeper("CREATE USER " + user + " PASSWORD 'tck' ADMIN");
    LockService s = LockProviders.connect(urlFor(addresses.getFirst()) + "&user=" + user + "&password=tck");
    userOf.put(s, user);
    return s;
  }

  @Override
  public Set<Fault> supported() {
    return Set.of(Fault.CUT_OFF_CLIENT, Fault.PAUSE_RENEWALS, Fault.END_SESSIONS);
  }

  @Override
  public void endSessions(LockService client) {
    String user = userOf.get(client);
    keeper("ALTER USER " + user + " SET PASSWORD 'refused'",
        "SELECT ABORT_SESSION(SESSION_ID) FROM INFORMATION_SCHEMA.SESSIONS WHERE USER_NAME = '" + user + "'");
  }

  @Override
  public void allowSessions(LockService client) {
    keeper("ALTER USER " + userOf.get(client) + " SET PASSWORD 'tck'");
  }

  private void keeper(String... statements) {
    try (Statement st = keeper.createStatement()) {
      for (String sql : statements) {
        st.execute(sql);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("H2 refused " + List.of(statements) + ": " + e.getMessage(), e);
    }
  }

  @Override
  public Duration leaseTime() {
    return leaseTime;
  }

  @Override
  public Optional<String> url() {
    return Optional.of(urlFor(backend().getFirst()));
  }

  @Override
  protected void closeBackend() {
    server.stop();
    try (Statement s = keeper.createStatement()) {
      s.execute("SHUTDOWN");
    } catch (SQLException e) {
      // the database is gone with the JVM anyway
    } finally {
      try {
        keeper.close();
      } catch (SQLException ignored) {
        // closed by SHUTDOWN
      }
    }
  }
}
