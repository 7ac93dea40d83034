package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.tck.ProxiedTarget;
import dev.tumbler.lock.tck.TcpProxy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The TCK's view of the JDBC provider on PostgreSQL: the JVM's embedded server, and every service the TCK
 * opens reaching it through its own {@link TcpProxy}, so that one client can be cut off while the others
 * go on. Faults: cut a client off (blackhole its proxy), pause its renewals (the SPI's renewer), crash and
 * restart the server (its committed data, the fencing sequence included, survives, as after a crash).
 */
final class PostgresTarget extends ProxiedTarget {
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
    return LockProviders.connect(urlFor(addresses.getFirst()));
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
    return Set.of(Fault.CUT_OFF_CLIENT, Fault.PAUSE_RENEWALS, Fault.CRASH_BACKEND);
  }

  @Override
  public void crashBackend() {
    pg.stop();
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
