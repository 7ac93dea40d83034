package dev.tumbler.lock.tck;

import dev.tumbler.lock.LockException;
import dev.tumbler.lock.LockProviders;
import dev.tumbler.lock.LockService;
import dev.tumbler.lock.spi.LockUrl;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import org.junit.platform.engine.FilterResult;
import org.junit.platform.engine.TestDescriptor;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.PostDiscoveryFilter;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.reporting.legacy.xml.LegacyXmlReportGeneratingListener;

/**
 * Runs the TCK against any lock URL whose provider is on the class path, prints a table per group
 * (passed / failed / skipped, with the reasons) and writes JUnit XML.
 *
 * <pre>
 * java -jar lock-tck-VERSION-standalone.jar --url lock:redis://localhost:6379 [--lease-time 2s]
 *     [--xml-dir tck-reports] [--group Mutex ...] [--class-path provider.jar:its-dependencies.jar]
 * java -cp lock-tck-VERSION-standalone.jar:provider.jar dev.tumbler.lock.tck.TckRunner --url ...
 * </pre>
 *
 * <p>Services are opened with {@link LockProviders#connect(String, Properties)}; the lease time is passed
 * as the {@code leaseTime} property, which overrides a {@code leaseTime} URL parameter. Without
 * {@code --lease-time}, the URL's {@code leaseTime} is used, or 2 s for a provider with lease expiry; a
 * provider whose leases never expire gets no {@code leaseTime} at all (it would reject it). A URL run has no
 * {@link FaultInjector}, so the groups that need faults are skipped with that reason: run the TCK from a
 * provider's own test (see {@link LockTck}) to include them. The backend must be empty of the TCK's
 * names (every name is unique per run) and must not be shared with production traffic.
 *
 * <p>Exit status: 0 when nothing failed, 1 when a test failed, 2 for bad arguments or a URL that cannot
 * be opened.
 */
public final class TckRunner {

  static final Duration DEFAULT_LEASE_TIME = Duration.ofSeconds(2);

  private static volatile TckTarget current;

  private TckRunner() {}

  /** Runs the TCK as {@link #run} does, then exits with its status. */
  public static void main(String[] args) {
    System.exit(run(args, System.out));
  }

  /**
   * Runs the TCK with command-line {@code args}, printing to {@code out}.
   *
   * @return 0 if no test failed, 1 if one did, 2 for bad arguments or an unusable URL
   */
  public static int run(String[] args, PrintStream out) {
    Thread me = Thread.currentThread();
    ClassLoader before = me.getContextClassLoader();
    try {
      return runHere(args, out);
    } finally {
      me.setContextClassLoader(before);
    }
  }

