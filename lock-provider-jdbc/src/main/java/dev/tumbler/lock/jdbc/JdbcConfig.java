package dev.tumbler.lock.jdbc;

import dev.tumbler.lock.InvalidLockUrlException;
import dev.tumbler.lock.spi.LeaseSettings;
import dev.tumbler.lock.spi.LockUrl;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The settings of one JDBC lock service, read from its URL: {@code lock:jdbc:<jdbc-url>[?parameters]},
 * where {@code <jdbc-url>} is the JDBC URL without its {@code jdbc:} prefix and without its own query
 * ({@code lock:jdbc:postgresql://db:5432/app?leaseTime=10s}, {@code lock:jdbc:h2:mem:locks}). With a
 * {@link javax.sql.DataSource} passed in code, the URL only names the database ({@code lock:jdbc:postgresql}).
 *
 * <p>Validated when read: every problem is an {@link InvalidLockUrlException} naming the parameter. The
 * password is kept here only and never shown ({@link #toString()} omits it). Immutable.
 *
 * @param url the lock URL, for messages (its {@code toString()} is redacted)
 * @param jdbcUrl the JDBC URL ({@code jdbc:...}); empty when only a database is named
 * @param dialect the database's dialect
 * @param user the database user, if any
 * @param password the password, if any
 * @param table the lock table; the others are named after it
 * @param createSchema whether to create missing tables on first use
 * @param advisory whether grants are PostgreSQL session advisory locks ({@code mode=advisory}) rather
 *     than lease rows ({@code mode=lease}, the default)
 * @param timeout the bound of one database call (connect, statement, row-lock wait)
 * @param recheck the longest a waiter sleeps without a notification before it asks again
 * @param pool HikariCP settings by their HikariCP names, validated
 * @param driverProperties {@code dataSource.*} parameters, passed to the driver
 * @param lease the common lease settings
 */
record JdbcConfig(LockUrl url, String jdbcUrl, Dialect dialect, Optional<String> user, Optional<String> password,
    TableNames table, boolean createSchema, boolean advisory, Duration timeout, Duration recheck, Map<String, String> pool,
    Map<String, String> driverProperties, LeaseSettings lease) {

  static final String DEFAULT_TABLE = "tumbler_locks";
  static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);
  static final Duration DEFAULT_RECHECK = Duration.ofSeconds(1);
  static final String DRIVER_PREFIX = "dataSource.";

  /** HikariCP's own setting names, accepted as they are; durations in milliseconds or with a unit. */
  static final Set<String> POOL_DURATIONS = Set.of("connectionTimeout", "idleTimeout", "maxLifetime",
      "validationTimeout", "keepaliveTime", "leakDetectionThreshold", "initializationFailTimeout");
  static final Set<String> POOL_INTEGERS = Set.of("maximumPoolSize", "minimumIdle");
  static final Set<String> POOL_STRINGS = Set.of("poolName", "connectionTestQuery", "connectionInitSql",
      "schema", "catalog", "driverClassName");
  static final Set<String> POOL;
  static final Set<String> OWN = Set.of("table", "createSchema", "mode", "timeout", "recheck", "user", "password");
  static final Set<String> PARAMETERS;

  static {
    Set<String> pool = new TreeSet<>(POOL_DURATIONS);
    pool.addAll(POOL_INTEGERS);
    pool.addAll(POOL_STRINGS);
    POOL = Collections.unmodifiableSet(pool);
    Set<String> all = new TreeSet<>(LeaseSettings.PARAMETERS);
    all.addAll(OWN);
    all.addAll(POOL);
    PARAMETERS = Collections.unmodifiableSet(all);
  }

  private static final Pattern SUBPROTOCOL = Pattern.compile("[a-z][a-z0-9]*");

  @Override
  public String toString() {
    return "JdbcConfig[" + url + "]";
  }

  /** Whether the URL names a database to connect to (rather than only a dialect for a given DataSource). */
  boolean hasJdbcUrl() {
    return !jdbcUrl.isEmpty();
  }

  /**
   * Reads the settings of {@code url}.
   *
   * @param withDataSource whether the caller passed a DataSource (then pool settings are refused)
   * @throws InvalidLockUrlException naming what is wrong
   */
  static JdbcConfig from(LockUrl url, boolean withDataSource) {
    if (url.isHierarchical()) {
      throw new InvalidLockUrlException("lock URL " + url + ": the JDBC provider takes a JDBC URL without its "
          + "'jdbc:' prefix after 'lock:jdbc:', as in lock:jdbc:postgresql://host:5432/app or lock:jdbc:h2:mem:locks");
    }
    String rest = url.opaque();
    // the opaque part is shown by LockUrl.toString(): a password in it must be refused without echoing it
    String lower = rest.toLowerCase(Locale.ROOT);
    int auth = rest.indexOf("//");
    int at = auth < 0 ? -1 : rest.indexOf('@', auth);
    int slash = auth < 0 ? -1 : rest.indexOf('/', auth + 2);
    if (at >= 0 && (slash < 0 || at < slash) || lower.contains("password")) {
      throw new InvalidLockUrlException("lock URL 'lock:jdbc:" + subprotocolOf(rest)
          + ":…': the JDBC URL holds credentials; give them as the 'user' and 'password' parameters or connect "
          + "properties, which are never shown");
    }
    String sub = subprotocolOf(rest);
    if (!SUBPROTOCOL.matcher(sub).matches()) {
      throw new InvalidLockUrlException("lock URL " + url + ": '" + sub + "' is not a JDBC subprotocol (as in "
          + "lock:jdbc:postgresql://host/app)");
    }
    Dialect dialect = Dialect.forSubprotocol(sub);
    if (dialect == null) {
      throw new InvalidLockUrlException("lock URL " + url + ": no dialect for database '" + sub + "'; supported: "
          + Dialect.SUPPORTED);
    }
    String jdbcUrl = rest.equals(sub) ? "" : "jdbc:" + rest;
    List<String> accepted = new ArrayList<>(PARAMETERS);
    Map<String, String> driver = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : url.parameters().entrySet()) {
      String k = e.getKey();
      if (k.startsWith(DRIVER_PREFIX) && k.length() > DRIVER_PREFIX.length()) {
        accepted.add(k);
        String prop = k.substring(DRIVER_PREFIX.length());
        if (LockUrl.isSecretParameter(prop) || prop.equalsIgnoreCase("user")) {
          throw new InvalidLockUrlException("lock URL " + url + ": parameter '" + k + "': give credentials as the "
              + "'user' and 'password' parameters");
        }
        driver.put(prop, e.getValue());
      }
    }
    url.requireKnownParameters(accepted);
    if (withDataSource) {
      List<String> poolGiven = new ArrayList<>();
      for (String k : url.parameters().keySet()) {
        if (POOL.contains(k) || k.startsWith(DRIVER_PREFIX) || k.equals("user") || k.equals("password")) {
          poolGiven.add(k);
        }
      }
      if (!poolGiven.isEmpty() || url.user().isPresent() || url.password().isPresent()) {
        throw new InvalidLockUrlException("lock URL " + url + ": parameters " + (poolGiven.isEmpty() ? "[user, password]"
            : poolGiven) + " configure a pool, but a DataSource was passed: configure it there");
      }
    } else if (jdbcUrl.isEmpty()) {
      throw new InvalidLockUrlException("lock URL " + url + ": names the database '" + sub + "' but not where it is; "
          + "write the JDBC URL (lock:jdbc:" + sub + (sub.equals("h2") ? ":mem:locks" : "://host:5432/app")
          + "), or pass a DataSource in the connect properties under '" + JdbcLockProvider.DATA_SOURCE + "'");
    }
    TableNames table = TableNames.of(url, url.string("table", DEFAULT_TABLE));
    boolean create = url.bool("createSchema", false);
    String mode = url.string("mode", "lease");
    if (!mode.equals("lease") && !mode.equals("advisory")) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'mode': '" + mode + "' is neither 'lease' "
          + "(lock rows with a term, the default) nor 'advisory' (PostgreSQL session advisory locks)");
    }
    boolean advisory = mode.equals("advisory");
    if (advisory && !(dialect instanceof PostgresDialect)) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'mode': 'advisory' takes PostgreSQL's session "
          + "advisory locks, which " + dialect.name() + " does not have; use mode=lease");
    }
    Duration timeout = url.duration("timeout", DEFAULT_TIMEOUT);
    if (timeout.toMillis() < 100 || timeout.toMillis() > Integer.MAX_VALUE) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'timeout': must be within [100ms, "
          + Integer.MAX_VALUE + "ms]: " + timeout.toMillis() + "ms");
    }
    Duration recheck = url.duration("recheck", DEFAULT_RECHECK);
    if (recheck.toMillis() < 10) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'recheck': at least 10ms: " + recheck.toMillis() + "ms");
    }
    Map<String, String> pool = new LinkedHashMap<>();
    for (String k : POOL) {
      String v = url.parameters().get(k);
      if (v == null) {
        continue;
      }
      if (POOL_DURATIONS.contains(k)) {
        pool.put(k, Long.toString(poolMillis(url, k, v)));
      } else if (POOL_INTEGERS.contains(k)) {
        pool.put(k, Integer.toString(url.integer(k, 0, k.equals("minimumIdle") ? 0 : 1, 10_000)));
      } else {
        pool.put(k, v);
      }
    }
    String size = pool.get("maximumPoolSize");
    int needed = minimumPoolSize(dialect, advisory);
    if (size != null && Integer.parseInt(size) < needed) {
      throw new InvalidLockUrlException("lock URL " + url + ": parameter 'maximumPoolSize': " + size + " is too small: "
          + poolNeeds(dialect, advisory));
    }
    LeaseSettings lease = LeaseSettings.fromUrl(url);
    if (advisory) {
      for (String k : List.of("leaseTime", "renew")) {
        if (url.parameters().containsKey(k)) {
          throw new InvalidLockUrlException("lock URL " + url + ": parameter '" + k + "': mode=advisory has no lease "
              + "term (a lock is held as long as its database session); drop '" + k + "'");
        }
      }
      lease = LeaseSettings.unbounded(lease.namespace());
    }
    Optional<String> user = url.user().or(() -> url.parameter("user"));
    Optional<String> password = url.password().or(() -> url.parameter("password"));
    return new JdbcConfig(url, jdbcUrl, dialect, user, password, table, create, advisory, timeout, recheck,
        Collections.unmodifiableMap(pool), Collections.unmodifiableMap(driver), lease);
  }

  /**
   * The fewest pooled connections with which the service keeps working while it both holds and waits: on
   * PostgreSQL in lease mode 2 (one {@code LISTEN}s while the service has waiters; grants, renewals and
   * releases take turns on the other); in advisory mode 3 (a session holding the grants, the {@code LISTEN},
   * and a session for a grant of a name the service already holds: a second read lock, or a wait for its own
   * lock); on a database without notifications (H2) 1.
   */
  static int minimumPoolSize(Dialect dialect, boolean advisory) {
    return advisory ? 3 : dialect.canNotify() ? 2 : 1;
  }

  int minimumPoolSize() {
    return minimumPoolSize(dialect, advisory);
  }

  /** What the service needs of its pool, and why, for messages that ask for a larger one. */
  static String poolNeeds(Dialect dialect, boolean advisory) {
    int n = minimumPoolSize(dialect, advisory);
    if (advisory) {
      return "mode=advisory needs at least " + n + " connections (a session holding the grants, one that LISTENs while "
          + "the service has waiters, one for a grant of a name the service already holds) and one more for each "
          + "election held and each further grant of one name held at once; raise maximumPoolSize";
    }
    if (dialect.canNotify()) {
      return "lease mode on " + dialect.name() + " needs at least " + n + " connections (one LISTENs while the service "
          + "has waiters; grants, renewals and releases need another); raise maximumPoolSize";
    }
    return "the service needs at least " + n + " connection; raise maximumPoolSize";
  }

  String poolNeeds() {
    return poolNeeds(dialect, advisory);
  }

  private static String subprotocolOf(String rest) {
    int colon = rest.indexOf(':');
    return (colon < 0 ? rest : rest.substring(0, colon)).toLowerCase(Locale.ROOT);
  }

  /** A HikariCP duration: milliseconds as HikariCP writes them ({@code 30000}), or with a unit ({@code 30s}). */
  private static long poolMillis(LockUrl url, String name, String v) {
    String t = v.trim();
    if (!t.isEmpty() && t.chars().allMatch(Character::isDigit)) {
      try {
        return Long.parseLong(t);
      } catch (NumberFormatException e) {
        throw new InvalidLockUrlException("lock URL " + url + ": parameter '" + name + "': '" + v + "' is too large");
      }
    }
    return url.duration(name, Duration.ZERO).toMillis();
  }

  /**
   * The names of the provider's database objects, all derived from the lock table's: the holders table
   * itself, {@code <table>_keys} (one row per lock name, locked to serialize its grants),
   * {@code <table>_queue} (waiters in line), {@code <table>_meta} (the schema version) and the sequence
   * {@code <table>_fence} (fencing tokens and waiters' tickets).
   *
   * @param holders the table of grants
   */
  record TableNames(String holders) {
    private static final Pattern IDENTIFIER = Pattern.compile("([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0,39}");

    /**
     * Words that cannot name a table or schema unquoted: PostgreSQL's reserved key words (those
     * {@code pg_get_keywords()} lists with category {@code R}, reserved, or {@code T}, reserved but allowed as a
     * function or type name; PostgreSQL 14, plus {@code system_user}, reserved since 16) and H2's (the key words
     * of H2 2.x's parser, {@code org.h2.util.ParserUtil}; a few of them H2 accepts as a table name, and they are
     * refused all the same). The provider writes its names unquoted, so that they
     * mean what the README's DDL and an administrator's unquoted SQL mean (PostgreSQL folds them to lower case,
     * H2 to upper case; quoting them would make {@code tumbler_locks} and {@code TUMBLER_LOCKS} different tables
     * on H2); a reserved word is therefore refused rather than quoted. Checked against both databases by
     * {@code JdbcPostgresTest.everyKeywordIsRefusedOrUsableAsATableName}.
     */
    static final Set<String> RESERVED = Set.of(
        // PostgreSQL, category R
        "all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric", "both", "case", "cast", "check",
        "collate", "column", "constraint", "create", "current_catalog", "current_date", "current_role", "current_time",
        "current_timestamp", "current_user", "default", "deferrable", "desc", "distinct", "do", "else", "end", "except",
        "false", "fetch", "for", "foreign", "from", "grant", "group", "having", "in", "initially", "intersect", "into",
        "lateral", "leading", "limit", "localtime", "localtimestamp", "not", "null", "offset", "on", "only", "or",
        "order", "placing", "primary", "references", "returning", "select", "session_user", "some", "symmetric",
        "system_user", "table", "then", "to", "trailing", "true", "union", "unique", "user", "using", "variadic", "when",
        "where", "window", "with",
        // PostgreSQL, category T
        "authorization", "binary", "collation", "concurrently", "cross", "current_schema", "freeze", "full", "ilike",
        "inner", "is", "isnull", "join", "left", "like", "natural", "notnull", "outer", "overlaps", "right", "similar",
        "tablesample", "verbose",
        // H2, beyond the above
        "between", "current_path", "day", "exists", "groups", "hour", "if", "interval", "key", "minus", "minute",
        "month", "over", "partition", "qualify", "range", "regexp", "row", "rownum", "rows", "second", "set", "top",
        "uescape", "unknown", "value", "values", "year", "_rowid_");

    /**
     * Reads {@code [schema.]table}: refused when it is not an identifier, when either part is a reserved word,
     * when the schema is one of the database's own ({@code information_schema}, PostgreSQL's {@code pg_*}:
     * {@code pg_catalog}, {@code pg_toast}, {@code pg_temp_N}, ...), and when an unqualified name starts with
     * {@code pg_} (PostgreSQL looks in {@code pg_catalog} first, so such a name may mean a system catalog).
     *
     * @throws InvalidLockUrlException naming the parameter {@code table} and what is wrong
     */
    static TableNames of(LockUrl url, String table) {
      if (!IDENTIFIER.matcher(table).matches()) {
        throw new InvalidLockUrlException("lock URL " + url + ": parameter 'table': '" + table + "' is not a table name "
            + "(letters, digits and '_', at most 40, optionally after 'schema.')");
      }
      String lower = table.toLowerCase(Locale.ROOT);
      int dot = lower.indexOf('.');
      String schema = dot < 0 ? null : lower.substring(0, dot);
      String name = lower.substring(dot + 1);
      if (schema != null && RESERVED.contains(schema)) {
        throw reserved(url, schema, "schema");
      }
      if (RESERVED.contains(name)) {
        throw reserved(url, name, "table");
      }
      if (schema != null && (schema.equals("information_schema") || schema.startsWith("pg_"))) {
        throw new InvalidLockUrlException("lock URL " + url + ": parameter 'table': '" + schema + "' is a schema of the "
            + "database itself (information_schema, and PostgreSQL's pg_catalog, pg_toast, pg_temp and every other pg_ "
            + "schema); put the lock tables in a schema of the application, such as 'public." + name + "'");
      }
      if (schema == null && name.startsWith("pg_")) {
        throw new InvalidLockUrlException("lock URL " + url + ": parameter 'table': '" + name + "' starts with 'pg_', "
            + "as PostgreSQL's system catalogs do, which it looks in first; choose a name without that prefix, or write "
            + "the schema ('public." + name + "')");
      }
      return new TableNames(lower);
    }

    private static InvalidLockUrlException reserved(LockUrl url, String word, String what) {
      return new InvalidLockUrlException("lock URL " + url + ": parameter 'table': '" + word + "' is a reserved word of "
          + "SQL (PostgreSQL or H2) and cannot name a " + what + " unquoted; choose another name, such as '" + word
          + "_locks'");
    }

    String keys() {
      return holders + "_keys";
    }

    String meta() {
      return holders + "_meta";
    }

    String queue() {
      return holders + "_queue";
    }

    String sequence() {
      return holders + "_fence";
    }

    /** The notification channel of releases (PostgreSQL), an unqualified identifier. */
    String channel() {
      return holders.substring(holders.indexOf('.') + 1) + "_released";
    }
  }
}
