package dev.tumbler.lock;

import dev.tumbler.lock.spi.LockProvider;
import dev.tumbler.lock.spi.LockUrl;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * The entry point: opens a {@link LockService} for a URL, like {@link java.sql.DriverManager}.
 *
 * <pre>{@code
 * try (LockService locks = LockProviders.connect("lock:redis://localhost:6379?leaseTime=10s")) {
 *   ...
 * }
 * }</pre>
 *
 * <h2>Discovery</h2>
 * On first use, providers are found with {@link ServiceLoader} through two explicit class loaders: the
 * one that loaded this class, and the calling thread's context class loader if it is a different one.
 * Nothing depends on the caller's class. A provider that fails to load is not swallowed: it is listed by
 * {@link #loadFailures()} and named in the error for an unknown scheme. {@link #register} adds a
 * provider by hand (and replaces a discovered one of the same scheme); {@link #reload()} runs discovery
 * again. Thread safe.
 */
public final class LockProviders {
  private static final System.Logger LOG = System.getLogger(LockProviders.class.getName());

  private static final Object LOCK = new Object();
  private static Map<String, LockProvider> discovered;
  private static final Map<String, LockProvider> registered = new LinkedHashMap<>();
  private static List<String> failures = List.of();

  private LockProviders() {}

  /**
   * Opens a service for {@code url}.
   *
   * @throws InvalidLockUrlException if the URL is malformed, names no installed provider (the message
   *     lists the installed ones), or has an unknown or invalid parameter
   * @throws ServiceUnavailableException if the provider cannot reach its backend
   */
  public static LockService connect(String url) {
    return connect(url, new Properties());
  }

  /**
   * Opens a service for {@code url}; string entries of {@code info} override URL parameters of the same
   * name ({@code user} and {@code password} override the URL's user info), other entries are passed to
   * the provider as they are.
   *
   * @throws InvalidLockUrlException if the URL is malformed, names no installed provider, or has an
   *     unknown or invalid parameter
   * @throws ServiceUnavailableException if the provider cannot reach its backend
   */
  public static LockService connect(String url, Properties info) {
    Objects.requireNonNull(url, "url");
    Properties props = info == null ? new Properties() : info;
    LockUrl parsed = LockUrl.parse(url);
    LockProvider provider = find(parsed.scheme());
    if (provider == null) {
      throw new InvalidLockUrlException("no lock provider for scheme '" + parsed.scheme() + "' in lock URL '"
          + parsed + "'; installed providers: " + describeInstalled());
    }
    return provider.connect(parsed.withOverrides(props), props);
  }

  /** What is installed: discovered and registered providers, one per scheme, sorted by scheme. */
  public static List<ProviderInfo> providers() {
    List<ProviderInfo> out = new ArrayList<>();
    for (LockProvider p : snapshot().values()) {
      out.add(p.info());
    }
    out.sort((a, b) -> a.scheme().compareTo(b.scheme()));
    return List.copyOf(out);
  }

  /** Providers that {@link ServiceLoader} listed but could not load, each with its error. */
  public static List<String> loadFailures() {
    synchronized (LOCK) {
      discover();
      return failures;
    }
  }

  /** Adds {@code provider}; it takes precedence over a discovered provider of the same scheme. */
  public static void register(LockProvider provider) {
    Objects.requireNonNull(provider, "provider");
    String scheme = Objects.requireNonNull(provider.scheme(), "provider.scheme()");
    synchronized (LOCK) {
      registered.put(scheme, provider);
    }
  }

  /** Removes a provider added with {@link #register} or found by discovery. */
  public static void deregister(LockProvider provider) {
    Objects.requireNonNull(provider, "provider");
    synchronized (LOCK) {
      registered.values().remove(provider);
      discover();
      discovered.values().remove(provider);
    }
  }

  /** Runs discovery again (for class paths that changed); registered providers stay. */
  public static void reload() {
    synchronized (LOCK) {
      discovered = null;
      discover();
    }
  }

  private static LockProvider find(String scheme) {
    return snapshot().get(scheme);
  }

  private static Map<String, LockProvider> snapshot() {
    synchronized (LOCK) {
      discover();
      Map<String, LockProvider> all = new LinkedHashMap<>(discovered);
      all.putAll(registered);
      return all;
    }
  }

  private static String describeInstalled() {
    List<String> names = new ArrayList<>();
    for (ProviderInfo p : providers()) {
      names.add(p.scheme());
    }
    String s = names.isEmpty() ? "none" : String.join(", ", names);
    List<String> failed = loadFailures();
    return failed.isEmpty() ? s : s + "; failed to load: " + String.join("; ", failed);
  }

  private static void discover() {
    if (discovered != null) {
      return;
    }
    Map<String, LockProvider> found = new LinkedHashMap<>();
    List<String> errors = new ArrayList<>();
    ClassLoader own = LockProviders.class.getClassLoader();
    ClassLoader context = Thread.currentThread().getContextClassLoader();
    load(own, found, errors);
    if (context != null && context != own) {
      load(context, found, errors);
    }
    discovered = found;
    failures = List.copyOf(errors);
  }

  private static void load(ClassLoader loader, Map<String, LockProvider> found, List<String> errors) {
    Iterator<LockProvider> it = ServiceLoader.load(LockProvider.class, loader).iterator();
    // A broken entry throws from hasNext() or next(); the iterator moves past it, so keep going,
    // but bound the loop in case a loader keeps failing at the same place.
    for (int attempts = 0; attempts < 1000; attempts++) {
      try {
        if (!it.hasNext()) {
          return;
        }
        LockProvider p = it.next();
        found.putIfAbsent(p.scheme(), p);
      } catch (ServiceConfigurationError | RuntimeException | LinkageError e) {
        String msg = e.getMessage() + (e.getCause() != null ? " (" + e.getCause() + ")" : "");
        errors.add(msg);
        LOG.log(System.Logger.Level.WARNING, "lock provider failed to load: " + msg, e);
      }
    }
  }
}