  private static int runHere(String[] args, PrintStream out) {
    String url = null;
    Duration leaseTime = null;
    Path xmlDir = Path.of("tck-reports");
    Set<String> groups = new LinkedHashSet<>();
    String classPath = null;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      String value = i + 1 < args.length ? args[i + 1] : null;
      switch (a) {
        case "-h", "--help" -> {
          usage(out);
          return 0;
        }
        case "--url", "--lease-time", "--xml-dir", "--group", "--class-path" -> {
          if (value == null) {
            return usageError(out, a + " needs a value");
          }
          i++;
          switch (a) {
            case "--url" -> url = value;
            case "--xml-dir" -> xmlDir = Path.of(value);
            case "--group" -> groups.add(value);
            case "--class-path" -> classPath = value;
            default -> {
              try {
                leaseTime = LockUrl.parseDuration(value);
              } catch (IllegalArgumentException e) {
                return usageError(out, "--lease-time: " + e.getMessage());
              }
              if (leaseTime.isZero()) {
                return usageError(out, "--lease-time must be positive");
              }
            }
          }
        }
        default -> {
          return usageError(out, "unknown argument '" + a + "'");
        }
      }
    }
    if (url == null) {
      return usageError(out, "--url is required");
    }
    if (classPath != null) {
      // java -jar ignores -cp: load provider jars through the context class loader, which
      // LockProviders searches besides its own
      List<java.net.URL> urls = new ArrayList<>();
      for (String entry : classPath.split(java.io.File.pathSeparator)) {
        Path p = Path.of(entry);
        if (!Files.exists(p)) {
          return usageError(out, "--class-path: " + entry + " does not exist");
        }
        try {
          urls.add(p.toUri().toURL());
        } catch (java.net.MalformedURLException e) {
          return usageError(out, "--class-path: " + entry + ": " + e.getMessage());
        }
      }
      Thread.currentThread().setContextClassLoader(new java.net.URLClassLoader(urls.toArray(new java.net.URL[0]),
          TckRunner.class.getClassLoader()));
      LockProviders.reload();
    }
    LockUrl parsed;
    Duration urlLeaseTime;
    try {
      parsed = LockUrl.parse(url);
      urlLeaseTime = parsed.duration("leaseTime", null);
    } catch (LockException e) {
      out.println("error: " + e.getMessage());
      return 2;
    }
    for (String g : groups) {
      if (selectionKey(g).isEmpty()) {
        return usageError(out, "no TCK group or test '" + g + "'; groups: " + groupNames());
      }
    }
    UrlTarget target;
    // A provider whose leases never expire rejects leaseTime (a parameter that would do nothing): pass it
    // only when asked for, or when the provider has lease expiry and the TCK needs short terms.
    try (LockService probe = LockProviders.connect(url)) {
      boolean expires = probe.supports(dev.tumbler.lock.Capability.LEASE_EXPIRY);
      Duration effective = leaseTime != null ? leaseTime : urlLeaseTime != null ? urlLeaseTime : DEFAULT_LEASE_TIME;
      boolean override = leaseTime != null || (expires && urlLeaseTime == null);
      target = new UrlTarget(url, effective, override);
      out.println("Tumbler TCK against " + parsed + " (" + probe.info().provider() + " "
          + probe.info().providerVersion() + "), lease time "
          + (expires || leaseTime != null ? effective.toMillis() + " ms" : "none (leases do not expire)"));
      out.println("declared: " + (probe.info().capabilities().isEmpty() ? "[]"
          : java.util.EnumSet.copyOf(probe.info().capabilities())));
    } catch (LockException e) {
      out.println("error: cannot open " + parsed + ": " + e.getMessage());
      return 2;
    }
    if (target.override) {
      try (LockService check = target.open()) {
        check.info();
      } catch (LockException e) {
        out.println("error: cannot open " + parsed + " with leaseTime " + target.leaseTime.toMillis() + "ms: "
            + e.getMessage());
        return 2;
      }
    }
    out.println();
    TckResults results = execute(target, groups, xmlDir);
    results.printTable(out);
    out.println();
    out.println("JUnit XML written to " + xmlDir.toAbsolutePath());
    return results.count(TckResults.Status.FAILED) == 0 ? 0 : 1;
  }

  /**
   * Runs the TCK (or only {@code groups}: group class or display names, or {@code Group.method}) against {@code target}, writing JUnit
   * XML to {@code xmlDir} when it is not null. One run at a time per JVM.
   */
  static synchronized TckResults execute(TckTarget target, Set<String> groups, Path xmlDir) {
    TckResults results = new TckResults();
    List<TestExecutionListener> listeners = new ArrayList<>();
    listeners.add(results);
    if (xmlDir != null) {
      try {
        Files.createDirectories(xmlDir);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException("cannot create " + xmlDir, e);
      }
      listeners.add(new LegacyXmlReportGeneratingListener(xmlDir, new PrintWriter(System.err, true)));
    }
    Set<String> selected = new LinkedHashSet<>();
    for (String g : groups) {
      selected.add(selectionKey(g).orElseThrow(() -> new IllegalArgumentException("no TCK group or test '" + g + "'")));
    }
    LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
        .selectors(DiscoverySelectors.selectClass(TargetTck.class))
        .filters((PostDiscoveryFilter) d -> include(d, selected))
        .configurationParameters(parallel())
        .build();
    current = target;
    try {
      Launcher launcher = LauncherFactory.create();
      launcher.execute(request, listeners.toArray(new TestExecutionListener[0]));
    } finally {
      current = null;
    }
    return results;
  }

  /**
   * The groups run side by side (those that fault the whole backend or time it alone, see {@link LockTck#BACKEND}),
   * on eight threads: the TCK mostly waits for terms to pass. {@code -Dtck.parallel=false} runs one test at a time.
   */
  static Map<String, String> parallel() {
    boolean on = !"false".equalsIgnoreCase(System.getProperty("tck.parallel", "true"));
    return Map.of("junit.jupiter.execution.parallel.enabled", Boolean.toString(on),
        "junit.jupiter.execution.parallel.config.strategy", "fixed",
        "junit.jupiter.execution.parallel.config.fixed.parallelism", "8");
  }

  /** Keeps the tests of the selected groups ({@code Group}) and the selected tests ({@code Group.method}). */
  private static FilterResult include(TestDescriptor d, Set<String> selected) {
    if (selected.isEmpty() || !d.isTest()) {
      return FilterResult.included("all");
    }
    String method = d.getSource().orElse(null) instanceof MethodSource m ? m.getMethodName() : "";
    for (TestDescriptor p = d.getParent().orElse(null); p != null; p = p.getParent().orElse(null)) {
      if (p.getSource().orElse(null) instanceof ClassSource c && c.getJavaClass().getEnclosingClass() == LockTck.class) {
        String group = c.getJavaClass().getSimpleName();
        return selected.contains(group) || selected.contains(group + "." + method) ? FilterResult.included("selected")
            : FilterResult.excluded("not selected");
      }
    }
    return FilterResult.excluded("not in a group");
  }

  /** {@code Group} or {@code Group.method} for a group name (class or display name) or a test name. */
  static Optional<String> selectionKey(String name) {
    Optional<Class<?>> g = groupClass(name);
    if (g.isPresent()) {
      return Optional.of(g.get().getSimpleName());
    }
    int dot = name.lastIndexOf('.');
    if (dot > 0) {
      Optional<Class<?>> c = groupClass(name.substring(0, dot));
      String method = name.substring(dot + 1);
      if (c.isPresent() && hasTest(c.get(), method)) {
        return Optional.of(c.get().getSimpleName() + "." + method);
      }
    }
    return Optional.empty();
  }

  /** Whether the group {@code group} (the {@code @Nested} class) or the group file it extends has the test {@code method}. */
  private static boolean hasTest(Class<?> group, String method) {
    for (Class<?> k = group; k != null && k != Object.class; k = k.getSuperclass()) {
      if (java.util.Arrays.stream(k.getDeclaredMethods()).anyMatch(m -> m.getName().equals(method)
          && m.isAnnotationPresent(org.junit.jupiter.api.Test.class))) {
        return true;
      }
    }
    return false;
  }

  /** The group class of a name: its simple class name or display name, case-insensitive. */
  static Optional<Class<?>> groupClass(String name) {
    for (Class<?> c : LockTck.GROUPS) {
      org.junit.jupiter.api.DisplayName dn = c.getAnnotation(org.junit.jupiter.api.DisplayName.class);
      if (c.getSimpleName().equalsIgnoreCase(name) || dn != null && dn.value().equalsIgnoreCase(name)) {
        return Optional.of(c);
      }
    }
    return Optional.empty();
  }

  static List<String> groupNames() {
    return LockTck.GROUPS.stream().map(Class::getSimpleName).toList();
  }

  private static int usageError(PrintStream out, String problem) {
    out.println("error: " + problem);
    usage(out);
    return 2;
  }

  private static void usage(PrintStream out) {
    out.println("usage: TckRunner --url LOCK_URL [--lease-time 2s] [--xml-dir tck-reports] [--group NAME|Group.test]...");
    out.println("                 [--class-path provider.jar" + java.io.File.pathSeparator + "dependency.jar...]");
    out.println("  --url         the provider to test, as in lock:redis://localhost:6379 (its jar on the class path)");
    out.println("  --lease-time  the lease term the TCK opens services with (default: the URL's leaseTime, else 2s)");
    out.println("  --xml-dir     where JUnit XML reports go (default: tck-reports)");
    out.println("  --class-path  jars or directories holding the provider and its dependencies (java -jar ignores -cp)");
    out.println("  --group       run only this group, or one test as Group.method (repeatable): " + String.join(", ", groupNames()).toLowerCase(Locale.ROOT));
  }

  /** Opens services on a URL with the lease time as an overriding property. */
  static final class UrlTarget implements TckTarget {
    private final String url;
    private final Duration leaseTime;
    private final boolean override;

    UrlTarget(String url, Duration leaseTime, boolean override) {
      this.url = url;
      this.leaseTime = leaseTime;
      this.override = override;
    }

    @Override
    public LockService open() {
      Properties p = new Properties();
      if (override) {
        p.setProperty("leaseTime", leaseTime.toMillis() + "ms");
      }
      return LockProviders.connect(url, p);
    }

    @Override
    public Duration leaseTime() {
      return leaseTime;
    }

    @Override
    public Optional<String> url() {
      return Optional.of(url);
    }
  }

  /** The TCK class the launcher runs: its target is the one {@link #execute} was given. */
  static class TargetTck extends LockTck {
    @Override
    protected TckTarget createTarget() {
      TckTarget t = current;
      if (t == null) {
        throw new IllegalStateException("TargetTck runs only through TckRunner.execute");
      }
      return t;
    }
  }
}
