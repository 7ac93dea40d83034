package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.ProxiedTarget;
import dev.tumbler.lock.tck.TcpProxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.Optional;
import java.util.Set;

/**
 * The TCK's view of the JDBC provider on PostgreSQL: the JVM's embedded server, and every service the TCK
 * opens reaching it through its own {@link TcpProxy}, so that one client can be cut off while the others
 * go on. Faults: cut a client off (blackhole its proxy), pause its renewals (the SPI's renewer), end its
 * sessions (each client logs in as a role of its own: {@code pg_terminate_backend} on that role's
 * sessions, with the role set {@code NOLOGIN} until allowed again), crash and restart the server (its
 * committed data, the fencing sequence included, survives, as after a crash).
 */
final class PostgresTarget extends ProxiedTarget {
  private static final AtomicInteger ROLES = new AtomicInteger();
  private final Map<LockService, String> roles = new ConcurrentHashMap<>();
  private final EmbeddedPg pg;
  private final Duration leaseTime;
  private final String params;

  PostgresTarget(EmbeddedPg pg, Duration leaseTime, String table) {
    this(pg, leaseTime, table, "");
  }

  /** @param more further parameters, each as {@code &name=value} */
  PostgresTarget(EmbeddedPg pg, Duration leaseTime, String table, String more) {
    this.pg = pg;
    this.leaseTime = leaseTime;
    // advisory mode has no lease term; leaseTime() then only scales the TCK's waits
    this.params = (more.contains("mode=advisory") ? "" : "&leaseTime=" + leaseTime.toMillis() + "ms")
        + "&timeout=1s&recheck=500ms&createSchema=true&table=" + table + more;
  }

  private String urlFor(String address) {
    return pg.lockUrl(address) + params;
  }

  @Override
  protected List<String> backend() {
    return List.of(pg.address());
  }

  @Override
  protected LockService connect(List<String> addresses) {
    String role = "tck_client_" + ROLES.incrementAndGet();
    admin("CREATE ROLE " + role + " LOGIN SUPERUSER");
    LockService s = LockProviders.connect("lock:jdbc:postgresql://" + addresses.getFirst() + "/postgres?user=" + role
        + params);
    roles.put(s, role);
    return s;
  }

  @Override
  public void endSessions(LockService client) {
    String role = roleOf(client);
    admin("ALTER ROLE " + role + " NOLOGIN", "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '"
        + role + "'");
  }

  @Override
  public void allowSessions(LockService client) {
    admin("ALTER ROLE " + roleOf(client) + " LOGIN");
  }

  private String roleOf(LockService client) {
    String role = roles.get(client);
    if (role == null) {
      throw new IllegalArgumentException("not a client of this target: " + client);
    }
    return role;
  }

  private void admin(String... statements) {
    try (Connection c = pg.admin(); Statement st = c.createStatement()) {
      for (String sql : statements) {
        st.execute(sql);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("the server refused " + List.of(statements) + ": " + e.getMessage(), e);
    }
  }

  @Override
  public Duration leaseTime() {
    return leaseTime;
  }

  @Override
  public Optional<String> url() {
    return Optional.of(urlFor(pg.address()));
  }

  @Override
  public Set<Fault> supported() {
    return Set.of(Fault.CUT_OFF_CLIENT, Fault.PAUSE_RENEWALS, Fault.END_SESSIONS, Fault.CRASH_BACKEND);
  }

  @Override
  public void crashBackend() {
    pg.stop();
  }

  /** Advisory locks are the sessions': a crash ends them, and their holders hear at their next check (the README). */
  @Override
  public boolean crashEndsGrantsUnheard() {
    return params.contains("mode=advisory");
  }

  @Override
  public void restartBackend() {
    pg.restart();
  }

  @Override
  protected void closeBackend() {
    // the server is the JVM's, shared by the test classes; it stops with the JVM
    if (!pg.isRunning()) {
      pg.restart();
    }
  }
}
