package dev.tumbler.lock.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import com.zaxxer.hikari.pool.HikariPool;
import dev.tumbler.lock.Capability;
import dev.tumbler.lock.HeldLock;
import dev.tumbler.lock.LeaderElection;
import dev.tumbler.lock.Lock;
import dev.tumbler.lock.LockException;
import dev.tumbler.lock.ReadWriteLock;
import dev.tumbler.lock.Semaphore;
import dev.tumbler.lock.ServiceClosedException;
import dev.tumbler.lock.ServiceInfo;
import dev.tumbler.lock.ServiceUnavailableException;
import dev.tumbler.lock.spi.AbstractLease;
import dev.tumbler.lock.spi.AbstractLockService;
import dev.tumbler.lock.spi.Deadline;
import dev.tumbler.lock.spi.LockElection;
import dev.tumbler.lock.spi.SimpleReadWriteLock;
import dev.tumbler.lock.spi.Ticker;
import dev.tumbler.lock.spi.UncertainAttempts;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientConnectionException;
import java.sql.SQLTransientException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lock service on a relational database, through a JDBC {@link DataSource} (a HikariCP pool the service
 * opened, or one the application passed in).
 *
 * <h2>Grants</h2>
 * Every grant is one short transaction: lock the name's row in {@code <table>_keys} ({@code SELECT ... FOR
 * UPDATE}, so grants and renewals of one name are serialized), read its holder rows, delete those whose
 * {@code expires_at} has passed by the <em>database</em> clock, and, when the request is compatible with
 * the rest, insert a holder row whose token is drawn from the fencing sequence and whose expiry is the
 * database's now plus the lease term. The token is drawn under the name's row lock, so the grants of a name
 * get increasing tokens in the order they commit; the sequence never goes back, whatever rows are deleted.
 * Where the dialect {@linkplain Dialect#grantsInOneCall() allows it} (PostgreSQL), the same steps are one
 * call of three statements run as one transaction, the decision to insert written in SQL (see
 * {@link #oneCallGrantSql}); each statement reads what committed before it started, so the statements
 * after the row lock see every grant committed before it was taken.
 *
 * <h2>The line</h2>
 * In lease mode grants are first come, first served: an acquire that is refused joins the name's line in
 * {@code <table>_queue} in the refusing transaction (a ticket from the sequence), and a grant goes through
 * only when no live waiter it must not pass is ahead of it (any earlier one; a read lock passes earlier
 * read locks). Every attempt extends its place by a term, and a waiter looks again at least every
 * {@code T/3}; one that gives up leaves the line and wakes the others. Advisory mode has no line.
 *
 * <h2>Leases</h2>
 * The client's side is the SPI's: renewed every {@code T/3} by the service's renewer, trusted until
 * {@code sent + T × 3/4} on the client's monotonic clock, where {@code sent} precedes the transaction whose
 * database time starts the term. A renewal that finds its row gone or expired reports the lease lost. So a
 * holder that is cut off, paused or whose connections are terminated is told before the database can let
 * another client in, as long as the two clocks' rates differ by less than a third.
 *
 * <h2>Waiting</h2>
 * Waiters do not poll: they sleep until a release wakes them (a release by a service of this JVM on the
 * same database, or, on PostgreSQL, a {@code pg_notify} from any client), until the holder's grant expires
 * by itself, or until {@code recheck} has passed (on databases without notifications, a backoff that
 * doubles from {@value #FIRST_BACKOFF_MILLIS} ms up to {@code recheck}), whichever comes first — never past
 * their deadline. In line, a waiter also looks again at least every {@code T/3}, to keep its place.
 *
 * <h2>Outages</h2>
 * A timed wait rides out an unreachable database (or a pool with no connection free) until its deadline,
 * retrying every 100 ms, and then throws {@link ServiceUnavailableException}, never "not granted"; an
 * acquire without deadline gives up after a lease term of outage. The pool's {@code connectionTimeout} and
 * the driver's socket timeout do not stretch a wait: each attempt's borrow (on a HikariCP pool) and, on
 * PostgreSQL, its statements are bounded by the time left plus {@value #LATE_MILLIS} ms, and what must be
 * undone after a failure (an uncertain grant, a place in line the database could not be told of) is undone
 * in the background. What the service cannot bound (another DataSource's borrow, an H2 reply) the API's
 * answer grace does: a timed acquire always ends by its wait plus
 * {@value dev.tumbler.lock.spi.AbstractLockService#ANSWER_GRACE_MILLIS} ms.
 *
 * <h2>Connections</h2>
 * Every call borrows a connection for one short transaction and gives it back, except the {@code LISTEN}
 * connection on PostgreSQL, held only while the service has waiters ({@link Notifications}), and in advisory
 * mode the sessions holding locks ({@link Advisory}); {@link JdbcConfig#minimumPoolSize} is what a pool
 * needs for that.
 *
 * <p>Errors of the driver never reach callers raw: an unreachable database is a
 * {@link ServiceUnavailableException}, anything the database refuses a {@link LockException}, both naming
 * the lock and the operation; a pool whose connections are all in use is a {@link ServiceUnavailableException}
 * naming {@code maximumPoolSize}. Thread safe.
 */
final class JdbcLockService extends AbstractLockService {
  private static final Logger LOG = LoggerFactory.getLogger(JdbcLockService.class);
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final long FIRST_BACKOFF_MILLIS = 20;
  private static final long OUTAGE_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
  /**
   * How far past its deadline an attempt may run: its borrow of a connection, and on PostgreSQL its statements
   * (through the connection's network timeout), are bounded by the time the wait has left plus this. Below the API's
   * answer grace, so that the service ends an attempt (and undoes what it must) before the API abandons it; not
   * much below it, since this is all a {@code tryAcquire(0)} gets for its round trip: at 500 ms a PostgreSQL
   * reply late on a loaded machine failed a try with "unreachable" (and a borrow with "no connection") in
   * suite runs, while the database was only slow.
   */
  static final long LATE_MILLIS = 1500;
  private static final Executor DIRECT = Runnable::run;
  /**
   * Platform threads for the statements a virtual thread sends ({@link #uncut}); one per call in flight, so never more
   * than the connections borrowed; an idle one ends after a minute.
   */
  private static final ExecutorService STATEMENTS = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS,
      new SynchronousQueue<>(), Thread.ofPlatform().daemon().name("tumbler-jdbc-statements-", 0).factory());

  static final Set<Capability> CAPABILITIES = Set.of(Capability.MUTEX, Capability.READ_WRITE,
      Capability.SEMAPHORE, Capability.FENCING, Capability.LEASE_EXPIRY, Capability.LOST_NOTIFICATION,
      Capability.FAIR, Capability.LEADER_ELECTION);
  /** What {@code mode=advisory} keeps: no term on the server, so neither expiry nor lost-before-granted. */
  static final Set<Capability> ADVISORY_CAPABILITIES = Set.of(Capability.MUTEX, Capability.READ_WRITE,
      Capability.SEMAPHORE, Capability.FENCING, Capability.LEADER_ELECTION);

  private final JdbcConfig config;
  private final DataSource dataSource;
  /** The DataSource as a HikariCP pool (the service's own, or an application's), or null when it is not one. */
  private final HikariDataSource hikari;
  /** Whether {@link #keepOneSpare} is opening a connection now. */
  private final AtomicBoolean openingSpare = new AtomicBoolean();
  private final AutoCloseable ownedPool;
  private final Dialect dialect;
  private final String serviceId;
  private final AtomicLong sequence = new AtomicLong();
  private final Wakeups wakeups;
  private final Notifications notifications;
  /** {@code mode=advisory}'s grants, or null in lease mode. */
  private final Advisory advisory;
  private final long recheckNanos;
  /** How long a renewal tries again for a name's key row another grant holds: one call's {@code timeout}. */
  private final long renewRowNanos;
  private final long leaseNanos;
  /** Acquires in progress (guarded by itself). */
  private final int[] inFlight = new int[1];
  /** The calls waits made to the database: attempts and looks at the line ({@link #waitCalls}). */
  private final AtomicLong waitCalls = new AtomicLong();
  /** Grants and places in line that attempts with no answer may still make: undone again and again. */
  private final UncertainAttempts uncertainAttempts;

  private final String lockKeySql;
  private final String insertKeySql;
  private final String holdersSql;
  private final String deleteExpiredSql;
  private final String insertSql;
  private final String renewSql;
  private final String releaseSql;
  private final String availableSql;
  private final String leaderSql;
  private final String heldSql;
  private final String queueSql;
  private final String deleteExpiredWaitersSql;
  private final String enqueueSql;
  private final String refreshWaiterSql;
  /** How many live waiters that block it are ahead of a waiter in line ({@link #behindInLine}): for reads, others. */
  private final String aheadOfReadSql;
  private final String aheadSql;
  /** A live place in line kept another term, without the name's row lock. */
  private final String keepPlaceSql;
  private final String dequeueSql;
  /** The one-call grant per mode ({@code X}, {@code S}, {@code P}), or null where the dialect has none. */
  private final Map<Character, NamedSql> oneCallGrantSql;

  /**
   * @param dataSource where connections come from
   * @param ownedPool the pool this service opened and closes, or null for the application's DataSource
   * @param database identifies the database and table among the services of this JVM (for local wake-ups)
   */
  JdbcLockService(JdbcConfig config, ServiceInfo info, DataSource dataSource, AutoCloseable ownedPool,
      String database, Ticker ticker) {
    super(info, config.lease(), ticker);
    this.config = config;
    this.dataSource = dataSource;
    this.hikari = dataSource instanceof HikariDataSource h ? h : null;
    this.ownedPool = ownedPool;
    this.dialect = config.dialect();
    this.serviceId = randomId();
    this.recheckNanos = config.recheck().toNanos();
    this.renewRowNanos = config.timeout().toNanos();
    // how long an acquire without deadline rides out an outage: a lease term; in advisory mode (no term) six call
    // timeouts
    this.leaseNanos = config.lease().expires() ? config.lease().leaseTime().toNanos() : 6 * config.timeout().toNanos();
    // (a term, and the statement's own wait for the name's row, after which a late grant can no longer commit)
    this.uncertainAttempts = new UncertainAttempts(ticker(), Duration.ofNanos(leaseNanos).plus(config.timeout()),
        this::isClosed,
        "tumbler-jdbc-undo");
    this.wakeups = new Wakeups(database);
    this.notifications = dialect.canNotify()
        ? new Notifications(dataSource, config.table().channel(), wakeups, config.recheck(), this::keepOneSpare) : null;

    JdbcConfig.TableNames t = config.table();
    this.advisory = config.advisory() ? new Advisory(this, dataSource, config) : null;
    Dialect d = dialect;
    long termMs = config.lease().expires() ? config.lease().leaseTime().toMillis() : 0; // (unused in advisory mode)
    this.lockKeySql = "SELECT lock_key FROM " + t.keys() + " WHERE lock_key = ? " + d.lockKeyRow();
    this.insertKeySql = d.insertKeyIfAbsent(t.keys(), "lock_key");
    this.holdersSql = "SELECT mode, permits, " + d.millisUntil("expires_at") + " FROM " + t.holders() + " WHERE lock_key = ?";
    this.deleteExpiredSql = "DELETE FROM " + t.holders() + " WHERE lock_key = ? AND expires_at <= " + d.now();
    this.insertSql = d.insertReturning("INSERT INTO " + t.holders()
        + " (lock_key, holder, mode, permits, token, owner, acquired_at, expires_at) VALUES (?, ?, ?, ?, "
        + d.nextValue(t.sequence()) + ", ?, " + d.now() + ", " + d.nowPlusMillis(termMs) + ")", "token");
    this.renewSql = "UPDATE " + t.holders() + " SET expires_at = " + d.nowPlusMillis(termMs)
        + " WHERE lock_key = ? AND holder = ? AND expires_at > " + d.now();
    this.releaseSql = d.release(t.holders(), t.queue(), t.channel(), wakeups.localId());
    this.availableSql = "SELECT COALESCE(SUM(permits), 0) FROM " + t.holders() + " WHERE lock_key = ? AND expires_at > "
        + d.now();
    this.leaderSql = "SELECT owner FROM " + t.holders() + " WHERE lock_key = ? AND expires_at > " + d.now();
    this.heldSql = "SELECT lock_key, holder, mode, permits, token, owner, " + d.millisUntil("expires_at") + " FROM "
        + t.holders() + " WHERE expires_at > " + d.now() + " ORDER BY lock_key, token";
    this.queueSql = "SELECT waiter, mode, ticket, " + d.millisUntil("expires_at") + " FROM " + t.queue() + " WHERE lock_key = ?";
    this.deleteExpiredWaitersSql = "DELETE FROM " + t.queue() + " WHERE lock_key = ? AND expires_at <= " + d.now();
    this.enqueueSql = "INSERT INTO " + t.queue() + " (lock_key, waiter, mode, permits, ticket, expires_at) VALUES (?, ?, ?, ?, "
        + d.nextValue(t.sequence()) + ", " + d.nowPlusMillis(termMs) + ")";
    this.refreshWaiterSql = "UPDATE " + t.queue() + " SET expires_at = " + d.nowPlusMillis(termMs)
        + " WHERE lock_key = ? AND waiter = ?";
    this.dequeueSql = d.dequeue(t.queue(), t.channel());
    this.aheadSql = "SELECT COUNT(*) FROM " + t.queue() + " q WHERE q.lock_key = ? AND q.expires_at > " + d.now()
        + " AND q.ticket < (SELECT m.ticket FROM " + t.queue() + " m WHERE m.lock_key = ? AND m.waiter = ? AND m.expires_at > "
        + d.now() + ")";
    this.keepPlaceSql = refreshWaiterSql + " AND expires_at > " + d.now();
    this.aheadOfReadSql = aheadSql.replace(" AND q.ticket <", " AND q.mode <> 'S' AND q.ticket <");
    this.oneCallGrantSql = d.grantsInOneCall() && advisory == null
        ? Map.of('X', oneCallGrantSql(t, d, 'X', termMs), 'S', oneCallGrantSql(t, d, 'S', termMs),
            'P', oneCallGrantSql(t, d, 'P', termMs))
        : null;
  }

  /**
   * The grant as one call of three statements, one transaction: create the name's key row if absent, lock
   * it ({@code FOR UPDATE}: grants and renewals of the name are serialized, and the token below is drawn
   * under that lock), then, in one statement, delete the name's expired holders and expired waiters, and
   * decide: granted when the live holders leave room and no live waiter this request must not pass is
   * ahead of it in line; then insert the grant and leave the line, or else join the line (a ticket from the
   * sequence; not when {@code :join} is false, for a try that will not wait) or keep its place there (its
   * expiry extended). It returns the token (null when not
   * granted), and the milliseconds until the first conflicting live holder expires (null when none).
   * "Live" and "expired" are decided by the database clock.
   */
  static NamedSql oneCallGrantSql(JdbcConfig.TableNames t, Dialect d, char mode, long termMs) {
    String conflicting = mode == 'S' ? " WHERE mode <> 'S'" : "";
    String grantable = mode == 'P'
        ? "(SELECT COALESCE(SUM(permits), 0) FROM live) + :permits <= :max"
        : "NOT EXISTS (SELECT 1 FROM live" + conflicting + ")";
    String now = d.now();
    return NamedSql.of(d.insertKeyIfAbsent(t.keys(), "lock_key").replace("?", ":key") + ";\n"
        + "SELECT lock_key FROM " + t.keys() + " WHERE lock_key = :key FOR UPDATE;\n"
        // expired holders and waiters go in the same statement: "live" and "expired" never meet, so the
        // decision (which reads the statement's snapshot) need not see their deletion
        + "WITH gone_holders AS (DELETE FROM " + t.holders() + " WHERE lock_key = :key AND expires_at <= " + now + "),\n"
        + " gone_waiters AS (DELETE FROM " + t.queue() + " WHERE lock_key = :key AND expires_at <= " + now + "),\n"
        + " live AS (SELECT mode, permits, expires_at FROM " + t.holders()
        + " WHERE lock_key = :key AND expires_at > " + now + "),\n"
        + " me AS (SELECT ticket FROM " + t.queue() + " WHERE lock_key = :key AND waiter = :waiter AND expires_at > "
        + now + "),\n"
        + " ahead AS (SELECT 1 FROM " + t.queue() + " WHERE lock_key = :key AND waiter <> :waiter AND expires_at > " + now
        + (mode == 'S' ? " AND mode <> 'S'" : "")
        + " AND ticket < COALESCE((SELECT ticket FROM me), " + Long.MAX_VALUE + ")),\n"
        + " ok AS (SELECT (" + grantable + ") AND NOT EXISTS (SELECT 1 FROM ahead) AS g),\n"
        + " ins AS (INSERT INTO " + t.holders()
        + " (lock_key, holder, mode, permits, token, owner, acquired_at, expires_at)"
        + " SELECT lock_key, :holder, :mode, :permits, " + d.nextValue(t.sequence()) + ", :owner, " + now + ", "
        + d.nowPlusMillis(termMs) + " FROM " + t.keys() + " WHERE lock_key = :key AND (SELECT g FROM ok) RETURNING token),\n"
        + " left_line AS (DELETE FROM " + t.queue() + " WHERE lock_key = :key AND waiter = :waiter AND (SELECT g FROM ok)"
        + " RETURNING 1),\n"
        + " kept AS (UPDATE " + t.queue() + " SET expires_at = " + d.nowPlusMillis(termMs)
        + " WHERE lock_key = :key AND waiter = :waiter AND expires_at > " + now + " AND NOT (SELECT g FROM ok) RETURNING 1),\n"
        + " joined AS (INSERT INTO " + t.queue() + " (lock_key, waiter, mode, permits, ticket, expires_at)"
        + " SELECT :key, :waiter, :mode, :permits, " + d.nextValue(t.sequence()) + ", " + d.nowPlusMillis(termMs)
        // (a waiter whose place expired rejoins at its next attempt, after this statement deleted the place)
        + " WHERE :join AND NOT (SELECT g FROM ok) AND NOT EXISTS (SELECT 1 FROM " + t.queue()
        + " WHERE lock_key = :key AND waiter = :waiter) RETURNING 1)\n"
        + "SELECT (SELECT token FROM ins), (SELECT MIN(" + d.millisUntil("expires_at") + ") FROM live" + conflicting + ")");
  }

  static String randomId() {
    byte[] b = new byte[12];
    RANDOM.nextBytes(b);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  String serviceId() {
    return serviceId;
  }

  /** How many acquires of this service are asleep waiting for a release (for tests). */
  int waitersAsleep() {
    return wakeups.asleep();
  }

  /** How many calls this service's acquires made to the database: attempts and looks at the line (for tests). */
  long waitCalls() {
    return waitCalls.get();
  }

  // ---- handles

  @Override
  protected Lock createLock(String name) {
    return new JdbcLock(this, Primitive.mutex(namespace(), name), serviceId);
  }

  @Override
  protected ReadWriteLock createReadWriteLock(String name) {
    return new SimpleReadWriteLock(name, new JdbcLock(this, Primitive.read(namespace(), name), serviceId),
        new JdbcLock(this, Primitive.write(namespace(), name), serviceId));
  }

  @Override
  protected Semaphore createSemaphore(String name, int maxPermits) {
    return new JdbcSemaphore(this, name, maxPermits, Primitive.semaphore(namespace(), name));
  }

  @Override
  protected LeaderElection createElection(String name) {
    String candidate = serviceId + "." + sequence.incrementAndGet();
    Primitive p = Primitive.election(namespace(), name);
    return new LockElection(this, name, new JdbcLock(this, p, candidate), candidate, () -> leaderOf(p));
  }

  private String namespace() {
    return settings().namespace();
  }

  /**
   * One SELECT of the unexpired rows of the holders table, kept when their key is in this service's
   * namespace. The token is the row's, the holder's own; the holder is the owner column and the grant's id.
   * Advisory mode keeps no rows: it cannot list.
   */
  @Override
  protected Optional<List<HeldLock>> listHeldLocks() {
    if (advisory != null) {
      return Optional.empty();
    }
    List<HeldLock> out = new ArrayList<>();
    try (Connection c = borrow("listing the held locks"); PreparedStatement s = c.prepareStatement(heldSql);
        ResultSet rs = s.executeQuery()) {
      while (rs.next()) {
        Optional<String[]> kindAndName = Primitive.parse(rs.getString(1), namespace());
        if (kindAndName.isEmpty()) {
          continue;
        }
        String kind = switch (kindAndName.get()[0]) {
          case "M" -> "mutex";
          case "E" -> "election";
          case "W" -> "S".equals(rs.getString(3)) ? "read" : "write";
          default -> "semaphore";
        };
        String holder = rs.getString(6) + " (" + rs.getString(2) + ")";
        if (kind.equals("semaphore")) {
          holder += " x" + rs.getInt(4);
        }
        out.add(new HeldLock(kindAndName.get()[1], kind, holder, java.util.OptionalLong.of(rs.getLong(5)), true,
            Optional.of(Duration.ofMillis(Math.max(0, rs.getLong(7))))));
      }
    } catch (SQLException | RuntimeException e) {
      throw translate("listing the held locks", e);
    }
    out.sort(java.util.Comparator.comparing(HeldLock::name).thenComparing(HeldLock::kind)
        .thenComparing(HeldLock::holder));
    return Optional.of(List.copyOf(out));
  }

  private Optional<String> leaderOf(Primitive p) {
    if (advisory != null) {
      try {
        return advisory.leaderOf(p);
      } catch (SQLException | RuntimeException e) {
        LOG.debug("cannot look up the leader of '{}': {}", p.name(), e.toString());
        return Optional.empty();
      }
    }
    try (Connection c = borrow("looking up the leader of '" + p.name() + "'");
        PreparedStatement s = c.prepareStatement(leaderSql)) {
      s.setString(1, p.key());
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() ? Optional.of(rs.getString(1)) : Optional.empty();
      }
    } catch (SQLException | RuntimeException e) {
      LOG.debug("cannot look up the leader of '{}': {}", p.name(), e.toString());
      return Optional.empty();
    }
  }

  @Override
  protected Object unwrapProvider(Class<?> type) {
    if (type.isInstance(dataSource)) {
      return dataSource;
    }
    return null;
  }

  @Override
  protected void doClose() {
    if (notifications != null) {
      notifications.close();
    }
    if (advisory != null) {
      advisory.close();
    }
    wakeups.close();
    // close() has interrupted every wait; let acquires in flight undo what they may have been granted, and
    // leave their lines, before the pool goes away (bounded: each undo is one call within the timeout)
    long until = System.nanoTime() + 2 * config.timeout().toNanos();
    synchronized (inFlight) {
      while (inFlight[0] > 0 && until - System.nanoTime() > 0) {
        try {
          inFlight.wait(Math.max(1, (until - System.nanoTime()) / 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    if (ownedPool != null) {
      try {
        ownedPool.close();
      } catch (Exception e) {
        LOG.warn("closing the connection pool of {} failed: {}", info().url(), e.toString());
      }
    }
  }

  // ---- the one wait loop every primitive uses

  /**
   * Tries to grant {@code p} until {@code deadline}: one attempt if it has expired, else waiting for
   * releases (bounded by the holders' own expiry and the recheck bound). An unreachable database (or a pool
   * with no connection free) is retried every 100 ms while the wait has time left: a timed wait rides an
   * outage out until its deadline, an acquire without one for a lease term; then the
   * {@link ServiceUnavailableException} is thrown. Each attempt's borrow of a connection, and on PostgreSQL
   * its statements, are bounded by the time left plus {@value #LATE_MILLIS} ms, so the pool's
   * {@code connectionTimeout} and the driver's socket timeout do not stretch the wait.
   *
   * @return the lease, not yet registered; null if the deadline passed
   */
  AbstractLease acquire(Primitive p, String owner, int permits, int maxPermits, Deadline deadline)
      throws InterruptedException {
    Wakeups.Waiter waiter = null;
    long outageStart = 0;
    long backoff = TimeUnit.MILLISECONDS.toNanos(FIRST_BACKOFF_MILLIS);
    // this acquire's place in the name's line (lease mode): joined by its first attempt that is not granted
    String waiterId = advisory == null ? wakeups.localId() + serviceId + ":w" + sequence.incrementAndGet() : null;
    boolean inLine = false;
    long placeKeptAt = Long.MIN_VALUE; // when a look at the line last kept this waiter's place
    boolean unreachable = false;
    boolean listening = false;
    AbstractLease granted = null;
    // the attempts whose outcome is unknown: a grant they may still make is undone again and again, and so is the
    // place in line they may still take once this wait is over
    UncertainAttempts.Wait uncertain = uncertainAttempts.begin();
    // counted until it has undone what it must (an uncertain grant, its place in line): close() waits for it
    synchronized (inFlight) {
      inFlight[0]++;
    }
    try {
      if (!deadline.isExpired()) {
        // registered before the first attempt, so that a release after it wakes this wait, whoever it names: a
        // wait whose attempt was refused goes to sleep without looking again (one statement less a refusal)
        waiter = wakeups.register(p.key(), waiterId);
      }
      boolean tried = false;
      while (true) {
        long seen = waiter == null ? 0 : waiter.version();
        Attempt a;
        // a try that will not wait takes no place in line (a held lock's tryAcquire(0) writes nothing)
        boolean join = waiterId != null && !deadline.isExpired();
        // (an attempt that fails may have joined all the same: the wait leaves the line when it ends)
        inLine |= join;
        try {
          long now = ticker().read();
          boolean keep = placeKeptAt == Long.MIN_VALUE || now - placeKeptAt >= leaseNanos / 3;
          // a release that named this waiter the first in line: it tries at once (the try keeps its place)
          boolean first = waiter != null && waiter.takeFirst();
          if (tried && join && !first && behindInLine(p, waiterId, keep, deadline)) {
            a = new Attempt(null, -1);
            if (keep) {
              placeKeptAt = now;
            }
          } else {
            a = attempt(p, owner, waiterId, join, permits, maxPermits, deadline, uncertain);
            tried = true;
            if (join && a.lease() == null && !a.timedOut()) {
              // the refusal joined the line, or kept its place there; one that timed out waiting for the name's row
              // kept nothing, and the next look keeps the place (while a row lock stays out of reach, that look is
              // all that does: JdbcPostgresTest.waitersKeepTheirPlacesWhileTheNameRowIsLockedPastATerm)
              placeKeptAt = now;
            }
          }
          outageStart = 0;
        } catch (ServiceUnavailableException e) {
          long now = ticker().read();
          if (outageStart == 0) {
            outageStart = now;
          }
          if (deadline.isExpired() || deadline.isNone() && now - outageStart >= leaseNanos) {
            unreachable = true;
            throw e;
          }
          LOG.debug("database unreachable while waiting for {}; retrying: {}", p.describe(), e.getMessage());
          Thread.sleep(Duration.ofNanos(Math.min(deadline.remainingNanos(), OUTAGE_RETRY_NANOS)));
          continue;
        }
        if (a.lease() != null) {
          granted = a.lease(); // (the grant left the line in its own transaction)
          return granted;
        }
        if (deadline.isExpired()) {
          return null;
        }
        if (notifications != null && !listening) {
          notifications.start(); // (it wakes every waiter once it listens: a release may have come before)
          listening = true;
        }
        long wait;
        if (notifications != null) {
          wait = recheckNanos;
        } else {
          wait = backoff;
          backoff = Math.min(recheckNanos, backoff * 2);
        }
        wait = Math.min(wait, deadline.remainingNanos());
        if (a.waitMs() >= 0) {
          // the holder's grant expires by itself then, with no release: look again right after
          wait = Math.min(wait, TimeUnit.MILLISECONDS.toNanos(a.waitMs() + 1));
        }
        if (inLine) {
          // each attempt extends the place in line for a term: look again well within it
          wait = Math.min(wait, leaseNanos / 3);
        }
        waiter.awaitChange(seen, wait);
      }
    } finally {
      if (waiter != null) {
        wakeups.unregister(p.key(), waiter);
      }
      if (inLine && granted == null) {
        if (unreachable) {
          // the database cannot be reached now: leave in the background (or the place expires with its term)
          inBackground("leaving the line of " + p.describe(), () -> leaveLine(p, waiterId, Deadline.none()));
        } else {
          leaveLine(p, waiterId, Deadline.after(Duration.ZERO, ticker()));
        }
      }
      if (inLine) {
        uncertain.over(() -> leaveLine(p, waiterId, Deadline.after(Duration.ZERO, ticker())));
      }
      synchronized (inFlight) {
        if (--inFlight[0] == 0) {
          inFlight.notifyAll();
        }
      }
    }
  }

  /**
   * Whether a live waiter this one must not pass is ahead of it in line, read without the name's row lock (and, when
   * {@code keep}, its place kept another term first). Only the first in line then takes that lock to try. A place
   * was kept only by a try, under the row lock: while the row was out of reach for a term (another client's
   * transaction; on a loaded machine, the tries of every waiter a release woke, six statements each on H2), every try
   * timed out, every place lapsed, and the line began again in whatever order the tries came back
   * ({@code JdbcPostgresTest.waitersKeepTheirPlacesWhileTheNameRowIsLockedPastATerm}). False when it is not in line
   * (any more), when nothing is ahead of it, or when the read fails: then the try itself decides.
   */
  private boolean behindInLine(Primitive p, String waiterId, boolean keep, Deadline deadline)
      throws InterruptedException {
    waitCalls.incrementAndGet();
    try (Connection c = borrow(deadline, "looking at the line of " + p.describe(), true)) {
      if (keep) {
        try (PreparedStatement s = c.prepareStatement(keepPlaceSql)) {
          s.setString(1, p.key());
          s.setString(2, waiterId);
          if (s.executeUpdate() == 0) {
            return false;
          }
        }
      }
      try (PreparedStatement s = c.prepareStatement(p.mode() == 'S' ? aheadOfReadSql : aheadSql)) {
        s.setString(1, p.key());
        s.setString(2, p.key());
        s.setString(3, waiterId);
        try (ResultSet rs = s.executeQuery()) {
          return rs.next() && rs.getLong(1) > 0;
        }
      }
    } catch (SQLException | RuntimeException e) {
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
      LOG.debug("looking at the line of {} failed; trying instead: {}", p.describe(), e.toString());
      return false;
    }
  }

  /**
   * Gives up a place in line (the deadline passed, an interrupt, an error), waking whoever was behind it (unless
   * there was certainly no place to give up). Bounded by {@code deadline} plus {@value #LATE_MILLIS} ms; a place it
   * cannot delete expires with its term.
   */
  private void leaveLine(Primitive p, String waiterId, Deadline deadline) {
    boolean interrupted = Thread.interrupted();
    boolean none = false;
    try {
      Connection c = borrow(deadline, "leaving the line of " + p.describe(), true);
      none = uncut(() -> {
        try (c; PreparedStatement s = c.prepareStatement(dequeueSql)) {
          s.setString(1, p.key());
          s.setString(2, waiterId);
          if (!s.execute()) {
            return s.getUpdateCount() == 0;
          }
          try (ResultSet rs = s.getResultSet()) {
            return !rs.next();
          }
        }
      });
    } catch (SQLException | RuntimeException | InterruptedException e) {
      LOG.debug("leaving the line of {} failed; the place expires in the database: {}", p.describe(), e.toString());
    } finally {
      if (!none) {
        wakeups.local(p.key(), null);
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Runs {@code task} on a virtual thread of its own, counted among the calls in flight that {@link #doClose}
   * lets end before it closes the pool.
   */
  private void inBackground(String what, Runnable task) {
    synchronized (inFlight) {
      inFlight[0]++;
    }
    Thread.ofVirtual().name("tumbler-jdbc-cleanup").start(() -> {
      try {
        task.run();
      } catch (RuntimeException e) {
        LOG.debug("{} failed: {}", what, e.toString());
      } finally {
        synchronized (inFlight) {
          if (--inFlight[0] == 0) {
            inFlight.notifyAll();
          }
        }
      }
    });
  }

  /**
   * The outcome of one attempt: a lease, or how long until a conflicting grant expires (-1: unknown); {@code
   * timedOut}: it never ran (the name's row lock or the statement waited too long), so it decided nothing, and kept no
   * place in line.
   */
  private record Attempt(AbstractLease lease, long waitMs, boolean timedOut) {
    Attempt(AbstractLease lease, long waitMs) {
      this(lease, waitMs, false);
    }

    static Attempt rowBusy() {
      return new Attempt(null, FIRST_BACKOFF_MILLIS, true);
    }
  }

  private Attempt attempt(Primitive p, String owner, String waiterId, boolean join, int permits, int maxPermits,
      Deadline deadline, UncertainAttempts.Wait uncertain) throws InterruptedException {
    String holder = serviceId + ":" + sequence.incrementAndGet();
    waitCalls.incrementAndGet();
    long sent = ticker().read();
    if (advisory != null) {
      AdvisoryLease l;
      try {
        // (an advisory attempt that fails gives back what it took on its session, or discards the session)
        l = advisory.tryGrant(p, owner, permits, maxPermits, sent, deadline);
      } catch (SQLException | RuntimeException e) {
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
        if (isLockTimeout(e)) {
          return Attempt.rowBusy(); // a statement that waited too long: not granted now
        }
        throw translate("acquiring " + p.describe(), e);
      }
      if (Thread.interrupted()) {
        if (l != null) {
          try {
            l.release();
          } catch (RuntimeException e) {
            LOG.debug("giving back an interrupted grant of {} failed: {}", p.describe(), e.toString());
          }
        }
        throw new InterruptedException();
      }
      return new Attempt(l, -1);
    }
    // nothing is sent before a connection is had: a failure to get one needs no undoing
    Connection c = borrow(deadline, "acquiring " + p.describe(), true);
    Attempt a;
    try {
      a = uncut(() -> {
        try (c) {
          return grant(c, p, holder, waiterId, join, owner, permits, maxPermits, sent);
        }
      });
    } catch (SQLException | RuntimeException e) {
      // the grant may have committed with its reply lost: give back whatever it may have granted, at once but
      // in the background, so that an unreachable database does not stretch this wait
      if (!isLockTimeout(e)) {
        // undone once at once, in the background (an unreachable database must not stretch this wait; close() waits
        // for it), then again and again by the service's UncertainAttempts if that found nothing
        uncertain.noted(sent);
        inBackground("undoing an uncertain grant of " + p.describe(), () -> {
          boolean found = false;
          try {
            found = release(p, holder);
          } catch (LockException undo) {
            LOG.debug("undoing an uncertain grant of {} failed; trying again: {}", p.describe(), undo.toString());
          }
          if (!found) {
            uncertain.addUndoneOnce(() -> release(p, holder), sent);
          }
        });
      }
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
      if (isLockTimeout(e)) {
        // another client holds the name's row lock too long (cut off inside its transaction): not granted now
        return Attempt.rowBusy();
      }
      throw translate("acquiring " + p.describe(), e);
    }
    if (Thread.interrupted()) {
      if (a.lease() != null) {
        releaseQuietly(p, holder);
      }
      throw new InterruptedException();
    }
    return a;
  }

  private Attempt grant(Connection c, Primitive p, String holder, String waiterId, boolean join, String owner,
      int permits, int maxPermits, long sent) throws SQLException {
    if (oneCallGrantSql != null) {
      return grantInOneCall(c, p, holder, waiterId, join, owner, permits, maxPermits, sent);
    }
    c.setAutoCommit(false);
    try {
      lockKey(c, p.key(), 0); // (refused now where the row is taken without waiting: the acquire tries again)
      boolean expired = false;
      boolean conflict = false;
      long used = 0;
      long waitMs = Long.MAX_VALUE;
      try (PreparedStatement s = c.prepareStatement(holdersSql)) {
        s.setString(1, p.key());
        try (ResultSet rs = s.executeQuery()) {
          while (rs.next()) {
            char mode = rs.getString(1).charAt(0);
            int held = rs.getInt(2);
            long left = rs.getLong(3);
            if (left <= 0) {
              expired = true;
              continue;
            }
            switch (p.mode()) {
              case 'S' -> {
                if (mode != 'S') {
                  conflict = true;
                  waitMs = Math.min(waitMs, left);
                }
              }
              case 'P' -> {
                used += held;
                waitMs = Math.min(waitMs, left);
              }
              default -> {
                conflict = true;
                waitMs = Math.min(waitMs, left);
              }
            }
          }
        }
      }
      if (p.mode() == 'P' && used + permits > maxPermits) {
        conflict = true;
      }
      if (expired) {
        try (PreparedStatement s = c.prepareStatement(deleteExpiredSql)) {
          s.setString(1, p.key());
          s.executeUpdate();
        }
      }
      Line line = line(c, p, waiterId);
      if (conflict || line.ahead()) {
        if (line.ticket() == null) {
          if (join) {
            try (PreparedStatement s = c.prepareStatement(enqueueSql)) {
              s.setString(1, p.key());
              s.setString(2, waiterId);
              s.setString(3, String.valueOf(p.mode()));
              s.setInt(4, permits);
              s.executeUpdate();
            }
          }
        } else {
          try (PreparedStatement s = c.prepareStatement(refreshWaiterSql)) {
            s.setString(1, p.key());
            s.setString(2, waiterId);
            s.executeUpdate();
          }
        }
        c.commit();
        return new Attempt(null, conflict && waitMs != Long.MAX_VALUE ? waitMs : -1);
      }
      if (line.ticket() != null) {
        try (PreparedStatement s = c.prepareStatement(dequeueSql)) {
          s.setString(1, p.key());
          s.setString(2, waiterId);
          s.execute();
        }
      }
      long token;
      try (PreparedStatement s = c.prepareStatement(insertSql)) {
        s.setString(1, p.key());
        s.setString(2, holder);
        s.setString(3, String.valueOf(p.mode()));
        s.setInt(4, permits);
        s.setString(5, owner);
        try (ResultSet rs = s.executeQuery()) {
          if (!rs.next()) {
            throw new SQLException("the insert of a grant returned no token");
          }
          token = rs.getLong(1);
        }
      }
      c.commit();
      return new Attempt(new JdbcLease(this, p, holder, token, permits, sent), 0);
    } catch (SQLException | RuntimeException e) {
      rollbackQuietly(c, e);
      throw e;
    }
  }

  private Attempt grantInOneCall(Connection c, Primitive p, String holder, String waiterId, boolean join,
      String owner, int permits, int maxPermits, long sent) throws SQLException {
    NamedSql sql = oneCallGrantSql.get(p.mode());
    if (!c.getAutoCommit()) {
      // the statements must commit together when the call ends (an application's pool may hand out
      // connections in manual-commit mode; the pool resets it when the connection comes back)
      c.setAutoCommit(true);
    }
    try (PreparedStatement s = c.prepareStatement(sql.sql())) {
      sql.bind(s, Map.of("key", p.key(), "waiter", waiterId, "holder", holder, "mode", String.valueOf(p.mode()),
          "permits", permits, "owner", owner, "max", maxPermits, "join", join));
      boolean isResultSet = s.execute();
      Long token = null;
      Long waitMs = null;
      int resultSets = 0;
      while (isResultSet || s.getUpdateCount() != -1) {
        if (isResultSet) {
          try (ResultSet rs = s.getResultSet()) {
            // the second result set (after the key row's) is the decision
            if (++resultSets == 2) {
              if (!rs.next()) {
                throw new SQLException("the grant statement returned no row");
              }
              token = rs.getObject(1, Long.class);
              waitMs = rs.getObject(2, Long.class);
            }
          }
        }
        isResultSet = s.getMoreResults();
      }
      if (resultSets != 2) {
        throw new SQLException("the grant call returned " + resultSets + " result sets instead of 2");
      }
      if (token == null) {
        return new Attempt(null, waitMs == null ? -1 : waitMs);
      }
      return new Attempt(new JdbcLease(this, p, holder, token, permits, sent), 0);
    }
  }

  /**
   * This waiter's ticket in the name's line (null when it is not in line), and whether a live waiter it
   * must not pass is ahead of it: any earlier one (every earlier one, if it has no ticket yet), except that a
   * read lock passes earlier read locks. Deletes expired waiters. Inside the grant's transaction.
   */
  private Line line(Connection c, Primitive p, String waiterId) throws SQLException {
    Long mine = null;
    boolean expired = false;
    List<long[]> others = new ArrayList<>(); // {ticket, blocks (1/0)}
    try (PreparedStatement s = c.prepareStatement(queueSql)) {
      s.setString(1, p.key());
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          if (rs.getLong(4) <= 0) {
            expired = true;
          } else if (rs.getString(1).equals(waiterId)) {
            mine = rs.getLong(3);
          } else {
            boolean blocks = p.mode() != 'S' || rs.getString(2).charAt(0) != 'S';
            others.add(new long[] {rs.getLong(3), blocks ? 1 : 0});
          }
        }
      }
    }
    if (expired) {
      try (PreparedStatement s = c.prepareStatement(deleteExpiredWaitersSql)) {
        s.setString(1, p.key());
        s.executeUpdate();
      }
    }
    boolean ahead = false;
    for (long[] o : others) {
      if (o[1] == 1 && (mine == null || o[0] < mine)) {
        ahead = true;
      }
    }
    return new Line(mine, ahead);
  }

  private record Line(Long ticket, boolean ahead) {}

  /**
   * Locks the name's row in the keys table, creating it first if needed. Where another transaction holds the row and
   * the lock time-out ends the statement at once ({@link Dialect#lockKeyRow}), it is tried again after a pause of a
   * few milliseconds, for {@code retryNanos} (a renewal's: grants hold the row for a few statements).
   */
  private void lockKey(Connection c, String key, long retryNanos) throws SQLException {
    long start = System.nanoTime();
    for (int i = 0; i < 2; ) {
      try (PreparedStatement s = c.prepareStatement(lockKeySql)) {
        s.setString(1, key);
        try (ResultSet rs = s.executeQuery()) {
          if (rs.next()) {
            return;
          }
        }
      } catch (SQLException e) {
        if (!isLockTimeout(e) || System.nanoTime() - start >= retryNanos) {
          throw e;
        }
        // an interrupt does not end it (the call runs to its end, bounded by retryNanos) nor shorten the pause
        boolean interrupted = Thread.interrupted();
        LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(1_000_000, 5_000_000));
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
        continue;
      }
      try (PreparedStatement s = c.prepareStatement(insertKeySql)) {
        s.setString(1, key);
        s.executeUpdate();
      }
      i++;
    }
    throw new SQLException("the row of '" + key + "' in the keys table vanished while it was being locked");
  }

  private static void rollbackQuietly(Connection c, Exception cause) {
    try {
      c.rollback();
    } catch (SQLException r) {
      cause.addSuppressed(r);
    }
  }

  private void releaseQuietly(Primitive p, String holder) {
    try {
      release(p, holder);
    } catch (LockException e) {
      LOG.debug("undoing an uncertain grant of {} failed; it expires in the database: {}", p.describe(), e.toString());
    }
  }

  boolean renew(Primitive p, String holder) {
    try {
      Connection c = borrow("renewing " + p.describe());
      return uncut(() -> {
        try (c) {
          c.setAutoCommit(false);
          try {
            lockKey(c, p.key(), renewRowNanos);
            int n;
            try (PreparedStatement s = c.prepareStatement(renewSql)) {
              s.setString(1, p.key());
              s.setString(2, holder);
              n = s.executeUpdate();
            }
            c.commit();
            return n == 1;
          } catch (SQLException | RuntimeException e) {
            rollbackQuietly(c, e);
            throw e;
          }
        }
      });
    } catch (SQLException | RuntimeException e) {
      throw translate("renewing " + p.describe(), e);
    }
  }

  /**
   * Deletes {@code holder}'s grant of {@code p} and wakes the name's waiters in this JVM (only the first in line
   * when the statement names it).
   *
   * @return whether a grant was deleted
   */
  boolean release(Primitive p, String holder) {
    String first = null; // the waiter the release named first in line, if any: it alone is woken
    boolean[] deleted = new boolean[1];
    try {
      Connection c = borrow("releasing " + p.describe());
      first = uncut(() -> {
        try (c; PreparedStatement s = c.prepareStatement(releaseSql)) {
          s.setString(1, p.key());
          s.setString(2, holder);
          if (!s.execute()) {
            deleted[0] = s.getUpdateCount() > 0;
            return null;
          }
          try (ResultSet rs = s.getResultSet()) {
            deleted[0] = rs.next();
            return deleted[0] ? rs.getString(2) : null;
          }
        }
      });
    } catch (SQLException | RuntimeException e) {
      deleted[0] = true; // (not known: wake the waiters, as if it had)
      throw translate("releasing " + p.describe(), e);
    } finally {
      if (deleted[0]) {
        wakeups.local(p.key(), first); // (a release that deleted nothing, an uncertain grant's undo, wakes nobody)
      }
    }
    return deleted[0];
  }

  int availablePermits(Primitive p, int maxPermits) {
    checkOpen();
    if (advisory != null) {
      try {
        return maxPermits - advisory.slotsHeld(p, maxPermits);
      } catch (SQLException | RuntimeException e) {
        throw translate("reading the permits of " + p.describe(), e);
      }
    }
    try (Connection c = borrow("reading the permits of " + p.describe());
        PreparedStatement s = c.prepareStatement(availableSql)) {
      s.setString(1, p.key());
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return (int) Math.max(0, maxPermits - rs.getLong(1));
      }
    } catch (SQLException | RuntimeException e) {
      throw translate("reading the permits of " + p.describe(), e);
    }
  }

  // ---- connections

  /**
   * Called when a connection was taken out of the pool for a while (advisory mode: a session that holds locks; the
   * {@code LISTEN} while the service has waiters): if
   * the pool this service opened has no idle connection left and room for one, one is opened in the background,
   * so that the next call that needs a session of its own finds it logged in instead of waiting for a login on its
   * own time (a new session's login is what a busy server is slowest at: seconds, past a call's bound). At most
   * one such opening at a time; a failure is only logged (the next borrow opens one as usual).
   */
  void keepOneSpare() {
    HikariDataSource h = ownedPool instanceof HikariDataSource owned ? owned : null;
    if (h == null || h.isClosed() || !openingSpare.compareAndSet(false, true)) {
      return;
    }
    HikariPoolMXBean mx = h.getHikariPoolMXBean();
    if (mx == null || mx.getIdleConnections() > 0 || mx.getTotalConnections() >= h.getMaximumPoolSize()) {
      openingSpare.set(false);
      return;
    }
    Thread.ofVirtual().name("tumbler-jdbc-spare").start(() -> {
      // borrowing from a pool with nothing idle makes HikariCP open a connection; giving it back leaves it idle
      try (Connection c = h.getConnection()) {
        LOG.trace("a spare session of {} is open", info().url());
      } catch (SQLException | RuntimeException e) {
        LOG.debug("opening a spare session of {} failed: {}", info().url(), e.toString());
      } finally {
        openingSpare.set(false);
      }
    });
  }

  /**
   * A connection for a call that has no deadline of its own (a renewal, a release, a listing): the pool's
   * own {@code connectionTimeout} bounds the borrow. An interrupt does not cut it short (a release in a
   * {@code finally} after an interrupt must still reach the database); the caller keeps its interrupt status.
   *
   * @throws ServiceUnavailableException if none comes: naming the pool when all its connections were in use
   */
  private Connection borrow(String what) {
    boolean interrupted = Thread.interrupted();
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(hikari == null ? 0 : hikari.getConnectionTimeout());
    try {
      while (true) {
        try {
          return dataSource.getConnection();
        } catch (SQLException | RuntimeException e) {
          // HikariCP turns an interrupt that came meanwhile into an SQLException and sets the status: again
          if (Thread.interrupted() && System.nanoTime() - end < 0) {
            interrupted = true;
            continue;
          }
          throw noConnection(what, e);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * A connection for a call of a wait that ends at {@code deadline}: with a deadline, the borrow waits at most
   * the time left plus {@value #LATE_MILLIS} ms (on a HikariCP pool; another DataSource waits as it is set up
   * to), and, when {@code boundStatements}, the connection's network timeout is lowered to the same bound for
   * the call (HikariCP resets it when the connection comes back; a PostgreSQL statement then fails rather
   * than wait for an answer past it; H2 gives up the call, though its server session goes on:
   * {@link Dialect#lockKeyRow}). Not lowered on connections the caller keeps.
   *
   * <p>One exception: when that bound passes while the pool is opening a connection (it has room to grow and
   * no connection has failed to open), the database is not known to be down, only slow to hand over a new
   * session (on a busy machine); the borrow then waits the rest of the pool's {@code connectionTimeout}, as
   * a call without deadline would. A database that refuses connections records a failure and is reported
   * at the bound; one that accepts them and never answers (a partition) may keep the borrow waiting, and the
   * API's answer grace then ends the wait ({@link #unanswered()}).
   *
   * @throws ServiceUnavailableException if none comes in time: naming the pool when all its connections were
   *     in use, the database as unreachable otherwise
   * @throws InterruptedException if interrupted while waiting for one
   */
  Connection borrow(Deadline deadline, String what, boolean boundStatements) throws InterruptedException {
    long bound = deadline.isNone() ? Long.MAX_VALUE
        : TimeUnit.NANOSECONDS.toMillis(deadline.remainingNanos()) + LATE_MILLIS;
    Connection c;
    try {
      HikariPoolMXBean mx = hikari == null || hikari.isClosed() ? null : hikari.getHikariPoolMXBean();
      long poolTimeout = hikari == null ? 0 : hikari.getConnectionTimeout();
      if (mx instanceof HikariPool pool && bound < poolTimeout) {
        long start = System.nanoTime();
        try {
          c = pool.getConnection(bound);
        } catch (SQLTransientConnectionException e) {
          long rest = poolTimeout - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
          if (e.getCause() != null || Thread.currentThread().isInterrupted() || rest <= 0
              || mx.getTotalConnections() >= hikari.getMaximumPoolSize()) {
            throw e;
          }
          c = pool.getConnection(rest);
        }
      } else {
        c = dataSource.getConnection();
      }
    } catch (SQLException | RuntimeException e) {
      if (Thread.interrupted()) {
        throw new InterruptedException(); // HikariCP turns an interrupt into an SQLException and sets the status
      }
      throw noConnection(what, e);
    }
    if (boundStatements && hikari != null && bound < Integer.MAX_VALUE) {
      try {
        int current = c.getNetworkTimeout();
        if (current == 0 || bound < current) {
          c.setNetworkTimeout(DIRECT, (int) bound);
        }
      } catch (SQLException | RuntimeException e) {
        closeQuietly(c);
        throw translate(what, e);
      }
    }
    return c;
  }

  /** Statements on a borrowed connection, for {@link #uncut}. */
  @FunctionalInterface
  interface SqlWork<T> {
    T run() throws SQLException;
  }

  /**
   * Runs {@code work} (statements on a connection already borrowed, which it closes) to its end whatever interrupts
   * come. On a virtual thread an interrupt closes the socket of a blocking read, but the database goes on with the
   * statement it was given: a grant or a place in line is committed after the acquire it belonged to gave up, and
   * the undo that acquire sent first found nothing to undo (a place in line held up a semaphore for a term), or a
   * release never reaches the database at all. On such a thread the work runs on a platform thread, whose reads an
   * interrupt does not touch, and the caller waits for it (every statement is bounded by the timeout) and keeps its
   * interrupt status for what it does next. On a platform thread it runs here.
   */
  static <T> T uncut(SqlWork<T> work) throws SQLException {
    if (!Thread.currentThread().isVirtual()) {
      return work.run();
    }
    Future<T> f = STATEMENTS.submit(work::run);
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return f.get();
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          Throwable cause = e.getCause();
          if (cause instanceof SQLException q) {
            throw q;
          }
          if (cause instanceof RuntimeException r) {
            throw r;
          }
          if (cause instanceof Error err) {
            throw err;
          }
          throw new IllegalStateException(cause);
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static void closeQuietly(Connection c) {
    try {
      c.close();
    } catch (SQLException e) {
      LOG.debug("closing a connection failed: {}", e.toString());
    }
  }

  /**
   * Why no connection came for {@code what}: a HikariCP pool whose connections were all in use (with no
   * failure to connect behind it) has too few for what the service and the application ask of it; a failure
   * to connect is the database being unreachable; another DataSource cannot say which.
   */
  private LockException noConnection(String what, Exception e) {
    if (e instanceof LockException le) {
      return le;
    }
    if (isClosed()) {
      return translate(what, e);
    }
    String where = "the " + dialect.name() + " database of " + info().url();
    if (e instanceof SQLTransientConnectionException && e.getCause() instanceof SQLException cause) {
      return new ServiceUnavailableException(where + " unreachable while " + what + ": " + cause.getMessage(), e);
    }
    if (hikari != null) {
      HikariPoolMXBean mx = hikari.getHikariPoolMXBean();
      if (e instanceof SQLTransientConnectionException && mx != null
          && mx.getActiveConnections() >= hikari.getMaximumPoolSize()) {
        return new ServiceUnavailableException("no connection of the pool of " + info().url() + " came free while "
            + what + " (" + e.getMessage() + "): " + config.poolNeeds()
            + (ownedPool == null ? " (of the application's pool, besides the connections the application uses)" : ""), e);
      }
      return translate(what, e);
    }
    if (e instanceof SQLException s && !(s instanceof SQLTransientException) && s.getSQLState() != null
        && !sessionEnded(s)) {
      return translate(what, e);
    }
    return new ServiceUnavailableException("no connection came from the application's DataSource while " + what + " ("
        + e.getMessage() + "): " + where + " is unreachable, or the pool has no connection free; " + config.poolNeeds()
        + ", besides the connections the application uses", e);
  }

  /**
   * A timed acquire that the service left unanswered past its deadline and the API's answer grace: its calls
   * are bounded by the deadline plus {@value #LATE_MILLIS} ms where the pool and driver allow it, so the
   * database (or a pool handed in by the application, which the service cannot bound) did not answer.
   */
  @Override
  protected RuntimeException unanswered() {
    return new ServiceUnavailableException("the " + dialect.name() + " database of " + info().url() + " did not answer "
        + "an acquire within its wait plus " + ANSWER_GRACE_MILLIS + " ms (unreachable, or no connection of the pool "
        + "came free)");
  }

  private boolean isLockTimeout(Exception e) {
    return e instanceof SQLException s && s.getSQLState() != null && dialect.lockTimeoutStates().contains(s.getSQLState());
  }

  /**
   * Whether {@code e} says the database session is gone: SQLState class {@code 08} (connection exception) or
   * {@code 57P01}-{@code 57P03} (the server terminated or is shutting down the session).
   */
  static boolean sessionEnded(SQLException e) {
    String state = e.getSQLState();
    return state != null && (state.startsWith("08") || state.equals("57P01") || state.equals("57P02")
        || state.equals("57P03"));
  }

  /** The driver's exceptions as Tumbler's, naming the operation and the database (never a password). */
  LockException translate(String what, Exception e) {
    if (e instanceof LockException le) {
      return le;
    }
    if (isClosed()) {
      // the service was closed under the call: its pool shut down and aborted the connection in use (HikariCP then
      // fails even the connection's close, with a NullPointerException), which is why the call failed
      return new ServiceClosedException("the " + info().provider() + " service " + info().url() + " was closed while "
          + what + ": " + e, e);
    }
    String where = "the " + dialect.name() + " database of " + info().url();
    if (e instanceof SQLException s) {
      String state = s.getSQLState();
      if (s instanceof SQLTransientConnectionException || s instanceof SQLRecoverableException
          || sessionEnded(s)
          || isLockTimeout(s) || dialect.isConnectionLost(s)) {
        return new ServiceUnavailableException(where + " unreachable while " + what + ": " + s.getMessage(), s);
      }
      return new LockException(where + " refused " + what + ": " + s.getMessage()
          + (state == null ? "" : " (SQLState " + state + ")"), s);
    }
    return new LockException("unexpected failure " + what + " on " + where + ": " + e, e);
  }
}
