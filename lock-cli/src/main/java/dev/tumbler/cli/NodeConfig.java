package dev.tumbler.cli;

import dev.tumbler.lock.spi.LockUrl;
import dev.tumbler.peer.algorithm.Algorithm;
import dev.tumbler.peer.algorithm.Algorithms;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The configuration of {@code tumbler node}, merged from three places: command-line options, then environment
 * variables {@code TUMBLER_<KEY>} (the key in upper snake case: {@code leaseTime} is {@code TUMBLER_LEASE_TIME}),
 * then a {@code key=value} file ({@code --config}). The first place that gives a key wins.
 *
 * <p>The daemon reads {@link #DAEMON_KEYS} itself; every other key is a URL parameter of the native provider,
 * passed through as it is: the provider rejects the ones it does not know and names them, so there is no second
 * list of them here. A key whose name makes it a secret ({@link LockUrl#isSecretParameter}: {@code secret},
 * {@code clientSecret}, {@code keyStorePassword}, and misspellings such as {@code keyStorePasswd} or {@code pasword},
 * which the provider then refuses as unknown without showing their values) is never taken from the command line, is
 * taken from a file only when group and others cannot read it, and reaches the provider as a {@link Properties}
 * entry, never in the URL.
 *
 * <p>Every value is checked here, once, and an error names the key and where it came from (a file and line, an
 * environment variable, an option). Immutable.
 */
final class NodeConfig {
  /** The value of {@code log} that writes the log to standard output. */
  static final String STDOUT = "stdout";
  static final String DEFAULT_ALGORITHM = "lamport";
  static final long DEFAULT_LOG_MAX_SIZE = 10L << 20;
  static final int DEFAULT_LOG_FILES = 5;
  static final int MAX_LOG_FILES = 1000;

  /** Keys the daemon reads itself; they never reach the URL's parameters as they are. */
  static final Set<String> DAEMON_KEYS = Set.of("listen", "peers", "algorithm", "http", "log", "logMaxSize",
      "logFiles");
  /** The key of the thin clients' listen address: a URL parameter, but one the daemon names in its log. */
  static final String CLIENT_LISTEN = "clientListen";

  /** Environment variables of {@code TUMBLER_} that are not node keys: the launcher's and {@code tumbler run}'s. */
  static final Set<String> NOT_NODE_ENV = Set.of("TUMBLER_JAVA_OPTS", Secrets.PASSWORD_ENV);
  static final String ENV_PREFIX = "TUMBLER_";

  private static final Pattern KEY = Pattern.compile("[A-Za-z][A-Za-z0-9]*");
  private static final Pattern ENV_NAME = Pattern.compile("TUMBLER_[A-Z][A-Z0-9]*(_[A-Z0-9]+)*");
  private static final Pattern SIZE = Pattern.compile("(\\d{1,15})\\s*(B|KB|K|MB|M|GB|G)?",
      Pattern.CASE_INSENSITIVE);

  /** A configuration error. Its message names the key and where it came from, never a secret's value. */
  static final class ConfigException extends RuntimeException {
    ConfigException(String message) {
      super(message);
    }
  }

  /** One key's value and where it came from: {@code node.conf:3}, {@code environment variable TUMBLER_X}, … */
  record Setting(String key, String value, String source) {
    @Override
    public String toString() {
      return "key '" + key + "' (from " + source + ")"; // never the value: it may be a secret
    }
  }

  /** What the command line gave; null where an option is absent. */
  record Options(Path configFile, String listen, List<String> peers, String algorithm, Map<String, String> params,
      Path secretFile, Path clientSecretFile) {}

  /** Where the log goes: standard output ({@code file} empty), or a file rotated at {@code maxBytes}. */
  record LogSettings(Optional<Path> file, long maxBytes, int files) {}

  /** A listen address: its host and port, and the text it was given as (a node's id is that text). */
  record Address(String host, int port, String text) {
    @Override
    public String toString() {
      return text;
    }
  }

  private final Map<String, Setting> settings;
  private final Address listen;
  private final List<String> peers;
  private final String algorithm;
  private final Optional<Address> http;
  private final LogSettings log;

  private NodeConfig(Map<String, Setting> settings) {
    this.settings = settings;
    Setting l = required(settings, "listen", "--listen HOST:PORT");
    this.listen = address(l, false);
    Setting p = required(settings, "peers", "--peers HOST:PORT,HOST:PORT");
    List<String> ps = new ArrayList<>();
    for (String peer : p.value().split(",", -1)) {
      String id = peer.strip();
      if (id.isEmpty()) {
        throw new ConfigException(p + ": an empty peer in '" + p.value() + "' (peers are HOST:PORT,HOST:PORT)");
      }
      address(new Setting(p.key(), id, p.source()), false);
      ps.add(id);
    }
    this.peers = List.copyOf(ps);
    Setting a = settings.get("algorithm");
    this.algorithm = a == null ? DEFAULT_ALGORITHM : a.value().strip();
    if (a != null && !Algorithms.names().contains(algorithm)) {
      throw new ConfigException(a + ": '" + a.value() + "' is not a native algorithm; one of " + Algorithms.names());
    }
    Setting c = settings.get(CLIENT_LISTEN);
    if (c != null) {
      address(c, false);
      Algorithm<?> chosen = Algorithms.byName(algorithm).orElseThrow();
      if (!chosen.leased()) {
        // CLIENTS.md D3: checked here, before the log, the endpoint or the node start
        throw new ConfigException(c + ": algorithm " + algorithm + (a == null ? " (the default)" : " (key 'algorithm' from " + a.source() + ")")
            + " cannot serve thin clients: its grants hold until released, so a client that died would hold its "
            + "locks for ever and one cut off could not know it lost them; take clients with one of " + leased()
            + ", or remove the key");
      }
    }
    Setting h = settings.get("http");
    this.http = h == null ? Optional.empty() : Optional.of(address(h, true));
    this.log = logSettings(settings);
    secrets(); // checks them
  }

  /**
   * The configuration from {@code options}, {@code env} and the file {@code options.configFile()}, if given.
   *
   * @throws ConfigException if a value is missing or invalid, the file cannot be read or holds a secret while
   *     others can read it, or a secret was given on the command line
   * @throws Secrets.SecretException if a secret file cannot be read or is empty
   */
  static NodeConfig resolve(Options options, Map<String, String> env) {
    Map<String, Setting> merged = new LinkedHashMap<>();
    if (options.configFile() != null) {
      merged.putAll(readFile(options.configFile()));
    }
    merged.putAll(fromEnvironment(env));
    merged.putAll(fromOptions(options));
    return new NodeConfig(merged);
  }

  // ---- the three places

  /**
   * The file's {@code key=value} lines: blank lines and lines starting with {@code #} are skipped, white space
   * around keys and values is dropped; a line without {@code =}, a bad key or a key given twice is an error that
   * names the file and the line (never the line's content, which may hold a secret).
   */
  static Map<String, Setting> readFile(Path file) {
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new ConfigException("cannot read config file " + file + ": " + e.getClass().getSimpleName()
          + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")"));
    }
    Map<String, Setting> out = new LinkedHashMap<>();
    String firstSecret = null;
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i).strip();
      String where = file + ":" + (i + 1);
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      int eq = line.indexOf('=');
      if (eq < 0) {
        throw new ConfigException(where + ": not a key=value line");
      }
      String key = line.substring(0, eq).strip();
      if (!KEY.matcher(key).matches()) {
        throw new ConfigException(where + ": '" + key + "' is not a key (a letter, then letters and digits)");
      }
      Setting before = out.get(key);
      if (before != null) {
        throw new ConfigException(where + ": key '" + key + "' is given twice (first at " + before.source() + ")");
      }
      out.put(key, new Setting(key, line.substring(eq + 1).strip(), where));
      if (firstSecret == null && LockUrl.isSecretParameter(key)) {
        firstSecret = "key '" + key + "' at " + where;
      }
    }
    if (firstSecret != null) {
      requirePrivate(file, firstSecret);
    }
    return out;
  }

  /** A file that holds a secret must not be readable by group or others. */
  private static void requirePrivate(Path file, String what) {
    Set<PosixFilePermission> perms;
    try {
      perms = Files.getPosixFilePermissions(file);
    } catch (UnsupportedOperationException e) {
      throw new ConfigException("config file " + file + " holds a secret (" + what + ") on a file system without "
          + "POSIX permissions, where tumbler cannot tell who may read it; give the secret in the environment");
    } catch (IOException e) {
      throw new ConfigException("cannot read the permissions of config file " + file + ": " + e);
    }
    Set<PosixFilePermission> open = EnumSet.of(PosixFilePermission.GROUP_READ, PosixFilePermission.OTHERS_READ);
    open.retainAll(perms);
    if (!open.isEmpty()) {
      throw new ConfigException("config file " + file + " holds a secret (" + what + ") but group or others may "
          + "read it (" + PosixFilePermissions.toString(perms) + "): run chmod 600 " + file);
    }
  }

  /** {@code TUMBLER_LEASE_TIME=10s} is key {@code leaseTime}; the launcher's and {@code run}'s variables are not keys. */
  static Map<String, Setting> fromEnvironment(Map<String, String> env) {
    Map<String, Setting> out = new TreeMap<>(); // the environment has no order: a stable one for the URL
    for (Map.Entry<String, String> e : env.entrySet()) {
      String name = e.getKey();
      if (!name.startsWith(ENV_PREFIX) || NOT_NODE_ENV.contains(name)) {
        continue;
      }
      String source = "environment variable " + name;
      if (!ENV_NAME.matcher(name).matches()) {
        throw new ConfigException(source + ": not a node key in upper snake case (as in TUMBLER_LEASE_TIME)");
      }
      if (e.getValue().isEmpty()) {
        throw new ConfigException(source + " is set but empty");
      }
      String key = keyOf(name);
      out.put(key, new Setting(key, e.getValue().strip(), source));
    }
    return out;
  }

  private static Map<String, Setting> fromOptions(Options o) {
    Map<String, Setting> out = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : o.params() == null ? Map.<String, String>of().entrySet()
        : o.params().entrySet()) {
      String key = e.getKey().strip();
      String source = "option --param " + key;
      if (!KEY.matcher(key).matches()) {
        throw new ConfigException(source + ": '" + key + "' is not a key (a letter, then letters and digits)");
      }
      if (LockUrl.isSecretParameter(key)) {
        throw new ConfigException(source + ": a secret is never taken on the command line (every user of the "
            + "machine sees it with ps); " + whereSecretsGo(key));
      }
      switch (key) {
        case "listen", "peers", "algorithm" -> throw new ConfigException(source + ": give --" + key + " instead");
        default -> out.put(key, new Setting(key, e.getValue().strip(), source));
      }
    }
    if (o.listen() != null) {
      out.put("listen", new Setting("listen", o.listen().strip(), "option --listen"));
    }
    if (o.peers() != null) {
      out.put("peers", new Setting("peers", String.join(",", o.peers()), "option --peers"));
    }
    if (o.algorithm() != null) {
      out.put("algorithm", new Setting("algorithm", o.algorithm(), "option --algorithm"));
    }
    if (o.secretFile() != null) {
      out.put("secret", new Setting("secret", Secrets.read(o.secretFile()), "option --secret-file"));
    }
    if (o.clientSecretFile() != null) {
      out.put("clientSecret", new Setting("clientSecret", Secrets.read(o.clientSecretFile()),
          "option --client-secret-file"));
    }
    return out;
  }

  /** Where a secret of this key may be given. */
  static String whereSecretsGo(String key) {
    String env = envName(key);
    String file = switch (key) {
      case "secret" -> "--secret-file FILE, ";
      case "clientSecret" -> "--client-secret-file FILE, ";
      default -> "";
    };
    return "give it with " + file + "$" + env + ", or as " + key + "=... in the --config file (chmod 600)";
  }

  /** {@code leaseTime} → {@code TUMBLER_LEASE_TIME}. */
  static String envName(String key) {
    StringBuilder sb = new StringBuilder(ENV_PREFIX);
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (Character.isUpperCase(c) && i > 0) {
        sb.append('_');
      }
      sb.append(Character.toUpperCase(c));
    }
    return sb.toString();
  }

  /** {@code TUMBLER_LEASE_TIME} → {@code leaseTime}. */
  static String keyOf(String envName) {
    String[] words = envName.substring(ENV_PREFIX.length()).toLowerCase(Locale.ROOT).split("_");
    StringBuilder sb = new StringBuilder(words[0]);
    for (int i = 1; i < words.length; i++) {
      sb.append(Character.toUpperCase(words[i].charAt(0))).append(words[i], 1, words[i].length());
    }
    return sb.toString();
  }

  // ---- checks

  /** The algorithms whose grants have a term, and so can serve thin clients. */
  private static List<String> leased() {
    List<String> out = new ArrayList<>();
    for (Algorithm<?> x : Algorithms.all()) {
      if (x.leased()) {
        out.add(x.name());
      }
    }
    return out;
  }

  private static Setting required(Map<String, Setting> settings, String key, String option) {
    Setting s = settings.get(key);
    if (s == null) {
      throw new ConfigException("no '" + key + "' given: give " + option + ", set " + envName(key)
          + ", or write " + key + "=... in the --config file");
    }
    if (s.value().isEmpty()) {
      throw new ConfigException(s + " is empty");
    }
    return s;
  }

  /** A {@code host:port} ({@code [v6]:port} for IPv6); port 0 only where {@code anyPort}. */
  private static Address address(Setting s, boolean anyPort) {
    String v = s.value().strip();
    String host;
    String port;
    if (v.startsWith("[")) {
      int close = v.indexOf("]:");
      if (close < 0) {
        throw notAddress(s);
      }
      host = v.substring(1, close);
      port = v.substring(close + 2);
    } else {
      int colon = v.lastIndexOf(':');
      if (colon < 0) {
        throw notAddress(s);
      }
      host = v.substring(0, colon);
      port = v.substring(colon + 1);
      if (host.indexOf(':') >= 0) {
        throw new ConfigException(s + ": '" + v + "': an IPv6 address goes in brackets, as in [::1]:7701");
      }
    }
    boolean v6 = v.startsWith("[");
    if (host.isEmpty() || port.isEmpty() || port.length() > 5 || !port.chars().allMatch(Character::isDigit)
        || !host.chars().allMatch(ch -> v6 ? Character.digit(ch, 16) >= 0 || ch == ':' || ch == '.' || ch == '%'
            : Character.isLetterOrDigit(ch) || ch == '-' || ch == '.' || ch == '_')) {
      throw notAddress(s);
    }
    int p = Integer.parseInt(port);
    if (p > 65535 || (p == 0 && !anyPort)) {
      throw new ConfigException(s + ": port " + p + " is not within " + (anyPort ? 0 : 1) + "-65535");
    }
    return new Address(host, p, v);
  }

  private static ConfigException notAddress(Setting s) {
    return new ConfigException(s + ": '" + s.value() + "' is not HOST:PORT");
  }

  private static LogSettings logSettings(Map<String, Setting> settings) {
    Setting l = settings.get("log");
    Setting size = settings.get("logMaxSize");
    Setting files = settings.get("logFiles");
    if (l != null && l.value().isEmpty()) {
      throw new ConfigException(l + " is empty: give a file path, or stdout");
    }
    if (l == null || l.value().equals(STDOUT)) {
      for (Setting s : new Setting[] {size, files}) {
        if (s != null) {
          throw new ConfigException(s + " applies only to a log file, and the log goes to stdout (key 'log')");
        }
      }
      return new LogSettings(Optional.empty(), DEFAULT_LOG_MAX_SIZE, DEFAULT_LOG_FILES);
    }
    long max = size == null ? DEFAULT_LOG_MAX_SIZE : parseSize(size);
    int n = DEFAULT_LOG_FILES;
    if (files != null) {
      try {
        n = Integer.parseInt(files.value());
      } catch (NumberFormatException e) {
        throw new ConfigException(files + ": '" + files.value() + "' is not a whole number");
      }
      if (n < 1 || n > MAX_LOG_FILES) {
        throw new ConfigException(files + ": " + n + " is not within 1-" + MAX_LOG_FILES);
      }
    }
    return new LogSettings(Optional.of(Path.of(l.value())), max, n);
  }

  /** {@code 10MB}, {@code 512KB}, {@code 1G}, {@code 4096} (bytes); a K is 1024. */
  static long parseSize(Setting s) {
    Matcher m = SIZE.matcher(s.value());
    if (!m.matches()) {
      throw new ConfigException(s + ": '" + s.value() + "' is not a size (as in 10MB, 512KB or 4096)");
    }
    long n = Long.parseLong(m.group(1));
    String unit = m.group(2) == null ? "B" : m.group(2).toUpperCase(Locale.ROOT);
    long bytes = switch (unit.charAt(0)) {
      case 'K' -> n << 10;
      case 'M' -> n << 20;
      case 'G' -> n << 30;
      default -> n;
    };
    if (bytes <= 0 || bytes > (1L << 40)) {
      throw new ConfigException(s + ": '" + s.value() + "' is not within 1 byte and 1024GB");
    }
    return bytes;
  }

  // ---- results

  /** This node's id and listen address. */
  Address listen() {
    return listen;
  }

  List<String> peers() {
    return peers;
  }

  String algorithm() {
    return algorithm;
  }

  /** The thin clients' listen address, if one is given. */
  Optional<String> clientListen() {
    return Optional.ofNullable(settings.get(CLIENT_LISTEN)).map(s -> s.value().strip());
  }

  /** Where the health and metrics endpoint listens, if anywhere. */
  Optional<Address> http() {
    return http;
  }

  LogSettings log() {
    return log;
  }

  /** Where {@code key} came from, if it was given. */
  Optional<String> sourceOf(String key) {
    return Optional.ofNullable(settings.get(key)).map(Setting::source);
  }

  /** The URL parameters passed through to the provider (not the daemon's keys, not secrets), in order. */
  Map<String, Setting> urlParameters() {
    Map<String, Setting> out = new LinkedHashMap<>();
    for (Setting s : settings.values()) {
      if (!DAEMON_KEYS.contains(s.key()) && !LockUrl.isSecretParameter(s.key())) {
        out.put(s.key(), s);
      }
    }
    return out;
  }

  /** The secrets, for the provider: they override URL parameters of the same name and never show in the URL. */
  Properties secrets() {
    Properties p = new Properties();
    for (Setting s : settings.values()) {
      if (LockUrl.isSecretParameter(s.key())) {
        if (s.value().isEmpty()) {
          throw new ConfigException(s + " is empty");
        }
        p.setProperty(s.key(), s.value());
      }
    }
    return p;
  }

  /** The node's lock URL, without secrets: {@code lock:native://LISTEN?peers=...&algorithm=...&...}. */
  String url() {
    StringBuilder sb = new StringBuilder("lock:native://").append(listen).append("?peers=")
        .append(encode(String.join(",", peers))).append("&algorithm=").append(encode(algorithm));
    for (Setting s : urlParameters().values()) {
      sb.append('&').append(s.key()).append('=').append(encode(s.value()));
    }
    return sb.toString();
  }

  /**
   * Where the parameters a provider's error is about came from, to append to it: {@code " (leaseTimeout from
   * environment variable TUMBLER_LEASE_TIMEOUT)"}, or empty if it is about none of them. The provider names the
   * parameter in question in quotes ({@code parameter 'leaseTime': …}) or in the list of unknown ones
   * ({@code unknown parameters [a, b]}); a list of accepted ones is not about them.
   */
  String sourcesIn(String message) {
    Set<String> named = new HashSet<>();
    Matcher quoted = Pattern.compile("'([A-Za-z][A-Za-z0-9]*)'").matcher(message);
    while (quoted.find()) {
      named.add(quoted.group(1));
    }
    Matcher unknown = Pattern.compile("unknown parameters? \\[([^]]*)]").matcher(message);
    while (unknown.find()) {
      for (String k : unknown.group(1).split(",")) {
        named.add(k.strip());
      }
    }
    List<String> sources = new ArrayList<>();
    for (Setting s : settings.values()) {
      if (!DAEMON_KEYS.contains(s.key()) && named.contains(s.key())) {
        sources.add(s.key() + " from " + s.source());
      }
    }
    return sources.isEmpty() ? "" : " (" + String.join("; ", sources) + ")";
  }

  /** Characters a query value keeps unescaped, as {@link LockUrl} writes them. */
  private static final String QUERY_SAFE = "-._~:,/@;!*()$";

  private static String encode(String s) {
    StringBuilder sb = new StringBuilder();
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (c < 0x80 && (Character.isLetterOrDigit(c) || QUERY_SAFE.indexOf(c) >= 0)) {
        sb.append((char) c);
      } else {
        sb.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
            .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
      }
    }
    return sb.toString();
  }
}
