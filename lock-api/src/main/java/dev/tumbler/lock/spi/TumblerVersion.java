package dev.tumbler.lock.spi;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The version of this Tumbler build, for a provider's {@link dev.tumbler.lock.ProviderInfo} and
 * {@link dev.tumbler.lock.ServiceInfo}: every provider of one build reports the same string, the Maven
 * project version.
 *
 * <p>It comes from {@code tumbler-version.properties}, a resource of {@code lock-api} that Maven filters.
 * The resource sits in this class's package and is read through this class, so it is found on the class
 * path and on the module path alike (a named module reads its own encapsulated resources). Read once;
 * thread safe.
 */
public final class TumblerVersion {
  /** What {@link #current()} says when the build did not record a version. */
  public static final String UNKNOWN = "unknown";

  private static final String RESOURCE = "tumbler-version.properties";
  private static final String VERSION = load();

  private TumblerVersion() {
  }

  /** The project version of this build, such as {@code 0.1.0} or {@code 0.2.0-SNAPSHOT}. */
  public static String current() {
    return VERSION;
  }

  /**
   * {@value #UNKNOWN} when the resource is missing or unfiltered (a build outside Maven, such as an IDE's
   * own compiler without resource filtering): a version is information, and a provider must still load
   * without it. lock-api's tests (module lock-api-tests) check that the Maven build fills it in.
   */
  private static String load() {
    Properties p = new Properties();
    try (InputStream in = TumblerVersion.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        return UNKNOWN;
      }
      p.load(in);
    } catch (IOException e) {
      return UNKNOWN;
    }
    String v = p.getProperty("version", "").strip();
    return v.isEmpty() || v.contains("${") ? UNKNOWN : v;
  }
}
