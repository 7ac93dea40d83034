package dev.tumbler.lock.spi;

import dev.tumbler.lock.InvalidLockUrlException;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A parsed lock URL: {@code lock:<scheme>:<rest>}, where the rest is either opaque ({@code local}) or
 * hierarchical ({@code //[user[:password]@]host[:port][,host[:port]...][/path][?key=value&...]}).
 *
 * <ul>
 *   <li>Hosts: names, IPv4 literals, or IPv6 literals in brackets ({@code [::1]:2181}); a missing port is
 *       filled by {@link #hosts(int)}.
 *   <li>User info, path, parameter names and values are percent-decoded.
 *   <li>Typed getters parse durations ({@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}, {@code 1d}, or
 *       ISO-8601 {@code PT30S}), integers, booleans and enums, and fail naming the parameter.
 *   <li>{@link #toString()} is redacted: the password and every parameter whose name looks like a secret's
 *       ({@link #isSecretParameter}: {@code password}, {@code passwd}, {@code pwd}, {@code secret}, {@code token},
 *       {@code credential}, {@code auth}, {@code apikey}, …, and misspellings of the long ones, such as
 *       {@code pasword}) show as {@code ***}.
 *   <li>The error for unknown parameters ({@link #requireKnownParameters}) shows none of their values,
 *       whatever their names: a misspelled secret's name may look like nothing secret, and the name alone is
 *       enough to fix a typo.
 * </ul>
 *
 * <p>Immutable and thread safe. Every error is an {@link InvalidLockUrlException} that says what is wrong
 * and where, quoting the URL only in redacted form.
 */
public final class LockUrl {

  /** The prefix of every lock URL. */
  public static final String PREFIX = "lock:";

  private static final Pattern SCHEME = Pattern.compile("[a-z][a-z0-9+.\\-]*");
  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h|d)");
  private static final String REDACTED = "***";

  /**
   * A host and its port.
   *
   * @param host a name or IP literal, without brackets
   * @param port 0-65535, or -1 when the URL gave none
   */
  public record HostAndPort(String host, int port) {
    public HostAndPort {
      Objects.requireNonNull(host, "host");
    }

    /** Whether the URL gave a port. */
    public boolean hasPort() {
      return port >= 0;
    }

    @Override
    public String toString() {
      // as the URL writes it, so that it parses back: a zone's '%' and anything a host name cannot hold escaped
      String h = host.indexOf(':') >= 0 ? "[" + host.replace("%", "%25") + "]" : encode(host);
      return port >= 0 ? h + ":" + port : h;
    }
  }

  private final String scheme;
  private final String opaque;
  private final boolean hierarchical;
  private final String user;
  private final String password;
  private final List<HostAndPort> hosts;
  private final String path;
  private final Map<String, String> parameters;

  private LockUrl(String scheme, String opaque, boolean hierarchical, String user, String password,
      List<HostAndPort> hosts, String path, Map<String, String> parameters) {
    this.scheme = scheme;
    this.opaque = opaque;
    this.hierarchical = hierarchical;
    this.user = user;
    this.password = password;
    this.hosts = List.copyOf(hosts);
    this.path = path;
    this.parameters = Collections.unmodifiableMap(new LinkedHashMap<>(parameters));
  }

  /**
   * Parses a lock URL.
   *
   * @throws InvalidLockUrlException if it is malformed; the message says what and where
   * @throws NullPointerException if {@code url} is null
   */
  public static LockUrl parse(String url) {
    Objects.requireNonNull(url, "url");
    return new Parser(url).parse();
  }

  /** The provider scheme, lower case: {@code redis} for {@code lock:redis://...}. */
  public String scheme() {
    return scheme;
  }

  /** Whether the rest starts with {@code //} (hosts, path, parameters). */
  public boolean isHierarchical() {
    return hierarchical;
  }

  /** For an opaque URL ({@code lock:native:local}), the part before {@code ?} ({@code local}); else empty. */
  public String opaque() {
    return opaque;
  }

  /** The decoded user name, if the URL has user info. */
  public Optional<String> user() {
    return Optional.ofNullable(user);
  }

  /** The decoded password, if the URL has one. Never logged or shown by this class. */
  public Optional<String> password() {
    return Optional.ofNullable(password);
  }

  /** The hosts as written, ports -1 where none was given. Empty for opaque URLs. */
  public List<HostAndPort> hosts() {
    return hosts;
  }

  /** The hosts, with {@code defaultPort} where none was given. */
  public List<HostAndPort> hosts(int defaultPort) {
    List<HostAndPort> out = new ArrayList<>(hosts.size());
    for (HostAndPort h : hosts) {
      out.add(h.hasPort() ? h : new HostAndPort(h.host(), defaultPort));
    }
    return List.copyOf(out);
  }

  /** The decoded path, starting with {@code /}, or empty when there is none. */
  public String path() {
    return path;
  }

  /** Every parameter, decoded, in URL order. */
  public Map<String, String> parameters() {
    return parameters;
  }

  /** A parameter's decoded value. */
  public Optional<String> parameter(String name) {
    return Optional.ofNullable(parameters.get(name));
  }

  /** A string parameter, or {@code defaultValue}. */
  public String string(String name, String defaultValue) {
    return parameters.getOrDefault(name, defaultValue);
  }

  /**
   * A duration parameter ({@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}, {@code 1d}, or ISO-8601),
   * or {@code defaultValue}.
   *
   * @throws InvalidLockUrlException if the value is not a duration or is negative
   */
  public Duration duration(String name, Duration defaultValue) {
    String v = parameters.get(name);
    if (v == null) {
      return defaultValue;
    }
    try {
      return parseDuration(v);
    } catch (IllegalArgumentException e) {
      throw invalidParameter(name, isSecretParameter(name) ? "the value is not a duration" : e.getMessage());
    }
  }

  /**
   * An integer parameter within {@code [min, max]}, or {@code defaultValue}.
   *
   * @throws InvalidLockUrlException if the value is not an integer or out of range
   */
  public int integer(String name, int defaultValue, int min, int max) {
    String v = parameters.get(name);
    if (v == null) {
      return defaultValue;
    }
    int n;
    try {
      n = Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw invalidParameter(name, "'" + shown(name, v) + "' is not an integer");
    }
    if (n < min || n > max) {
      throw invalidParameter(name, n + " is not within [" + min + ", " + max + "]");
    }
    return n;
  }

  /**
   * A boolean parameter: {@code true}/{@code false}/{@code yes}/{@code no}/{@code 1}/{@code 0}, or a bare
   * name ({@code ?tls}) for true; {@code defaultValue} when absent.
   *
   * @throws InvalidLockUrlException for any other value
   */
  public boolean bool(String name, boolean defaultValue) {
    String v = parameters.get(name);
    if (v == null) {
      return defaultValue;
    }
    return switch (v.trim().toLowerCase(Locale.ROOT)) {
      case "", "true", "yes", "1", "on" -> true;
      case "false", "no", "0", "off" -> false;
      default -> throw invalidParameter(name, "'" + shown(name, v) + "' is not a boolean (true or false)");
    };
  }

  /**
   * An enum parameter, matched without regard to case and with {@code -} read as {@code _}
   * ({@code ricart-agrawala} is {@code RICART_AGRAWALA}), or {@code defaultValue}.
   *
   * @throws InvalidLockUrlException naming the accepted values otherwise
   */
  public <E extends Enum<E>> E enumValue(String name, Class<E> type, E defaultValue) {
    List<String> accepted = new ArrayList<>();
    for (E e : type.getEnumConstants()) {
      accepted.add(e.name().toLowerCase(Locale.ROOT).replace('_', '-'));
    }
    String v = oneOf(name, accepted, null);
    return v == null ? defaultValue : type.getEnumConstants()[accepted.indexOf(v)];
  }

  /**
   * A parameter that names one of {@code accepted} (lower-case words joined by {@code -}), matched
   * without regard to case and with {@code _} read as {@code -}; {@code defaultValue} when absent.
   *
   * @return the matching element of {@code accepted}, or {@code defaultValue}
   * @throws InvalidLockUrlException naming the accepted values otherwise
   */
  public String oneOf(String name, List<String> accepted, String defaultValue) {
    String v = parameters.get(name);
    if (v == null) {
      return defaultValue;
    }
    String key = v.trim().replace('_', '-').toLowerCase(Locale.ROOT);
    for (String a : accepted) {
      if (a.equals(key)) {
        return a;
      }
    }
    throw invalidParameter(name, "'" + shown(name, v) + "' is not one of " + accepted);
  }

  /**
   * Fails if the URL has a parameter not in {@code accepted}: a typo must not fall back to a default.
   *
   * @throws InvalidLockUrlException naming the unknown parameters and the accepted ones
   */
  public void requireKnownParameters(Collection<String> accepted) {
    List<String> unknown = new ArrayList<>();
    for (String k : parameters.keySet()) {
      if (!accepted.contains(k)) {
        unknown.add(k);
      }
    }
    if (!unknown.isEmpty()) {
      // the values of unknown parameters are never shown: this URL cannot tell a misspelled secret from a typo
      throw new InvalidLockUrlException("lock URL " + render(unknown) + ": unknown parameter"
          + (unknown.size() > 1 ? "s " : " ") + unknown + " for provider '" + scheme
          + "'; accepted: " + new TreeSet<>(accepted));
    }
  }

  /**
   * This URL with {@code info} applied: its string entries override parameters of the same name;
   * {@code user} and {@code password} override the user info. Entries that are not strings are left for
   * the provider.
   */
  public LockUrl withOverrides(Properties info) {
    if (info == null || info.isEmpty()) {
      return this;
    }
    String u = user;
    String p = password;
    Map<String, String> params = new LinkedHashMap<>(parameters);
    for (String key : info.stringPropertyNames()) {
      String value = info.getProperty(key);
      switch (key) {
        case "user" -> u = value;
        case "password" -> p = value;
        default -> params.put(key, value);
      }
    }
    return new LockUrl(scheme, opaque, hierarchical, u, p, hosts, path, params);
  }

  /**
   * Parses a duration: {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}, {@code 1d}, or ISO-8601
   * ({@code PT30S}).
   *
   * @throws IllegalArgumentException saying what is wrong
   */
  public static Duration parseDuration(String text) {
    Objects.requireNonNull(text, "text");
    String t = text.trim();
    Matcher m = DURATION.matcher(t);
    if (m.matches()) {
      long n;
      try {
        n = Long.parseLong(m.group(1));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("'" + text + "' is too large");
      }
      try {
        return switch (m.group(2)) {
          case "ms" -> Duration.ofMillis(n);
          case "s" -> Duration.ofSeconds(n);
          case "m" -> Duration.ofMinutes(n);
          case "h" -> Duration.ofHours(n);
          default -> Duration.ofDays(n);
        };
      } catch (ArithmeticException e) {
        throw new IllegalArgumentException("'" + text + "' is too large"); // more seconds than a long holds
      }
    }
    if (t.startsWith("P") || t.startsWith("p")) {
      Duration d;
      try {
        d = Duration.parse(t);
      } catch (DateTimeParseException e) {
        throw new IllegalArgumentException("'" + text + "' is not a duration");
      }
      if (d.isNegative()) {
        throw new IllegalArgumentException("'" + text + "' is negative");
      }
      return d;
    }
    if (t.startsWith("-")) {
      throw new IllegalArgumentException("'" + text + "' is negative");
    }
    if (t.chars().allMatch(Character::isDigit) && !t.isEmpty()) {
      throw new IllegalArgumentException("'" + text + "' has no unit (write 500ms, 30s, 2m, 1h or 1d)");
    }
    throw new IllegalArgumentException("'" + text + "' is not a duration (write 500ms, 30s, 2m, 1h or 1d)");
  }

  /** Substrings of a name (lower case, letters and digits only) that make it a secret's. */
  private static final List<String> SECRET_PARTS = List.of("password", "passwd", "passphrase", "passcode", "pwd",
      "secret", "token", "credential", "apikey", "privatekey");
  /** Words of a name ({@code camelCase}, {@code snake_case} or {@code kebab-case}) that make it a secret's. */
  private static final Set<String> SECRET_WORDS = Set.of("pass", "pw", "auth", "authorization", "bearer", "jwt");
  /** Long secret words whose misspellings ({@code pasword}, {@code passwrod}, {@code secert}) are secret too. */
  private static final List<String> SECRET_MISSPELLED = List.of("password", "passwd", "passphrase", "secret",
      "credential");
  private static final Pattern WORD_BREAK = Pattern.compile("[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])"
      + "|(?<=[A-Z])(?=[A-Z][a-z])");

  /**
   * Whether a parameter of this name holds a secret and is redacted. The rule is broad on purpose, since a
   * redacted value costs nothing and a shown secret cannot be taken back: the name, in lower case with only its
   * letters and digits, contains {@code password}, {@code passwd}, {@code passphrase}, {@code passcode},
   * {@code pwd}, {@code secret}, {@code token}, {@code credential}, {@code apikey} or {@code privatekey}; or one
   * of its words ({@code keyStorePassword}: key, store, password) is {@code pass}, {@code pw}, {@code auth},
   * {@code authorization}, {@code bearer} or {@code jwt}; or it contains a misspelling of {@code password},
   * {@code passwd}, {@code passphrase}, {@code secret} or {@code credential}: a part at most one edit away (a
   * letter added, dropped, changed, or two swapped) from one of six letters, two from one of eight or more
   * ({@code pasword}, {@code keyStorePasswd}, {@code sentinelPasword}, {@code secert}).
   */
  public static boolean isSecretParameter(String name) {
    StringBuilder sb = new StringBuilder(name.length());
    for (int i = 0; i < name.length(); i++) {
      char c = Character.toLowerCase(name.charAt(i));
      if (c < 0x80 && Character.isLetterOrDigit(c)) {
        sb.append(c);
      }
    }
    String compact = sb.toString();
    for (String part : SECRET_PARTS) {
      if (compact.contains(part)) {
        return true;
      }
    }
    for (String word : WORD_BREAK.split(name)) {
      if (SECRET_WORDS.contains(word.toLowerCase(Locale.ROOT))) {
        return true;
      }
    }
    for (String word : SECRET_MISSPELLED) {
      if (nearestSubstringDistance(word, compact) <= (word.length() >= 8 ? 2 : 1)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The least optimal-string-alignment distance (insertions, deletions, substitutions, and transpositions of
   * two neighbours) between {@code pattern} and any substring of {@code text} (Sellers' approximate search).
   */
  static int nearestSubstringDistance(String pattern, String text) {
    int m = pattern.length();
    int n = text.length();
    int[][] d = new int[m + 1][n + 1];
    for (int i = 1; i <= m; i++) {
      d[i][0] = i; // text columns start at 0 for free: a match may begin anywhere
    }
    for (int i = 1; i <= m; i++) {
      for (int j = 1; j <= n; j++) {
        int cost = pattern.charAt(i - 1) == text.charAt(j - 1) ? 0 : 1;
        int v = Math.min(d[i - 1][j - 1] + cost, Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1));
        if (i > 1 && j > 1 && pattern.charAt(i - 1) == text.charAt(j - 2)
            && pattern.charAt(i - 2) == text.charAt(j - 1)) {
          v = Math.min(v, d[i - 2][j - 2] + 1);
        }
        d[i][j] = v;
      }
    }
    int best = m;
    for (int j = 0; j <= n; j++) {
      best = Math.min(best, d[m][j]);
    }
    return best;
  }

  private String shown(String name, String value) {
    return isSecretParameter(name) ? REDACTED : value;
  }

  private InvalidLockUrlException invalidParameter(String name, String reason) {
    return new InvalidLockUrlException("lock URL " + this + ": parameter '" + name + "': " + reason);
  }

  /**
   * The URL with the password and the values of secret parameters ({@link #isSecretParameter}) replaced by
   * {@code ***}.
   */
  @Override
  public String toString() {
    return render(List.of());
  }

  /** As {@link #toString()}, with the values of {@code hidden} parameters replaced by {@code ***} as well. */
  private String render(Collection<String> hidden) {
    StringBuilder sb = new StringBuilder(PREFIX).append(scheme).append(':');
    if (hierarchical) {
      sb.append("//");
      if (user != null || password != null) {
        sb.append(user == null ? "" : encode(user));
        if (password != null) {
          sb.append(':').append(REDACTED);
        }
        sb.append('@');
      }
      for (int i = 0; i < hosts.size(); i++) {
        sb.append(i == 0 ? "" : ",").append(hosts.get(i));
      }
      sb.append(encodePath(path));
    } else {
      sb.append(encodeOpaque(opaque));
    }
    char sep = '?';
    for (Map.Entry<String, String> e : parameters.entrySet()) {
      sb.append(sep).append(encode(e.getKey()));
      sb.append('=').append(isSecretParameter(e.getKey()) || hidden.contains(e.getKey()) ? REDACTED
          : encode(e.getValue(), QUERY_SAFE));
      sep = '&';
    }
    return sb.toString();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LockUrl u && scheme.equals(u.scheme) && opaque.equals(u.opaque)
        && hierarchical == u.hierarchical && Objects.equals(user, u.user) && Objects.equals(password, u.password)
        && hosts.equals(u.hosts) && path.equals(u.path) && parameters.equals(u.parameters);
  }

  @Override
  public int hashCode() {
    return Objects.hash(scheme, opaque, hosts, path, parameters);
  }

  /** Characters a query value may hold unescaped: RFC 3986 query characters but our separators. */
  private static final String QUERY_SAFE = "-._~:,/@;!*()$";

  private static String encode(String s) {
    return encode(s, "-._~");
  }

  private static String encode(String s, String safe) {
    StringBuilder sb = new StringBuilder();
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (c < 0x80 && (Character.isLetterOrDigit(c) || safe.indexOf(c) >= 0)) {
        sb.append((char) c);
      } else {
        sb.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
            .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
      }
    }
    return sb.toString();
  }

  /**
   * The opaque part as it parses back to itself: percent-escapes for what the parser would read otherwise
   * ({@code %}, {@code ?}, {@code #}, spaces, controls, non-ASCII), and a leading {@code //} escaped so that
   * it does not turn into a host list.
   */
  private static String encodeOpaque(String o) {
    String e = encode(o, "-._~/:@!$&'()*+,;=");
    return e.startsWith("//") ? "%2F" + e.substring(1) : e;
  }

  private static String encodePath(String p) {
    if (p.isEmpty()) {
      return p;
    }
    StringBuilder sb = new StringBuilder();
    for (String seg : p.substring(1).split("/", -1)) {
      sb.append('/').append(encode(seg));
    }
    return sb.toString();
  }

  /** A hand-written parser, so that every error can say where the URL broke. */
  private static final class Parser {
    private final String url;

    Parser(String url) {
      this.url = url;
    }

    /** The URL as it may be shown: the user info's password masked, secret parameters masked. */
    private String safe() {
      String s = url;
      int auth = s.indexOf("//");
      if (auth >= 0) {
        int end = endOfAuthority(auth + 2);
        int at = s.lastIndexOf('@', end - 1);
        if (at > auth) {
          int colon = s.indexOf(':', auth + 2);
          if (colon >= 0 && colon < at) {
            s = s.substring(0, colon + 1) + REDACTED + s.substring(at);
          }
        }
      }
      int q = s.indexOf('?');
      if (q >= 0) {
        StringBuilder sb = new StringBuilder(s.substring(0, q));
        char sep = '?';
        for (String pair : s.substring(q + 1).split("&", -1)) {
          int eq = pair.indexOf('=');
          String key = eq < 0 ? pair : pair.substring(0, eq);
          sb.append(sep).append(eq >= 0 && isSecretParameter(lenientDecode(key)) ? key + "=" + REDACTED : pair);
          sep = '&';
        }
        s = sb.toString();
      }
      return s;
    }

    private int endOfAuthority(int from) {
      int end = url.length();
      for (char c : new char[] {'/', '?', '#'}) {
        int i = url.indexOf(c, from);
        if (i >= 0 && i < end) {
          end = i;
        }
      }
      return end;
    }

    private InvalidLockUrlException error(int position, String what) {
      return new InvalidLockUrlException("malformed lock URL '" + safe() + "' at character " + (position + 1)
          + ": " + what);
    }

    LockUrl parse() {
      if (!url.regionMatches(true, 0, PREFIX, 0, PREFIX.length())) {
        throw error(0, "a lock URL starts with 'lock:' (as in lock:redis://host:6379)");
      }
      int schemeEnd = url.indexOf(':', PREFIX.length());
      if (schemeEnd < 0) {
        throw error(PREFIX.length(), "no ':' after the scheme (as in lock:native:local)");
      }
      String scheme = url.substring(PREFIX.length(), schemeEnd).toLowerCase(Locale.ROOT);
      if (!SCHEME.matcher(scheme).matches()) {
        throw error(PREFIX.length(), "'" + scheme + "' is not a scheme (a letter, then letters, digits, '+', '-' or '.')");
      }
      int pos = schemeEnd + 1;
      int hash = url.indexOf('#', pos);
      if (hash >= 0) {
        throw error(hash, "a lock URL has no fragment ('#')");
      }
      for (int i = 0; i < url.length(); i++) {
        char c = url.charAt(i);
        if (Character.isISOControl(c) || c == ' ') {
          throw error(i, c == ' ' ? "a space (write %20)" : "a control character");
        }
      }
      int q = url.indexOf('?', pos);
      int restEnd = q < 0 ? url.length() : q;
      Map<String, String> params = q < 0 ? Map.of() : parseQuery(q + 1);
      if (!url.startsWith("//", pos)) {
        String opaque = url.substring(pos, restEnd);
        if (opaque.isEmpty()) {
          throw error(pos, "nothing after 'lock:" + scheme + ":' (as in lock:" + scheme + "://host or lock:"
              + scheme + ":local)");
        }
        return new LockUrl(scheme, decode(opaque, pos), false, null, null, List.of(), "", params);
      }
      int authStart = pos + 2;
      int authEnd = endOfAuthority(authStart);
      String user = null;
      String password = null;
      int hostStart = authStart;
      int at = url.lastIndexOf('@', authEnd - 1);
      if (at >= authStart) {
        String info = url.substring(authStart, at);
        int colon = info.indexOf(':');
        user = decode(colon < 0 ? info : info.substring(0, colon), authStart);
        if (colon >= 0) {
          password = decodeSecret(info.substring(colon + 1), authStart + colon + 1);
        }
        if (user.isEmpty()) {
          user = null;
        }
        hostStart = at + 1;
      }
      List<HostAndPort> hosts = parseHosts(hostStart, authEnd);
      String path = "";
      if (authEnd < restEnd && url.charAt(authEnd) == '/') {
        path = decode(url.substring(authEnd, restEnd), authEnd);
      }
      return new LockUrl(scheme, "", true, user, password, hosts, path, params);
    }

    private List<HostAndPort> parseHosts(int start, int end) {
      List<HostAndPort> hosts = new ArrayList<>();
      if (start == end) {
        return hosts;
      }
      int i = start;
      while (i <= end) {
        int comma = url.indexOf(',', i);
        if (i < end && url.charAt(i) == '[') { // i == end: a trailing comma, an empty last host
          int close = url.indexOf(']', i);
          if (close < 0 || close > end) {
            throw error(i, "IPv6 literal has no closing ']'");
          }
          comma = url.indexOf(',', close);
        }
        int itemEnd = comma < 0 || comma > end ? end : comma;
        hosts.add(parseHost(i, itemEnd));
        i = itemEnd + 1;
      }
      return hosts;
    }

    private HostAndPort parseHost(int start, int end) {
      String item = url.substring(start, end);
      if (item.isEmpty()) {
        throw error(start, "empty host in the host list");
      }
      String host;
      String port = null;
      int portAt;
      if (item.startsWith("[")) {
        int close = item.indexOf(']');
        host = item.substring(1, close);
        String address = host;
        int zone = host.indexOf("%25");
        if (zone >= 0) {
          address = host.substring(0, zone);
          String zoneId = host.substring(zone + 3);
          if (zoneId.isEmpty() || !zoneId.chars().allMatch(c -> Character.isLetterOrDigit(c) || "-._~".indexOf(c) >= 0)) {
            throw error(start + 1 + zone, "'" + zoneId + "' is not an IPv6 zone id");
          }
          host = address + "%" + zoneId;
        }
        if (address.isEmpty() || address.indexOf(':') < 0
            || !address.chars().allMatch(c -> Character.digit(c, 16) >= 0 || c == ':' || c == '.')) {
          throw error(start + 1, "'" + host + "' is not an IPv6 address");
        }
        String after = item.substring(close + 1);
        portAt = start + close + 2;
        if (!after.isEmpty()) {
          if (!after.startsWith(":")) {
            throw error(start + close + 1, "expected ':port' after the IPv6 literal");
          }
          port = after.substring(1);
        }
      } else {
        int colon = item.indexOf(':');
        host = colon < 0 ? item : item.substring(0, colon);
        portAt = start + colon + 1;
        if (colon >= 0) {
          port = item.substring(colon + 1);
        }
        if (host.isEmpty()) {
          throw error(start, "empty host name");
        }
        for (int k = 0; k < host.length(); k++) {
          char c = host.charAt(k);
          if (!(Character.isLetterOrDigit(c) || c == '-' || c == '.' || c == '_' || c == '%')) {
            throw error(start + k, "'" + c + "' is not allowed in a host name");
          }
        }
        host = decode(host, start);
        if (host.indexOf(':') >= 0) {
          // it would print as an IPv6 literal, and a host name cannot hold one
          throw error(start, "host name '" + host + "' holds a ':' (written %3A); an IPv6 address goes in brackets");
        }
      }
      int p = -1;
      if (port != null) {
        if (port.isEmpty() || !port.chars().allMatch(c -> c >= '0' && c <= '9') || port.length() > 5) {
          throw error(portAt, "port '" + port + "' is not a number");
        }
        p = Integer.parseInt(port);
        if (p > 65535) {
          throw error(portAt, "port " + p + " is not within 0-65535");
        }
      }
      return new HostAndPort(host, p);
    }

    private Map<String, String> parseQuery(int start) {
      Map<String, String> params = new LinkedHashMap<>();
      if (start >= url.length()) {
        return params;
      }
      int i = start;
      for (String pair : url.substring(start).split("&", -1)) {
        if (pair.isEmpty()) {
          throw error(i, "empty parameter (two '&' in a row, or a trailing '&')");
        }
        int eq = pair.indexOf('=');
        String key = decode(eq < 0 ? pair : pair.substring(0, eq), i);
        if (key.isEmpty()) {
          throw error(i, "parameter with no name");
        }
        String value = eq < 0 ? "" : isSecretParameter(key) ? decodeSecret(pair.substring(eq + 1), i + eq + 1)
            : decode(pair.substring(eq + 1), i + eq + 1);
        if (params.put(key, value) != null) {
          throw error(i, "parameter '" + key + "' is given twice");
        }
        i += pair.length() + 1;
      }
      return params;
    }

    private String decodeSecret(String s, int at) {
      try {
        return decodeOrThrow(s);
      } catch (IllegalArgumentException e) {
        throw error(at, "bad percent-escape in a secret value");
      }
    }

    private String decode(String s, int at) {
      try {
        return decodeOrThrow(s);
      } catch (IllegalArgumentException e) {
        throw error(at, e.getMessage() + " in '" + s + "'");
      }
    }

    private static String lenientDecode(String s) {
      try {
        return decodeOrThrow(s);
      } catch (IllegalArgumentException e) {
        return s;
      }
    }

    private static String decodeOrThrow(String s) {
      if (s.indexOf('%') < 0) {
        return s;
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      for (int i = 0; i < s.length(); ) {
        int c = s.codePointAt(i);
        if (c == '%') {
          if (i + 2 >= s.length()) {
            throw new IllegalArgumentException("incomplete percent-escape");
          }
          int hi = Character.digit(s.charAt(i + 1), 16);
          int lo = Character.digit(s.charAt(i + 2), 16);
          if (hi < 0 || lo < 0) {
            throw new IllegalArgumentException("bad percent-escape '" + s.substring(i, i + 3) + "'");
          }
          out.write(hi << 4 | lo);
          i += 3;
        } else {
          byte[] b = new String(Character.toChars(c)).getBytes(StandardCharsets.UTF_8);
          out.write(b, 0, b.length);
          i += Character.charCount(c);
        }
      }
      return out.toString(StandardCharsets.UTF_8);
    }
  }
}
